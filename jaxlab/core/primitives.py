"""Primitives as plain data, and the one dispatch point `bind`.

A Primitive is a name; its rules live in tables keyed by the primitive and
are registered beside its definition in core/*.py: `lowerings` (to lazy
arrays: what eager evaluation and jit run), `jvp_rules`, `transpose_rules`
(linear primitives) and `batch_rules`. Shapes come from running the lowering
on phantom arrays (core/abstract.py), so there is no second copy of them.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence


class Primitive:
    def __init__(self, name: str, multiple_results: bool = False) -> None:
        self.name = name
        self.multiple_results = multiple_results

    def bind(self, *args: Any, **params: Any) -> Any:
        return bind(self, *args, **params)

    def __repr__(self) -> str:
        return self.name


PRIMITIVES: dict[str, Primitive] = {}
# primitive -> fn(*lazies, **params) -> Lazy or tuple of Lazy
lowerings: dict[Primitive, Callable[..., Any]] = {}
# primitive -> the lowering used when an operand is complex (core/complex_rules.py):
# fn(*lazies, **params) where complex operands are engine.complex.ComplexLazy
complex_lowerings: dict[Primitive, Callable[..., Any]] = {}
# primitive -> fn(*avals, **params) -> [avals]: only where running the lowering on
# phantom arrays cannot say (core/abstract.py is the default)
abstract_evals: dict[Primitive, Callable[..., Any]] = {}
# primitive -> fn(primals, tangents, **params) -> (primals_out, tangents_out)
jvp_rules: dict[Primitive, Callable[..., Any]] = {}
# primitive -> fn(cotangents_out, *inputs (UndefPrimal where linear), **params) -> cotangents_in
transpose_rules: dict[Primitive, Callable[..., Any]] = {}
# primitive -> fn(axis_size, values, batch_dims, **params) -> (values_out, batch_dims_out)
batch_rules: dict[Primitive, Callable[..., Any]] = {}
# primitive -> fn(partial_eval_trace, tracers, **params) -> out tracers, or None for the
# default (stage the whole equation when any input is unknown): primitives holding
# jaxprs split them into known work run now and unknown work staged
partial_eval_rules: dict[Primitive, Callable[..., Any]] = {}


# primitives whose result is weakly typed when every operand is (elementwise and
# shape-only ops, as JAX's weak_type rules say); any other result is strong
weak_preserving: set[Primitive] = set()


# primitive -> fn(**params) -> whether each result is weakly typed, where a primitive
# says it itself (control flow: the output avals of the jaxprs it holds)
weak_results: dict[Primitive, Callable[..., list[bool]]] = {}


def result_weak(prim: Primitive, in_weak: Sequence[bool], params: dict) -> bool:
    if "weak_type" in params:   # convert_element_type says it itself
        return bool(params["weak_type"])
    return prim in weak_preserving and bool(in_weak) and all(in_weak)


def results_weak(prim: Primitive, in_weak: Sequence[bool], params: dict, n: int) -> list[bool]:
    """Whether each of a primitive's `n` results is weakly typed."""
    if prim in weak_results:
        return weak_results[prim](**params)
    return [result_weak(prim, in_weak, params)] * n


def lower(prim: Primitive, args: Sequence[Any], params: dict) -> Any:
    """Run prim's lowering on lazy operands; complex ones take the complex lowering
    (a primitive without one refuses complex operands, as JAX's do)."""
    complex_arg = next((a for a in args if a.dtype.is_complex), None)
    if complex_arg is None:
        return lowerings[prim](*args, **params)
    rule = complex_lowerings.get(prim)
    if rule is None:
        raise TypeError(f"{prim.name} does not accept {complex_arg.dtype} operands")
    return rule(*args, **params)


def primitive(name: str, multiple_results: bool = False) -> Primitive:
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name!r} defined twice")
    p = Primitive(name, multiple_results)
    PRIMITIVES[name] = p
    return p


from jaxlab.core.trace import bind  # noqa: E402  (the dispatch point needs the tables above)

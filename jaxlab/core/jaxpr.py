"""Jaxprs: a typed list of primitive equations, staged out by tracing.

`trace_to_jaxpr(f, avals)` runs f on tracers that record every bind; the
result prints in JAX's text format:

    { lambda ; a:f32[7,13]. let b:f32[7,13] = sin a in (b,) }
"""
from __future__ import annotations

import enum
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from jaxlab.array import Array
from jaxlab.core.abstract import abstract_eval
from jaxlab.core.avals import ShapedArray
from jaxlab.ir.alu import AluOp
from jaxlab.ir.provenance import SourceInfo
from jaxlab.core.primitives import Primitive, results_weak
from jaxlab.core.trace import (Trace, Tracer, bind, full_raise, get_aval, new_dynamic,
                               new_main, source_info)


class Var:
    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray) -> None:
        self.aval = aval


@dataclass(frozen=True)
class Lit:
    """A scalar constant written inline (e.g. `2.0:f32[]`)."""
    val: Any
    aval: ShapedArray


Atom = Any  # Var | Lit


@dataclass
class JaxprEqn:
    primitive: Primitive
    inputs: list
    params: dict
    out_binders: list
    source_info: Optional[SourceInfo] = None   # the user's line that made it


@dataclass
class Jaxpr:
    in_binders: list
    eqns: list
    outs: list

    def __str__(self) -> str:
        return _pretty(self, [])

    __repr__ = __str__

    def pretty_print(self, source_info: bool = False) -> str:
        """The text; with `source_info`, each equation ends in `# file:line:col (function)`."""
        return _pretty(self, [], source_info=source_info)


@dataclass
class ClosedJaxpr:
    """A jaxpr and the arrays it closes over (its leading constant binders)."""
    jaxpr: Jaxpr
    consts: list = field(default_factory=list)
    n_consts: int = 0

    @property
    def eqns(self) -> list:
        return self.jaxpr.eqns

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.jaxpr.in_binders[self.n_consts:]]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.jaxpr.outs]

    def __str__(self) -> str:
        return _pretty(self.jaxpr, self.jaxpr.in_binders[:self.n_consts])

    __repr__ = __str__

    def pretty_print(self, source_info: bool = False) -> str:
        """The text; with `source_info`, each equation ends in `# file:line:col (function)`,
        as JAX's `pretty_print(source_info=True)`."""
        return _pretty(self.jaxpr, self.jaxpr.in_binders[:self.n_consts],
                       source_info=source_info)

    def _repr_pretty_(self, p, cycle) -> None:  # IPython
        p.text(str(self))


# --- pretty printing ----------------------------------------------------------
# JAX's layout: a jaxpr fits on one line when it can (width 80 from where it
# starts); otherwise one equation per line. Equations whose parameters hold
# jaxprs put one parameter per line. One name table runs through nested jaxprs.

_WIDTH = 80


class _Namer:
    def __init__(self) -> None:
        letters = "abcdefghijklmnopqrstuvwxyz"
        self._gen = ("".join(t) for n in itertools.count(1)
                     for t in itertools.product(letters, repeat=n))
        self._table: dict[int, str] = {}

    def __call__(self, v: Var) -> str:
        if id(v) not in self._table:
            self._table[id(v)] = next(self._gen)
        return self._table[id(v)]


def _atom(a: Atom, name: Callable[[Var], str]) -> str:
    if isinstance(a, Lit):
        return f"{a.val!r}:{a.aval.str_short()}"
    return name(a)


def _has_jaxpr(v: Any) -> bool:
    return isinstance(v, (ClosedJaxpr, Jaxpr)) or \
        (isinstance(v, tuple) and any(_has_jaxpr(x) for x in v))


def _param(v: Any, name: Callable[[Var], str] | None = None, indent: int = 0,
           col: int = 0) -> str:
    if isinstance(v, (ClosedJaxpr, Jaxpr)):
        return _pretty_any(v, name or _Namer(), indent, col)
    if isinstance(v, tuple):
        return "(" + ", ".join(_param(x, name) for x in v) + ("," if len(v) == 1 else "") + ")"
    if callable(v) and not isinstance(v, enum.Enum):
        return getattr(v, "__name__", "fn")
    return str(v)


def equation_text(prim: Primitive, params: dict) -> str:
    """An equation as a kernel's report names it: the primitive and its parameters
    (those that are not jaxprs), as the printer writes them."""
    shown = " ".join(f"{k}={_param(v)}" for k, v in sorted(params.items())
                     if not _has_jaxpr(v))
    return prim.name + (f"[{shown}]" if shown else "")


def _pretty_any(j: Any, name: Callable[[Var], str], indent: int, col: int) -> str:
    if isinstance(j, ClosedJaxpr):
        return _pretty(j.jaxpr, j.jaxpr.in_binders[:j.n_consts], name, indent, col)
    return _pretty(j, [], name, indent, col)


def _used_vars(jaxpr: Jaxpr) -> set[int]:
    used = {id(a) for e in jaxpr.eqns for a in e.inputs if isinstance(a, Var)}
    return used | {id(a) for a in jaxpr.outs if isinstance(a, Var)}


def _eqn_lines(eqn: JaxprEqn, name: Callable[[Var], str], used: set[int],
               indent: int) -> list[str]:
    binder = lambda v: f"{name(v) if id(v) in used else '_'}:{v.aval.str_short()}"  # noqa: E731
    outs = " ".join(binder(v) for v in eqn.out_binders)
    ins = " ".join(_atom(a, name) for a in eqn.inputs)
    items = sorted(eqn.params.items())
    if not any(_has_jaxpr(v) for _, v in items):
        params = " ".join(f"{k}={_param(v)}" for k, v in items)
        call = eqn.primitive.name + (f"[{params}]" if params else "")
        return [f"{' ' * indent}{outs} = {call} {ins}".rstrip()]
    pad = " " * (indent + 2)
    lines = [f"{' ' * indent}{outs} = {eqn.primitive.name}["]
    for k, v in items:
        if isinstance(v, tuple) and _has_jaxpr(v):
            lines.append(f"{pad}{k}=(")
            lines += [f"{pad}  {_param(x, name, indent + 4, indent + 4)}" for x in v]
            lines.append(f"{pad})")
        else:
            lines.append(f"{pad}{k}={_param(v, name, indent + 2, indent + 3 + len(k))}")
    lines.append(f"{' ' * indent}] {ins}".rstrip())
    return lines


def _pretty(jaxpr: Jaxpr, const_binders: list, name: Callable[[Var], str] | None = None,
            indent: int = 0, col: int = 0, source_info: bool = False) -> str:
    """`indent`: the block's indentation (0 at top level); `col`: the column the
    text starts at, for deciding whether it fits on one line; `source_info`: end
    each equation's (first) line with where it was written."""
    name = name or _Namer()
    binder = lambda v: f"{name(v)}:{v.aval.str_short()}"  # noqa: E731
    consts = " ".join(binder(v) for v in const_binders)
    args = " ".join(binder(v) for v in jaxpr.in_binders[len(const_binders):])
    head = f"{{ lambda {consts}; {args}. let"
    used = _used_vars(jaxpr)
    body = [_eqn_lines(e, name, used, indent + 4) for e in jaxpr.eqns]
    outs = ", ".join(_atom(a, name) for a in jaxpr.outs)
    tail = f"in ({outs}{',' if len(jaxpr.outs) == 1 else ''}) }}"
    if all(len(b) == 1 for b in body) and not (source_info and jaxpr.eqns):
        flat = f"{head} {'; '.join(b[0].strip() for b in body)} {tail}"
        if col + len(flat) <= _WIDTH:
            return flat
    if source_info:
        _annotate(body, jaxpr.eqns)
    lines = [line for b in body for line in b]
    return "\n".join([head] + lines + [" " * (indent + 2) + tail])


def _annotate(body: list[list[str]], eqns: list[JaxprEqn]) -> None:
    """JAX's layout: `# file:line:col (function)` after each equation, aligned."""
    width = max(len(b[0]) for b in body)
    for b, e in zip(body, eqns):
        if e.source_info is not None:
            b[0] = f"{b[0].ljust(width)} # {e.source_info.text()}"


# --- staging ------------------------------------------------------------------

@dataclass(frozen=True)
class DebugInfo:
    """What is being staged, for errors: `jit` of `<lambda> at file:line`, its
    arguments' names in flat order."""
    what: str
    function: str
    arg_names: tuple[str, ...]


class JaxprTracer(Tracer):
    __slots__ = ("_aval",)

    def __init__(self, trace: Trace, aval: ShapedArray) -> None:
        self._trace, self._aval = trace, aval

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def provenance(self) -> str:
        builder: JaxprBuilder = self._trace.main.global_data
        info = builder.debug
        if info is None:
            return ""
        names = builder.arguments_behind(self)
        which = (f" This concrete value was not available in Python because it depends on "
                 f"the value of the argument{'s' if len(names) > 1 else ''} "
                 f"{', '.join(names)}.") if names else ""
        return f" The error occurred while tracing the function {info.function} for " \
               f"{info.what}.{which}"


class JaxprBuilder:
    def __init__(self, debug: Optional[DebugInfo] = None) -> None:
        self.debug = debug
        self.in_vars: list[Var] = []
        self.eqns: list[JaxprEqn] = []
        self.tracer_to_var: dict[int, Var] = {}
        self.const_tracers: dict[int, JaxprTracer] = {}
        self.constvals: dict[int, Any] = {}
        self.tracers: list[JaxprTracer] = []   # keeps ids unique while building

    def new_tracer(self, trace: Trace, aval: ShapedArray) -> JaxprTracer:
        t = JaxprTracer(trace, aval)
        self.tracers.append(t)
        return t

    def add_var(self, t: JaxprTracer) -> Var:
        v = self.tracer_to_var[id(t)] = Var(t.aval)
        return v

    def getvar(self, t: JaxprTracer) -> Var:
        if id(t) not in self.tracer_to_var:
            raise RuntimeError(f"a tracer from another trace leaked in: {t}")
        return self.tracer_to_var[id(t)]

    def arguments_behind(self, t: JaxprTracer) -> list[str]:
        """Names of the arguments whose values t was computed from (walks the
        equations recorded so far backwards; only errors ask)."""
        needed = {id(self.tracer_to_var.get(id(t)))}
        for eqn in reversed(self.eqns):
            if any(id(v) in needed for v in eqn.out_binders):
                needed.update(id(a) for a in eqn.inputs if isinstance(a, Var))
        names = self.debug.arg_names if self.debug else ()
        return [n for v, n in zip(self.in_vars, names) if id(v) in needed]

    def build(self, in_tracers: list, out_tracers: list) -> ClosedJaxpr:
        const_vars = [self.tracer_to_var[id(t)] for t in self.const_tracers.values()]
        const_vals = [self.constvals[i] for i in self.const_tracers]
        in_vars = [self.getvar(t) for t in in_tracers]
        out_vars = [self.getvar(t) for t in out_tracers]
        jaxpr = Jaxpr(const_vars + in_vars, self.eqns, out_vars)
        return _inline_scalar_literals(ClosedJaxpr(jaxpr, const_vals, len(const_vals)))


class JaxprTrace(Trace):
    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        builder: JaxprBuilder = self.main.global_data
        t = builder.new_tracer(self, aval)
        builder.in_vars.append(builder.add_var(t))
        return t

    def pure(self, val: Any) -> JaxprTracer:
        builder: JaxprBuilder = self.main.global_data
        t = builder.const_tracers.get(id(val))
        if t is None:
            t = builder.new_tracer(self, get_aval(val))
            builder.add_var(t)
            builder.const_tracers[id(val)] = t
            builder.constvals[id(val)] = val
        return t

    lift = pure

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        builder: JaxprBuilder = self.main.global_data
        avals_out = abstract_eval(prim, [t.aval for t in tracers], params)
        weak = results_weak(prim, [t.aval.weak_type for t in tracers], params, len(avals_out))
        avals_out = [a if a.weak_type == w else ShapedArray(a.shape, a.dtype, w)
                     for a, w in zip(avals_out, weak)]
        ins = [builder.getvar(t) for t in tracers]
        outs = [builder.new_tracer(self, a) for a in avals_out]
        builder.eqns.append(JaxprEqn(prim, ins, dict(params), [builder.add_var(t) for t in outs],
                                     source_info()))
        return outs


def _scalar_literal(val: Any) -> Any:
    """The Python value of a 0-d constant array that is just a constant (no kernel)."""
    if isinstance(val, Array) and val.ndim == 0 and val._lazy.pending is None \
            and val._lazy.exp.op in (AluOp.Const, AluOp.Param):
        return val._lazy.exp.arg
    return None


def _inline_scalar_literals(closed: ClosedJaxpr) -> ClosedJaxpr:
    jaxpr = closed.jaxpr
    lits: dict[int, Lit] = {}
    keep_vars, keep_vals = [], []
    for v, val in zip(jaxpr.in_binders[:closed.n_consts], closed.consts):
        lit = _scalar_literal(val)
        if lit is None:
            keep_vars.append(v)
            keep_vals.append(val)
        else:
            lits[id(v)] = Lit(lit, v.aval)
    if not lits:
        return closed
    swap = lambda a: lits.get(id(a), a) if isinstance(a, Var) else a  # noqa: E731
    eqns = [JaxprEqn(e.primitive, [swap(a) for a in e.inputs], e.params, e.out_binders,
                     e.source_info) for e in jaxpr.eqns]
    new = Jaxpr(keep_vars + jaxpr.in_binders[closed.n_consts:], eqns,
                [swap(a) for a in jaxpr.outs])
    return ClosedJaxpr(new, keep_vals, len(keep_vals))


def trace_to_jaxpr(f: Callable, avals_in: Sequence[ShapedArray],
                   debug: Optional[DebugInfo] = None) -> ClosedJaxpr:
    """Stage f (flat arrays in -> flat list of arrays out) out to a jaxpr; `debug`
    names the arguments in errors about traced values."""
    builder = JaxprBuilder(debug)
    with new_main(JaxprTrace, builder) as main:
        with new_dynamic(main):
            trace = JaxprTrace(main)
            tracers_in = [trace.new_arg(a) for a in avals_in]
            outs = f(*tracers_in)
            tracers_out = [full_raise(trace, o) for o in outs]
            return builder.build(tracers_in, tracers_out)


def eval_jaxpr(jaxpr: Jaxpr, args: Sequence[Any]) -> list[Any]:
    """Run a jaxpr by binding each equation (so it composes with transformations)."""
    env: dict[int, Any] = {}

    def read(a: Atom) -> Any:
        if isinstance(a, Lit):
            from jaxlab.core.values import asarray
            return asarray(a.val, a.aval.dtype)
        return env[id(a)]

    for v, x in zip(jaxpr.in_binders, args):
        env[id(v)] = x
    for eqn in jaxpr.eqns:
        outs = bind(eqn.primitive, *(read(a) for a in eqn.inputs), **eqn.params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        for v, o in zip(eqn.out_binders, outs):
            env[id(v)] = o
    return [read(a) for a in jaxpr.outs]


def eval_closed(closed: ClosedJaxpr, args: Sequence[Any]) -> list[Any]:
    return eval_jaxpr(closed.jaxpr, list(closed.consts) + list(args))

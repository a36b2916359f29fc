"""vectorize: a function of core-shaped arrays mapped over broadcast leading axes with
vmap (as JAX's, generalized-ufunc signatures included); matvec and vecmat are two such
functions."""
from __future__ import annotations

import functools
import re
from typing import Any, Callable, Collection

from jaxlab.api import vmap
from jaxlab.array import Array
from jaxlab.numpy._util import asarray_, broadcast_shapes, broadcast_to_
from jaxlab.numpy.complex_functions import conjugate
from jaxlab.numpy.products import matmul

__all__ = ["vectorize", "matvec", "vecmat"]

_CORE = r"\((?:\w+(?:,\w+)*)?\)"
_CORES = rf"{_CORE}(?:,{_CORE})*"
_SIGNATURE = re.compile(rf"^{_CORES}->{_CORES}$")

Cores = list[tuple[str, ...]]


def _parse(signature: str) -> tuple[Cores, Cores]:
    """'(m,n),(n)->(m)' as ([('m', 'n'), ('n',)], [('m',)])."""
    compact = signature.replace(" ", "")
    if not _SIGNATURE.match(compact):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    sides = compact.split("->")
    return tuple([tuple(d for d in core.split(",") if d)
                  for core in re.findall(r"\((.*?)\)", side)] for side in sides)


class _Sizes:
    """The size each core dimension name takes, checked as arrays are met."""

    def __init__(self, context: str) -> None:
        self.sizes: dict[str, int] = {}
        self.context = context

    def check(self, shape: tuple[int, ...], core: tuple[str, ...], what: str) -> None:
        if len(shape) < len(core):
            raise ValueError(f"{what} with shape {shape} does not have enough dimensions "
                             f"for all core dimensions {core} {self.context}")
        for name, size in zip(core, shape[len(shape) - len(core):]):
            known = self.sizes.setdefault(name, size)
            if known != size:
                raise ValueError(f"inconsistent size for core dimension {name!r}: {size} "
                                 f"vs {known} {self.context}")


def _checked_outputs(fn: Callable[..., Any], outputs: Cores, sizes: _Sizes):
    """fn whose results must have the signature's output core shapes."""
    def run(*args: Any) -> Any:
        out = fn(*args)
        results = out if len(outputs) > 1 else (out,)
        if len(outputs) > 1 and (not isinstance(out, tuple) or len(out) != len(outputs)):
            raise TypeError(f"wrong number of output arguments: expected {len(outputs)}, "
                            f"got {len(out) if isinstance(out, tuple) else 1}")
        for result, core in zip(results, outputs):
            shape = asarray_(result).shape
            if len(shape) != len(core):
                raise ValueError(f"output shape {shape} does not match core dimensions "
                                 f"{core} {sizes.context}")
            sizes.check(shape, core, "output")
        return out
    return run


def vectorize(pyfunc: Callable[..., Any], *, excluded: Collection[int | str] = frozenset(),
              signature: str | None = None) -> Callable[..., Any]:
    """pyfunc mapped over the leading (broadcast) axes of its array arguments; with a
    signature such as '(n),(n)->()', each call sees the trailing core axes. Arguments in
    `excluded` (positions or names) and keyword arguments are passed unchanged."""
    parsed = _parse(signature) if signature is not None else None
    context = f"on vectorized function with excluded={excluded!r} and " \
              f"signature={signature!r}"

    @functools.wraps(pyfunc)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        mapped = [i for i in range(len(args)) if i not in excluded]

        def on_core(*values: Any) -> Any:
            full = list(args)
            for i, v in zip(mapped, values):
                full[i] = v
            return pyfunc(*full, **kwargs)

        arrays = [asarray_(args[i]) for i in mapped]
        inputs = parsed[0] if parsed else [()] * len(arrays)
        if len(inputs) != len(arrays):
            raise TypeError(f"wrong number of positional arguments: expected "
                            f"{len(inputs)}, got {len(arrays)} {context}")
        sizes = _Sizes(context)
        for a, core in zip(arrays, inputs):
            sizes.check(a.shape, core, "input")
        loops = [a.shape[:a.ndim - len(core)] for a, core in zip(arrays, inputs)]
        loop = broadcast_shapes(*loops)
        arrays = [broadcast_to_(a, loop + a.shape[a.ndim - len(core):])
                  for a, core in zip(arrays, inputs)]
        fn = _checked_outputs(on_core, parsed[1], sizes) if parsed else on_core
        for _ in loop:
            fn = vmap(fn)
        return fn(*arrays)
    return wrapped


def _matrix_vector(x1: Array, x2: Array) -> Array:
    return matmul(x1, x2)


def _vector_matrix(x1: Array, x2: Array) -> Array:
    return matmul(conjugate(x1), x2)


_matvec = vectorize(_matrix_vector, signature="(n,m),(m)->(n)")
_vecmat = vectorize(_vector_matrix, signature="(n),(n,m)->(m)")


def matvec(x1: Any, x2: Any, /) -> Array:
    """Batched matrix-vector products: x1 (..., n, m) times x2 (..., m)."""
    return _matvec(x1, x2)


def vecmat(x1: Any, x2: Any, /) -> Array:
    """Batched vector-matrix products: conj(x1) (..., n) times x2 (..., n, m)."""
    return _vecmat(x1, x2)

"""Operators and methods of jaxlab.Array, all forwarding to jaxlab.numpy."""
from __future__ import annotations

from jaxlab.array import ArrayBase
from jaxlab import numpy as jnp


def _swap(fn):
    return lambda self, other: fn(other, self)


_OPERATORS = {
    "__add__": jnp.add, "__radd__": _swap(jnp.add),
    "__sub__": jnp.subtract, "__rsub__": _swap(jnp.subtract),
    "__mul__": jnp.multiply, "__rmul__": _swap(jnp.multiply),
    "__truediv__": jnp.true_divide, "__rtruediv__": _swap(jnp.true_divide),
    "__floordiv__": jnp.floor_divide, "__rfloordiv__": _swap(jnp.floor_divide),
    "__mod__": jnp.remainder, "__rmod__": _swap(jnp.remainder),
    "__divmod__": jnp.divmod, "__rdivmod__": _swap(jnp.divmod),
    "__pow__": jnp.power, "__rpow__": _swap(jnp.power),
    "__matmul__": jnp.matmul, "__rmatmul__": _swap(jnp.matmul),
    "__lt__": jnp.less, "__le__": jnp.less_equal, "__gt__": jnp.greater,
    "__ge__": jnp.greater_equal, "__eq__": jnp.equal, "__ne__": jnp.not_equal,
    "__and__": jnp.bitwise_and, "__rand__": _swap(jnp.bitwise_and),
    "__or__": jnp.bitwise_or, "__ror__": _swap(jnp.bitwise_or),
    "__xor__": jnp.bitwise_xor, "__rxor__": _swap(jnp.bitwise_xor),
    "__lshift__": jnp.left_shift, "__rlshift__": _swap(jnp.left_shift),
    "__rshift__": jnp.right_shift, "__rrshift__": _swap(jnp.right_shift),
    "__neg__": jnp.negative, "__pos__": jnp.positive, "__abs__": jnp.abs,
    "__invert__": jnp.invert,
}
_METHODS = {
    "reshape": lambda self, *shape, **kw: jnp.reshape(
        self, shape[0] if len(shape) == 1 else shape, **kw),
    "transpose": lambda self, *axes: jnp.transpose(
        self, None if not axes else axes[0] if len(axes) == 1 and not isinstance(axes[0], int)
        else axes),
    "sum": jnp.sum, "prod": jnp.prod, "max": jnp.max, "min": jnp.min,
    "mean": jnp.mean, "var": jnp.var, "std": jnp.std, "any": jnp.any, "all": jnp.all,
    "argmax": jnp.argmax, "argmin": jnp.argmin, "cumsum": jnp.cumsum, "cumprod": jnp.cumprod,
    "clip": jnp.clip, "round": jnp.round,
    "sort": jnp.sort, "argsort": jnp.argsort, "dot": jnp.dot,
    "ravel": jnp.ravel, "flatten": jnp.ravel, "squeeze": jnp.squeeze,
    "swapaxes": jnp.swapaxes, "repeat": jnp.repeat, "take": jnp.take,
    "astype": jnp.astype, "conj": jnp.conj, "conjugate": jnp.conjugate,
    "diagonal": jnp.diagonal, "trace": jnp.trace, "nonzero": jnp.nonzero,
    "searchsorted": jnp.searchsorted, "argpartition": jnp.argpartition, "ptp": jnp.ptp,
    "copy": lambda self: jnp.array(self, copy=True),
    # round(x) gives integers as Python's round does; round(x, n) stays in x's dtype
    "__round__": lambda self, ndigits=None: (jnp.round(self).astype(int) if ndigits is None
                                             else jnp.round(self, ndigits)),
    "__contains__": lambda self, value: _contains(self, value),
}


def _contains(array, value) -> bool:
    """`value in array`, as JAX's: only for a vector, comparing every element."""
    if array.ndim != 1:
        raise ValueError(f"Array.__contains__: search array must be one-dimensional, "
                         f"got shape {array.shape}")
    return bool(jnp.any(jnp.equal(array, value)))


for _name, _fn in {**_OPERATORS, **_METHODS}.items():
    setattr(ArrayBase, _name, _fn)
ArrayBase.real = property(jnp.real)
ArrayBase.imag = property(jnp.imag)
ArrayBase.T = property(lambda self: jnp.transpose(self))
ArrayBase.mT = property(lambda self: jnp.swapaxes(self, -1, -2))
ArrayBase.itemsize = property(lambda self: self.dtype.itemsize)
ArrayBase.nbytes = property(lambda self: self.size * self.dtype.itemsize)


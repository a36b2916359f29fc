"""Host-side helpers: copy, ndim/shape/size, isscalar, iterable, arrays from bytes, text
and functions, and printing (NumPy's print options over the host values)."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from jaxlab.array import Array, ArrayBase
from jaxlab.core import values
from jaxlab.ir.dtypes import to_dtype
from jaxlab.numpy import creation
from jaxlab.numpy._util import arraylike_, asarray_, canonical_axes, static_shape
from jaxlab.numpy.index_tricks import indices

__all__ = ["copy", "ndim", "shape", "size", "isscalar", "iterable", "frombuffer", "fromstring",
           "fromiter", "fromfunction", "array_repr", "array_str", "printoptions",
           "get_printoptions", "set_printoptions"]

# NumPy's print options are the ones Array's repr prints with (it prints host values)
printoptions = np.printoptions
get_printoptions = np.get_printoptions
set_printoptions = np.set_printoptions


def copy(a: Any, order: Optional[str] = None) -> Array:
    """A new array with a's values."""
    return creation.array(a, copy=True)


def _host_shape(a: Any) -> tuple[int, ...]:
    return tuple(a.shape) if hasattr(a, "shape") else np.shape(a)


def ndim(a: Any) -> int:
    """The number of dimensions of an array (or of what NumPy would make of a)."""
    return len(_host_shape(a))


def shape(a: Any) -> tuple[int, ...]:
    """The shape of an array (or of what NumPy would make of a)."""
    return _host_shape(a)


def size(a: Any, axis: Any = None) -> int:
    """The number of elements of a, or along the given axis (axes)."""
    dims = _host_shape(a)
    return math.prod(dims[d] for d in canonical_axes(axis, len(dims)))


def isscalar(element: Any) -> bool:
    """Whether element is a scalar: a Python or NumPy scalar, a string, or a 0-d array."""
    if isinstance(element, ArrayBase):
        return element.ndim == 0
    return bool(np.isscalar(element))


def iterable(y: Any) -> bool:
    """Whether iter(y) works."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def frombuffer(buffer: Any, dtype: Any = float, count: int = -1, offset: int = 0) -> Array:
    """An array of the bytes in buffer read as dtype values."""
    return values.from_host(np.frombuffer(buffer, dtype=np.dtype(dtype), count=count,
                                          offset=offset), to_dtype(dtype, "frombuffer"))


def fromstring(string: str, dtype: Any = float, count: int = -1, *, sep: str) -> Array:
    """An array of the numbers in string separated by sep."""
    return asarray_(np.fromstring(string, dtype=np.dtype(dtype), count=count, sep=sep),
                    to_dtype(dtype, "fromstring"))


def fromiter(*args: Any, **kwargs: Any) -> Array:
    """Not provided, as in JAX: consuming an iterator is a side effect jit cannot repeat."""
    raise NotImplementedError(
        "jnp.fromiter() is not implemented because it may be non-pure and thus unsafe for "
        "use with JIT and other transformations. Consider using jnp.asarray(np.fromiter(...))"
        " instead.")


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any) -> Array:
    """function called once with the index arrays of every position of `shape`."""
    dims = static_shape(shape)
    grids = indices(dims, dtype=dtype)
    return function(*(grids[k] for k in range(len(dims))), **kwargs)


def _printed(fn: Callable[..., str], arr: Any, max_line_width: Optional[int],
             precision: Optional[int], suppress_small: Optional[bool]) -> str:
    return fn(np.asarray(arraylike_(fn.__name__, arr)), max_line_width, precision,
              suppress_small)


def array_repr(arr: Any, max_line_width: Optional[int] = None, precision: Optional[int] = None,
               suppress_small: Optional[bool] = None) -> str:
    """repr of the values, as Array(..., dtype=...)."""
    text = _printed(np.array_repr, arr, max_line_width, precision, suppress_small)
    return "Array" + text[len("array"):] if text.startswith("array") else text


def array_str(a: Any, max_line_width: Optional[int] = None, precision: Optional[int] = None,
              suppress_small: Optional[bool] = None) -> str:
    """str of the values, as NumPy prints them."""
    return _printed(np.array_str, a, max_line_width, precision, suppress_small)


"""jaxlab.Array: the user's array. Lazy until read; freed by reference counting."""
from __future__ import annotations

from typing import Any

import numpy as np

from jaxlab.engine import lazy as lz
from jaxlab.engine.devices import Device, current_device
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.dtypes import DType, host_dtype
from jaxlab.shaped import Shaped


class ArrayBase(Shaped):
    """What concrete Arrays and tracers share: shape and dtype, and the
    operators and methods that jaxlab.numpy installs on this class."""

    __slots__ = ()
    __array_priority__ = 100
    shape: tuple[int, ...]
    jdtype: DType

    @property
    def dtype(self) -> np.dtype:
        return self.jdtype.np

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    __hash__ = None  # type: ignore[assignment]  # arrays are unhashable, as in JAX


class Array(ArrayBase):
    """An n-d array on a device. Operations build fused kernels; reading the
    values (`np.asarray(x)`, `x.item()`, printing) runs them."""

    __slots__ = ("_lazy", "_weak", "__weakref__")

    def __init__(self, lazy: Lazy, weak: bool = False) -> None:
        self._lazy = lazy
        self._weak = weak

    @property
    def weak_type(self) -> bool:
        """JAX's weak type: a Python scalar's value promotes like the scalar."""
        return self._weak

    @property
    def shape(self) -> tuple[int, ...]:
        return self._lazy.shape

    @property
    def jdtype(self) -> DType:
        return self._lazy.dtype

    @property
    def device(self) -> Device:
        return self._lazy.device

    def devices(self) -> set[Device]:
        return {self._lazy.device}

    @property
    def is_realized(self) -> bool:
        return self._lazy.buffer is not None

    # --- reading ---
    def _realize(self) -> Lazy:
        self._lazy = lz.realize(self._lazy)
        return self._lazy

    def block_until_ready(self) -> "Array":
        self._realize()
        self.device.backend.synchronize()
        return self

    def to_numpy(self) -> np.ndarray:
        return self.__array__()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        lazy = self._lazy
        buf = lazy._buf if type(lazy) is Lazy else None
        if buf is not None and buf.size:   # a realized real array: read in its shape at once
            out = buf.device.backend.read_array(buf.handle, buf.dtype, lazy.shape)
        else:
            out = self._realize().buffer.to_numpy()
            if self.jdtype.is_complex:   # stored as interleaved parts: NumPy's own layout
                out = out.view(self.jdtype.np)
            out = out.reshape(self.shape)
        return out if dtype is None else out.astype(dtype)

    def item(self) -> Any:
        if self.size != 1:
            raise ValueError(f"item() needs an array of size 1, got shape {self.shape}")
        return self.to_numpy().reshape(()).item()

    def tolist(self) -> Any:
        return self.to_numpy().tolist()

    def __repr__(self) -> str:
        values = np.array2string(self.to_numpy(), separator=", ", prefix="Array(")
        shape = f", shape={self.shape}" if self.size == 0 else ""
        return f"Array({values}{shape}, dtype={self.jdtype})"

    def __str__(self) -> str:
        return str(self.to_numpy())

    def _scalar(self, kind: type) -> Any:
        if self.size != 1:
            raise TypeError(f"only size-1 arrays convert to Python {kind.__name__}, "
                            f"got shape {self.shape}")
        return kind(self.item())

    def __bool__(self) -> bool:
        return self._scalar(bool)

    def __float__(self) -> float:
        return self._scalar(float)

    def __int__(self) -> int:
        return self._scalar(int)

    def __complex__(self) -> complex:
        return self._scalar(complex)

    # arrays are immutable: a copy may share the same lazy value; pickling stores the values
    def __copy__(self) -> "Array":
        return Array(self._lazy, self._weak)

    def __deepcopy__(self, memo: dict) -> "Array":
        return Array(self._lazy, self._weak)

    def __reduce__(self) -> tuple:
        return _unpickle, (self.to_numpy(), self._weak)

    def __index__(self) -> int:
        if self.jdtype.is_float or self.jdtype.is_bool or self.ndim:
            raise TypeError(f"only 0-d integer arrays can be used as an index, got "
                            f"{self.jdtype}{list(self.shape)}")
        return int(self.item())


def _unpickle(values: np.ndarray, weak: bool) -> Array:
    """A pickled Array, on the default device where it is loaded (as JAX's)."""
    dtype = host_dtype(values.dtype)
    return Array(lz.from_numpy(values.astype(dtype.np), dtype, current_device()), weak)


def wrap(lazy: Lazy, weak: bool = False) -> Array:
    return Array(lazy, weak)

"""The dtypes jaxlab knows, and JAX's promotion rules between them (x64 off)."""
from __future__ import annotations

import enum
import os
import sys
import warnings

import numpy as np


class DType(enum.Enum):
    bool = "bool"
    int32 = "int32"
    uint32 = "uint32"
    float16 = "float16"
    float32 = "float32"
    complex64 = "complex64"   # stored as interleaved float32 pairs (engine/complex.py)

    @property
    def np(self) -> np.dtype:
        return _NUMPY[self.value]   # by value: an Enum member hashes in Python code

    @property
    def dtype(self) -> np.dtype:
        """So that np.dtype(DType.float32) works, as for jnp.float32."""
        return self.np

    @property
    def itemsize(self) -> int:
        return _NUMPY[self.value].itemsize

    @property
    def is_float(self) -> bool:
        return self in (DType.float16, DType.float32)

    @property
    def is_int(self) -> bool:
        return self in (DType.int32, DType.uint32)

    @property
    def is_bool(self) -> bool:
        return self is DType.bool

    @property
    def is_complex(self) -> bool:
        return self in _COMPLEX_PARTS

    @property
    def is_inexact(self) -> bool:
        """Float or complex: NumPy's np.inexact, what grad and the float ufuncs accept."""
        return self.is_float or self.is_complex

    @property
    def real_dtype(self) -> "DType":
        """The dtype of the real and imaginary parts (a real dtype is its own)."""
        return _COMPLEX_PARTS.get(self, self)

    @property
    def short(self) -> str:
        """JAX's jaxpr spelling: f32, i32, u32, f16, bool."""
        return _SHORT[self]

    def __repr__(self) -> str:
        return self.value

    def __str__(self) -> str:
        return self.value


_NUMPY = {d.value: np.dtype(d.value) for d in DType}   # built once: dispatch reads these
_SHORT = {DType.bool: "bool", DType.int32: "i32", DType.uint32: "u32",
          DType.float16: "f16", DType.float32: "f32", DType.complex64: "c64"}
# complex dtype -> the real dtype of its parts (kernels only ever see the parts)
_COMPLEX_PARTS = {DType.complex64: DType.float32}
_COMPLEX_OF = {real: c for c, real in _COMPLEX_PARTS.items()}


def complex_dtype(real: DType) -> DType:
    """The complex dtype whose parts are `real` (float16 and integers go to complex64)."""
    return _COMPLEX_OF.get(real, DType.complex64) if not real.is_complex else real

# NumPy dtypes stored as one of ours. x64 is off, as JAX's default: 64-bit types
# narrow to 32 bits (with JAX's warning when a program asks for one by name).
_FROM_NUMPY = {
    "bool": DType.bool, "int32": DType.int32, "uint32": DType.uint32,
    "float16": DType.float16, "float32": DType.float32, "complex64": DType.complex64,
}
_NARROWED_X64 = {"int64": DType.int32, "uint64": DType.uint32, "float64": DType.float32,
                 "complex128": DType.complex64}
# Host data of these dtypes is widened on upload (same values, a wider dtype than
# JAX would give): 8/16-bit storage comes with issue 15's new dtypes.
_WIDENED_ON_UPLOAD = {"int8": DType.int32, "int16": DType.int32,
                      "uint8": DType.uint32, "uint16": DType.uint32}

_X64_WARNING = ("Explicitly requested dtype {name} requested in {where} is not available, "
                "and will be truncated to dtype {short}. To enable more dtypes, set the "
                "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
                "variable. See https://github.com/jax-ml/jax#current-gotchas for more.")


def to_dtype(d, where: str | None = "jaxlab") -> DType:
    """The stored dtype for a requested one: a DType, a NumPy dtype or type, a string,
    a Python type, or anything with a `.dtype` (jnp.float32). `where` names the
    function asking, for the warning when a 64-bit dtype is narrowed (None: narrow
    silently, for dtype arithmetic such as result_type)."""
    if isinstance(d, DType):
        return d
    python_types = {float: DType.float32, int: DType.int32, bool: DType.bool,
                    complex: DType.complex64}
    if isinstance(d, type) and d in python_types:
        return python_types[d]
    try:
        name = np.dtype(d).name
    except TypeError:
        name = None
    if name in _FROM_NUMPY:
        return _FROM_NUMPY[name]
    if name in _NARROWED_X64:
        narrowed = _NARROWED_X64[name]
        if where is not None:
            warnings.warn(_X64_WARNING.format(name=name, where=where, short=narrowed.value),
                          UserWarning, stacklevel=_stacklevel_outside_jaxlab())
        return narrowed
    raise TypeError(f"unsupported dtype {d!r}: jaxlab supports "
                    f"{', '.join(t.value for t in DType)} (more dtypes: issue 15)")


def _stacklevel_outside_jaxlab() -> int:
    """warnings.warn's stacklevel of the first caller outside the jaxlab package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def host_dtype(d: np.dtype) -> DType:
    """The stored dtype for uploaded NumPy data: 64-bit types narrow silently, as
    JAX's do; 8/16-bit integers widen (see _WIDENED_ON_UPLOAD)."""
    name = np.dtype(d).name
    for table in (_FROM_NUMPY, _NARROWED_X64, _WIDENED_ON_UPLOAD):
        if name in table:
            return table[name]
    return to_dtype(d)


# Category ranks of the promotion lattice; within ints, int32+uint32 -> int32
# (JAX would say int64, narrowed to int32 with x64 off).
_RANK = {DType.bool: 0, DType.uint32: 1, DType.int32: 1, DType.float16: 2, DType.float32: 3,
         DType.complex64: 4}


def promote(a: DType, b: DType) -> DType:
    """Promote two strong dtypes."""
    if a is b:
        return a
    ra, rb = _RANK[a], _RANK[b]
    if ra == rb:  # only int32 vs uint32 reaches here
        return DType.int32
    return a if ra > rb else b


def promote_weak(strong: DType, weak_kind: type) -> DType:
    """A Python scalar of kind bool/int/float meets an array of dtype `strong`."""
    if weak_kind is bool:
        return strong
    if weak_kind is int:
        return DType.int32 if strong is DType.bool else strong
    if weak_kind is complex:   # keeps the precision of a float array: f16 + 1j -> c64
        return complex_dtype(strong.real_dtype) if strong.is_inexact else DType.complex64
    return strong if strong.is_inexact else DType.float32


def result_type(*operands) -> DType:
    """JAX's result type of arrays and Python scalars (weakly typed)."""
    strong = [o for o in operands if not isinstance(o, _PY_SCALARS)]
    weak = [_kind(o) for o in operands if isinstance(o, _PY_SCALARS)]
    if strong:
        dt = strong[0] if isinstance(strong[0], DType) else strong[0].dtype
        for o in strong[1:]:
            dt = promote(dt, o if isinstance(o, DType) else o.dtype)
    else:
        dt = python_scalar_dtype(max(weak, key=_WEAK_ORDER.index))
        weak = []
    for kind in weak:
        dt = promote_weak(dt, kind)
    return dt


_PY_SCALARS = (bool, int, float, complex)
_WEAK_ORDER = [bool, int, float, complex]


def _kind(scalar) -> type:
    """The Python kind of a scalar operand (NumPy's float64 is a float, as in JAX)."""
    return next(k for k in (bool, complex, float, int) if isinstance(scalar, k))


def _category(kind_or_dtype) -> int:
    if isinstance(kind_or_dtype, DType):
        d = kind_or_dtype
        return 0 if d.is_bool else 1 if d.is_int else 3 if d.is_complex else 2
    return {bool: 0, int: 1, float: 2, complex: 3}[kind_or_dtype]


def result_is_weak(*operands) -> bool:
    """Whether JAX's promotion of these operands gives a weakly typed result: the Python
    int/float scalars' kind ranks above every array's category (`bool_array + 1` and
    `int_array * 2.5` are weak; `float16_array * 2.5` is float16, strong). Python bools
    are never weak."""
    kinds = [_kind(o) for o in operands if isinstance(o, (int, float, complex))
             and type(o) is not bool]
    if not kinds:
        return False
    strong = [o if isinstance(o, DType) else o.dtype for o in operands
              if not isinstance(o, _PY_SCALARS)]
    # a weak complex over a float array is a strong complex (JAX's lattice: f* -> c64)
    top = min(max(map(_category, kinds)), _category(float))
    return all(_category(d) < top for d in strong)


def python_scalar_dtype(kind: type) -> DType:
    return {bool: DType.bool, int: DType.int32, float: DType.float32,
            complex: DType.complex64}[kind]

"""The dtypes jaxlab knows, and JAX's promotion rules between them.

64-bit types follow JAX: off by default, so that a request for one is canonicalised
to its 32-bit twin (with JAX's warning when a program asks by name); on with
`jaxlab.config.update("jax_enable_x64", True)` or the JAX_ENABLE_X64 environment variable.
"""
from __future__ import annotations

import enum
import os
import sys
import warnings

import ml_dtypes
import numpy as np

from jaxlab.configuration import config


class DType(enum.Enum):
    bool = "bool"
    int8 = "int8"
    int16 = "int16"
    int32 = "int32"
    int64 = "int64"
    uint8 = "uint8"
    uint16 = "uint16"
    uint32 = "uint32"
    uint64 = "uint64"
    bfloat16 = "bfloat16"
    float16 = "float16"
    float32 = "float32"
    float64 = "float64"
    complex64 = "complex64"   # stored as interleaved float32 pairs (engine/complex.py)
    complex128 = "complex128"   # float64 pairs

    # Members are singletons compared by identity, so the identity hash is consistent
    # with equality and runs in C (Enum's own hashes the name in Python): dispatch
    # looks dtypes up in dicts on every call.
    __hash__ = object.__hash__

    @property
    def np(self) -> np.dtype:
        return _NUMPY[self._value_]   # by value: an Enum member hashes in Python code

    @property
    def dtype(self) -> np.dtype:
        """So that np.dtype(DType.float32) works, as for jnp.float32."""
        return self.np

    @property
    def itemsize(self) -> int:
        return _NUMPY[self._value_].itemsize

    @property
    def is_float(self) -> bool:
        return _NUMPY[self._value_].kind == "f" or self is DType.bfloat16

    @property
    def is_int(self) -> bool:
        return _NUMPY[self._value_].kind in "iu"

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
    def is_signed(self) -> bool:
        return _NUMPY[self._value_].kind == "i"

    @property
    def is_bool(self) -> bool:
        return self is DType.bool

    @property
    def bounds(self) -> tuple[int, int]:
        """(lowest, highest) value of a bool or integer dtype."""
        return _BOUNDS[self._value_]

    @property
    def short(self) -> str:
        """JAX's jaxpr spelling: f32, i8, u32, bf16, bool."""
        return _SHORT[self._value_]

    def __repr__(self) -> str:
        return self.value

    def __str__(self) -> str:
        return self.value


def _numpy_dtype(name: str) -> np.dtype:
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


_NUMPY = {d.value: _numpy_dtype(d.value) for d in DType}   # built once: dispatch reads these
_SHORT = {d.value: "bool" if d is DType.bool else
          ("bf16" if d is DType.bfloat16 else d.value[0] + str(8 * _NUMPY[d.value].itemsize))
          for d in DType}
# complex dtype -> the real dtype of its parts (kernels only ever see the parts)
_COMPLEX_PARTS = {DType.complex64: DType.float32, DType.complex128: DType.float64}
_COMPLEX_OF = {real: c for c, real in _COMPLEX_PARTS.items()}


def complex_dtype(real: DType) -> DType:
    """The complex dtype whose parts are `real` (float16 and integers go to complex64,
    float64 to complex128)."""
    return _COMPLEX_OF.get(real, DType.complex64) if not real.is_complex else real
_BY_NAME = {d.value: d for d in DType}
_BOUNDS = {d.value: (0, 1) if d is DType.bool else
           (int(np.iinfo(_NUMPY[d.value]).min), int(np.iinfo(_NUMPY[d.value]).max))
           for d in DType if d.is_bool or d.is_int}

# --- x64 --------------------------------------------------------------------------------
# without x64, each 64-bit type is stored as its 32-bit twin
_NARROWED_X64 = {DType.int64: DType.int32, DType.uint64: DType.uint32,
                 DType.float64: DType.float32, DType.complex128: DType.complex64}
BITS_64 = frozenset(_NARROWED_X64)


def canonical(d: DType) -> DType:
    """The dtype an array of `d` is stored as under the current x64 setting."""
    return d if config.jax_enable_x64 else _NARROWED_X64.get(d, d)   # jaxlab.config


def default_int() -> DType:
    return canonical(DType.int64)


def default_uint() -> DType:
    return canonical(DType.uint64)


def default_float() -> DType:
    return canonical(DType.float64)


def to_inexact(d: DType) -> DType:
    """The float a bool or integer computes in (JAX's to_inexact_dtype): float32 up to
    32 bits, float64 (x64) for 64-bit integers."""
    if d.is_inexact:
        return d
    return canonical(DType.float64) if d.itemsize == 8 else DType.float32


_X64_WARNING = ("Explicitly requested dtype {name} requested in {where} is not available, "
                "and will be truncated to dtype {short}. To enable more dtypes, set the "
                "jax_enable_x64 configuration option or the JAX_ENABLE_X64 shell environment "
                "variable. See https://github.com/jax-ml/jax#current-gotchas for more.")


def to_dtype(d, where: str | None = "jaxlab") -> DType:
    """The stored dtype for a requested one: a DType, a NumPy dtype or type, a string,
    a Python type, or anything with a `.dtype` (jnp.float32). `where` names the
    function asking, for the warning when a 64-bit dtype is narrowed (None: narrow
    silently, for dtype arithmetic such as result_type)."""
    if isinstance(d, type) and d in _PYTHON_TYPES:
        return canonical(_PYTHON_TYPES[d])
    wanted = d if isinstance(d, DType) else uncanonical(d)
    stored = canonical(wanted)
    name = wanted.value if isinstance(d, DType) else _name(d)
    if name != stored.value and where is not None:
        warnings.warn(_X64_WARNING.format(name=name, where=where, short=stored.value),
                      UserWarning, stacklevel=_stacklevel_outside_jaxlab())
    return stored


_PYTHON_TYPES = {float: DType.float64, int: DType.int64, bool: DType.bool,
                 complex: DType.complex128}


def _name(d) -> str | None:
    try:
        return np.dtype(d).name
    except TypeError:
        return None


def uncanonical(d) -> DType:
    """The DType named by a dtype-like, as named (64-bit ones too, whatever x64 says)."""
    name = _name(d)
    if name not in _BY_NAME:
        raise TypeError(f"unsupported dtype {d!r}: jaxlab supports "
                        f"{', '.join(t.value for t in DType)}")
    return _BY_NAME[name]


def _stacklevel_outside_jaxlab() -> int:
    """warnings.warn's stacklevel of the first caller outside the jaxlab package."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def host_dtype(d: np.dtype) -> DType:
    """The stored dtype for uploaded NumPy data: 64-bit types narrow silently without
    x64, as JAX's do."""
    return canonical(uncanonical(d))


# --- promotion: JAX's type lattice ----------------------------------------------------
class Weak(enum.Enum):
    """Python scalars' kinds: weakly typed, they take the dtype of what they meet."""
    int = "int"
    float = "float"
    complex = "complex"


_WEAK_OF = {int: Weak.int, float: Weak.float, complex: Weak.complex}
_D = DType
# each node's immediate successors (JAX's lattice, jax._src.dtypes, as documented in
# its type promotion design note); the join of two nodes is their least upper bound
_LATTICE: dict = {
    _D.bool: [Weak.int],
    Weak.int: [_D.uint8, _D.int8],
    _D.uint8: [_D.uint16, _D.int16], _D.uint16: [_D.uint32, _D.int32],
    _D.uint32: [_D.uint64, _D.int64], _D.uint64: [Weak.float],
    _D.int8: [_D.int16], _D.int16: [_D.int32], _D.int32: [_D.int64], _D.int64: [Weak.float],
    Weak.float: [_D.bfloat16, _D.float16, Weak.complex],
    _D.bfloat16: [_D.float32], _D.float16: [_D.float32], _D.float32: [_D.float64, _D.complex64],
    _D.float64: [_D.complex128], Weak.complex: [_D.complex64], _D.complex64: [_D.complex128],
    _D.complex128: [],
}


def _upper_bounds() -> dict:
    """Each node's set of upper bounds (itself included)."""
    bounds: dict = {}
    for node in reversed(list(_topological(_LATTICE))):
        bounds[node] = {node}.union(*(bounds[s] for s in _LATTICE[node]))
    return bounds


def _topological(graph: dict):
    seen, order = set(), []
    def visit(n):
        if n not in seen:
            seen.add(n)
            for s in graph[n]:
                visit(s)
            order.append(n)
    for n in graph:
        visit(n)
    return reversed(order)


_UPPER = _upper_bounds()


def _join(a, b):
    """The least upper bound of two lattice nodes."""
    common = _UPPER[a] & _UPPER[b]
    least = [n for n in common if all(m in _UPPER[n] for m in common)]
    return least[0]


_JOIN = {(a, b): _join(a, b) for a in _LATTICE for b in _LATTICE}


def _node(operand):
    """A lattice node: a DType (strong), or a Python scalar's Weak kind (bool is strong)."""
    if isinstance(operand, DType):
        return operand
    if isinstance(operand, bool):
        return DType.bool
    return _WEAK_OF[next(k for k in (complex, float, int) if isinstance(operand, k))]


def _joined(operands):
    nodes = [_node(o if isinstance(o, (DType, bool, int, float, complex)) else o.dtype)
             for o in operands]
    top = nodes[0]
    for n in nodes[1:]:
        top = _JOIN[top, n]
    return top


_WEAK_DEFAULT = {Weak.int: DType.int64, Weak.float: DType.float64,
                 Weak.complex: DType.complex128}


def result_type(*operands) -> DType:
    """JAX's result type of arrays (DTypes, or anything with a `.dtype` DType) and
    Python scalars (weakly typed), canonicalised for the x64 setting."""
    top = _joined(operands)
    return canonical(_WEAK_DEFAULT.get(top, top))


def promote_types(a: DType, b: DType) -> DType:
    """jnp.promote_types, as JAX's answers it: the join of two dtypes; kept when it is
    one of them or a Python scalar kind's 64-bit type, else canonicalised."""
    top = _JOIN[a, b]
    if isinstance(top, Weak):
        return _WEAK_DEFAULT[top]
    return top if top in (a, b) else canonical(top)


def result_is_weak(*operands) -> bool:
    """Whether JAX's promotion gives a weakly typed result: the join is a Python scalar
    kind (`bool_array + 1` and `int_array * 2.5` are weak; `int8_array + 1` is int8 and
    `float16_array * 2.5` float16, strong)."""
    return isinstance(_joined(operands), Weak)


def python_scalar_dtype(kind: type) -> DType:
    return canonical(_PYTHON_TYPES[kind])

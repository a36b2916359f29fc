"""AluExp: jaxlab's one expression node, immutable and hash-consed.

Every kernel body is a DAG of AluExp. Two structurally equal expressions are
the same Python object, so `a is b` is structural equality, dict lookups by
node are O(1), and a kernel's identity is the identity of its root node.
"""
from __future__ import annotations

import enum
import math
import weakref
from typing import Any, Iterable

import numpy as np

from jaxlab.graph import toposort
from jaxlab.ir.dtypes import DType
from jaxlab.ir.provenance import active_lineage


class AluOp(enum.Enum):
    # binary arithmetic (operands share a dtype)
    Add = "+"; Sub = "-"; Mul = "*"; Div = "/"; Idiv = "//"; Mod = "%"
    Min = "min"; Max = "max"
    # comparisons (result bool)
    Cmplt = "<"; Cmpne = "!="
    # bitwise / logical (ints and bools)
    And = "&"; Or = "|"; Xor = "^"; Shl = "<<"; Shr = ">>"
    Where = "where"
    # unary float math
    Sin = "sin"; Cos = "cos"; Asin = "asin"; Atan = "atan"; Exp = "exp"; Log = "log"
    Sqrt = "sqrt"; Reciprocal = "recip"; Floor = "floor"; Ceil = "ceil"
    Erf = "erf"; Erfc = "erfc"; Tanh = "tanh"
    Cast = "cast"; Bitcast = "bitcast"
    Threefry2x32 = "threefry2x32"
    # leaves (Param: a value that changes between calls, e.g. a Python scalar operand;
    # lowering turns it into a load from a one-element input, so it is never kernel text)
    Const = "const"; Special = "special"; Variable = "var"; Param = "param"
    GlobalIndex = "load"; GlobalView = "view"; Valid = "valid"


class Divisor(enum.Enum):
    """A float Div's arg: what its writer knows of the divisor. A renderer whose division
    is a * (1 / b) guards divisors past 2^126 (whose reciprocal is subnormal, flushed to
    0 on such GPUs), except a BOUNDED one: at most 2^126 wherever the quotient is used."""
    BOUNDED = "bounded"


BINARY = frozenset({AluOp.Add, AluOp.Sub, AluOp.Mul, AluOp.Div, AluOp.Idiv, AluOp.Mod,
                    AluOp.Min, AluOp.Max, AluOp.And, AluOp.Or, AluOp.Xor, AluOp.Shl,
                    AluOp.Shr})
COMPARE = frozenset({AluOp.Cmplt, AluOp.Cmpne})
UNARY_FLOAT = frozenset({AluOp.Sin, AluOp.Cos, AluOp.Asin, AluOp.Atan, AluOp.Exp, AluOp.Log,
                         AluOp.Sqrt, AluOp.Reciprocal, AluOp.Floor, AluOp.Ceil, AluOp.Erf,
                         AluOp.Erfc, AluOp.Tanh})
LEAVES = frozenset({AluOp.Const, AluOp.Special, AluOp.Variable, AluOp.GlobalView,
                    AluOp.Valid, AluOp.Param})
VIEW_LEAVES = frozenset({AluOp.GlobalView, AluOp.Valid})
COMMUTATIVE = frozenset({AluOp.Add, AluOp.Mul, AluOp.Min, AluOp.Max, AluOp.And, AluOp.Or,
                         AluOp.Xor, AluOp.Cmpne})


def _arg_key(arg: Any) -> Any:
    # 0.0 == -0.0 and nan != nan: key floats by their text so both intern correctly
    # (and NaN by its sign too: repr writes -nan as "nan")
    if isinstance(arg, float):
        return ("f", repr(arg), math.copysign(1.0, arg))
    return arg


_LOADS = frozenset({AluOp.GlobalView, AluOp.GlobalIndex})
_BOUND_CAP = 1 << 30


class AluExp:
    """One node: (op, dtype, src, arg). Build with the helpers below, never directly."""

    __slots__ = ("op", "dtype", "src", "arg", "depth", "tree_size", "loads", "params", "_range",
                 "_simple", "origins", "__weakref__")
    _interned: "weakref.WeakValueDictionary[tuple, AluExp]" = weakref.WeakValueDictionary()

    op: AluOp
    dtype: DType
    src: tuple["AluExp", ...]
    arg: Any

    def __new__(cls, op: AluOp, dtype: DType, src: tuple = (), arg: Any = None) -> "AluExp":
        key = (op, dtype, src, _arg_key(arg))
        node = cls._interned.get(key)
        if node is None:
            node = object.__new__(cls)
            node.op, node.dtype, node.src, node.arg = op, dtype, src, arg
            # ops on the longest path to a leaf: what limits fusing a long chain
            node.depth = 1 + max((s.depth for s in src), default=0)
            # bounds found without a walk: operations (non-leaf nodes) counted once per
            # path, >= the DAG's count, equal for a chain; loads of memory (0: the value
            # needs no buffer)
            node.tree_size = min(int(bool(src)) + sum(s.tree_size for s in src), _BOUND_CAP)
            node.loads = min(int(op in _LOADS) + sum(s.loads for s in src), _BOUND_CAP)
            # scalar arguments: each a one-element input once lowered
            node.params = min(int(op is AluOp.Param) + sum(s.params for s in src), _BOUND_CAP)
            node._range = None
            node._simple = None
            # the equations (provenance.Origin) that built this node; not part of its identity
            node.origins = frozenset()
            cls._interned[key] = node
        return node

    def __reduce__(self):
        return (AluExp, (self.op, self.dtype, self.src, self.arg))

    # --- construction helpers (operands are coerced to this node's dtype) ---
    @staticmethod
    def const(value: Any, dtype: DType) -> "AluExp":
        return AluExp(AluOp.Const, dtype, (), _canonical_const(value, dtype))

    @staticmethod
    def param(value: Any, dtype: DType) -> "AluExp":
        """A runtime scalar argument: equal values share a node, but no rule folds it."""
        return AluExp(AluOp.Param, dtype, (), _canonical_const(value, dtype))

    @staticmethod
    def special(name: str, size: int) -> "AluExp":
        return AluExp(AluOp.Special, DType.int32, (), (name, int(size)))

    @staticmethod
    def variable(name: str, dtype: DType = DType.int32) -> "AluExp":
        return AluExp(AluOp.Variable, dtype, (), name)

    @staticmethod
    def load(slot: Any, index: "AluExp", dtype: DType) -> "AluExp":
        return AluExp(AluOp.GlobalIndex, dtype, (index,), slot)

    @staticmethod
    def view(buffer: Any, tracker: Any, dtype: DType) -> "AluExp":
        return AluExp(AluOp.GlobalView, dtype, (), (buffer, tracker))

    @staticmethod
    def valid(tracker: Any) -> "AluExp":
        return AluExp(AluOp.Valid, DType.bool, (), tracker)

    def _coerce(self, other: Any) -> "AluExp":
        return other if isinstance(other, AluExp) else AluExp.const(other, self.dtype)

    def binary(self, op: AluOp, other: Any) -> "AluExp":
        other = self._coerce(other)
        if other.dtype is not self.dtype:
            raise TypeError(f"{op.name} of {self.dtype} and {other.dtype}: cast first")
        out = DType.bool if op in COMPARE else self.dtype
        return AluExp(op, out, (self, other))

    def bounded_div(self, other: Any) -> "AluExp":
        """self / other for a float divisor the caller knows stays within 2^126."""
        return AluExp(AluOp.Div, self.dtype, self.binary(AluOp.Div, other).src, Divisor.BOUNDED)

    def unary(self, op: AluOp) -> "AluExp":
        return AluExp(op, self.dtype, (self,))

    def cast(self, dtype: DType) -> "AluExp":
        return self if dtype is self.dtype else AluExp(AluOp.Cast, dtype, (self,))

    def bitcast(self, dtype: DType) -> "AluExp":
        return self if dtype is self.dtype else AluExp(AluOp.Bitcast, dtype, (self,))

    def where(self, a: Any, b: Any) -> "AluExp":
        if isinstance(a, AluExp):
            b = a._coerce(b)
        elif isinstance(b, AluExp):
            a = b._coerce(a)
        else:
            raise TypeError("where needs at least one expression branch")
        return AluExp(AluOp.Where, a.dtype, (self, a, b))

    def lt(self, other: Any) -> "AluExp": return self.binary(AluOp.Cmplt, other)
    def ne(self, other: Any) -> "AluExp": return self.binary(AluOp.Cmpne, other)
    def min(self, other: Any) -> "AluExp": return self.binary(AluOp.Min, other)
    def max(self, other: Any) -> "AluExp": return self.binary(AluOp.Max, other)
    def __add__(self, o): return self.binary(AluOp.Add, o)
    def __radd__(self, o): return self._coerce(o).binary(AluOp.Add, self)
    def __sub__(self, o): return self.binary(AluOp.Sub, o)
    def __rsub__(self, o): return self._coerce(o).binary(AluOp.Sub, self)
    def __mul__(self, o): return self.binary(AluOp.Mul, o)
    def __rmul__(self, o): return self._coerce(o).binary(AluOp.Mul, self)
    def __floordiv__(self, o): return self.binary(AluOp.Idiv, o)
    def __truediv__(self, o): return self.binary(AluOp.Div, o)
    def __mod__(self, o): return self.binary(AluOp.Mod, o)
    def __and__(self, o): return self.binary(AluOp.And, o)
    def __or__(self, o): return self.binary(AluOp.Or, o)
    def __xor__(self, o): return self.binary(AluOp.Xor, o)

    # --- inspection ---
    def toposort(self) -> list["AluExp"]:
        """Every node once, sources before users."""
        return toposort((self,), _sources)

    def leaves(self, ops: Iterable[AluOp]) -> list["AluExp"]:
        ops = frozenset(ops)
        return [n for n in self.toposort() if n.op in ops]

    def substitute(self, mapping: dict["AluExp", "AluExp"]) -> "AluExp":
        """Replace nodes (keys) by expressions, rebuilding the users."""
        done: dict[AluExp, AluExp] = {}
        for node in self.toposort():
            if node in mapping:
                done[node] = mapping[node]
            elif node.src:
                src = tuple(done[s] for s in node.src)
                done[node] = node if src == node.src else AluExp(node.op, node.dtype, src, node.arg)
            else:
                done[node] = node
        found = active_lineage()
        if found is not None:
            for node, image in done.items():
                found.derive(image, node)
        return done[self]

    def tag(self, origin: Any) -> None:
        """Record that the equation `origin` built this node (see ir/provenance.py)."""
        if origin is not None and origin not in self.origins:
            self.origins = self.origins | {origin}

    @property
    def is_const(self) -> bool:
        return self.op is AluOp.Const

    def __repr__(self) -> str:
        from jaxlab.ir.printer import render
        return render(self)

    # --- range analysis and simplification live in simplify.py ---
    @property
    def vmin(self) -> Any:
        from jaxlab.ir.simplify import value_range
        return value_range(self)[0]

    @property
    def vmax(self) -> Any:
        from jaxlab.ir.simplify import value_range
        return value_range(self)[1]

    def simplify(self) -> "AluExp":
        from jaxlab.ir.simplify import simplify
        return simplify(self)


def _sources(node: AluExp) -> tuple[AluExp, ...]:
    return node.src


def _canonical_const(value: Any, dtype: DType) -> Any:
    """Store constants as Python values already rounded to the dtype."""
    if dtype is DType.bool:
        return bool(value)
    if dtype.is_int:
        if isinstance(value, (float, np.floating)):
            value = int(value) if math.isfinite(value) else 0
        bits = 8 * dtype.itemsize   # wrapped to the dtype, as a cast would
        v = int(value) % (1 << bits)
        return v - (1 << bits) if dtype.is_signed and v >= 1 << (bits - 1) else v
    return float(np.array(value, dtype=dtype.np))


def const_like(e: AluExp, value: Any) -> AluExp:
    return AluExp.const(value, e.dtype)

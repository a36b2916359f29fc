"""Narrow dtypes computed in 32-bit registers, for devices whose arithmetic is 32-bit
only (Wasm's i32/f32 and WGSL).

int8/int16/uint8/uint16 values live in an i32 (u32) and are wrapped back to their
width after each op that can leave it; bfloat16 values live in an f32 and are rounded
to bfloat16 (to nearest even) after each op that is not exact. Loads and stores keep
the narrow dtype, so all a renderer meets of a narrow type is: a load, a cast from it
to its register dtype right after, and a cast to it at the root, before the store
(both casts change nothing: the value already fits).
"""
from __future__ import annotations

from dataclasses import replace

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel

REGISTER = {DType.int8: DType.int32, DType.int16: DType.int32, DType.uint8: DType.uint32,
            DType.uint16: DType.uint32, DType.bfloat16: DType.float32}

# ops whose result can leave a narrow integer's range (integer arithmetic wraps)
_WRAPPING = frozenset({AluOp.Add, AluOp.Sub, AluOp.Mul, AluOp.Idiv, AluOp.Shl})
# ops that return an input, or an integer-valued float that bfloat16 holds exactly
_BF16_EXACT = frozenset({AluOp.Min, AluOp.Max, AluOp.Where, AluOp.Floor, AluOp.Ceil})
# bitcasts within one width, by (from, to): both narrow types share a register kind,
# or go through a 16-bit pattern
_SAME_WIDTH = {frozenset({DType.int8, DType.uint8}), frozenset({DType.int16, DType.uint16})}


def register(dtype: DType) -> DType:
    """The dtype a value of `dtype` is computed in."""
    return REGISTER.get(dtype, dtype)


def widen(kernel: Kernel) -> Kernel:
    """`kernel` with every narrow value computed in its register dtype (the same
    kernel when it has none)."""
    roots = kernel.roots()
    if not any(n.dtype in REGISTER for r in roots for n in r.toposort()):
        return kernel
    done: dict[AluExp, AluExp] = {}
    exp = _widened(kernel.exp, done)
    if kernel.folds:   # a row kernel's folds are 32-bit values (engine/deferred.py)
        folds = tuple(replace(f, body=_widened(f.body, done)) for f in kernel.folds)
        return replace(kernel, exp=_stored(exp, kernel.exp.dtype), folds=folds)
    if kernel.reduction is None:
        return replace(kernel, exp=_stored(exp, kernel.exp.dtype))
    epilogue = kernel.reduction.epilogue
    return replace(kernel, exp=exp, reduction=replace(
        kernel.reduction, epilogue=_stored(_widened(epilogue, done), epilogue.dtype)))


def _stored(value: AluExp, dtype: DType) -> AluExp:
    return value.cast(dtype) if dtype in REGISTER else value


def _widened(root: AluExp, done: dict[AluExp, AluExp]) -> AluExp:
    for node in root.toposort():
        if node not in done:
            done[node] = _widen_node(node, [done[s] for s in node.src])
    return done[root]


def _widen_node(node: AluExp, src: list[AluExp]) -> AluExp:
    op, dtype = node.op, node.dtype
    wide = register(dtype)
    if op is AluOp.GlobalIndex:
        loaded = AluExp(op, dtype, tuple(src), node.arg)
        return loaded.cast(wide) if dtype in REGISTER else loaded
    if op is AluOp.Variable:   # a reduction's accumulator: wide, may have left the range
        return fit(AluExp(op, wide, (), node.arg), dtype)
    if op is AluOp.Const:
        return AluExp.const(node.arg, wide)
    if op is AluOp.Cast:
        return _cast(src[0], node.src[0].dtype, dtype)
    if op is AluOp.Bitcast:
        return _bitcast(src[0], node.src[0].dtype, dtype)
    out = AluExp(op, wide, tuple(src), node.arg)
    if dtype is DType.bfloat16 and op not in _BF16_EXACT:
        return round_bf16(out)
    if dtype in REGISTER and dtype.is_int and op in _WRAPPING:
        return fit(out, dtype)
    return out


def _cast(value: AluExp, src: DType, dst: DType) -> AluExp:
    """`value` (src, held in register(src)) converted with the cast's semantics."""
    out = value.cast(register(dst)) if register(src) is not register(dst) else value
    if dst not in REGISTER or src is DType.bool or src is dst:
        return out
    if dst is DType.bfloat16:
        return round_bf16(out)
    lo, hi = dst.bounds
    if src.is_float:   # float -> int saturates (the 32-bit cast already did, at 32 bits)
        return out.max(AluExp.const(lo, out.dtype)).min(AluExp.const(hi, out.dtype)) \
            if dst.is_signed else out.min(AluExp.const(hi, out.dtype))
    src_lo, src_hi = src.bounds
    return out if lo <= src_lo and src_hi <= hi else fit(out, dst)


def _bitcast(value: AluExp, src: DType, dst: DType) -> AluExp:
    if src not in REGISTER and dst not in REGISTER:
        return value.bitcast(dst)
    if frozenset({src, dst}) in _SAME_WIDTH:
        return fit(value.cast(register(dst)), dst)
    if {src, dst} <= {DType.bfloat16, DType.int16, DType.uint16}:
        bits = DType.uint32
        if dst is DType.bfloat16:   # the 16-bit pattern becomes an f32's high half
            low = value.cast(bits) & AluExp.const(0xFFFF, bits)
            return low.binary(AluOp.Shl, AluExp.const(16, bits)).bitcast(DType.float32)
        high = value.bitcast(bits).binary(AluOp.Shr, AluExp.const(16, bits))
        return fit(high.cast(register(dst)), dst)
    raise NotImplementedError(f"bitcast from {src} to {dst} on a 32-bit device")


def fit(value: AluExp, dtype: DType) -> AluExp:
    """A register value brought back into `dtype`: integers wrap, bfloat16 rounds."""
    if dtype is DType.bfloat16:
        return round_bf16(value)
    if dtype not in REGISTER:
        return value
    bits = 8 * dtype.itemsize
    if dtype.is_signed:   # sign-extend the low bits (>> is arithmetic on int32)
        shift = AluExp.const(32 - bits, value.dtype)
        return value.binary(AluOp.Shl, shift).binary(AluOp.Shr, shift)
    return value & AluExp.const((1 << bits) - 1, value.dtype)


def round_bf16(value: AluExp) -> AluExp:
    """An f32 rounded to the nearest bfloat16 (ties to even); a NaN becomes a quiet NaN
    of its sign and large values round to infinity, as a bfloat16 cast does. Integer
    work on the bits only: nothing depends on what a compiler assumes about NaN or
    what a GPU does to subnormals in float instructions."""
    u32 = DType.uint32
    bits = value.bitcast(u32)
    odd = bits.binary(AluOp.Shr, AluExp.const(16, u32)) & AluExp.const(1, u32)
    rounded = (bits + AluExp.const(0x7FFF, u32) + odd) & AluExp.const(0xFFFF0000, u32)
    # rounding a NaN's payload could carry it into infinity
    nan = AluExp.const(0x7F800000, u32).lt(bits & AluExp.const(0x7FFFFFFF, u32))
    quiet = (bits | AluExp.const(0x00400000, u32)) & AluExp.const(0xFFFF0000, u32)
    return nan.where(quiet, rounded).bitcast(DType.float32)

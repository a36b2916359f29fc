"""Recognise sum(a * b) kernels whose two operands each ignore some output axes.

Matmul, batched matmul and convolution all look like this once lowered: the
output axes split into M axes (only `a` reads them), N axes (only `b`), and
batch axes (both or neither). Such a kernel can stage tiles of `a` and `b` in
shared memory and reuse each loaded value TILE_N (or TILE_M) times.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.kernel import GIDX, RIDX, Kernel

BIDX, MIDX, NIDX = "bidx", "midx", "nidx"


@dataclass(frozen=True)
class Contraction:
    a: AluExp           # the left operand, of bidx, midx and ridx
    b: AluExp           # the right operand, of bidx, nidx and ridx
    out_index: AluExp   # gidx of the output element (bidx, midx, nidx)
    batch: int
    m: int
    n: int


def find_contraction(kernel: Kernel) -> Optional[Contraction]:
    red = kernel.reduction
    body = kernel.exp
    if red is None or red.op is not AluOp.Add or body.op is not AluOp.Mul \
            or body.dtype is DType.bool or kernel.size == 0:
        return None
    shape = kernel.shape
    axes = [AluExp.special(f"o{i}", n) for i, n in enumerate(shape)]
    flat = _ravel(axes, shape)
    gidx = AluExp.special(GIDX, kernel.size)
    lhs, rhs = (s.substitute({gidx: flat}).simplify() for s in body.src)
    used_a, used_b = _specials(lhs), _specials(rhs)
    groups: dict[str, list[int]] = {BIDX: [], MIDX: [], NIDX: []}
    for i, ax in enumerate(axes):
        name = ax.arg[0]
        in_a, in_b = name in used_a, name in used_b
        groups[MIDX if in_a and not in_b else NIDX if in_b and not in_a else BIDX].append(i)
    if not groups[MIDX] or not groups[NIDX]:
        return None
    sizes = {g: math.prod(shape[i] for i in idx) for g, idx in groups.items()}
    coords: dict[AluExp, AluExp] = {}
    for g, idx in groups.items():
        flat_g = AluExp.special(g, sizes[g])
        for i, coord in zip(idx, _unravel(flat_g, [shape[i] for i in idx])):
            coords[axes[i]] = coord
    a, b, out = (e.substitute(coords).simplify() for e in (lhs, rhs, flat))
    return Contraction(a, b, out, sizes[BIDX], sizes[MIDX], sizes[NIDX])


VECTOR = 4
PROOF_POINTS = 1 << 22   # the most index values evaluated to prove vector alignment


@dataclass(frozen=True)
class VectorLoad:
    """An operand read four neighbours at a time: in{slot}[index] with index =
    base + axis, every base a multiple of 4 and the axis' extent too, so each
    aligned group of 4 along `axis` is one vec4 of the input."""
    slot: int
    index: AluExp
    axis: str          # RIDX or the operand's own axis (MIDX / NIDX)


def vector_load(operand: AluExp, own: str, extents: dict[str, int],
                inputs: Sequence[tuple[DType, int]]) -> Optional[VectorLoad]:
    """How `operand` (of bidx, `own` and ridx) can be read as vec4s, or None."""
    if operand.op is not AluOp.GlobalIndex or operand.dtype is not DType.float32:
        return None
    slot, index = operand.arg, operand.src[0]
    if inputs[slot][0] is not DType.float32 or inputs[slot][1] % VECTOR or index.op is not AluOp.Add:
        return None
    for axis in (RIDX, own):
        steps = [e for e in index.src if e.op is AluOp.Special and e.arg[0] == axis]
        if len(steps) != 1 or extents[axis] % VECTOR:
            continue
        base = next(e for e in index.src if e is not steps[0])
        if axis not in _specials(base) and _all_multiples(base, VECTOR):
            return VectorLoad(slot, index, axis)
    return None


def operand_vectors(kernel: Kernel, c: Contraction,
                    tile_k: int) -> tuple[Optional[VectorLoad], Optional[VectorLoad]]:
    """Which of a contraction's operands a tile with `tile_k` steps per slice reads as
    vec4s (a vector along K must not straddle two slices)."""
    extents = {RIDX: kernel.reduction.size, MIDX: c.m, NIDX: c.n}
    found = (vector_load(c.a, MIDX, extents, kernel.inputs),
             vector_load(c.b, NIDX, extents, kernel.inputs))
    return tuple(v if v and (v.axis != RIDX or tile_k % VECTOR == 0) else None
                 for v in found)


def _all_multiples(e: AluExp, of: int) -> bool:
    """Is every value `e` takes over its index ranges a multiple of `of`? (evaluated on
    the whole range; past PROOF_POINTS values, not proven: False)"""
    ranges = {n.arg[0]: n.arg[1] for n in e.toposort() if n.op is AluOp.Special}
    if any(n.op is AluOp.GlobalIndex for n in e.toposort()) or \
            math.prod(ranges.values()) > PROOF_POINTS:
        return False
    grids = np.meshgrid(*(np.arange(n, dtype=np.int32) for n in ranges.values()),
                        indexing="ij", sparse=True)
    values = evaluate(e, dict(zip(ranges, grids)))
    return bool(np.all(np.asarray(values) % of == 0))


def _specials(e: AluExp) -> set[str]:
    return {n.arg[0] for n in e.toposort() if n.op is AluOp.Special}


def _ravel(coords: Sequence[AluExp], shape: Sequence[int]) -> AluExp:
    # a sum of coord * stride terms: the form the simplifier divides term by term
    out, stride = AluExp.const(0, DType.int32), 1
    for c, n in reversed(list(zip(coords, shape))):
        out = out + c * stride
        stride *= n
    return out.simplify()


def _unravel(flat: AluExp, shape: Sequence[int]) -> list[AluExp]:
    coords, inner = [], math.prod(shape)
    for n in shape:
        inner //= n
        coords.append(((flat // inner) % n).simplify())
    return coords

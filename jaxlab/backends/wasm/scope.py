"""Values of IR nodes inside a tile or loop body of a generated kernel.

A Scope turns nodes into WAT: each node at each copy position (offsets from the
loop variables) becomes a local set once, as a vector of four lanes when it
varies along the scope's lane axis, else as a scalar. Loads and stores get
their addresses here: an affine index becomes a pointer (shared by the
copies) plus a constant offset, and a pointer that moves with ridx is bumped
each iteration.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from jaxlab.backends.traced import traced
from jaxlab.backends.wasm import mathlib
from jaxlab.backends.wasm.analysis import (BATCH, COL, RIDX, ROW, Axis, affine, contiguous,
                                           in_bounds, runs_of_four)
from jaxlab.backends.wasm.optable import (F, F16_EXACT, INLINED, INLINED_BY_SIGN, MEM, SCALAR_TYPE, kind,
                                          bound_by_constant, const, divide_by_constant, extract, replace, splat,
                                          templates, vector_memory)
from jaxlab.graph import toposort
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.printer import leaf_text, node_text, render

if TYPE_CHECKING:
    from jaxlab.backends.wasm.codegen import KernelWat

AXES = (ROW, COL, RIDX)
Pos = dict[Axis, int]         # copy offsets from the loop variables, per axis


class Memo(enum.Enum):
    """What else a scope memoises besides a node's value at a copy position."""
    SPLAT = "a scalar value in every lane"
    QUAD = "four consecutive ridx values loaded at once"
    POINTER = "an address shared by the copies"
    PACKED = "the pointer into the packed panel"
    ROW_PANEL = "the pointer into the packed rows"


@dataclass(frozen=True)
class Val:
    text: str                 # a WAT expression (usually a local.get)
    vector: bool              # v128 of four lanes, or a scalar


def round_f16(text: str, vector: bool) -> str:
    """A float16 result: its f32 value rounded to the nearest half."""
    if vector:
        return f"(call $f16_round {text})"
    return extract(DType.float32, f"(call $f16_round {splat(DType.float32, text)})", 0)


class Scope:
    """Where values are computed: a tile (before and after its loops) or one loop body.

    Values are memoised per (node, copy offsets on the axes the node depends on),
    so a value shared by copies (a row value in a matmul tile) is computed once.
    Nodes that do not depend on ridx always belong to the tile scope.
    """

    def __init__(self, gen: "KernelWat", lane: Optional[Axis], parent: Optional["Scope"] = None,
                 start: int = 0, quads: bool = False, tile_rows: int = 1) -> None:
        self.gen, self.lane, self.parent = gen, lane, parent
        self.start = start                      # a loop's first ridx
        self.quads = quads                      # ridx copies come in aligned fours
        self.tile_rows = tile_rows              # rows of the tile a loop body computes
        self.memo: dict[tuple | Memo, Val] = {}
        self.lines: list[str] = []
        self.prelude: list[str] = []            # a loop's pointer set-up, run before it
        self.increments: dict[str, int] = {}   # pointer -> bytes per ridx step
        self.accs: dict[tuple, Val] = {}

    def owner(self, node: AluExp) -> "Scope":
        if self.parent is not None and RIDX not in self.gen.deps(node):
            return self.parent
        return self

    # --- values in the form a consumer needs --------------------------------------
    def get(self, node: AluExp, pos: Pos) -> Val:
        scope = self.owner(node)
        key = (node, self.gen.restrict(node, pos))
        if key not in scope.memo:
            if node.src and not self.gen.warming:
                scope._warm_sources(node, pos)
            scope.memo[key] = scope._make(node, pos, key[1])
        return scope.memo[key]

    def _warm_sources(self, node: AluExp, pos: Pos) -> None:
        """Compute the values `node` is built from first, sources before users, so
        computing `node` finds them memoised: the Python stack stays a few frames
        deep however deep the expression (a chain of 10,000 ops)."""
        # a value already memoised (one a row kernel's fold kept) stops the walk: its
        # sources are not computed again (Cranelift keeps a dead load: a load may trap)
        def sources(n: AluExp) -> tuple:
            return () if self._memoised(n, pos) else self._value_sources(n)

        self.gen.warming = True
        try:
            for n in toposort(sources(node), sources):
                if sources(n):
                    self.get(n, pos)
        finally:
            self.gen.warming = False

    def _memoised(self, node: AluExp, pos: Pos) -> bool:
        return (node, self.gen.restrict(node, pos)) in self.owner(node).memo

    def _value_sources(self, node: AluExp) -> tuple:
        """The sources whose values computing `node` asks for (a load's index and a
        packed panel are addressed, not computed)."""
        if node.op is AluOp.GlobalIndex or node in self.gen.packed or node in self.gen.row_packed:
            return ()
        return node.src

    def value(self, node: AluExp, pos: Pos, vector: bool) -> str:
        return self.vec(node, pos) if vector else self.sca(node, pos)

    def sca(self, node: AluExp, pos: Pos) -> str:
        v = self.get(node, pos)
        assert not v.vector, f"scalar wanted for {node.op.name}"
        return v.text

    def vec(self, node: AluExp, pos: Pos) -> str:
        if node.is_const:
            return const(node.arg, node.dtype, True)
        scope = self.owner(node)
        if scope.lane is not None and scope.lane in self.gen.deps(node):
            return self.get(node, pos).text
        key = (node, self.gen.restrict(node, pos), Memo.SPLAT)
        if key not in scope.memo:
            text = scope._load_splat(node, pos)
            if text is None:
                text = splat(node.dtype, self.sca(node, pos))
            got = scope.bind(text, True, node.dtype, f"{self.gen.label(node)} in every lane",
                             f"{self.gen.label(node)}x4{_suffix(key[1])}")
            scope.memo[key] = Val(got, True)
        return scope.memo[key].text

    def bind(self, text: str, vector: bool, dtype: DType, comment: str,
             name: Optional[str] = None, node: Optional[AluExp] = None) -> str:
        """Set a new local to `text` (the value of `node`); returns its local.get."""
        name = self.gen.local(name or self.gen.fresh("t"),
                              "v128" if vector else SCALAR_TYPE[kind(dtype)])
        marks = [node] if node is not None else []
        if "\n" in text:   # an inlined function: the comment goes first
            self.lines += [f";; {comment}", traced(f"(local.set ${name} {text})", marks)]
        else:
            self.lines.append(traced(f"(local.set ${name} {text})  ;; {comment}", marks))
        return f"(local.get ${name})"

    # --- computing one node ----------------------------------------------------------
    def _make(self, node: AluExp, pos: Pos, key: tuple) -> Val:
        op = node.op
        vector = self.lane is not None and self.lane in self.gen.deps(node)
        if op is AluOp.Const:
            return Val(const(node.arg, node.dtype, False), False)
        if op is AluOp.Variable:
            return self.accs[tuple((a, o) for a, o in key)]
        if op is AluOp.Special:
            axis = Axis(node.arg[0])
            scalar = axis.get
            if pos.get(axis, 0):
                scalar = f"(i32.add {scalar} (i32.const {pos[axis]}))"
            if not vector:
                return Val(scalar, False)
            text = f"(i32x4.add (i32x4.splat {scalar}) (v128.const i32x4 0 1 2 3))"
        elif node in self.gen.packed and vector:
            text = self._packed(node, pos)
        elif op is AluOp.GlobalIndex:
            text = self._load(node, pos, vector)
        else:
            text = self._compute(node, pos, vector)
        ident = self.gen.label(node)
        name = f"{'v' if vector else 's'}{ident[1:]}{_suffix(key)}"
        comment = f"{ident} = {self._describe(node)}" + (f"  @ {_suffix(key)[1:]}" if _suffix(key) else "")
        return Val(self.bind(text, vector, node.dtype, comment, name, node), vector)

    def _describe(self, node: AluExp) -> str:
        if node.op is AluOp.GlobalIndex:
            return _one_line(render(node))
        # the node over its sources' labels, so a comment never prints a whole subtree
        return node_text(node, [leaf_text(s) if s.op in (AluOp.Const, AluOp.Special, AluOp.Variable)
                                else self.gen.label(s) for s in node.src])

    def _compute(self, node: AluExp, pos: Pos, vector: bool) -> str:
        op, srcs = node.op, node.src
        k_in = kind(srcs[-1].dtype)
        tmpl = None
        if op in (AluOp.Idiv, AluOp.Mod) and srcs[1].is_const:
            tmpl = divide_by_constant(op, k_in, srcs[1].arg, srcs[0].vmin >= 0)
        elif op in (AluOp.Min, AluOp.Max) and srcs[0].is_const != srcs[1].is_const:
            if srcs[0].is_const:   # commutative: the constant goes second
                srcs = (srcs[1], srcs[0])
            tmpl = bound_by_constant(op, k_in, srcs[1].arg)
        s_t, v_t = tmpl or templates(op, kind(node.dtype), k_in)
        args: dict[str, object] = {"arg": node.arg}
        letters = "abcd"
        if vector and op in INLINED and k_in is F:
            fn, extra = INLINED_BY_SIGN.get((op, self.gen.sign(srcs[0])), INLINED[op])
            decls, text = mathlib.inline(fn, [self.vec(srcs[0], pos), *extra],
                                         self.gen.fresh("m") + "_")
            for name, wasm_type in decls.items():
                self.gen.local(name, wasm_type)
        elif vector and v_t is not None and not ("{b_s}" in v_t and self._is_vec(srcs[1])):
            for letter, s in zip(letters, srcs):
                args[letter] = self.vec(s, pos)
            if "{b_s}" in v_t:
                args["b_s"] = self.sca(srcs[1], pos)
            text = v_t.format(**args)
        elif vector:
            text = self._lanewise(node, s_t, pos)
        elif s_t is not None:
            for letter, s in zip(letters, srcs):
                args[letter] = self.sca(s, pos)
            text = s_t.format(**args)
        else:   # only the vector form exists: run it on splats, keep lane 0
            for letter, s in zip(letters, srcs):
                args[letter] = splat(s.dtype, self.sca(s, pos))
            args["b_s"] = args.get("b")
            text = extract(node.dtype, v_t.format(**args), 0)
        if node.dtype is DType.float16 and op not in F16_EXACT:
            text = round_f16(text, vector)
        return text

    def _is_vec(self, node: AluExp) -> bool:
        owner = self.owner(node)
        return owner.lane is not None and owner.lane in self.gen.deps(node)

    def _lanewise(self, node: AluExp, s_t: str, pos: Pos) -> str:
        """No SIMD instruction: the scalar one on each lane."""
        srcs = [(s, self.vec(s, pos) if self._is_vec(s) else None) for s in node.src]
        lanes = []
        for lane in range(self.gen.lanes):
            args: dict[str, object] = {"arg": node.arg}
            for letter, (s, v) in zip("abcd", srcs):
                args[letter] = extract(s.dtype, v, lane) if v is not None else self.sca(s, pos)
            args["b_s"] = args.get("b")
            lanes.append(s_t.format(**args))
        text = splat(node.dtype, lanes[0])
        for lane in range(1, self.gen.lanes):
            text = replace(node.dtype, text, lane, lanes[lane])
        return text

    # --- memory ---------------------------------------------------------------------
    def _load(self, node: AluExp, pos: Pos, vector: bool) -> str:
        slot, dtype = node.arg, node.dtype
        count = self.gen.kernel.inputs[slot][1]
        if count == 0:
            return const(0, dtype, vector)
        mem, isz = MEM[dtype], dtype.itemsize
        base = f"(local.get $in{slot})"
        index = node.src[0]
        safe = in_bounds(index, count)
        moves = vector_memory(dtype, self.gen.lanes) if vector else None
        if moves is not None and safe and contiguous(index, self.lane, self.gen.deps):
            ptr, off = self.address(base, isz, index, pos)
            raw = moves[0].format(off=off, addr=ptr)
        elif moves is not None and safe and runs_of_four(index, self.lane, self.gen.deps):
            # lane 0's index addresses all the lanes
            first = extract(DType.int32, self.vec(index, pos), 0)
            raw = moves[0].format(off=0, addr=_scaled(base, isz, first))
        elif vector:   # a gather: one scalar load per lane
            idx = self.vec(index if safe else _clamp(index, count), pos)
            lanes = [f"({mem.load} {_scaled(base, isz, extract(DType.int32, idx, lane))})"
                     for lane in range(self.gen.lanes)]
            raw = f"({mem.raw_lanes}.splat {lanes[0]})"
            for lane in range(1, self.gen.lanes):
                raw = f"({mem.raw_lanes}.replace_lane {lane} {raw} {lanes[lane]})"
        elif safe:
            ptr, off = self.address(base, isz, index, pos)
            raw = f"({mem.load} offset={off} {ptr})"
        else:
            raw = f"({mem.load} {_scaled(base, isz, self.sca(_clamp(index, count), pos))})"
        if not mem.decode:
            return raw
        if vector:
            return mem.decode.format(v=raw)
        if mem.decode_scalar:
            return mem.decode_scalar.format(v=raw)
        if dtype is DType.float16:
            return extract(dtype, mem.decode.format(v=f"(i32x4.splat {raw})"), 0)
        return raw   # a bool byte is already 0 or 1

    def _packed(self, node: AluExp, pos: Pos) -> str:
        """A panel operand, read back from $scratch by a pointer that moves with ridx."""
        gen = self.gen
        if Memo.PACKED not in self.memo:
            name = gen.local(gen.fresh("pp"), "i32")
            self.prelude.append(f"(local.set ${name} (i32.add (local.get $panel) "
                                f"(i32.const {self.start * gen.pack_stride})))  ;; packed panel")
            self.increments[name] = gen.pack_stride
            self.memo[Memo.PACKED] = Val(name, False)
        ptr = self.memo[Memo.PACKED].text
        off = pos[RIDX] * gen.pack_stride + (gen.packed[node] * gen.plan.tile_vectors
                                             + pos[COL] // 4) * 16
        return f"(v128.load offset={off} (local.get ${ptr}))"

    def _load_splat(self, node: AluExp, pos: Pos) -> Optional[str]:
        """A 4- or 8-byte scalar load wanted in every lane: v128.load32_splat (64_splat)
        reads it once.

        In a loop unrolled by a multiple of 4 along ridx, four consecutive ridx values
        are one v128.load, and each copy takes its lane with a shuffle; so are four
        consecutive rows of a tile of at least four (a transposed operand, read down
        its columns: the quads overlap rather than read past the tile).
        """
        if node in self.gen.row_packed:
            return self._row_panel_splat(node, pos)
        if node.op is not AluOp.GlobalIndex or node.dtype.itemsize not in (4, 8):
            return None
        count = self.gen.kernel.inputs[node.arg][1]
        index = node.src[0]
        if count == 0 or not in_bounds(index, count):
            return None
        if node.dtype.itemsize == 8:   # a 64-bit value: both lanes at once
            ptr, off = self.address(f"(local.get $in{node.arg})", 8, index, pos)
            return f"(v128.load64_splat offset={off} {ptr})"
        aff = affine(index)
        steady = lambda axis: aff.coeff(axis) == 1 and axis not in self.gen.deps(aff.rest)  # noqa: E731
        if self.quads and steady(RIDX):
            u = pos.get(RIDX, 0)
            return self._quad_lane(node, pos, RIDX, u - u % 4)
        if self.tile_rows >= 4 and steady(ROW):
            r = pos.get(ROW, 0)
            return self._quad_lane(node, pos, ROW, min(r - r % 4, self.tile_rows - 4))
        ptr, off = self.address(f"(local.get $in{node.arg})", 4, index, pos)
        return f"(v128.load32_splat offset={off} {ptr})"

    def _row_panel_splat(self, node: AluExp, pos: Pos) -> str:
        """A row-side operand in every lane, from the packed rows (codegen._pack_rows): in
        quads, one v128.load of four ridx values shared by the copies, else a splat load."""
        gen = self.gen
        if Memo.ROW_PANEL not in self.memo:
            name = gen.local(gen.fresh("rp"), "i32")
            self.prelude.append(f"(local.set ${name} (i32.add {gen.row_panel_row()} "
                                f"(i32.const {self.start * 4})))  ;; packed rows")
            self.increments[name] = 4
            self.memo[Memo.ROW_PANEL] = Val(name, False)
        ptr = self.memo[Memo.ROW_PANEL].text
        r, u = pos.get(ROW, 0), pos.get(RIDX, 0)
        base = gen.row_packed[node] * gen.row_panel[1] + r * gen.form.steps * 4
        if not self.quads:
            return f"(v128.load32_splat offset={base + 4 * u} (local.get ${ptr}))"
        first = u - u % 4
        key = (node, r, first, Memo.ROW_PANEL)
        if key not in self.memo:
            label = gen.label(node)
            self.memo[key] = Val(self.bind(f"(v128.load offset={base + 4 * first} (local.get ${ptr}))",
                                           True, node.dtype, f"{label} at ridx+{first}..+3, packed",
                                           f"{label}q{_suffix(((ROW, r), (RIDX, first)))}"), True)
        return _lane_of_quad(self.memo[key].text, u - first)

    def _quad_lane(self, node: AluExp, pos: Pos, axis: Axis, first: int) -> str:
        """Copy `pos`'s value of `node` in every lane, from one v128.load of four
        consecutive values along `axis` starting at offset `first` (shared by the copies)."""
        at = {**pos, axis: first}
        key = (node, self.gen.restrict(node, at), Memo.QUAD)
        if key not in self.memo:
            ptr, off = self.address(f"(local.get $in{node.arg})", 4, node.src[0], at)
            label = self.gen.label(node)
            self.memo[key] = Val(self.bind(f"(v128.load offset={off} {ptr})", True, node.dtype,
                                           f"{label} at {axis.value}+{first}..+3",
                                           f"{label}q{_suffix(key[1])}"), True)
        return _lane_of_quad(self.memo[key].text, pos.get(axis, 0) - first)

    def address(self, base: str, isz: int, index: AluExp, pos: Pos) -> tuple[str, int]:
        """(pointer, constant byte offset) of element `index` at copy `pos`.

        The pointer holds base + isz*(sum of coeff*axis + the non-affine rest) and is
        shared by every copy; the copies differ only in the constant offset. A
        pointer linear in ridx is set up before its loop, at the loop's first ridx,
        and moves with the loop.
        """
        gen = self.gen
        aff = affine(index)
        rest_deps = gen.deps(aff.rest)
        moves = aff.coeff(RIDX) != 0 and RIDX not in rest_deps
        terms = tuple((a, c) for a, c in aff.coeffs if not (a == RIDX and moves))
        holder = self if RIDX in rest_deps or moves else (self.parent or self)
        rest_key = gen.restrict(aff.rest, pos) if aff.rest is not None else ()
        key = (Memo.POINTER, base, isz, terms, aff.rest, rest_key, aff.coeff(RIDX) if moves else 0)
        if key not in holder.memo:
            parts = [base] + [_scaled_axis(a, c * isz) for a, c in terms]
            if moves and self.start:
                parts.append(f"(i32.const {aff.coeff(RIDX) * isz * self.start})")
            if aff.rest is not None:
                parts.append(_times(self.sca(aff.rest, pos), isz))
            text = parts[0]
            for p in parts[1:]:
                text = f"(i32.add {text} {p})"
            name = gen.local(gen.fresh("p"), "i32")
            (holder.prelude if moves else holder.lines).append(
                f"(local.set ${name} {text})  ;; address of {_one_line(render(index))}"
                + (f" at ridx = {self.start}" if moves else ""))
            holder.memo[key] = Val(name, False)
        ptr = holder.memo[key].text
        if moves:
            self.increments[ptr] = aff.coeff(RIDX) * isz
        off = isz * (sum(c * pos.get(a, 0) for a, c in aff.coeffs) + aff.const)
        # Wasm adds a load's offset to the pointer without wrapping: a pointer that can sit
        # below its buffer (a flipped axis) takes the offset in a wrapping i32.add instead
        sizes = {BATCH: gen.form.batches, ROW: gen.form.rows, COL: gen.form.cols,
                 RIDX: gen.form.steps}
        lowest = sum(min(0, c * (sizes[a] - 1)) for a, c in aff.coeffs) + \
            (aff.rest.vmin if aff.rest is not None else 0)
        if (off < 0 or lowest < 0) and off != 0:
            return f"(i32.add (local.get ${ptr}) (i32.const {off}))", 0
        return f"(local.get ${ptr})", off


def _lane_of_quad(quad: str, k: int) -> str:
    """Lane k of a vector in all four lanes."""
    lane = " ".join(str(4 * k + b) for b in range(4))
    return f"(i8x16.shuffle {' '.join([lane] * 4)} {quad} {quad})"


def _one_line(text: str) -> str:
    """The printer names shared subexpressions on lines of their own; a comment is one line."""
    return "; ".join(text.splitlines())


_MARK = {BATCH: "b", ROW: "r", COL: "c", RIDX: "k"}


def _suffix(key: tuple) -> str:
    marks = "".join(f"{_MARK[a]}{o}" for a, o in key if o)
    return f"_{marks}" if marks else ""


def _clamp(index: AluExp, count: int) -> AluExp:
    """Indices the range analysis cannot bound are clamped, as np.take(mode='clip')."""
    return index.max(0).min(count - 1)


def _times(text: str, k: int) -> str:
    if k == 1:
        return text
    if k & (k - 1) == 0:
        return f"(i32.shl {text} (i32.const {k.bit_length() - 1}))"
    return f"(i32.mul {text} (i32.const {k}))"


def _scaled_axis(axis: Axis, k: int) -> str:
    return _times(axis.get, k) if k > 0 else f"(i32.mul {axis.get} (i32.const {k}))"


def _scaled(base: str, isz: int, index: str) -> str:
    return f"(i32.add {base} {_times(index, isz)})"

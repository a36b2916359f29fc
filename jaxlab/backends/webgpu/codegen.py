"""Kernel + Tuning -> WGSL text. No wgpu here: the text is testable without a device.

Every shader has the same frame: input bindings in0..inN (read-only), the
output `out` last, `group` = this workgroup's flat index (folded from a 2-D
grid past the per-dimension limit), and a body per strategy (see tune.py).
"""
from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

import numpy as np

from jaxlab.backends.traced import Listing, join, like, listing, marks_of, traced
from jaxlab.backends.webgpu.contraction import (BIDX, MIDX, NIDX, VECTOR, VectorLoad,
                                                operand_vectors)
from jaxlab.backends.webgpu.expr import ExpWriter, Name
from jaxlab.backends.webgpu.ops import Lang, bare, cast_text, const_text, library, op_text
from jaxlab.backends.webgpu.rows import RowWriter
from jaxlab.backends.webgpu.tune import (SHARED_PAD, VECTOR_OUTPUTS, Limits, Strategy, Tile,
                                         Tuning, grid_for, vector_slots)
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.evaluate import evaluate
from jaxlab.ir.kernel import ACC, GIDX, RIDX, Kernel, reduce_identity
from jaxlab.ir.provenance import FOLD


@dataclass(frozen=True)
class Program:
    """One compute pipeline launch: WGSL source and its grid."""
    source: str
    grid: tuple[int, int, int]
    workgroup: int
    label: str = ""
    line_marks: tuple[frozenset, ...] = ()   # per line of source, what it computes (traced.py)


class Src:
    """Indented WGSL lines."""

    def __init__(self, depth: int = 0) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def __call__(self, *lines: str) -> None:
        self.lines.extend(like("  " * self.depth + s, s) if s else "" for s in lines)

    @contextlib.contextmanager
    def block(self, head: str) -> Iterator[None]:
        self(head + " {")
        self.depth += 1
        yield
        self.depth -= 1
        self("}")

    def text(self) -> Listing:
        return listing(self.lines)


MAIN = ("fn main(@builtin(workgroup_id) wid: vec3<u32>, "
        "@builtin(local_invocation_index) lid: u32)")


SUBGROUP_BUILTINS = (", @builtin(subgroup_invocation_id) sg_lane: u32, @builtin(subgroup_size) "
                     "sg_size: u32, @builtin(subgroup_id) sg_id: u32, @builtin(num_subgroups) "
                     "n_sg: u32")
_SUBGROUP_FOLDS = {AluOp.Add: "subgroupAdd", AluOp.Max: "subgroupMax", AluOp.Min: "subgroupMin"}


@dataclass(frozen=True)
class HandWritten:
    """A hand-written compute shader: its module-scope declarations, and main's
    statements (indented by two spaces), which run once `group` is defined."""
    declarations: str
    body: str

    def source(self, threads: int, prologue: list[str]) -> str:
        head = [f"@compute @workgroup_size({threads})", f"{MAIN} {{", *(f"  {p}" for p in prologue)]
        return "\n".join([self.declarations.rstrip("\n"), "", *head,
                          self.body.strip("\n"), "}"]) + "\n"


def group_prologue(groups: int, limits: Limits) -> tuple[tuple[int, int, int], list[str]]:
    """The launch grid for `groups` workgroups, and the WGSL lines that define
    `group`, this workgroup's flat index (needs `wid`, the workgroup id)."""
    grid = grid_for(groups, limits)
    if grid[1] == 1:
        return grid, ["let group = wid.x;"]
    return grid, [f"// more than {limits.max_groups_per_dim} workgroups: the grid is 2-D, "
                  "fold it back",
                  f"let group = wid.y * {grid[0]}u + wid.x;",
                  f"if (group >= {groups}u) {{ return; }}"]


def generate(kernel: Kernel, tuning: Tuning, lang: Lang, limits: Limits) -> Program:
    """The WGSL program that computes `kernel` laid out as `tuning` says (with split-K,
    the partial sums; generate_split_sum adds them)."""
    return _Shader(kernel, tuning, lang, limits).program()


def generate_split_sum(kernel: Kernel, tuning: Tuning, lang: Lang, limits: Limits) -> Program:
    """Split-K's second pass: binds the inputs, the output and the partial sums."""
    return _Shader(kernel, tuning, lang, limits).split_sum()


class _Shader:
    def __init__(self, kernel: Kernel, tuning: Tuning, lang: Lang, limits: Limits) -> None:
        self.k, self.t, self.lang, self.limits = kernel, tuning, lang, limits
        self.pack = lang.packed(kernel.dtype)
        body_dtype = kernel.exp.dtype
        self.acc_dtype = DType.float32 if body_dtype is DType.float16 else body_dtype
        self.words = math.ceil(kernel.size / self.pack)   # stored u32 words (or elements)
        self.needs: set[str] = set()   # the library helpers the written code calls
        self.vector_slots: set[int] = set()   # inputs bound as array<vec4<...>>
        self.vector_out = False               # the output too
        self.subgroups = False   # main takes the subgroup builtins

    # --- the frame ---------------------------------------------------------
    def program(self) -> Program:
        body = Src(1)
        make = {Strategy.ELEMENTWISE: self._elementwise, Strategy.REDUCE: self._reduce,
                Strategy.GROUP_REDUCE: self._group_reduce,
                Strategy.TILED: self._tiled, Strategy.ROWS: self._rows}[self.t.strategy]
        groups, shared, functions = make(body)
        grid, prologue = group_prologue(groups, self.limits)
        main = Src()
        main(f"@compute @workgroup_size({self.t.workgroup})")
        with main.block(MAIN[:-1] + SUBGROUP_BUILTINS + ")" if self.subgroups else MAIN):
            main(*prologue)
            main.lines.extend(body.lines)
        code = join([p for p in [*self._declarations(), *shared, *functions, main.text()] if p],
                    "\n\n")
        helpers = library(self.needs)
        head = ["enable f16;"] if self._uses_f16() else []
        head.append(f"// {self.k.name}: {self._summary()}")
        text = join([*head, helpers, code] if helpers else [*head, code], "\n\n")
        return Program(text + "\n", grid, self.t.workgroup, self.k.name, text.line_marks)

    def _uses_f16(self) -> bool:
        k = self.k
        roots = k.roots()
        dtypes = {d for d, _ in k.inputs} | {n.dtype for r in roots for n in r.toposort()}
        return self.lang.f16 and DType.float16 in dtypes

    def _summary(self) -> str:
        t = self.t
        if t.strategy is Strategy.TILED:
            return (f"tiled, {t.tile.m}x{t.tile.n} outputs per workgroup, "
                    f"{t.tile.reg_m}x{t.tile.reg_n} per thread")
        extra = f", unroll {t.unroll}" if t.unroll > 1 else ""
        if t.strategy is Strategy.ROWS:
            return f"rows, a workgroup of {t.workgroup} threads per row of " \
                   f"{self.k.row_length}, {t.upcast} values per thread"
        if t.strategy is Strategy.GROUP_REDUCE:
            return f"group_reduce, {t.workgroup // t.group_outputs} threads per output, " \
                   f"{t.group_outputs} outputs per workgroup{extra}"
        return f"{t.strategy.value}, {t.workgroup} threads per workgroup, {t.upcast} outputs " \
               f"per thread{extra}"

    def _declarations(self) -> list[str]:
        lang = self.lang
        decls = [f"@group(0) @binding({i}) var<storage, read> in{i}: array<"
                 f"{_vec(VECTOR if i in self.vector_slots else 1, lang.storage(d))}>;"
                 for i, (d, _) in enumerate(self.k.inputs)]
        out = _vec(VECTOR if self.vector_out else 1, lang.storage(self.k.dtype))
        decls.append(f"@group(0) @binding({len(self.k.inputs)}) var<storage, read_write> "
                     f"out: array<{out}>;")
        helpers = [_packed_loader(i, d, lang) for i, (d, _) in enumerate(self.k.inputs)
                   if lang.packed(d) > 1]
        return ["\n".join(decls), *helpers]

    def _load(self, slot: int, index: str, dtype: DType) -> str:
        if slot in self.vector_slots:   # bound as vec4s for a tile's loads
            return f"in{slot}[u32({index}) / 4u][u32({index}) % 4u]"
        return f"load_in{slot}({index})" if self.lang.packed(dtype) > 1 else f"in{slot}[{index}]"

    def _writer(self, roots: list[AluExp], names: dict[str, Name]) -> ExpWriter:
        return ExpWriter(self.lang, names, roots, self._load, self.needs)

    # --- outputs: `upcast` consecutive ones per thread, packed into words --
    def _outputs(self, src: Src, first: str, count: int, compute: Callable[[Src], str],
                 store_if: str = "") -> None:
        """Compute outputs first .. first+count-1 (u32 text) and store them."""
        p, guard = self.pack, (lambda s: f"if ({store_if}) {{ {s} }}" if store_if else s)
        if count == 1:
            src(f"let gidx = i32({first});")
            value = compute(src)
            src(like(guard(f"out[gidx] = {bare(value)};"), value))
            return
        if p > 1:
            src("var word = 0u;")
        src(f"// {count} consecutive outputs" + (f", {p} per u32 word" if p > 1 else ""))
        with src.block(f"for (var lane = 0u; lane < {count}u; lane++)"):
            src(f"let gidx = i32({first} + lane);")
            if p == 1:
                src(f"if (gidx >= {self.k.size}i) {{ break; }}")
                value = compute(src)
                src(like(guard(f"out[gidx] = {bare(value)};"), value))
                return
            value = compute(src)
            src(like(f"word |= {self._word_bits(value)} << ({32 // p}u * (lane % {p}u));", value))
            with src.block(f"if (lane % {p}u == {p - 1}u)"):
                src(f"let w = ({first} + lane) / {p}u;")
                src(guard(f"if (w < {self.words}u) {{ out[w] = word; }}"))
                src("word = 0u;")

    # --- strategies: each fills main's body and returns (groups, shared, functions)
    def _elementwise(self, src: Src) -> tuple[int, list[str], list[str]]:
        t, k = self.t, self.k
        slots = vector_slots(k) if t.upcast == VECTOR_OUTPUTS else None
        if slots is not None:
            return self._vector_elementwise(src, slots)
        threads = math.ceil(k.size / t.upcast)
        src(f"let thread = group * {t.workgroup}u + lid;",
            f"if (thread >= {threads}u) {{ return; }}")
        w = self._writer([k.exp], {GIDX: Name("gidx")})

        def compute(s: Src) -> str:
            value = w.value(k.exp)
            s(*w.take(0))
            return value
        self._outputs(src, f"thread * {t.upcast}u" if t.upcast > 1 else "thread", t.upcast,
                      compute)
        return math.ceil(threads / t.workgroup), [], []

    def _vector_elementwise(self, src: Src, slots: frozenset[int]) -> tuple[int, list[str],
                                                                             list[str]]:
        """4 neighbouring outputs per thread: the operands read at gidx come in as one vec4
        per input, the outputs leave as one vec4."""
        t, k = self.t, self.k
        threads, lanes = k.size // VECTOR_OUTPUTS, "xyzw"
        self.vector_slots, self.vector_out = set(slots), True
        gidx = AluExp.special(GIDX, k.size)
        operands = {AluExp.load(s, gidx, d): AluExp.variable(f"v{s}", d)
                    for s, (d, _) in enumerate(k.inputs) if s in slots}
        exp = k.exp.substitute(operands)
        w = self._writer([exp], {GIDX: Name("gidx")})
        src(f"let thread = group * {t.workgroup}u + lid;",
            f"if (thread >= {threads}u) {{ return; }}",
            *(f"let v{s} = in{s}[thread];" for s in sorted(slots)))
        steps, values = [], []
        for j, lane in enumerate(lanes):
            w.bind(GIDX, f"g{j}", 1)
            for s in slots:
                w.bind(f"v{s}", f"v{s}.{lane}", 1)
            value = w.value(exp)
            steps += [f"let g{j} = i32(thread) * 4i + {j}i;", *w.take(1)]
            values.append(value)
        src(*w.take(0), *steps)
        vec = _vec(VECTOR, self.lang.storage(k.dtype))
        src(like(f"out[thread] = {vec}({', '.join(bare(v) for v in values)});", *values))
        return math.ceil(threads / t.workgroup), [], []

    def _rows(self, src: Src) -> tuple[int, list[str], list[str]]:
        rows = RowWriter(self.k, self.t.workgroup, self.lang, self.needs,
                         lambda names, prefix: ExpWriter(self.lang, names, self.k.roots(),
                                                         self._load, self.needs, prefix,
                                                         share_roots=True))
        groups, shared = rows.write(src)
        self.subgroups = rows.subgroups
        return groups, shared, []

    def _reduce(self, src: Src) -> tuple[int, list[str], list[str]]:
        t, k = self.t, self.k
        red = k.reduction
        threads = math.ceil(k.size / t.upcast)
        src(f"let thread = group * {t.workgroup}u + lid;",
            f"if (thread >= {threads}u) {{ return; }}")
        w = self._writer([k.exp, red.epilogue], {GIDX: Name("gidx"), ACC: self._acc_name()})

        def compute(s: Src) -> str:
            steps = []
            for j in range(t.unroll):
                if j:
                    steps.append(f"let r{j} = r + {j}i;")
                w.bind(RIDX, f"r{j}" if j else "r", 1)
                value = w.value(k.exp)
                steps += [*w.take(1), _fold(f"acc = {bare(self._combine('acc', value))};", value)]
            s(*w.take(0))
            s(f"var acc: {self._acc_type()} = {self._identity()};")
            s(f"// fold the {red.size} reduction steps" +
              (f", {t.unroll} per iteration" if t.unroll > 1 else ""))
            with s.block(f"for (var r = 0i; r < {red.size}i; r += {t.unroll}i)"):
                s(*steps)
            value = w.value(red.epilogue)
            s(*w.take(0))
            return value
        self._outputs(src, f"thread * {t.upcast}u" if t.upcast > 1 else "thread", t.upcast,
                      compute)
        return math.ceil(threads / t.workgroup), [], []

    def _group_reduce(self, src: Src) -> tuple[int, list[str], list[str]]:
        t, k = self.t, self.k
        red, columns = k.reduction, t.group_outputs
        share = t.workgroup // columns            # threads per output
        w = self._writer([k.exp, red.epilogue], {GIDX: Name("gidx"), ACC: self._acc_name("total")})
        flag = self.acc_dtype is DType.bool   # bools are kept as 0/1 words in shared memory
        # thread lid works on output column o, reduction slice g; partial[g * columns + o]
        g, o = ("lid", "0u") if columns == 1 else ("g", "o")
        if columns > 1:
            src(f"let o = lid % {columns}u;  // which of the group's {columns} outputs",
                f"let g = lid / {columns}u;  // which slice of its reduction")

        def compute(s: Src) -> str:
            steps = []
            for j in range(t.unroll):
                if j:
                    steps.append(f"let r{j} = r + {j * share}i;")
                w.bind(RIDX, f"r{j}" if j else "r", 1)
                value = w.value(k.exp)
                if j:   # copies past the end contribute the identity
                    value = like(f"select({self._identity()}, {bare(value)}, r{j} < {red.size}i)",
                                 value)
                steps += [*w.take(1), _fold(f"acc = {bare(self._combine('acc', value))};", value)]
            s(*w.take(0))
            s(f"var acc: {self._acc_type()} = {self._identity()};")
            s(f"// the {share} threads of an output each fold every {share}th step" +
              (f", {t.unroll} loads in flight" if t.unroll > 1 else ""))
            with s.block(f"for (var r = i32({g}); r < {red.size}i; r += {share * t.unroll}i)"):
                s(*steps)
            if sub:
                self._subgroup_fold(s, sub)
            else:
                self._tree_fold(s, share, columns, g, o, flag)
            if t.upcast > 1:
                s("workgroupBarrier();  // partial is reused for the next output")
            value = w.value(red.epilogue)
            s(*w.take(0))
            return value
        sub = self._subgroup_op() if columns == 1 else None
        self.subgroups = sub is not None
        if columns == 1:
            self._outputs(src, f"group * {t.upcast}u" if t.upcast > 1 else "group", t.upcast,
                          compute, store_if="lid == 0u")
        else:   # a last group may overhang the outputs
            self._outputs(src, f"group * {columns}u + o", 1, compute,
                          store_if=f"g == 0u && gidx < {k.size}i")
        shared = f"var<workgroup> partial: array<{'u32' if flag else self._acc_type()}, " \
                 f"{t.workgroup}>;"
        return math.ceil(self.words / columns), [shared], []

    def _tree_fold(self, s: Src, share: int, columns: int, g: str, o: str, flag: bool) -> None:
        """total = the fold of each output's `share` partial results, pairwise through
        shared memory."""
        red = self.k.reduction
        s(f"partial[lid] = {'u32(acc)' if flag else 'acc'};", "workgroupBarrier();")
        s("// combine the partial results pairwise, halving the active threads")
        with s.block(f"for (var half = {share // 2}u; half > 0u; half >>= 1u)"):
            with s.block(f"if ({g} < half)"):
                other = "lid + half" if columns == 1 else f"lid + half * {columns}u"
                both = ("partial[lid]", f"partial[{other}]")
                pair = (f"{'max' if red.op in (AluOp.Add, AluOp.Max) else 'min'}"
                        f"({both[0]}, {both[1]})" if flag else self._combine(*both))
                s(f"partial[lid] = {bare(pair)};")
            s("workgroupBarrier();")
        s(f"let total = {f'partial[{o}] != 0u' if flag else f'partial[{o}]'};")

    def _subgroup_op(self) -> Optional[str]:
        """The subgroup builtin that folds this reduction, where the adapter has subgroups
        (float max/min keep the tree: the builtins need not propagate NaN)."""
        acc_t = self._acc_type()
        op = self.k.reduction.op
        if not self.lang.subgroups or acc_t not in ("f32", "i32", "u32") or \
                (acc_t == "f32" and op is not AluOp.Add):
            return None
        return _SUBGROUP_FOLDS.get(op)

    def _subgroup_fold(self, s: Src, sub: str) -> None:
        """total = the fold of the workgroup's values: each subgroup folds its own in
        registers, then every subgroup folds the subgroups' results from shared memory."""
        s(f"let folded = {sub}(acc);",
          "if (sg_lane == 0u) { partial[sg_id] = folded; }",
          "workgroupBarrier();",
          f"var gathered: {self._acc_type()} = {self._identity()};",
          "// each lane folds every sg_size-th subgroup result")
        with s.block("for (var i = sg_lane; i < n_sg; i += sg_size)"):
            s(f"gathered = {bare(self._combine('gathered', 'partial[i]'))};")
        s(f"let total = {sub}(gathered);")

    def _tiled(self, src: Src) -> tuple[int, list[str], list[str]]:
        k, tile, c = self.k, self.t.tile, self.t.contraction
        red = k.reduction
        et, acc_t = self.lang.vtype(k.exp.dtype), self._acc_type()
        # vectors of the element type in shared memory where products accumulate as is
        vm, vn = (tile.vec_m, tile.vec_n) if et == acc_t else (1, 1)
        tiles_m, tiles_n = math.ceil(c.m / tile.m), math.ceil(c.n / tile.n)
        threads_m, threads_n = tile.m // tile.reg_m, tile.n // tile.reg_n
        row_a, row_b = tile.m // vm + SHARED_PAD, tile.n // vn + SHARED_PAD   # in vectors
        size_a, size_b = tile.k * row_a, tile.k * row_b
        buffers = 2 if tile.double else 1
        per_slice = math.ceil(math.ceil(red.size / tile.k) / tile.split) * tile.k
        rounds = per_slice // tile.k
        vectors = operand_vectors(k, c, tile.k) if tile.vector_loads else (None, None)
        self.vector_slots = {v.slot for v in vectors if v}
        functions = [
            self._function("operand_a", [BIDX, MIDX, RIDX], c.a, et),
            self._function("operand_b", [BIDX, NIDX, RIDX], c.b, et),
            self._finish(c.out_index) if tile.split == 1 else self._store_partial(),
        ]
        shared = [f"var<workgroup> tile_a: array<{_vec(vm, et)}, {buffers * size_a}>;  "
                  f"// {buffers} x [k][m] slice of a, rows padded by {SHARED_PAD} "
                  "against bank conflicts",
                  f"var<workgroup> tile_b: array<{_vec(vn, et)}, {buffers * size_b}>;  "
                  f"// {buffers} x [k][n] slice of b"]
        outputs = c.batch * tiles_m * tiles_n
        src("// this workgroup's output tile: batch, tile row, tile column" +
            (", and its slice of the reduction" if tile.split > 1 else ""))
        if tile.split > 1:
            src(f"let slice = i32(group / {outputs}u);",
                f"let tile = group % {outputs}u;")
        else:
            src("let tile = group;")
        src(f"let bidx = i32(tile / {tiles_m * tiles_n}u);",
            f"let m0 = i32((tile / {tiles_n}u) % {tiles_m}u) * {tile.m}i;",
            f"let n0 = i32(tile % {tiles_n}u) * {tile.n}i;",
            *((f"let tm = lid % {threads_m}u;  // neighbouring threads store neighbouring "
               "outputs along M", f"let tn = lid / {threads_m}u;")
              if _unit_stride(c.out_index, MIDX, NIDX) > 0 else
              (f"let tm = lid / {threads_n}u;", f"let tn = lid % {threads_n}u;")))
        if tile.split > 1:
            src(f"let k_begin = slice * {per_slice}i;",
                f"let k_end = min(k_begin + {per_slice}i, {red.size}i);")
        else:
            src("let k_begin = 0i;", f"let k_end = {red.size}i;")
        stage = [_Staging("a", c.a, MIDX, c.m, tile.m, vm, row_a, size_a, tile, vectors[0]),
                 _Staging("b", c.b, NIDX, c.n, tile.n, vn, row_b, size_b, tile, vectors[1])]
        functions += [self._function(f"index_{st.name}", [BIDX, st.axis, RIDX],
                                     st.vector.index, "i32") for st in stage if st.vector]
        zero = const_text(0, k.exp.dtype, self.lang, self.needs)
        for st in stage:
            st.positions(src)
        src(*(f"var next_{st.name}{i}: {_vec(st.per_load, et)};" for st in stage
              for i in range(st.slots)))
        accs = [(i, h) for i in range(tile.reg_m) for h in range(tile.reg_n // vn)]
        src(*(f"var acc_{i}_{h}: {_vec(vn, acc_t)} = {_vec(vn, acc_t)}({self._identity()});"
              for i, h in accs))

        def fetch(k0: str) -> None:
            for st in stage:
                st.fetch(src, k0, zero)

        def store(at: str) -> None:
            for st in stage:
                st.store(src, at)

        def multiply(cur: str) -> None:
            src(f"// each thread multiplies its {tile.reg_m}x{tile.reg_n} block, written "
                "out so the block stays in registers")
            for kk in range(tile.k):
                src(*(f"let a{kk}_{g} = tile_a[{cur}a + {kk * row_a + g * threads_m}u + tm];"
                      for g in range(tile.reg_m // vm)),
                    *(f"let b{kk}_{h} = tile_b[{cur}b + {kk * row_b + h * threads_n}u + tn];"
                      for h in range(tile.reg_n // vn)))
                for i, h in accs:
                    a, b = f"a{kk}_{i // vm}" + (f"[{i % vm}]" if vm > 1 else ""), f"b{kk}_{h}"
                    product = f"{a} * {b}" if et == acc_t else f"{acc_t}({a} * {b})"
                    src(traced(f"acc_{i}_{h} += {product};", [FOLD, k.exp]))
        if tile.double:
            src(f"// prefetch: slice r + 1 is loaded into registers while slice r is "
                f"multiplied; {rounds} slices of {tile.k} steps")
            fetch("k_begin")
            store("0u")
            src("workgroupBarrier();")
            src("// slice r is in buffer r % 2")
            with src.block(f"for (var r = 0u; r < {rounds}u; r++)"):
                src(f"let cur_a = (r & 1u) * {size_a}u;", f"let cur_b = (r & 1u) * {size_b}u;")
                with src.block(f"if (r + 1u < {rounds}u)"):
                    fetch(f"k_begin + i32(r + 1u) * {tile.k}i")
                multiply("cur_")
                with src.block(f"if (r + 1u < {rounds}u)"):
                    store("(1u - (r & 1u))")
                src("workgroupBarrier();")
        else:
            src(f"// march over {rounds} slices of {tile.k} reduction steps",
                "let cur_a = 0u; let cur_b = 0u;")
            with src.block(f"for (var r = 0u; r < {rounds}u; r++)"):
                fetch(f"k_begin + i32(r) * {tile.k}i")
                store("0u")
                src("workgroupBarrier();")
                multiply("cur_")
                src("workgroupBarrier();")
        done = "finish(bidx, " if tile.split == 1 else "store_partial(slice, bidx, "
        for i, h in accs:
            row = f"m0 + i32(tm * {vm}u) + {(i // vm) * threads_m * vm + i % vm}i"
            for v in range(vn):
                col = f"n0 + i32(tn * {vn}u) + {h * threads_n * vn + v}i"
                value = f"acc_{i}_{h}" + (f"[{v}]" if vn > 1 else "")
                src(f"{done}{row}, {col}, {value});")
        return c.batch * tiles_m * tiles_n * tile.split, shared, functions

    def _store_partial(self) -> str:
        """Split-K: this slice's partial sum of one output, for the second pass to add."""
        c = self.t.contraction
        outputs = c.batch * c.m * c.n
        src = Src()
        with src.block(f"fn store_partial(slice: i32, bidx: i32, midx: i32, nidx: i32, "
                       f"acc: {self._acc_type()})"):
            src("// a tile may overhang the edges of M and N",
                f"if (midx >= {c.m}i || nidx >= {c.n}i) {{ return; }}",
                f"out[slice * {outputs}i + (bidx * {c.m}i + midx) * {c.n}i + nidx] = acc;")
        return src.text()

    def split_sum(self) -> Program:
        """Split-K's second pass: add each output's partial sums, then its epilogue."""
        c, tile = self.t.contraction, self.t.tile
        outputs = c.batch * c.m * c.n
        threads = min(256, self.limits.max_threads)
        body = Src(1)
        body(f"let i = group * {threads}u + lid;",
             f"if (i >= {outputs}u) {{ return; }}",
             f"var acc: {self._acc_type()} = {self._identity()};",
             f"// the {tile.split} slices' partial sums of output i")
        with body.block(f"for (var s = 0u; s < {tile.split}u; s++)"):
            body(f"acc += partials[s * {outputs}u + i];")
        body(f"finish(i32(i / {c.m * c.n}u), i32((i / {c.n}u) % {c.m}u), i32(i % {c.n}u), acc);")
        grid, prologue = group_prologue(math.ceil(outputs / threads), self.limits)
        main = Src()
        main(f"@compute @workgroup_size({threads})")
        with main.block(MAIN):
            main(*prologue)
            main.lines.extend(body.lines)
        binding = len(self.k.inputs) + 1
        decls = self._declarations()
        decls[0] += (f"\n@group(0) @binding({binding}) var<storage, read> partials: "
                     f"array<{self._acc_type()}>;")
        code = join([*decls, self._finish(c.out_index), main.text()], "\n\n")
        helpers = library(self.needs)
        head = [f"// {self.k.name}: split-K, the sum of {tile.split} partial results"]
        text = join([*head, helpers, code] if helpers else [*head, code], "\n\n")
        return Program(text + "\n", grid, threads, self.k.name + "_split_sum", text.line_marks)

    def _function(self, name: str, params: list[str], exp: AluExp, returns: str) -> str:
        w = self._writer([exp], {p: Name(p) for p in params})
        value = w.value(exp)
        src = Src()
        with src.block(f"fn {name}({', '.join(f'{p}: i32' for p in params)}) -> {returns}"):
            src(*w.take(0), like(f"return {bare(value)};", value))
        return src.text()

    def _finish(self, out_index: AluExp) -> str:
        c, red = self.t.contraction, self.k.reduction
        w = self._writer([out_index, red.epilogue], {BIDX: Name(BIDX), MIDX: Name(MIDX),
                                                     NIDX: Name(NIDX), ACC: self._acc_name(),
                                                     GIDX: Name("gidx")})
        src = Src()
        with src.block(f"fn finish(bidx: i32, midx: i32, nidx: i32, acc: {self._acc_type()})"):
            src("// the epilogue of one output; a tile may overhang the edges of M and N",
                f"if (midx >= {c.m}i || nidx >= {c.n}i) {{ return; }}")
            index = w.value(out_index)
            src(*w.take(0), f"let gidx = {bare(index)};")
            value = w.value(red.epilogue)
            src(*w.take(0), like(f"out[gidx] = {bare(value)};", value))
        return src.text()

    # --- reduction pieces ---------------------------------------------------
    def _acc_type(self) -> str:
        return self.lang.vtype(self.acc_dtype)

    def _acc_name(self, var: str = "acc") -> Name:
        """What the epilogue's `acc` reads: the f32 accumulator rounded back to f16.
        A float accumulator is read through exact_T: after a one-step fold the
        compiler would see `x - (0 + x)` and fold it to 0, assuming no NaN (var of a
        lone NaN must stay NaN)."""
        if self.acc_dtype.is_float:
            exact = f"exact_{self._acc_type()}"
            self.needs.add(exact)
            var = f"{exact}({var})"
        return Name(cast_text(self.acc_dtype, self.k.exp.dtype, var, self.lang, self.needs))

    def _identity(self) -> str:
        red = self.k.reduction
        return const_text(reduce_identity(red.op, self.acc_dtype), self.acc_dtype, self.lang,
                          self.needs)

    def _combine(self, acc: str, value: str) -> str:
        if self.acc_dtype is not self.k.exp.dtype:
            value = cast_text(self.k.exp.dtype, self.acc_dtype, value, self.lang, self.needs)
        return op_text(self.k.reduction.op, self.acc_dtype, [acc, value], self.lang, self.needs)

    def _word_bits(self, value: str) -> str:
        """The low bits of a packed element: a bool or integer's low bytes, or f16/bfloat16
        bits (computed in f32, already rounded)."""
        dtype = self.k.dtype
        if dtype is DType.bool:
            return f"u32({value})"
        if dtype is DType.float16:
            self.needs.add("round_f16")
            return f"pack2x16float(vec2<f32>(round_f16({bare(value)}), 0.0))"
        if dtype is DType.bfloat16:   # the high half of the f32
            return f"(bitcast<u32>({bare(value)}) >> 16u)"
        return f"(bitcast<u32>({bare(value)}) & {(1 << 8 * dtype.itemsize) - 1}u)"


# How element i of a packed input is read from its word `w`, by dtype
_UNPACK = {
    DType.bool: ("bools are bytes: byte i % 4 of word i / 4",
                 "((w >> ((u32(i) % 4u) * 8u)) & 0xffu) != 0u"),
    DType.float16: ("two f16 per word, widened to f32 (no shader-f16 here)",
                    "unpack2x16float(w)[u32(i) % 2u]"),
    DType.bfloat16: ("two bfloat16 per word: each the high half of an f32",
                     "bitcast<f32>(((w >> ((u32(i) % 2u) * 16u)) & 0xffffu) << 16u)"),
    DType.int8: ("four int8 per word, sign-extended",
                 "bitcast<i32>(w << (24u - (u32(i) % 4u) * 8u)) >> 24u"),
    DType.uint8: ("four uint8 per word", "(w >> ((u32(i) % 4u) * 8u)) & 0xffu"),
    DType.int16: ("two int16 per word, sign-extended",
                  "bitcast<i32>(w << (16u - (u32(i) % 2u) * 16u)) >> 16u"),
    DType.uint16: ("two uint16 per word", "(w >> ((u32(i) % 2u) * 16u)) & 0xffffu"),
}


def _vec(width: int, scalar: str) -> str:
    return scalar if width == 1 else f"vec{width}<{scalar}>"


@dataclass(frozen=True)
class _Staging:
    """How one operand's K slice moves from global into shared memory: `slots` elements
    (or vec4s) per thread, neighbouring threads reading neighbours in global memory
    (along K where the operand is contiguous along K, else along its own output axis)."""
    name: str          # "a" or "b"
    exp: AluExp        # the operand, of bidx, `axis` and ridx
    axis: str          # MIDX or NIDX
    extent: int        # M or N
    side: int          # the tile's M or N
    width: int         # vector width of a shared row element
    row: int           # vectors per shared row (padded)
    size: int          # vectors per buffer
    tile: Tile
    vector: Optional[VectorLoad]   # read as vec4s from global memory

    @property
    def per_load(self) -> int:
        return VECTOR if self.vector else 1

    @property
    def slots(self) -> int:
        return math.ceil(self.tile.k * self.side / self.per_load / self.tile.threads)

    @property
    def along_k(self) -> bool:
        if self.vector:
            return self.vector.axis == RIDX
        return _steps_by_one(self.exp, RIDX, self.axis)

    def positions(self, src: Src) -> None:
        """Where each of this thread's slots sits in the slice (fixed across slices): its
        (first) element's k and m (or n) offsets."""
        t, n, v = self.tile, self.name, self.per_load
        src(f"// stage {n}'s {t.k}x{self.side} slice {'k' if self.along_k else 'm/n'} fastest, "
            f"{self.slots} {'vec4' if self.vector else 'element'}(s) per thread")
        for i in range(self.slots):
            e = f"lid + {i * t.threads}u" if i else "lid"
            if self.along_k:
                kk, mm = f"({e}) % {t.k // v}u * {v}u", f"({e}) / {t.k // v}u"
            else:
                kk, mm = f"({e}) / {self.side // v}u", f"({e}) % {self.side // v}u * {v}u"
            src(f"let {n}_k{i} = i32({kk.replace(' * 1u', '')});",
                f"let {n}_m{i} = {mm.replace(' * 1u', '')};")

    def fetch(self, src: Src, k0: str, zero: str) -> None:
        first = "m0" if self.name == "a" else "n0"
        n = self.name
        for i in range(self.slots):
            value = f"in{self.vector.slot}[u32(index_{n}(bidx, m, k)) / 4u]" if self.vector \
                else f"operand_{n}(bidx, m, k)"
            none = f"vec4<f32>({zero})" if self.vector else zero
            src(f"{{ let k = {k0} + {n}_k{i}; let m = {first} + i32({n}_m{i});",
                f"  next_{n}{i} = select({none}, {value}, m < {self.extent}i && k < k_end); }}")

    def store(self, src: Src, buffer: str) -> None:
        t, n, w = self.tile, self.name, self.width
        for i in range(self.slots):
            base = f"tile_{n}[{buffer} * {self.size}u + "
            if self.vector and not self.along_k and w == VECTOR:   # a whole shared vector
                lines = [f"{base}u32({n}_k{i}) * {self.row}u + {n}_m{i} / {w}u] = next_{n}{i};"]
            else:
                lines = []
                for j in range(self.per_load):
                    k, m = f"u32({n}_k{i})", f"{n}_m{i}"
                    if self.vector:
                        k, m = (f"{k} + {j}u", m) if self.along_k else (k, f"{m} + {j}u")
                    lane = f"[({m}) % {w}u]" if w > 1 else ""
                    part = f".{'xyzw'[j]}" if self.vector else ""
                    lines.append(f"{base}({k}) * {self.row}u + ({m}) / {w}u]{lane} = "
                                 f"next_{n}{i}{part};")
            if (i + 1) * t.threads * self.per_load > t.k * self.side:   # the last may overhang
                inside = f"{n}_m{i} < {self.side}u && {n}_k{i} < {t.k}i"
                lines = [f"if ({inside}) {{", *(f"  {x}" for x in lines), "}"]
            src(*lines)


def _steps_by_one(exp: AluExp, step: str, other: str) -> bool:
    """Do most of exp's loads step by one element along `step` (and not along `other`)?"""
    loads = [n for n in exp.toposort() if n.op is AluOp.GlobalIndex
             and not any(m.op is AluOp.GlobalIndex for m in n.src[0].toposort())]  # no gathers
    return sum(_unit_stride(load.src[0], step, other) for load in loads) > 0


def _unit_stride(index: AluExp, step: str, other: str) -> int:
    """1 if `index` steps by one along `step` and not along `other`, -1 if along `other`."""
    probe = {step: np.array([0, 1, 0], np.int32), other: np.array([0, 0, 1], np.int32)}
    names = {n.arg[0] for n in index.toposort() if n.op is AluOp.Special}
    env = {name: probe.get(name, np.zeros(3, np.int32)) for name in names}
    idx = np.broadcast_to(evaluate(index, env), (3,)).astype(np.int64)
    along_step, along_other = abs(idx[1] - idx[0]), abs(idx[2] - idx[0])
    return 1 if along_step == 1 and along_other != 1 else -1 if along_other == 1 else 0


def _fold(line: str, value: str) -> str:
    """A reduction step: it computes its value's nodes and the fold itself."""
    return traced(line, marks_of(value) | {FOLD})


def _packed_loader(slot: int, dtype: DType, lang: Lang) -> str:
    why, value = _UNPACK[dtype]
    per_word = lang.packed(dtype)
    body = (f"  // {why}\n  let w = in{slot}[u32(i) / {per_word}u];\n  return {value};")
    return f"fn load_in{slot}(i: i32) -> {lang.vtype(dtype)} {{\n{body}\n}}"

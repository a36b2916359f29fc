"""A row kernel's WGSL body (Strategy.ROWS): a workgroup per row, the row's values
in its threads' registers.

Thread `lid` holds columns lid, lid + W, lid + 2W, ... (neighbouring threads read
neighbours). Each fold (in order: a later one may read an earlier one's result) is
folded over the thread's columns, then over the workgroup (subgroup operations where
the adapter has them, else a tree in shared memory); then the thread writes its
columns' outputs. One ExpWriter per column names each value once, so what the folds
and the outputs share (the loaded row, exp(x - max)) is loaded and computed once.
"""
from __future__ import annotations

import math
from typing import Any, Callable

from jaxlab.backends.traced import like, marks_of, traced
from jaxlab.backends.webgpu.expr import ExpWriter, Name
from jaxlab.backends.webgpu.ops import bare, const_text, op_text
from jaxlab.ir.alu import AluOp
from jaxlab.ir.kernel import RIDX, ROW, Kernel, RowFold, reduce_identity
from jaxlab.ir.provenance import FOLD

_SUBGROUP = {AluOp.Add: "subgroupAdd", AluOp.Max: "subgroupMax", AluOp.Min: "subgroupMin",
             AluOp.Mul: "subgroupMul"}


class RowWriter:
    """Writes a row kernel into `src` (codegen's Src); `writer(names, prefix)` makes an
    ExpWriter over every expression of the kernel."""

    def __init__(self, kernel: Kernel, threads: int, lang: Any, needs: set[str],
                 writer: Callable[[dict[str, Name], str], ExpWriter]) -> None:
        self.k, self.w, self.lang, self.needs = kernel, threads, lang, needs
        self.per = math.ceil(kernel.row_length / threads)
        names = {f.name: Name(f.name) for f in kernel.folds}
        self.columns = [writer({**names, ROW: Name("row"), RIDX: Name(f"k{p}")}, f"v{p}_")
                        for p in range(self.per)]
        self.subgroups = lang.subgroups
        self.shared: dict[str, str] = {}   # WGSL type -> its shared array's name

    @property
    def ragged(self) -> bool:
        """Does the last column run past the row for some threads?"""
        return self.k.row_length % self.w != 0

    def write(self, src: Any) -> tuple[int, list[str]]:
        """main's body; returns (workgroups, shared declarations)."""
        k, n = self.k, self.k.row_length
        src(f"// a workgroup per row of {n} values; thread lid holds columns lid + {self.w} * p",
            "let row = i32(group);")
        for p in range(self.per):
            column = f"i32(lid) + {p * self.w}i" if p else "i32(lid)"
            src(f"let c{p} = {column};")
            last = p == self.per - 1 and self.ragged   # read within the row, mask the rest
            src(f"let k{p} = min(c{p}, {n - 1}i);" if last else f"let k{p} = c{p};")
        for fold in k.folds:
            self._fold(src, fold)
        if k.per_row:
            value = self.columns[0].value(k.exp)
            src(*self.columns[0].take(0),
                like(f"if (lid == 0u) {{ out[row] = {bare(value)}; }}", value))
        else:
            src(f"// the row's outputs, {self.per} per thread")
            for p, w in enumerate(self.columns):
                value = w.value(k.exp)
                store = f"out[row * {n}i + c{p}] = {bare(value)};"
                if p == self.per - 1 and self.ragged:
                    store = f"if (c{p} < {n}i) {{ {store} }}"
                src(*w.take(0), like(store, value))
        shared = [f"var<workgroup> {name}: array<{t}, {self.w}>;"
                  for t, name in self.shared.items()]
        return k.rows, shared

    def _fold(self, src: Any, fold: RowFold) -> None:
        t = self.lang.vtype(fold.body.dtype)
        identity = const_text(reduce_identity(fold.op, fold.body.dtype), fold.body.dtype,
                              self.lang, self.needs)
        acc = f"acc_{fold.name}"
        src(f"// {fold.name}: {fold.op.name.lower()} over the row",
            f"var {acc}: {t} = {identity};")
        for p, w in enumerate(self.columns):
            value = w.value(fold.body)
            if p == self.per - 1 and self.ragged:
                value = like(f"select({identity}, {bare(value)}, c{p} < {self.k.row_length}i)",
                             value)
            src(*w.take(0), traced(f"{acc} = {bare(self._combine(fold, acc, value))};",
                                   marks_of(value) | {FOLD}))
        partial = self.shared.setdefault(t, f"partial_{t}")
        if self.subgroups and fold.op in _SUBGROUP:
            src(f"let sg_{fold.name} = {self._subgroup(fold, acc)};",
                f"if (sg_lane == 0u) {{ {partial}[sg_id] = sg_{fold.name}; }}",
                "workgroupBarrier();",
                f"var all_{fold.name}: {t} = {identity};")
            with src.block("for (var i = sg_lane; i < n_sg; i += sg_size)"):
                src(f"all_{fold.name} = "
                    f"{bare(self._combine(fold, f'all_{fold.name}', f'{partial}[i]'))};")
            src(f"let {fold.name} = {self._subgroup(fold, f'all_{fold.name}')};")
        else:
            src(f"{partial}[lid] = {acc};", "workgroupBarrier();")
            with src.block(f"for (var half = {self.w // 2}u; half > 0u; half >>= 1u)"):
                pair = self._combine(fold, f"{partial}[lid]", f"{partial}[lid + half]")
                src(f"if (lid < half) {{ {partial}[lid] = {bare(pair)}; }}",
                    "workgroupBarrier();")
            src(f"let {fold.name} = {partial}[0];")
        src(f"workgroupBarrier();  // {partial} is written again by the next fold")

    def _combine(self, fold: RowFold, a: str, b: str) -> str:
        return op_text(fold.op, fold.body.dtype, [a, b], self.lang, self.needs)

    def _subgroup(self, fold: RowFold, value: str) -> str:
        """The subgroup's fold of `value`; a float max or min is NaN where any lane's
        value is (the builtins need not propagate NaN, np.maximum does)."""
        folded = f"{_SUBGROUP[fold.op]}({value})"
        if not (fold.body.dtype.is_float and fold.op in (AluOp.Max, AluOp.Min)):
            return folded
        self.needs.update({"isnan_f32", "nan_f32"})
        return (f"select({folded}, nan_f32(), "
                f"subgroupMax(select(0u, 1u, isnan_f32({value}))) != 0u)")

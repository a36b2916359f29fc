"""Routines generated as WebAssembly text: which routines, and the module around them.

A routine module has the kernels' calling shape, `kernel(out..., in..., scratch, lo,
hi)`: byte offsets into the one linear memory, and the range [lo, hi) of the batch's
items (matrices, or rows for a sort) this call computes, so that threads can share
a batch, each with scratch of its own. Sizes are constants in the text, as in
kernels. The algorithms live beside: decompositions.py (eigh, svd, qr),
factorizations.py (cholesky, triangular_solve, lu), sorting.py (sort, argsort).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

from jaxlab.backends.wasm import decompositions, factorizations, sorting
from jaxlab.backends.wasm.codegen import MEMORY_PAGES
from jaxlab.backends.wasm.routine_text import Body, i32
from jaxlab.backends.wasm.vector_loops import F32, F64, FloatType, functions
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

FLOAT_TYPES = {DType.float32: F32}
if hasattr(DType, "float64"):
    FLOAT_TYPES[DType.float64] = F64


@dataclass(frozen=True)
class RoutineCode:
    text: str                 # the module
    scratch_bytes: int        # per thread
    items: int                # the batch: calls take ranges [lo, hi) of it
    notes: dict[str, tuple[Any, str]]   # tuning choices: name -> (value, reason)
    flops: Optional[int]      # per call over the whole batch; None where the data decide
                              # (Jacobi: the notes give a sweep's count)
    team: Optional["TeamCode"] = None   # threads sharing the one item of the batch


@dataclass(frozen=True)
class TeamCode:
    """A module whose kernel(buffers..., scratch, t, T) is thread t of T's part of the
    batch's one item; every thread gets the same scratch."""
    text: str
    scratch_bytes: int
    threads: int              # at most


Generator = Callable[[Routine, FloatType], Body]
# name -> (generator, the dtypes of its first input it is written for)
_GENERATORS: dict[str, tuple[Generator, tuple[DType, ...]]] = {
    **{name: (g, tuple(FLOAT_TYPES)) for name, g in decompositions.GENERATORS.items()},
    **{name: (g, tuple(FLOAT_TYPES)) for name, g in factorizations.GENERATORS.items()},
    **{name: (g, sorting.KEYED) for name, g in sorting.GENERATORS.items()},
}
from jaxlab.backends.wasm.fft_routine import generate_fft  # noqa: E402

_GENERATORS["fft"] = (generate_fft, tuple(FLOAT_TYPES))   # complex64 / complex128 rows


def generated(routine: Routine) -> bool:
    """Whether this routine runs as generated WebAssembly (else NumPy on views)."""
    entry = _GENERATORS.get(routine.name)
    return entry is not None and routine.inputs[0][1] in entry[1]


def generate(routine: Routine) -> Optional[RoutineCode]:
    if not generated(routine):
        return None
    ft = FLOAT_TYPES.get(routine.inputs[0][1], F32)
    body = _GENERATORS[routine.name][0](routine, ft)
    buffers = {**{f"out{i}": sd for i, sd in enumerate(routine.outputs)},
               **{f"in{i}": sd for i, sd in enumerate(routine.inputs)}}
    batch = routine.inputs[0][0][:len(routine.inputs[0][0]) - body.item_dims]
    items = math.prod(batch)
    # an array whose leading dims are not the batch's (fft's twiddle table, batch dims
    # of 1) is one for the whole batch: every item reads it
    stride = {a: math.prod(s[len(batch):]) * d.itemsize
              if tuple(s[:len(batch)]) == tuple(batch) else 0 for a, (s, d) in buffers.items()}
    empty = any(math.prod(s) == 0 for s, _ in buffers.values())
    item = "row" if body.item_dims == 1 else "matrix"
    call = (f"(call $matrix {' '.join(f'(i32.add (local.get ${a}) (i32.mul (local.get $b) {i32(stride[a])}))' for a in body.args)} "
            "(local.get $scratch))")
    entry = "\n".join(
        [f"(func $kernel (export \"kernel\") {' '.join(f'(param ${a} i32)' for a in buffers)} "
         "(param $scratch i32) (param $lo i32) (param $hi i32)",
         f"  ;; items b in [lo, hi) of the batch ({item}s), one after another",
         "  (local $b i32)",
         "  (local.set $b (local.get $lo))",
         "  (block $done (loop $items",
         "    (br_if $done (i32.ge_u (local.get $b) (local.get $hi)))",
         f"    {call if not empty else ';; empty items: nothing to compute'}",
         "    (local.set $b (i32.add (local.get $b) (i32.const 1)))",
         "    (br $items)))", ")"])
    head = [f";; {routine.text()}",
            f";; {items} {item}{'' if items == 1 else 's'}, {ft.name} arithmetic; this call "
            f"computes {item}s [lo, hi)",
            f'(import "env" "memory" (memory 1 {MEMORY_PAGES} shared))']
    text = _module(head, body.functions if not empty else [], entry, ft)
    team = None
    if body.team is not None and items == 1 and not empty:
        params = " ".join(f"(param ${a} i32)" for a in body.args)
        team_entry = "\n".join(
            [f"(func $kernel (export \"kernel\") {params} (param $scratch i32) (param $t i32) (param $T i32)",
             f"  ;; thread t of T: its part of the one {item}",
             f"  (call $team {' '.join(f'(local.get ${a})' for a in body.args)} (local.get $scratch) "
             "(local.get $t) (local.get $T)))"])
        team_head = [head[0], f";; one {item} shared by up to {body.team.threads} threads; this call is "
                     "thread t of T", head[2]]
        team = TeamCode(_module(team_head, body.team.functions, team_entry, ft),
                        body.team.layout.nbytes, body.team.threads)
    return RoutineCode(text, max(16, body.layout.nbytes), items, body.notes,
                       None if body.flops is None else body.flops * items, team)


def _module(head: list[str], body: list[str], entry: str, ft: FloatType) -> str:
    parts = head + functions("\n".join(body), ft) + body + [entry]
    return "\n".join(["(module"] + ["  " + line for part in parts for line in part.splitlines()]
                     + [")"])

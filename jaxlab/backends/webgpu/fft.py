"""The "fft" routine as WGSL: a few passes over global memory, each a batch of
radix-R DFTs run in workgroup memory (fft_plan.py says how a length splits).

In a pass, each workgroup takes `span` columns (consecutive butterflies j) of R
values. Its first sub-stage reads them straight from global memory (times the
pass's twiddles) and leaves its butterflies' outputs in var<workgroup>; middle
sub-stages read, barrier, write, barrier there; the last one writes global memory.
Sub-stage with radix r after ns points (of R) are combined, butterfly jj < R/r
(k = jj % ns):
    v_m = s[jj + m R/r] * w_(r ns)^(m k);   s[(jj / ns) r ns + k + m ns] = DFT_r(v)_m
Passes alternate between the output and one scratch buffer, so the last one
writes the output. Sizes are constants in each pass's text.
"""
from __future__ import annotations

import math

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.backends.webgpu.fft_plan import (ENV_TUNING, FftPass, FftTuning, bytes_moved,
                                             plan_passes)

_TABLE_SPLIT = 4096   # longer twiddle tables are read as two factors (both stay cached)

_BINDINGS = """@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
"""


def _twiddle_fn(n: int) -> str:
    """twiddle(t) = w^t from the table of n values: read directly from a small table;
    from a large one as w^(t - lo) * w^lo, both factors among 2 sqrt(n) cached values
    (a direct read would scatter over the whole table)."""
    if n <= _TABLE_SPLIT:
        return "fn twiddle(t: u32) -> vec2<f32> {\n  return tw[t];\n}\n"
    low = 1 << ((n.bit_length() - 1 + 1) // 2)
    return (f"fn twiddle(t: u32) -> vec2<f32> {{\n  // w^t as w^(t - t % {low}) * w^(t % {low})\n"
            f"  return cmul(tw[t & ~{low - 1}u], tw[t & {low - 1}u]);\n}}\n")


def _rotate(d: str, inverse: bool) -> str:
    """d times -i (forward) or +i (inverse)."""
    return f"vec2<f32>(-{d}.y, {d}.x)" if inverse else f"vec2<f32>({d}.y, -{d}.x)"


def _turn(value: str, m: int, radix: int, inverse: bool) -> str:
    """value * w_radix^m, w_radix = exp(-+2 pi i / radix): free for m = 0 and a quarter
    turn, a multiply by a constant otherwise."""
    if m == 0:
        return value
    if 4 * m == radix:
        return _rotate(value, inverse)
    angle = (1.0 if inverse else -1.0) * 2.0 * math.pi * m / radix
    return f"cmul({value}, vec2<f32>({math.cos(angle):.9f}, {math.sin(angle):.9f}))"


def _dft(radix: int, ins: list[str], outs: list[str], inverse: bool, tmp: str) -> list[str]:
    """WGSL lines defining `outs` as the radix-point DFT of `ins` (radix a power of two):
    the DFTs of the even and the odd inputs, combined with the odd ones turned."""
    if radix == 2:
        return [f"let {outs[0]} = {ins[0]} + {ins[1]};", f"let {outs[1]} = {ins[0]} - {ins[1]};"]
    half = radix // 2
    even, odd = [f"{tmp}e{m}" for m in range(half)], [f"{tmp}o{m}" for m in range(half)]
    lines = _dft(half, ins[0::2], even, inverse, f"{tmp}e") + \
        _dft(half, ins[1::2], odd, inverse, f"{tmp}o")
    for m in range(half):
        turned = _turn(odd[m], m, radix, inverse)
        if m:
            lines.append(f"let {tmp}t{m} = {turned};")
            turned = f"{tmp}t{m}"
        lines += [f"let {outs[m]} = {even[m]} + {turned};",
                  f"let {outs[m + half]} = {even[m]} - {turned};"]
    return lines


class _PassText:
    """The WGSL of one pass."""

    def __init__(self, p: FftPass, inverse: bool) -> None:
        self.p, self.inverse = p, inverse
        self.stride = p.n // p.radix            # between a column's values in global memory
        self.ragged = p.butterflies % p.span != 0

    def _column(self, b: int, c: str) -> list[str]:
        """Where column `c` of this workgroup reads and writes (J: butterfly of the batch)."""
        p = self.p
        lines = [f"let J{b} = group * {p.span}u + {c};"]
        at = f"min(J{b}, {p.butterflies - 1}u)" if self.ragged else f"J{b}"
        return lines + [f"let row{b} = {at} / {self.stride}u;",
                        f"let j{b} = {at} % {self.stride}u;",
                        f"let kg{b} = j{b} % {p.combined}u;"]

    def _butterfly(self, b: int, radix: int, columns_fastest: bool) -> list[str]:
        """c{b}, jj{b}: the column and butterfly of this thread's b-th butterfly."""
        p = self.p
        per = p.radix // radix
        u = f"{b * p.threads}u + lid"
        if columns_fastest:
            return [f"let c{b} = ({u}) % {p.span}u;", f"let jj{b} = ({u}) / {p.span}u;"]
        return [f"let jj{b} = ({u}) % {per}u;", f"let c{b} = ({u}) / {per}u;"]

    def _shared(self, b: int, q: str) -> str:
        return f"s[c{b} * {self.p.radix + self.p.pad}u + {q}]"

    def sub_stage(self, index: int, radix: int, ns: int) -> list[str]:
        p = self.p
        first, last = index == 0, index == len(p.subradices) - 1
        per = p.radix // radix
        count = p.radix * p.span // radix // p.threads
        # threads take columns fastest where global memory is strided across them
        columns_fastest = (first and p.strided_reads) or (last and p.strided_writes)
        lines = [f"// sub-stage {index + 1}: radix {radix}, {ns} point(s) combined, "
                 f"{count} butterflies per thread"]
        writes = []
        for b in range(count):
            lines += self._butterfly(b, radix, columns_fastest)
            if first or last:
                lines += self._column(b, f"c{b}")
            # k: this butterfly's place among the ns points combined (all of jj at the last)
            k = f"jj{b}" if last else f"k{b}"
            if ns > 1 and not last:
                lines.append(f"let k{b} = jj{b} % {ns}u;")
            for m in range(radix):
                q = f"jj{b} + {m * per}u"
                if first:
                    value = f"src[row{b} * {p.n}u + j{b} + ({q}) * {self.stride}u]"
                    if p.combined > 1:
                        value = (f"cmul({value}, twiddle(({q}) * kg{b} * "
                                 f"{p.n // (p.radix * p.combined)}u))")
                else:
                    value = self._shared(b, q)
                    if ns > 1 and m > 0:
                        value = f"cmul({value}, tw[{m}u * {k} * {p.n // (radix * ns)}u])"
                lines.append(f"let v{b}_{m} = {value};")
            lines += _dft(radix, [f"v{b}_{m}" for m in range(radix)],
                          [f"o{b}_{m}" for m in range(radix)], self.inverse, f"t{b}_")
            for m in range(radix):
                q = (f"jj{b} * {radix}u + {m}u" if ns == 1 else f"{k} + {m * ns}u" if last
                     else f"(jj{b} / {ns}u) * {radix * ns}u + {k} + {m * ns}u")
                if last:
                    target = (f"dst[row{b} * {p.n}u + (j{b} / {p.combined}u) * "
                              f"{p.radix * p.combined}u + kg{b} + ({q}) * {p.combined}u]")
                else:
                    target = self._shared(b, q)
                writes.append(f"{target} = o{b}_{m};")
        if last and self.ragged:
            writes = [line for b in range(count) for line in
                      [f"if (J{b} < {p.butterflies}u) {{",
                       *("  " + w for w in writes[b * radix:(b + 1) * radix]), "}"]]
        if not first and not last:
            lines.append("workgroupBarrier();   // every read of this sub-stage is done")
        lines += writes
        if not last:
            lines.append("workgroupBarrier();")
        return ["{", *("  " + line for line in lines), "}"]

    def shader(self) -> HandWritten:
        p = self.p
        stages, ns = [], 1
        for i, radix in enumerate(p.subradices):
            stages += self.sub_stage(i, radix, ns)
            ns *= radix
        shared = (f"var<workgroup> s: array<vec2<f32>, {p.shared_values}>;\n"
                  if len(p.subradices) > 1 else "")
        title = (f"// radix-{p.radix} pass of a length-{p.n} "
                 f"{'inverse ' if self.inverse else ''}DFT ({p.combined} point(s) combined "
                 f"before it): {p.span} column(s) per workgroup, sub-stages "
                 f"{' x '.join(f'radix-{r}' for r in p.subradices)}\n")
        return HandWritten(_BINDINGS + _twiddle_fn(p.n) + shared + title,
                           "\n".join("  " + line for line in stages))


def plan_fft(b) -> None:
    """Passes for routine "fft": inputs (rows, n, 2) and twiddles (1, n, 2), output as
    the first input."""
    (shape, _), _tw = b.routine.inputs
    rows, n = math.prod(shape[:-2]), shape[-2]
    inverse = b.routine.param["inverse"]
    tuning = FftTuning.from_env()
    plan = plan_passes(n, rows, b.limits, tuning)
    scratch = b.temp(rows * n * 8) if len(plan) > 1 else None
    src = 0
    for i, p in enumerate(plan):
        dst = b.output(0) if (len(plan) - 1 - i) % 2 == 0 else scratch
        b.shader(_PassText(p, inverse).shader(), f"fft_r{p.radix}", p.groups, p.threads,
                 [src, 1, dst], [dst])
        src = dst
    why = f" ({ENV_TUNING} set)" if tuning.overridden else ""
    b.notes = {
        "algorithm": ("Stockham passes, each a batch of DFTs in workgroup memory",
                      "a row that fits in workgroup memory is one pass; a longer one a few "
                      "passes (four-step: twiddles and transposes in the index math)"),
        "passes": (" x ".join(str(p.radix) for p in plan),
                   f"the fewest radices that fit {b.limits.max_shared_bytes} bytes of "
                   f"workgroup memory with at least {tuning.span} columns each{why}"),
        "sub_stages": (" | ".join("x".join(map(str, p.subradices)) for p in plan),
                       (f"radix {tuning.radix} at most{why}" if tuning.radix else
                        "radix 16 at most in passes of up to 256 points, 8 beyond (faster "
                        "on the H200: fewer exchanges through workgroup memory)")
                       + ": values a thread holds per butterfly between barriers"),
        "span": (" | ".join(str(p.span) for p in plan),
                 "columns per workgroup: as many as fit, so strided reads and writes are "
                 "contiguous runs (and short rows share a workgroup)"),
        "workgroup": (" | ".join(str(p.threads) for p in plan),
                      f"at most {tuning.threads}, no more than a sub-stage has butterflies"
                      f"{why}"),
        "bytes_moved": (bytes_moved(plan), f"{len(plan)} read(s) and write(s) of "
                                           f"{rows * n * 8} bytes; twiddles stay in cache"),
    }

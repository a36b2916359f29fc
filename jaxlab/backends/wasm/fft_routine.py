"""The "fft" routine as generated WebAssembly: Stockham autosort stages, radix 4
(one radix-2 stage last when log2 n is odd), on rows of interleaved complex values.

Stage with radix R after Ns points are combined: for j < n/R (g = j / Ns, k = j % Ns)
    v_r = src[j + r n/R] * w^(r k n/(R Ns))        r < R, w = exp(-+2 pi i / n)
    dst[g R Ns + k + r Ns] = (the R-point DFT of v)_r
Reads and writes run over k contiguously, so a stage is one pass over the row with
no bit reversal. Stages ping-pong between the output and a scratch row; the first
reads the input (never written), the last writes the output. The inner loop over k
handles two complex values per f32x4 vector where Ns >= 2 (the first stage, Ns = 1,
runs the same loop over g instead). Twiddles come from the input table of n values
computed in float64 by the lowering (core/fft.py).
"""
from __future__ import annotations

from jaxlab.backends.wasm.routine_text import Body, Fn, get as _g, i32 as _i, layout
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.fft_stages import fft_flops, stages
from jaxlab.ir.kernel import Routine


def _cmul(f: Fn, a: str, w: str) -> list[str]:
    """a <- a * w on f32x4 vectors holding two complex values each:
    (ar wr - ai wi, ar wi + ai wr) = dup(ar) * w + dup(ai) * swap(w) * (-1, 1, -1, 1)."""
    f.var(f"{a}t", "v128")
    return [
        f"(local.set ${a}t (f32x4.mul (i8x16.shuffle {_lanes(1, 1, 3, 3)} (local.get ${a}) "
        f"(local.get ${a})) (i8x16.shuffle {_lanes(1, 0, 3, 2)} (local.get ${w}) "
        f"(local.get ${w}))))",
        f"(local.set ${a} (f32x4.add (f32x4.mul (i8x16.shuffle {_lanes(0, 0, 2, 2)} "
        f"(local.get ${a}) (local.get ${a})) (local.get ${w})) (f32x4.mul (local.get ${a}t) "
        "(v128.const f32x4 -1 1 -1 1))))",
    ]


def _lanes(*floats: int) -> str:
    """i8x16.shuffle byte indices picking these f32 lanes."""
    return " ".join(str(4 * f + b) for f in floats for b in range(4))


def _times_i(value: str, inverse: bool) -> str:
    """value * (-i) (forward) or * i (inverse) on two complex values: swap, negate one."""
    sign = "1 -1 1 -1" if not inverse else "-1 1 -1 1"
    return (f"(f32x4.mul (i8x16.shuffle {_lanes(1, 0, 3, 2)} {value} {value}) "
            f"(v128.const f32x4 {sign}))")


def _butterfly(radix: int, inverse: bool) -> list[str]:
    """$v0.. <- the radix-point DFT of $v0.., two transforms per vector."""
    if radix == 2:
        return ["(local.set $b0 (f32x4.add (local.get $v0) (local.get $v1)))",
                "(local.set $v1 (f32x4.sub (local.get $v0) (local.get $v1)))",
                "(local.set $v0 (local.get $b0))"]
    return ["(local.set $b0 (f32x4.add (local.get $v0) (local.get $v2)))",
            "(local.set $b1 (f32x4.sub (local.get $v0) (local.get $v2)))",
            "(local.set $b2 (f32x4.add (local.get $v1) (local.get $v3)))",
            f"(local.set $b3 {_times_i('(f32x4.sub (local.get $v1) (local.get $v3))', inverse)})",
            "(local.set $v0 (f32x4.add (local.get $b0) (local.get $b2)))",
            "(local.set $v1 (f32x4.add (local.get $b1) (local.get $b3)))",
            "(local.set $v2 (f32x4.sub (local.get $b0) (local.get $b2)))",
            "(local.set $v3 (f32x4.sub (local.get $b1) (local.get $b3)))"]


def _stage(f: Fn, n: int, radix: int, ns: int, src: str, dst: str, inverse: bool) -> list[str]:
    """One Stockham stage over a row, two butterflies per iteration. With Ns = 1 the
    pair is two consecutive g (twiddles are 1, outputs R apart); otherwise two
    consecutive k of one g (contiguous outputs, twiddles w^(r k stride))."""
    quarter = n // radix                 # n / R: the distance between a butterfly's inputs
    stride = n // (radix * ns)           # twiddle step per k
    for r in range(radix):
        f.var(f"v{r}", "v128")
        f.var(f"b{r}", "v128")
    f.var("w", "v128")
    f.var("j")
    body: list[str] = []
    if ns == 1:   # j = g: loads of g, g+1 together; stores to g R + r and (g+1) R + r
        pairs = quarter >= 2    # else one butterfly in all (n = R): half vectors
        body.append(f"(local.set $j (i32.shl {_g('jp')} {_i(1)}))" if pairs else
                    "(local.set $j (i32.const 0))")
        load = "v128.load" if pairs else "v128.load64_zero"
        for r in range(radix):
            at = _addr(src, f"(i32.add {_g('j')} {_i(r * quarter)})")
            body.append(f"(local.set $v{r} ({load} {at}))")
        body += _butterfly(radix, inverse)
        for r in range(radix):
            out = f"(i32.add (i32.mul {_g('j')} {_i(radix)}) {_i(r)})"
            body.append(f"(v128.store64_lane 0 {_addr(dst, out)} (local.get $v{r}))")
            if pairs:
                nxt = _addr(dst, f"(i32.add {out} {_i(radix)})")
                body.append(f"(v128.store64_lane 1 {nxt} (local.get $v{r}))")
        return f.loop("jp", _i(0), _i(quarter // 2), body, "butterflies g, g+1") if pairs \
            else body
    # j = g Ns + k over k in steps of two; w^(r k stride) for k and k + 1
    f.var("g"), f.var("k")
    for r in range(radix):
        at = _addr(src, f"(i32.add {_g('j')} {_i(r * quarter)})")
        body.append(f"(local.set $v{r} (v128.load {at}))")
        if r:
            step = r * stride
            w0 = _addr("(local.get $in1)", f"(i32.mul {_g('k')} {_i(step)})")
            w1 = _addr("(local.get $in1)", f"(i32.mul (i32.add {_g('k')} {_i(1)}) {_i(step)})")
            body.append(f"(local.set $w (v128.load64_lane 1 {w1} (v128.load64_zero {w0})))")
            body += _cmul(f, f"v{r}", "w")
    body += _butterfly(radix, inverse)
    out = f"(i32.add (i32.mul {_g('g')} {_i(radix * ns)}) {_g('k')})"
    for r in range(radix):
        at = _addr(dst, f"(i32.add {out} {_i(r * ns)})")
        body.append(f"(v128.store {at} (local.get $v{r}))")
    inner = ([f"(local.set $j (i32.add (i32.mul {_g('g')} {_i(ns)}) {_g('k')}))"] + body)
    k_loop = f.loop("kk", _i(0), _i(ns // 2),
                    [f"(local.set $k (i32.shl {_g('kk')} {_i(1)}))"] + inner, "k, k+1")
    return f.loop("g", _i(0), _i(quarter // ns), k_loop, f"groups of a radix-{radix} stage")


def _addr(base: str, index: str) -> str:
    """The byte address of complex element `index` (8 bytes each)."""
    return f"(i32.add {base} (i32.shl {index} {_i(3)}))"


def generate_fft(routine: Routine, ft: FloatType) -> Body:
    (shape, _), _tw = routine.inputs
    n = shape[-2]
    inverse = routine.param["inverse"]
    lay = layout(row=n * 8)
    f = Fn(ft)
    plan = stages(n)
    body: list[str] = []
    src = "(local.get $in0)"
    for s, (radix, ns) in enumerate(plan):
        # the last stage writes out0; before it, scratch and out0 alternate
        dst = "(local.get $out0)" if (len(plan) - 1 - s) % 2 == 0 else "(local.get $scratch)"
        body.append(f";; stage {s}: radix {radix}, {ns} point(s) combined so far")
        body += _stage(f, n, radix, ns, src, dst, inverse)
        src = dst
    fn = f.text("(func $matrix (param $out0 i32) (param $in0 i32) (param $in1 i32) "
                "(param $scratch i32)", body,
                f"{'inverse ' if inverse else ''}DFT of one row of {n} complex values "
                "(unscaled)")
    radices = "".join(str(r) for r, _ in plan) or "-"
    notes = {"algorithm": ("Stockham autosort, radix 4" + (" + a radix-2 stage" if "2" in radices else ""),
                           "no bit reversal: each stage reads and writes in order"),
             "stages": (len(plan), f"radices {radices} for n = {n}"),
             "vector": ("f32x4: two complex values", "butterflies along k (or g in the first "
                                                     "stage) are independent")}
    return Body([fn], ["out0", "in0", "in1"], lay, notes, fft_flops(n, 1))

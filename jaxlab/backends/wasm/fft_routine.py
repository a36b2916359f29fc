"""The "fft" routine as generated WebAssembly: Stockham autosort stages, radix 4
(one radix-2 stage last when log2 n is odd), on rows of interleaved complex values.

Stage with radix R after Ns points are combined: for j < n/R (g = j / Ns, k = j % Ns)
    v_r = src[j + r n/R] * w^(r k n/(R Ns))        r < R, w = exp(-+2 pi i / n)
    dst[g R Ns + k + r Ns] = (the R-point DFT of v)_r
Reads and writes run over k contiguously, so a stage is one pass over the row with
no bit reversal. Stages ping-pong between the output and a scratch row; the first
reads the input (never written), the last writes the output. The inner loop over k
handles two complex64 values per f32x4 vector where Ns >= 2 (the first stage, Ns = 1,
runs the same loop over g instead), or one complex128 value per f64x2 vector.
Twiddles come from the input table of n values computed in float64 by the lowering
(core/fft.py).
"""
from __future__ import annotations

from jaxlab.backends.wasm.routine_text import Body, Fn, get as _g, i32 as _i, layout
from jaxlab.backends.wasm.vector_loops import FloatType
from jaxlab.ir.fft_stages import fft_flops, stages
from jaxlab.ir.kernel import Routine


def _cmul(f: Fn, a: str, w: str) -> list[str]:
    """a <- a * w on vectors of complex values (two complex64 or one complex128):
    (ar wr - ai wi, ar wi + ai wr) = dup(ar) * w + dup(ai) * swap(w) * (-1, 1, ...)."""
    f.var(f"{a}t", "v128")
    v = f.ft.vec
    return [
        f"(local.set ${a}t ({v}.mul (i8x16.shuffle {_lanes(f.ft, 1, 1)} (local.get ${a}) "
        f"(local.get ${a})) (i8x16.shuffle {_lanes(f.ft, 1, 0)} (local.get ${w}) "
        f"(local.get ${w}))))",
        f"(local.set ${a} ({v}.add ({v}.mul (i8x16.shuffle {_lanes(f.ft, 0, 0)} "
        f"(local.get ${a}) (local.get ${a})) (local.get ${w})) ({v}.mul (local.get ${a}t) "
        f"{_signs(f.ft, -1, 1)})))",
    ]


def _lanes(ft: FloatType, re: int, im: int) -> str:
    """i8x16.shuffle byte indices that put parts `re`, `im` (0: real, 1: imaginary) of
    each complex value of a vector into its real and imaginary lanes."""
    per = ft.lanes // 2
    return " ".join(str(ft.size * (2 * c + part) + b)
                    for c in range(per) for part in (re, im) for b in range(ft.size))


def _signs(ft: FloatType, re: int, im: int) -> str:
    """A vector multiplying each complex value's real part by `re`, imaginary by `im`."""
    return f"(v128.const {ft.vec} {' '.join([f'{re} {im}'] * (ft.lanes // 2))})"


def _times_i(ft: FloatType, value: str, inverse: bool) -> str:
    """value * (-i) (forward) or * i (inverse): swap the parts, negate one."""
    sign = _signs(ft, 1, -1) if not inverse else _signs(ft, -1, 1)
    return f"({ft.vec}.mul (i8x16.shuffle {_lanes(ft, 1, 0)} {value} {value}) {sign})"


def _butterfly(ft: FloatType, radix: int, inverse: bool) -> list[str]:
    """$v0.. <- the radix-point DFT of $v0.., one transform per complex value of a vector."""
    v = ft.vec
    if radix == 2:
        return [f"(local.set $b0 ({v}.add (local.get $v0) (local.get $v1)))",
                f"(local.set $v1 ({v}.sub (local.get $v0) (local.get $v1)))",
                "(local.set $v0 (local.get $b0))"]
    return [f"(local.set $b0 ({v}.add (local.get $v0) (local.get $v2)))",
            f"(local.set $b1 ({v}.sub (local.get $v0) (local.get $v2)))",
            f"(local.set $b2 ({v}.add (local.get $v1) (local.get $v3)))",
            f"(local.set $b3 {_times_i(ft, f'({v}.sub (local.get $v1) (local.get $v3))', inverse)})",
            f"(local.set $v0 ({v}.add (local.get $b0) (local.get $b2)))",
            f"(local.set $v1 ({v}.add (local.get $b1) (local.get $b3)))",
            f"(local.set $v2 ({v}.sub (local.get $b0) (local.get $b2)))",
            f"(local.set $v3 ({v}.sub (local.get $b1) (local.get $b3)))"]


def _stage(f: Fn, n: int, radix: int, ns: int, src: str, dst: str, inverse: bool) -> list[str]:
    """One Stockham stage over a row, a vector of butterflies per iteration (two complex64
    or one complex128). With Ns = 1 a complex64 pair is two consecutive g (twiddles are 1,
    outputs R apart); otherwise consecutive k of one g (contiguous outputs, twiddles
    w^(r k stride))."""
    ft = f.ft
    per = ft.lanes // 2                  # complex values per vector
    quarter = n // radix                 # n / R: the distance between a butterfly's inputs
    stride = n // (radix * ns)           # twiddle step per k
    for r in range(radix):
        f.var(f"v{r}", "v128")
        f.var(f"b{r}", "v128")
    f.var("w", "v128")
    f.var("j")
    addr = lambda base, index: _addr(ft, base, index)  # noqa: E731
    body: list[str] = []
    if ns == 1:   # j = g: loads of g (and g+1); stores to g R + r (and (g+1) R + r)
        pairs = per == 2 and quarter >= 2    # else one butterfly in all (n = R): half vectors
        body.append(f"(local.set $j (i32.shl {_g('jp')} {_i(per - 1)}))" if per == 1 or pairs
                    else "(local.set $j (i32.const 0))")
        load = "v128.load64_zero" if per == 2 and not pairs else "v128.load"
        for r in range(radix):
            at = addr(src, f"(i32.add {_g('j')} {_i(r * quarter)})")
            body.append(f"(local.set $v{r} ({load} {at}))")
        body += _butterfly(ft, radix, inverse)
        for r in range(radix):
            out = f"(i32.add (i32.mul {_g('j')} {_i(radix)}) {_i(r)})"
            if per == 1:
                body.append(f"(v128.store {addr(dst, out)} (local.get $v{r}))")
                continue
            body.append(f"(v128.store64_lane 0 {addr(dst, out)} (local.get $v{r}))")
            if pairs:
                nxt = addr(dst, f"(i32.add {out} {_i(radix)})")
                body.append(f"(v128.store64_lane 1 {nxt} (local.get $v{r}))")
        if per == 2 and not pairs:
            return body
        return f.loop("jp", _i(0), _i(quarter // per), body, "butterflies g" + (", g+1" * (per - 1)))
    # j = g Ns + k over k in steps of `per`; w^(r k stride) for k (and k + 1)
    f.var("g"), f.var("k")
    for r in range(radix):
        at = addr(src, f"(i32.add {_g('j')} {_i(r * quarter)})")
        body.append(f"(local.set $v{r} (v128.load {at}))")
        if r:
            step = r * stride
            w0 = addr("(local.get $in1)", f"(i32.mul {_g('k')} {_i(step)})")
            if per == 1:
                body.append(f"(local.set $w (v128.load {w0}))")
            else:
                w1 = addr("(local.get $in1)", f"(i32.mul (i32.add {_g('k')} {_i(1)}) {_i(step)})")
                body.append(f"(local.set $w (v128.load64_lane 1 {w1} (v128.load64_zero {w0})))")
            body += _cmul(f, f"v{r}", "w")
    body += _butterfly(ft, radix, inverse)
    out = f"(i32.add (i32.mul {_g('g')} {_i(radix * ns)}) {_g('k')})"
    for r in range(radix):
        at = addr(dst, f"(i32.add {out} {_i(r * ns)})")
        body.append(f"(v128.store {at} (local.get $v{r}))")
    inner = ([f"(local.set $j (i32.add (i32.mul {_g('g')} {_i(ns)}) {_g('k')}))"] + body)
    k_loop = f.loop("kk", _i(0), _i(ns // per),
                    [f"(local.set $k (i32.shl {_g('kk')} {_i(per - 1)}))"] + inner,
                    "k" + (", k+1" * (per - 1)))
    return f.loop("g", _i(0), _i(quarter // ns), k_loop, f"groups of a radix-{radix} stage")


def _addr(ft: FloatType, base: str, index: str) -> str:
    """The byte address of complex element `index` (two floats each)."""
    return f"(i32.add {base} (i32.shl {index} {_i(ft.shift + 1)}))"


def generate_fft(routine: Routine, ft: FloatType) -> Body:
    (shape, _), _tw = routine.inputs
    n = shape[-2]
    inverse = routine.param["inverse"]
    lay = layout(row=n * 2 * ft.size)
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
             "vector": (f"{ft.vec}: {ft.lanes // 2} complex value(s)",
                        "butterflies along k (or g in the first stage) are independent")}
    return Body([fn], ["out0", "in0", "in1"], lay, notes, fft_flops(n, 1))

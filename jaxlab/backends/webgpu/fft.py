"""The "fft" routine as WGSL: one pass per Stockham stage (radix 4, a radix-2 stage
last when log2 n is odd), one thread per butterfly over every row of the batch.

Stage with radix R after Ns points are combined (j < n/R, g = j / Ns, k = j % Ns):
    v_r = src[j + r n/R] * tw[r k n/(R Ns)];   dst[g R Ns + k + r Ns] = DFT_R(v)_r
Stages ping-pong between two scratch rows-buffers; the first reads the input,
the last writes the output. Sizes are constants in each stage's text.
"""
from __future__ import annotations

import math

from jaxlab.backends.webgpu.codegen import HandWritten
from jaxlab.ir.fft_stages import stages

_THREADS = 256

_HEAD = """@group(0) @binding(0) var<storage, read> src: array<vec2<f32>>;
@group(0) @binding(1) var<storage, read> tw: array<vec2<f32>>;
@group(0) @binding(2) var<storage, read_write> dst: array<vec2<f32>>;

fn cmul(a: vec2<f32>, b: vec2<f32>) -> vec2<f32> {
  return vec2<f32>(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
"""


def _butterfly(radix: int, inverse: bool) -> str:
    if radix == 2:
        return ("  let o0 = v0 + v1;\n  let o1 = v0 - v1;\n")
    # (a1 - a3) times -i (forward) or +i (inverse)
    rot = "vec2<f32>(d.y, -d.x)" if not inverse else "vec2<f32>(-d.y, d.x)"
    return ("  let b0 = v0 + v2;\n  let b1 = v0 - v2;\n  let b2 = v1 + v3;\n"
            f"  let d = v1 - v3;\n  let b3 = {rot};\n"
            "  let o0 = b0 + b2;\n  let o1 = b1 + b3;\n  let o2 = b0 - b2;\n  let o3 = b1 - b3;\n")


def stage_source(n: int, rows: int, radix: int, ns: int, inverse: bool) -> HandWritten:
    quarter, stride = n // radix, n // (radix * ns)
    loads = "".join(
        f"  let v{r} = src[base + j + {r * quarter}u];\n" if r == 0 or ns == 1 else
        f"  let v{r} = cmul(src[base + j + {r * quarter}u], tw[k * {r * stride}u]);\n"
        for r in range(radix))
    stores = "".join(f"  dst[out + {r * ns}u] = o{r};\n" for r in range(radix))
    stage = f"radix-{radix} stage of a length-{n} {'inverse ' if inverse else ''}DFT"
    return HandWritten(_HEAD + f"""
// {stage}, {ns} point(s) combined so far""", f"""  let t = group * {_THREADS}u + lid;
  if (t >= {rows * quarter}u) {{ return; }}
  let base = (t / {quarter}u) * {n}u;
  let j = t % {quarter}u;
  let k = j % {ns}u;
  let out = base + (j / {ns}u) * {radix * ns}u + k;
{loads}{_butterfly(radix, inverse)}{stores}""")


def plan_fft(b) -> None:
    """Passes for routine "fft": inputs (rows, n, 2) and twiddles (1, n, 2), output as
    the first input."""
    (shape, _), _tw = b.routine.inputs
    rows, n = math.prod(shape[:-2]), shape[-2]
    inverse = b.routine.param["inverse"]
    plan = stages(n)
    temps = [b.temp(rows * n * 8) for _ in range(min(2, len(plan) - 1))]
    src = 0
    for s, (radix, ns) in enumerate(plan):
        left = len(plan) - 1 - s
        dst = b.output(0) if left == 0 else temps[left % 2 if len(temps) == 2 else 0]
        b.shader(stage_source(n, rows, radix, ns, inverse), f"fft_r{radix}",
                 math.ceil(rows * n // radix / _THREADS), _THREADS, [src, 1, dst], [dst])
        src = dst
    radices = "".join(str(r) for r, _ in plan)
    b.notes = {"algorithm": ("Stockham autosort, radix 4", "no bit reversal; a radix-2 stage "
                             "last when log2 n is odd"),
               "passes": (len(plan), f"one per stage (radices {radices}), a thread per "
                                     "butterfly over all rows"),
               "workgroup": (_THREADS, "butterflies are independent within a stage")}

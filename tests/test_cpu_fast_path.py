"""The cpu backend's strided fast path agrees with its gather path.

Every kernel a jaxlab.numpy program dispatches on the cpu device is re-run with
the gather evaluation (cpu.run_kernel_numpy) on the same inputs: elementwise
kernels must match bit for bit, reductions within float32 rounding.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

import jaxlab
import jaxlab.numpy as jnp
from jaxlab import lax
from jaxlab.backends import cpu, cpu_strided
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Kernel, Reduction, acc_variable

F32, I32, F16 = DType.float32, DType.int32, DType.float16


@pytest.fixture
def dispatched(monkeypatch):
    """(executable, input copies, output) for every kernel the cpu backend runs."""
    runs = []
    real = cpu.CpuBackend.dispatch

    def spy(self, exe, inputs, outputs):
        copies = [np.array(h, copy=True) for h in inputs]
        result = real(self, exe, inputs, outputs)
        if isinstance(exe.program, Kernel):
            runs.append((exe, copies, outputs[0].copy()))
        return result

    monkeypatch.setattr(cpu.CpuBackend, "dispatch", spy)
    return runs


def _gathered(kernel: Kernel, handles: list[np.ndarray]) -> np.ndarray:
    bufs = [h.view(d.np)[:n] for h, (d, n) in zip(handles, kernel.inputs)]
    out = np.zeros(kernel.size, kernel.dtype.np)
    cpu.run_kernel_numpy(kernel, bufs, out)
    return out


def _assert_same(kernel: Kernel, fast: np.ndarray, gather: np.ndarray) -> None:
    if kernel.reduction is None or not kernel.dtype.is_float:
        np.testing.assert_array_equal(fast.view(np.uint8), gather.view(np.uint8),
                                      err_msg=kernel.text())
    else:
        scale = float(np.nanmax(np.abs(gather), initial=1.0))
        tol = 1e-3 if kernel.dtype is DType.float16 else 1e-5
        np.testing.assert_allclose(fast, gather, rtol=tol, atol=tol * scale, equal_nan=True,
                                   err_msg=kernel.text())


def _check(dispatched, fn, *args) -> set[str]:
    """Run fn on the cpu device; compare every kernel with the gather path; the paths taken."""
    with jaxlab.default_device("cpu"):
        np.asarray(fn(*(jnp.asarray(a) for a in args)))
    assert dispatched, "no kernel ran"
    paths = set()
    for exe, inputs, output in dispatched:
        kernel = exe.program
        assert exe.tuning.names() == ("path",) and exe.tuning.reason("path")
        paths.add(exe.tuning.value("path"))
        fast = output.view(kernel.dtype.np)[:kernel.size]
        _assert_same(kernel, fast, _gathered(kernel, inputs))
    return paths


RNG = np.random.default_rng(0)


def f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def i32(*shape: int) -> np.ndarray:
    return RNG.integers(-50, 50, shape).astype(np.int32)


def conv(x, w, strides=(1, 1), padding=((1, 1), (1, 1)), rhs_dilation=None):
    return lax.conv_general_dilated(x, w, strides, padding, rhs_dilation=rhs_dilation)


# (name, fn, args, paths that must all appear among the kernels)
CASES = [
    ("matmul", lambda a, b: a @ b, (f32(6, 7), f32(7, 5)), {"strided-einsum"}),
    ("batched_matmul", lambda a, b: a @ b, (f32(2, 3, 4), f32(2, 4, 5)), {"strided-einsum"}),
    ("transposed_operands", lambda a, b: a.T @ b.T, (f32(7, 6), f32(5, 7)), {"strided-einsum"}),
    ("matmul_T_plus_1", lambda a, b: (a @ b).T + 1, (f32(6, 7), f32(7, 5)), {"strided-einsum"}),
    ("matmul_int32", lambda a, b: a @ b, (i32(4, 9), i32(9, 3)), {"strided"}),
    ("matmul_float16", lambda a, b: a @ b,
     (f32(4, 9).astype(np.float16), f32(9, 3).astype(np.float16)), {"strided"}),
    ("conv_padded", conv, (f32(2, 3, 7, 7), f32(4, 3, 3, 3)), {"strided", "strided-einsum"}),
    ("conv_strided_dilated", lambda x, w: conv(x, w, (2, 2), ((0, 1), (2, 0)), (2, 1)),
     (f32(2, 3, 9, 8), f32(4, 3, 2, 3)), {"strided-einsum"}),
    ("sum_axis0", lambda x: x.sum(0), (f32(9, 5),), {"strided-einsum"}),
    ("max_axes_0_2", lambda x: x.max(axis=(0, 2)), (f32(3, 4, 5),), {"strided"}),
    ("prod_axis1", lambda x: x.prod(1), (f32(4, 6, 3),), {"strided"}),
    ("sum_axis0_int32", lambda x: x.sum(0) * 3, (i32(7, 4),), {"strided"}),
    ("argmax_axis0", lambda x: jnp.argmax(x, axis=0), (f32(6, 5),), {"strided"}),
    ("any_axis0", lambda x: (x > 0).any(axis=0), (f32(6, 5),), {"strided"}),
    ("sum_all", lambda x: x.sum(), (f32(5, 7),), {"strided-einsum"}),
    ("sum_float16", lambda x: x.sum(), (np.full(4096, 1.0, np.float16),), {"strided-einsum"}),
    ("sum_of_broadcast_out", lambda x: jnp.broadcast_to(x[:, None, :], (4, 3, 5)).sum(-1),
     (f32(4, 5),), {"strided-einsum"}),
    ("sum_over_broadcast", lambda x: jnp.broadcast_to(x[:, None], (4, 6)).sum(1),
     (f32(4),), {"strided"}),
    ("sum_exp_transposed", lambda x: jnp.exp(x.T).sum(1), (f32(5, 6),), {"strided-einsum"}),
    ("broadcast_add", lambda x, y: x[:, None] + y[None, :], (f32(5), f32(4)), {"strided"}),
    ("flip_step", lambda x: x[::-1, ::-2] + 1, (f32(8, 6),), {"strided"}),
    ("asin_of_flip", lambda x: jnp.arcsin(jnp.flip(x) / 4), (f32(6, 7),), {"strided"}),
    ("pad", lambda x: jnp.pad(x, ((1, 2), (0, 3))) * 2, (f32(4, 5),), {"strided"}),
    ("concatenate", lambda x, y: jnp.concatenate([x, y], axis=1), (f32(3, 2), f32(3, 4)),
     {"strided"}),
    ("arange", lambda x: jnp.arange(12).reshape(3, 4) * 2 + x, (i32(3, 4),), {"strided"}),
    ("gather_x_idx", lambda x, i: x[i], (f32(8, 6), np.array([3, -1, 2], np.int32)),
     {"gather"}),
]


@pytest.mark.parametrize("chunk", [cpu_strided._CHUNK_ELEMENTS, 7], ids=["one_chunk", "chunks"])
@pytest.mark.parametrize("name,fn,args,paths", CASES, ids=[c[0] for c in CASES])
def test_fast_path_matches_gather(dispatched, monkeypatch, chunk, name, fn, args, paths):
    monkeypatch.setattr(cpu_strided, "_CHUNK_ELEMENTS", chunk)
    assert paths <= _check(dispatched, fn, *args)


def test_gather_reason_names_the_load(dispatched):
    _check(dispatched, lambda x, i: x[i], f32(8, 6), np.array([3, 1], np.int32))
    reasons = [exe.tuning.reason("path") for exe, _, _ in dispatched
               if exe.tuning.value("path") == "gather"]
    assert any("data-dependent index" in r for r in reasons), reasons


def _plan(index: AluExp, count: int):
    kernel = Kernel(shape=(4, 3), inputs=((F32, count),),
                    exp=AluExp.load(0, index, F32) + AluExp.const(1.0, F32))
    return cpu_strided.plan_strided(kernel)


def test_reads_past_the_buffer_fall_back():
    gidx = AluExp.special("gidx", 12)
    plan, reason = _plan(gidx * 2, 12)    # the gather path clips these reads
    assert plan is None and "outside its buffer" in reason


def test_index_that_may_overflow_int32_falls_back():
    gidx = AluExp.special("gidx", 12)
    plan, reason = _plan(gidx * (1 << 28), 1)   # 11 * 2**28 wraps
    assert plan is None and "overflow" in reason


def test_division_left_by_the_simplifier_falls_back():
    gidx = AluExp.special("gidx", 12)
    plan, reason = _plan(gidx // 4 + (gidx % 4) * 3, 12)   # a transposed reshape
    assert plan is None and "not affine" in reason


def test_affine_plan_strides():
    gidx = AluExp.special("gidx", 12)
    plan, _ = _plan((gidx // 3) * -3 + (gidx % 3) + 9, 12)   # rows flipped
    assert plan.path == "strided"
    (load,) = plan.body.loads
    assert load.index == cpu_strided.Affine(9, (-3, 1))


def test_matmul_timing(dispatched):
    """Not an assertion on speed: prints how long the 256x784 @ 784x512 kernel takes."""
    a, b = f32(256, 784), f32(784, 512)
    with jaxlab.default_device("cpu"):
        x, y = jnp.asarray(a), jnp.asarray(b)
        with jaxlab.capture() as log:
            for _ in range(3):
                result = np.asarray(x @ y)
    events = log.kernels()
    assert {(e.name, e.tuning.value("path")) for e in events} == {("r_256_512_784", "strided-einsum")}
    np.testing.assert_allclose(result, a @ b, rtol=1e-4, atol=1e-3)
    print(f"\nr_256_512_784 on the cpu fast path: {min(e.dispatch_ms for e in events):.1f} ms "
          "(the gather path takes seconds)")


def test_plan_is_recorded_in_the_executable():
    gidx, ridx = AluExp.special("gidx", 4), AluExp.special("ridx", 3)
    body = AluExp.load(0, gidx * 3 + ridx, F32) * AluExp.load(1, ridx, F32)
    kernel = Kernel(shape=(4,), inputs=((F32, 12), (F32, 3)), exp=body,
                    reduction=Reduction(AluOp.Add, 3, acc_variable(F32)), reduce_shape=(3,))
    exe = cpu.CpuBackend().prepare_kernel(kernel)
    assert exe.tuning.value("path") == "strided-einsum" and "einsum ab,b->a" in exe.source


# --- random kernels: loop shapes, strided/masked/non-affine/out-of-bounds loads ------

N_IN = 64
FUZZ_INPUTS = {F32: RNG.standard_normal(N_IN).astype(np.float32),
               I32: RNG.integers(-9, 9, N_IN).astype(np.int32),
               F16: RNG.standard_normal(N_IN).astype(np.float16)}
SLOT = {d: k for k, d in enumerate(FUZZ_INPUTS)}


def _unravel(flat: AluExp, shape: tuple[int, ...]) -> list[AluExp]:
    """Per-dim indices of a row-major flat index, as lowering builds them."""
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
    return [(flat // s) % n for s, n in zip(strides, shape)]


@st.composite
def fuzz_load(draw, dims: list[AluExp], sizes: list[int], dtype: DType) -> AluExp:
    index = AluExp.const(draw(st.integers(0, 40)), I32)
    for i in dims:
        kind = draw(st.sampled_from(["lin", "lin", "lin", "div", "none"]))
        k = draw(st.integers(-3, 3)) if kind == "lin" else draw(st.integers(1, 3))
        index = index + {"lin": i * k, "div": i // k, "none": AluExp.const(0, I32)}[kind]
    load = AluExp.load(SLOT[dtype], index.simplify(), dtype)
    if not dims or not draw(st.booleans()):
        return load
    d = draw(st.integers(0, len(dims) - 1))   # a padding-like mask on one dim
    lo, hi = sorted(draw(st.integers(0, sizes[d])) for _ in range(2))
    valid = (dims[d].lt(lo).ne(True) & dims[d].lt(hi)).simplify()
    masked = AluExp.load(SLOT[dtype], valid.where(index, 0).simplify(), dtype)
    return valid.where(masked, AluExp.const(0, dtype))


@st.composite
def fuzz_body(draw, dims: list[AluExp], sizes: list[int]) -> AluExp:
    a = draw(fuzz_load(dims, sizes, F32))
    b = draw(fuzz_load(dims, sizes, draw(st.sampled_from([F32, I32, F16])))).cast(F32)
    op = draw(st.sampled_from(["mul", "add", "max", "sin", "one", "cmp"]))
    return {"mul": lambda: a * b, "add": lambda: a + b, "max": lambda: a.max(b),
            "sin": lambda: (a * b).unary(AluOp.Sin), "one": lambda: a,
            "cmp": lambda: a.lt(b).where(a, b * 2.0)}[op]()


OUT_SHAPES = st.sampled_from([(), (5,), (4, 3), (2, 1, 3), (3, 4, 2)])
RED_SHAPES = st.sampled_from([None, (3,), (2, 3), (1, 4)])


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data(), OUT_SHAPES, RED_SHAPES, st.sampled_from([AluOp.Add, AluOp.Max, AluOp.Mul]))
def test_random_kernels_match_gather(data, shape, red_shape, op):
    size = int(np.prod(shape))
    out_dims = _unravel(AluExp.special("gidx", size), shape)
    red_dims = _unravel(AluExp.special("ridx", int(np.prod(red_shape))), red_shape) \
        if red_shape else []
    sizes = list(shape) + list(red_shape or ())
    assume(sizes)
    body = data.draw(fuzz_body(out_dims + red_dims, sizes)).simplify()
    reduction = None
    if red_shape:
        epilogue = acc_variable(F32) * 2.0 + data.draw(fuzz_load(out_dims, list(shape), F32))
        reduction = Reduction(op, int(np.prod(red_shape)), epilogue.simplify())
    kernel = Kernel(shape=shape, inputs=tuple((d, N_IN) for d in FUZZ_INPUTS), exp=body,
                    reduction=reduction, reduce_shape=red_shape or ())
    backend = cpu.CpuBackend()
    handles = [np.frombuffer(a.tobytes(), np.uint8).copy() for a in FUZZ_INPUTS.values()]
    output = backend.allocate(kernel.size * 4)
    backend.dispatch(backend.prepare_kernel(kernel), handles, [output])
    _assert_same(kernel, output.view(np.float32)[:kernel.size], _gathered(kernel, handles))

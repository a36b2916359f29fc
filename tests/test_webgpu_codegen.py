"""WGSL text of small kernels, generated without a device."""
import dataclasses
import re

import numpy as np
import pytest

from jaxlab.backends.webgpu.codegen import generate
from jaxlab.backends.webgpu.contraction import find_contraction
from jaxlab.backends.webgpu.ops import Lang, library
from jaxlab.backends.webgpu.plan import kernel_plan
from jaxlab.backends.webgpu.routines import plan_routine
from jaxlab.backends.webgpu.tune import Limits, Strategy, tune
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, RIDX, Kernel, Reduction, Routine, acc_variable

F32, F16, I32, U32, BOOL = (DType.float32, DType.float16, DType.int32, DType.uint32,
                            DType.bool)
LANG, LIMITS = Lang(f16=True), Limits()
GPU = Limits(max_threads=1024, max_shared_bytes=49152)   # an H200's


def elementwise(n, dtypes, build):
    gidx = AluExp.special(GIDX, n)
    loads = [AluExp.load(i, gidx, d) for i, d in enumerate(dtypes)]
    return Kernel((n,), tuple((d, n) for d in dtypes), build(*loads))


def matmul(m, k, n, dtype=F32):
    gidx, ridx = AluExp.special(GIDX, m * n), AluExp.special(RIDX, k)
    a = AluExp.load(0, (gidx // n) * k + ridx, dtype)
    b = AluExp.load(1, ridx * n + gidx % n, dtype)
    acc = acc_variable(dtype)
    return Kernel((m, n), ((dtype, m * k), (dtype, k * n)), a * b,
                  Reduction(AluOp.Add, k, acc + AluExp.const(1.0, dtype)), (k,))


def row_sum(rows, cols, dtype=F32):
    gidx, ridx = AluExp.special(GIDX, rows), AluExp.special(RIDX, cols)
    x = AluExp.load(0, gidx * cols + ridx, dtype)
    return Kernel((rows,), ((dtype, rows * cols),), x,
                  Reduction(AluOp.Add, cols, acc_variable(dtype)), (cols,))


def wgsl(kernel, lang=LANG, limits=LIMITS, **overrides):
    return generate(kernel, tune(kernel, lang, limits, overrides or None), lang, limits)


def main_of(source):
    return source[source.index("fn main"):]


def test_max_propagates_nan_through_a_bit_test():
    src = wgsl(elementwise(8, [F32, F32], lambda a, b: a.max(b))).source
    assert "max_f32(in0[gidx], in1[gidx])" in main_of(src)
    helper = src[src.index("fn max_f32"):]
    assert "isnan_f32(a)" in helper and "isnan_f32(b)" in helper
    assert "0x7f800000u" in src   # NaN is found from the bits, not with x != x


def test_nan_comparisons_are_numpy_ones():
    src = wgsl(elementwise(8, [F32, F32], lambda a, b: a.ne(b))).source
    assert "ne_f32(" in main_of(src) and "isnan_f32" in src


@pytest.mark.parametrize("op,helper", [(AluOp.Idiv, "idiv_i32"), (AluOp.Mod, "mod_i32")])
def test_integer_division_is_guarded(op, helper):
    src = wgsl(elementwise(8, [I32, I32], lambda a, b: a.binary(op, b))).source
    assert f"{helper}(in0[gidx], in1[gidx])" in main_of(src)
    body = src[src.index(f"fn {helper}"):]
    body = body[:body.index("\n}")]
    assert "b == 0i" in body and "b == -1i" in body   # no division by 0, no INT_MIN / -1


def test_float_to_int_cast_saturates():
    src = wgsl(elementwise(8, [F32], lambda a: a.cast(I32))).source
    assert "f32_to_i32(in0[gidx])" in src and "2147483647i" in src


def test_huge_kernels_use_a_2d_grid():
    n = 1 << 26   # 131072 workgroups of 256 threads, 2 outputs each: past 65535
    kernel = elementwise(n, [F32], lambda a: a * 2.0)
    t = tune(kernel, LANG, LIMITS)
    groups = n // (t.workgroup * t.upcast)
    prog = wgsl(kernel)
    gx, gy, _ = prog.grid
    assert groups > 65535 and gy > 1 and gx <= 65535 and gy <= 65535 and gx * gy >= groups
    assert f"let group = wid.y * {gx}u + wid.x;" in prog.source
    assert f"if (group >= {groups}u) {{ return; }}" in prog.source


def test_small_kernels_use_a_1d_grid():
    prog = wgsl(elementwise(1000, [F32], lambda a: a + 1.0))
    assert prog.grid == (4, 1, 1) and "let group = wid.x;" in prog.source


def test_shared_subexpressions_are_named_once():
    src = main_of(wgsl(elementwise(8, [F32], lambda a: (a * a + 1.0) * (a * a))).source)
    assert src.count("let t") >= 2 and src.count("in0[gidx]") == 1


def test_bool_outputs_are_packed_four_per_word():
    prog = wgsl(elementwise(10, [F32], lambda a: a.lt(0.5)))
    src = main_of(prog.source)
    assert "var word = 0u;" in src and "u32(" in src and "<< (8u * (lane % 4u))" in src
    assert "out: array<u32>" in prog.source


def test_bool_inputs_are_read_from_bytes():
    src = wgsl(elementwise(10, [BOOL, F32], lambda c, a: c.where(a, 0.0))).source
    assert "fn load_in0(i: i32) -> bool" in src and "load_in0(gidx)" in src


def test_f16_without_shader_f16_computes_in_f32():
    src = wgsl(elementwise(10, [F16], lambda a: a * 3.0), lang=Lang(f16=False)).source
    assert "enable f16" not in src
    assert "unpack2x16float" in src and "pack2x16float(vec2<f32>(round_f16(" in src


def test_f16_with_shader_f16_is_native():
    src = wgsl(elementwise(10, [F16], lambda a: a * 3.0)).source
    assert src.startswith("enable f16;") and "array<f16>" in src and "3.0h" in src


def test_reductions_accumulate_f16_in_f32():
    src = wgsl(row_sum(4, 32, F16)).source
    assert "var acc: f32" in src and "f16(exact_f32(acc))" in src


def test_reductions_hoist_index_work_and_unroll():
    prog = wgsl(row_sum(8, 64))
    src = main_of(prog.source)
    loop = src.index("for (var r")
    assert src.index("gidx * 64i") < loop   # work of gidx alone happens once per output
    assert "let r3 = r + 3i;" in src        # unrolled by 4


def test_long_reductions_share_a_workgroup():
    kernel = row_sum(4, 4096)
    t = tune(kernel, LANG, LIMITS)
    assert t.strategy is Strategy.GROUP_REDUCE and t.record().reason("strategy")
    src = wgsl(kernel).source
    assert "var<workgroup> partial" in src and "workgroupBarrier();" in src
    cpu = Limits(hardware=False)   # barriers cost more than they save on a CPU
    assert tune(kernel, LANG, cpu).strategy is Strategy.REDUCE
    assert tune(row_sum(1, 4096), LANG, cpu).strategy is Strategy.GROUP_REDUCE


def test_matmul_is_tiled_with_a_register_block():
    kernel = matmul(64, 48, 96)
    c = find_contraction(kernel)
    assert (c.batch, c.m, c.n) == (1, 64, 96)
    t = tune(kernel, LANG, LIMITS)
    assert t.strategy is Strategy.TILED and t.tile.reg_m * t.tile.reg_n >= 4
    src = wgsl(kernel, limits=GPU, tile=(64, 64, 16, 4, 4)).source
    # vec4 rows of the staged slices, read once per step; one vector FMA per row of the block
    assert "var<workgroup> tile_a: array<vec4<f32>" in src
    assert "acc_3_0 += a15_0[3] * b15_0;" in src
    assert "fn finish(" in src and "+ 1.0f" in src    # the epilogue runs per output
    record = t.record()
    assert all(c.reason for c in record.choices)


def test_contiguous_aligned_operands_are_read_as_vec4s():
    src = wgsl(matmul(64, 48, 96), limits=GPU, tile=(64, 64, 16, 4, 4)).source
    assert "in0: array<vec4<f32>>" in src and "in1: array<vec4<f32>>" in src
    assert "in0[u32(index_a(bidx, m, k)) / 4u]" in src
    # K = 47: rows of a start off 16-byte boundaries, a is read element by element; b is not
    odd = tune(matmul(64, 47, 96), LANG, GPU)
    assert odd.record().reason("vector_loads").startswith("global loads of b as vec4s along N")
    src = generate(matmul(64, 47, 96), odd, LANG, GPU).source
    assert "in0: array<f32>" in src and "in1: array<vec4<f32>>" in src
    scalar = wgsl(matmul(64, 48, 96), limits=GPU, tile=(64, 64, 16, 4, 4, 1, True, False))
    assert "array<vec4<f32>>;" not in scalar.source.split("var<workgroup>")[0]


def test_subgroups_fold_a_workgroup_where_the_adapter_has_them():
    kernel = row_sum(1, 4096)
    sub = wgsl(kernel, lang=Lang(f16=True, subgroups=True)).source
    assert "subgroupAdd(acc)" in sub and "@builtin(subgroup_size)" in sub
    assert "half >>= 1u" not in sub
    assert "subgroup" not in wgsl(kernel).source   # the fallback: a tree in shared memory
    # float max keeps the tree: the builtin need not propagate NaN
    gidx, ridx = AluExp.special(GIDX, 1), AluExp.special(RIDX, 4096)
    peak = Kernel((1,), ((F32, 4096),), AluExp.load(0, ridx, F32),
                  Reduction(AluOp.Max, 4096, acc_variable(F32)), (4096,))
    assert "subgroup" not in wgsl(peak, lang=Lang(subgroups=True)).source


def test_tiles_fill_a_large_gpu():
    big = tune(matmul(4096, 4096, 4096), LANG, GPU)
    assert (big.tile.m, big.tile.n, big.tile.reg_m, big.tile.split) == (128, 128, 8, 1)
    assert big.tile.double and "workgroups" in big.record().reason("tile")
    # 256x512 outputs make few big tiles: smaller ones, the reduction split between groups
    mlp = tune(matmul(256, 784, 512), LANG, GPU)
    groups = 256 // mlp.tile.m * 512 // mlp.tile.n * mlp.tile.split
    assert mlp.tile.split > 1 and groups >= 128
    assert "second pass" in mlp.record().reason("split_k")
    narrow = tune(matmul(256, 512, 10), LANG, GPU)   # N=10: a tile 16 wide, not 128
    assert narrow.strategy is Strategy.TILED and narrow.tile.n == 16
    cpu = tune(matmul(256, 784, 512), LANG, Limits(max_shared_bytes=32768, hardware=False))
    assert cpu.tile.m <= 64 and cpu.tile.split == 1
    ints = tune(matmul(256, 784, 512, dtype=I32), LANG, GPU)
    assert ints.tile.split == 1    # partial sums are float32 only
    # partial sums past the largest buffer: no split, chosen or asked for
    small = dataclasses.replace(GPU, max_buffer_bytes=4 * 256 * 512)
    assert tune(matmul(256, 784, 512), LANG, small).tile.split == 1
    with pytest.raises(ValueError, match="tile"):
        tune(matmul(256, 784, 512), LANG, small, {"tile": (64, 64, 16, 4, 4, 2, True)})


def test_split_k_plan_adds_partials_in_a_second_pass():
    kernel = matmul(64, 512, 64)
    t = tune(kernel, LANG, GPU, {"tile": (32, 32, 16, 2, 2, 4, True)})
    plan = kernel_plan(kernel, t, LANG, GPU)
    first, second = plan.passes
    assert plan.scratch == (4 * 4 * 64 * 64,)
    assert first.args == (0, 1, 3) and second.args == (0, 1, 2, 3)
    assert "store_partial(slice" in first.program.source
    assert "partials[s * 4096u + i]" in second.program.source
    assert "fn finish(" in second.program.source
    with pytest.raises(ValueError, match="tile"):   # more slices than K has tiles
        tune(kernel, LANG, GPU, {"tile": (32, 32, 16, 2, 2, 64, True)})


def test_tuning_overrides_are_checked():
    kernel = row_sum(8, 64)
    assert tune(kernel, LANG, LIMITS, {"unroll": 2}).unroll == 2
    with pytest.raises(ValueError, match="unroll"):
        tune(kernel, LANG, LIMITS, {"unroll": 3})
    with pytest.raises(ValueError, match="tiled"):
        tune(kernel, LANG, LIMITS, {"strategy": "tiled"})


def test_every_loop_has_a_comment():
    kernels = [row_sum(8, 64), row_sum(4, 4096), matmul(64, 48, 96),
               elementwise(10, [F32], lambda a: a.lt(0.5).where(a.unary(AluOp.Erf), a)),
               elementwise(10, [U32] * 4, lambda *k: AluExp(AluOp.Threefry2x32, U32, k, 0))]
    sources = [wgsl(k).source for k in kernels]
    sort = Routine("sort", (((4, 3000), F32),), (((4, 3000), F32),))
    lu = Routine("lu", (((5, 5), F32),), (((5, 5), F32), ((5,), I32), ((5,), I32)))
    chol = Routine("cholesky", (((5, 5), F32),), (((5, 5), F32),))
    solve = Routine("triangular_solve", (((5, 5), F32), ((5, 2), F32)), (((5, 2), F32),),
                    (("left_side", True), ("lower", True), ("transpose_a", False),
                     ("unit_diagonal", False)))
    sources += [plan_routine(r, LANG, LIMITS)[0].source for r in (sort, lu, chol, solve)]
    for src in sources:
        lines = src.splitlines()
        for i, line in enumerate(lines):
            if line.strip().startswith("for ("):
                assert "//" in lines[i - 1] or "//" in line, f"uncommented loop:\n{line}"


def test_library_holds_only_what_is_called():
    lib = library({"sin_f16"})
    assert "fn sin_f16(x: f16) -> f16" in lib and "fn sin_f32" in lib
    assert "fn erf" not in lib and "fn threefry2x32" not in lib
    assert lib.index("fn sin_f32") < lib.index("fn sin_f16")   # callees first


def test_constants_never_hit_the_constant_evaluator():
    src = wgsl(elementwise(4, [F32], lambda a: a.max(AluExp.const(np.inf, F32)) +
                           AluExp.const(np.nan, F32))).source
    assert "inf_f32()" in src and "nan_f32()" in src
    assert not re.search(r"\d(e\+?\d+)?f?\s*/\s*0\.0", src)


def test_vec4_elementwise_on_a_gpu():
    kernel = elementwise(1 << 20, [F32, F32], lambda a, b: a * b + 1.0)
    t = tune(kernel, LANG, LIMITS)
    assert t.upcast == 4 and "vec4" in t.record().reason("upcast")
    src = main_of(wgsl(kernel).source)
    assert "let v0 = in0[thread];" in src and "v1.w" in src
    assert "out[thread] = vec4<f32>(" in src and "gidx" not in src.replace("g3", "")
    assert tune(elementwise(1 << 20, [F16], lambda a: a * 2.0), LANG, LIMITS).upcast != 4


def test_helpers_come_from_the_ops_written():
    # exp arrives as primitive ops; float max needs its NaN-propagating helper and that
    # its NaN test; nothing else is defined
    src = wgsl(elementwise(4, [F32], lambda a: a.unary(AluOp.Exp).max(a))).source
    # exp rounds n = x log2(e) by adding 1.5*2^23, and reads n back from the next float
    assert "fn exp_" not in src and "floor(" not in src and " + 1u) - 1.2582913e+07f" in src
    defined = set(re.findall(r"^fn (\w+)\(", src, re.M)) - {"main"}
    # exp clamps its x between constants: one NaN bit test each
    assert defined == {"max_f32", "max_bound_f32", "min_bound_f32", "isnan_f32"}
    assert "min_bound_f32(max_bound_f32(t0, -103.98f), 88.8f)" in src
    f16 = wgsl(elementwise(4, [F16], lambda a: a.unary(AluOp.Sin))).source
    assert "fn sin_f16" in f16 and "fn sin_f32" in f16 and "fn to_f16" in f16


I64, U64 = DType.int64, DType.uint64


def test_int64_values_are_word_pairs_and_only_called_helpers_are_defined():
    src = wgsl(elementwise(8, [I64, I64], lambda a, b: a + b)).source
    assert "array<vec2<u32>>" in src   # 8 bytes per element, as NumPy stores them
    assert "add64(in0[gidx], in1[gidx])" in main_of(src)
    defined = set(re.findall(r"fn (\w+)\(", src)) - {"main"}
    assert defined == {"add64"}
    src = wgsl(elementwise(8, [U64, U64], lambda a, b: a // b)).source
    defined = set(re.findall(r"fn (\w+)\(", src)) - {"main"}
    assert defined == {"div_u64", "divmod_u64", "lt_u64", "sub64"}


def test_int64_constants_and_casts_keep_every_bit():
    src = main_of(wgsl(elementwise(4, [I64], lambda a: a * AluExp.const(-(2 ** 40) - 1, I64)
                                   )).source)
    assert "vec2<u32>(0xffffffffu, 0xfffffeffu)" in src   # -(2^40) - 1 as (low, high)
    src = wgsl(elementwise(4, [I64], lambda a: a.cast(F32))).source
    assert "i64_to_f32(in0[gidx])" in src and "countLeadingZeros" in src   # rounded once


def test_int64_matmul_is_not_tiled():
    # WGSL's * and += on the register tile do not exist for word pairs
    kernel = matmul(32, 32, 32, I64)
    assert tune(kernel, LANG, LIMITS).strategy is not Strategy.TILED
    src = wgsl(kernel).source
    assert "mul64(" in src and "add64(" in src


def test_bfloat16_rounding_is_integer_work_on_the_bits():
    # no float instruction between the f32 and its bfloat16 bits (a NaN is found from them)
    from jaxlab.ir.widen import widen
    kernel = widen(elementwise(4, [F32], lambda a: a.cast(DType.bfloat16)))
    src = main_of(wgsl(kernel).source)
    assert "isnan" not in src and "ne_f32" not in src and "in0[gidx]" in src
    assert re.search(r"select\([^;]*4294901760u", src)   # chooses between u32 bit patterns

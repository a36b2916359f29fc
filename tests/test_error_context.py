"""Errors name what the user can act on: their own line (found by module identity,
whatever folder the file is in), the traced argument a shape depends on, and sizes
no device can hold (RESOURCE_EXHAUSTED before any code is generated)."""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest

import jaxlab
import jaxlab.numpy as jnp
from jaxlab.engine import limits
from jaxlab.engine.devices import get_device
from jaxlab.errors import ConcretizationTypeError, ResourceExhaustedError
from jaxlab.ir.alu import AluExp, AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import GIDX, RIDX, Kernel, Reduction, acc_variable
from tests.conftest import assert_close

USER_CODE = """\
import jaxlab
import jaxlab.numpy as jnp


def branchy(x):
    if x > 0:   # a Python branch on a traced value
        return x
    return -x


def run():
    return jaxlab.jit(branchy)(jnp.ones(()))
"""


def test_user_line_found_in_a_folder_named_jaxlab(tmp_path, monkeypatch):
    """A clone lands in a folder named `jaxlab`: user files there are still the user's."""
    folder = tmp_path / "jaxlab" / "jaxlab"
    folder.mkdir(parents=True)
    path = folder / "user_code.py"
    path.write_text(USER_CODE)
    spec = importlib.util.spec_from_file_location("user_code_in_jaxlab_folder", path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)
    spec.loader.exec_module(module)
    with pytest.raises(ConcretizationTypeError) as err:
        module.run()
    assert f"{path}:6 (if x > 0:" in str(err.value)
    assert "argument x" in str(err.value)


def test_shape_from_a_traced_argument_names_it():
    with pytest.raises(TypeError, match=r"Shapes must be 1D sequences of concrete values"
                                        r"(.|\n)*static_argnums(.|\n)*argument n\b"):
        jaxlab.jit(lambda n: jnp.ones(n))(jnp.int32(3))
    with pytest.raises(TypeError, match=r"argument size\b"):
        jaxlab.jit(lambda x, size: jnp.reshape(x, (size + 1, -1)))(jnp.ones(4), 1)
    # static, it works
    assert jaxlab.jit(lambda n: jnp.ones(n), static_argnums=0)(3).shape == (3,)
    assert jnp.zeros(jnp.int32(2)).shape == (2,)   # a concrete integer scalar is a size


@pytest.mark.parametrize("make, pattern", [
    (lambda: jnp.ones((10**6, 10**6)).sum(), r"RESOURCE_EXHAUSTED: a reduction over "
                                             r"float32\[1000000,1000000\] visits 10{12}"),
    (lambda: jnp.ones((10**5, 10**5)) + 1, r"RESOURCE_EXHAUSTED: float32\[100000,100000\] "
                                           r"has 10{10} elements"),
    (lambda: jnp.arange(2**31 + 5), r"int32\[2147483653\]"),
    (lambda: jnp.eye(50_000), r"float32\[50000,50000\]"),
    (lambda: jnp.zeros((2**20, 2**12)).max(), r"visits 4294967296 elements"),
], ids=["sum", "add", "arange", "eye", "max"])
def test_sizes_past_int32_indexing_are_resource_exhausted(backend, make, pattern):
    with pytest.raises(ResourceExhaustedError, match=pattern):
        np.asarray(make())
    assert_close(jnp.arange(6).reshape(2, 3).sum(axis=1), np.array([3, 12]))



def test_contraction_past_int32_visits_is_not_refused():
    """A (40000,1000) @ (1000,40000) matmul visits 1.6e12 products, but each operand and
    the output are indexed apart, all within int32: its kernel passes the check."""
    m, k, n = 40_000, 1_000, 40_000
    gidx, ridx = AluExp.special(GIDX, m * n), AluExp.special(RIDX, k)
    row, col = gidx // n, gidx % n
    a = AluExp.load(0, row * k + ridx, DType.float32)
    b = AluExp.load(1, ridx * n + col, DType.float32)
    kernel = Kernel((m, n), ((DType.float32, m * k), (DType.float32, k * n)), a * b,
                    Reduction(AluOp.Add, k, acc_variable(DType.float32)), (k,))
    assert kernel.widest_index() == m * n
    limits.check_kernel(get_device("cpu"), kernel)
    past = Kernel((m, n), kernel.inputs, a * b, Reduction(AluOp.Add, 2**31, acc_variable(
        DType.float32)), (2**31,))
    with pytest.raises(ResourceExhaustedError, match="index math reaches 2147483648"):
        limits.check_kernel(get_device("cpu"), past)

def test_bytes_past_the_device_limit_are_resource_exhausted(backend):
    """Under 2**31 elements but past what the device holds: a MemoryError subclass
    raised before anything is allocated (a cpu bound faked small for the test)."""
    device = jaxlab.devices(backend)[0]
    limit = device.backend.max_buffer_bytes
    try:
        device.backend.max_buffer_bytes = 1 << 20
        with pytest.raises(MemoryError, match=rf"Out of memory allocating {4 << 20} bytes"):
            np.asarray(jnp.ones((1 << 20,)) * 2)
        with pytest.raises(ResourceExhaustedError):
            jnp.asarray(np.zeros(1 << 19))
    finally:
        device.backend.max_buffer_bytes = limit
    assert_close(jnp.ones(1 << 10).sum(), np.float32(1024))


def test_huge_shapes_still_trace():
    """Abstract shapes hold nothing: staging a huge (lazy, never computed) array is
    fine, as make_jaxpr in JAX."""
    text = str(jaxlab.make_jaxpr(lambda x: x.sum())(jnp.ones((10**6, 10**6))))
    assert "f32[1000000,1000000]" in text

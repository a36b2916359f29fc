"""Bad input raises TypeError/ValueError/IndexError naming the shapes, axes and dtypes,
and leaves the engine working."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import jaxlab.numpy as jnp
from tests.conftest import assert_close


def a23() -> Any:
    return jnp.ones((2, 3))


ERRORS: dict[str, tuple[Callable[[], Any], type, str]] = {
    # name: (call, exception, pattern the message must contain)
    "add-shapes": (lambda: jnp.add(a23(), jnp.ones(4)), ValueError, r"\(2, 3\).*\(4,\)"),
    "add-operator-shapes": (lambda: a23() + jnp.ones((3, 2)), TypeError, r"\(2, 3\).*\(3, 2\)"),
    "multiply-shapes": (lambda: jnp.multiply(jnp.ones((5,)), jnp.ones((2, 4))), ValueError,
                        r"\(5,\).*\(2, 4\)"),
    "reshape-size": (lambda: jnp.reshape(a23(), (4, 2)), TypeError, r"\(2, 3\).*\(4, 2\)"),
    "reshape-method-size": (lambda: a23().reshape(5), TypeError, r"\(2, 3\).*\(5,\)"),
    "reshape-two-unknowns": (lambda: jnp.reshape(a23(), (-1, -1)), TypeError, r"\(-1, -1\)"),
    "reshape-unknown-not-dividing": (lambda: jnp.reshape(a23(), (-1, 4)), TypeError,
                                     r"\(-1, 4\)"),
    "sum-axis": (lambda: jnp.sum(a23(), axis=2), ValueError, r"axis 2.*dimension 2"),
    "sum-negative-axis": (lambda: jnp.sum(a23(), axis=-3), ValueError, r"axis -3.*dimension 2"),
    "sum-repeated-axis": (lambda: jnp.sum(a23(), axis=(1, 1)), ValueError, r"\(1, 1\)"),
    "sum-float-axis": (lambda: jnp.sum(a23(), axis=1.5), TypeError, r"axis.*float"),
    "complex-sort": (lambda: jnp.sort(jnp.asarray(np.ones(3, np.complex64))), TypeError,
                     "complex64"),
    "complex-floor": (lambda: jnp.floor(jnp.asarray([1.0, 2.0], dtype="complex64")), TypeError,
                      "complex64"),
    "string-array": (lambda: jnp.asarray(np.array(["a", "b"])), TypeError, "<U1"),
    "string-operand": (lambda: jnp.add(a23(), "x"), TypeError, "<U1"),
    "object-array": (lambda: jnp.asarray([object()]), TypeError, "object"),
    "matmul-contracting": (lambda: jnp.matmul(a23(), a23()), TypeError,
                           r"\(2, 3\) @ \(2, 3\).*3 != 2"),
    "matmul-vector": (lambda: a23() @ jnp.ones(4), TypeError, r"\(2, 3\) @ \(4,\)"),
    "matmul-batch": (lambda: jnp.matmul(jnp.ones((2, 2, 3)), jnp.ones((3, 3, 2))), ValueError,
                     r"\(2,\).*\(3,\)"),
    "matmul-scalar": (lambda: jnp.matmul(a23(), 2.0), ValueError, "scalar"),
    "transpose-repeated": (lambda: jnp.transpose(a23(), (0, 0)), TypeError,
                           r"\(0, 0\).*\(2, 3\)"),
    "transpose-too-few": (lambda: jnp.transpose(a23(), (1,)), TypeError, r"\(1,\).*\(2, 3\)"),
    "transpose-axis": (lambda: jnp.transpose(a23(), (0, 2)), ValueError, r"axis 2"),
}


def assert_engine_works() -> None:
    """A fused elementwise + reduction + matmul still gives NumPy's answer."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    jx = jnp.asarray(x)
    assert_close(jnp.sum(jx * 2.0 + 1.0, axis=1), (x * 2 + 1).sum(axis=1))
    assert_close(jnp.matmul(jx, jnp.transpose(jx)), x @ x.T)


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_a_clear_error(backend: str, name: str) -> None:
    call, exc, pattern = ERRORS[name]
    with pytest.raises(exc, match=pattern):
        call()
    assert_engine_works()


def test_error_inside_a_fused_expression_keeps_other_arrays(backend: str) -> None:
    x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    pending = x * 3.0 + 1.0            # lazy: not run yet
    with pytest.raises(ValueError):
        jnp.add(pending, jnp.ones((4,)))
    assert_close(pending, np.arange(6, dtype=np.float32).reshape(2, 3) * 3 + 1)

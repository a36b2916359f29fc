"""lax's special functions (jaxlab/lax/special_functions.py: lax's dtype rules over
jaxlab.scipy.special, whose own tests cover gradients) against jax.lax on every device,
and JAX's TypeError for integer or mixed operands."""
from __future__ import annotations

import jax.lax as jlax
import numpy as np
import pytest

import jaxlab.lax as lax
from tests.test_lax_functions import reference

X = np.array([0.1, 1.0, 2.5, 10.0, 30.0], np.float32)
A = np.float32(2.0)

CASES = {   # id -> function of the lax module
    "bessel_i0e": lambda m: m.bessel_i0e(-X),
    "bessel_i1e": lambda m: m.bessel_i1e(-X),
    "igamma": lambda m: m.igamma(A, X),
    "igammac": lambda m: m.igammac(2.0, X),
    "betainc": lambda m: m.betainc(A, np.float32(3.0), X / 31),
    "zeta": lambda m: m.zeta(X + 1, np.float32(1.5)),
    "polygamma_orders": lambda m: m.polygamma(np.array([0, 2, 1.5, 3, 1], np.float32), X),
}


@pytest.mark.parametrize("name", list(CASES))
def test_special_functions_match_jax(backend, name):
    ours = CASES[name](lax)
    theirs = reference(("special", name), lambda: CASES[name](jlax))
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs), rtol=1e-4, atol=1e-6)


ERRORS = {
    "bessel_i0e_int": lambda m: m.bessel_i0e(np.arange(3, dtype=np.int32)),
    "igamma_int": lambda m: m.igamma(2, X),
    "zeta_dtypes": lambda m: m.zeta(X, X.astype(np.float16)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_bad_input_raises_what_jax_raises(name):
    with pytest.raises(Exception) as theirs:
        ERRORS[name](jlax)
    with pytest.raises(type(theirs.value)):
        ERRORS[name](lax)

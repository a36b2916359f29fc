"""jaxlab.scipy.special's gamma, incomplete, Bessel, entropy and elementary families
against jax.scipy.special: values, jit, gradients and errors, on every device."""
from __future__ import annotations

import jax
import jax.scipy.special as jss
import numpy as np
import pytest

import jaxlab
import jaxlab.scipy.special as lss
from tests.conftest import assert_close

F = np.float32
REALS = F([-2.5, -0.5, 0.25, 1.0, 2.5, 7.0])
POSITIVE = F([0.1, 0.5, 1.0, 3.0, 9.5, 30.0])
SECOND = F([0.3, 2.0, 1.0, 3.0, 12.0, 25.0])
UNIT = F([0.01, 0.3, 0.5, 0.7, 0.9, 0.999])
WIDE = F([-40.0, -14.0, -1.0, -0.1, 0.0, 0.5, 3.0, 14.9, 15.5, 60.0])
INTS = np.array([-1, 0, 1, 3, 5, 10], np.int32)

# name: (arguments, rtol, atol)
CASES = {
    "gammasgn": ((F([-2.0, -1.5, -0.5, 0.0, 0.5, 3.0]),), 0, 0),
    "gamma": ((REALS,), 2e-6, 1e-6),
    "loggamma": ((REALS,), 2e-6, 1e-6),
    "betaln": ((POSITIVE, SECOND), 1e-5, 2e-5),
    "beta": ((REALS, F(2.5)), 1e-5, 1e-6),
    "factorial": ((INTS,), 5e-6, 0),
    "comb": ((F(10), INTS), 2e-6, 1e-6),
    "poch": ((POSITIVE, F(2.5)), 2e-6, 0),
    "zeta": ((F([1.5, 2.0, 3.0, 5.0, 10.0, 0.5]), F([0.5, 1.0, 2.0, 3.5, 1.0, 1.0])), 2e-6, 0),
    "polygamma": ((np.array([0, 1, 2, 3, 1, 4], np.int32), POSITIVE), 2e-5, 1e-6),
    "gammainc": ((POSITIVE, SECOND), 2e-5, 2e-6),
    "gammaincc": ((POSITIVE, SECOND), 2e-5, 2e-6),
    "betainc": ((POSITIVE, SECOND[::-1], UNIT), 3e-5, 2e-6),
    "i0e": ((WIDE,), 1e-6, 0),
    "i1e": ((WIDE,), 1e-6, 0),
    "i0": ((WIDE[1:-1],), 1e-6, 0),
    "i1": ((WIDE[1:-1],), 1e-6, 0),
    "rel_entr": ((F([0.0, 1.0, 2.0, -1.0, 1.0, 0.5]), F([1.0, 0.0, 3.0, 1.0, -1.0, 0.25])),
                 1e-6, 0),
    "kl_div": ((F([0.0, 1.0, 2.0, -1.0, 1.0, 0.5]), F([1.0, 0.0, 3.0, 1.0, -1.0, 0.25])),
               1e-6, 0),
    "softmax": ((F([[1.0, 2.0, 3.0], [3.0, 4.0, -1.0]]),), 1e-6, 1e-7),
    "log_softmax": ((F([[1.0, 2.0, 3.0], [3.0, 4.0, -1.0]]),), 1e-6, 1e-6),
    "erfcx": ((F([-3.0, -1.0, 0.0, 0.5, 1.99, 2.01, 3.0, 10.0, 1e5]),), 1e-6, 0),
    "boxcox": ((F([0.5, 2.0, -1.0, 0.0, 3.0]), F([0.0, 0.5, 0.5, 0.0, -1.0])), 1e-6, 1e-7),
    "boxcox1p": ((F([0.5, 2.0, -2.0, 0.0, 1e-4]), F([0.0, 0.5, 0.5, 0.0, 1e-3])), 1e-6, 1e-7),
}


@pytest.mark.parametrize("name", CASES)
def test_special_values(backend, name):
    args, rtol, atol = CASES[name]
    assert_close(getattr(lss, name)(*args), getattr(jss, name)(*args), rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", ["gammainc", "betainc", "i1e", "polygamma"])
def test_special_under_jit(backend, name):
    args, rtol, atol = CASES[name]
    assert_close(jaxlab.jit(getattr(lss, name))(*args), getattr(jss, name)(*args),
                 rtol=rtol, atol=atol)


# (name, the argument differentiated, the arguments)
GRADIENTS = [
    ("gamma", 0, (F(2.5),)), ("betaln", 1, (F(1.5), F(2.5))), ("i0e", 0, (F(2.0),)),
    ("i1", 0, (F(-1.5),)), ("zeta", 1, (F(3.0), F(1.5))), ("gammainc", 1, (F(2.0), F(3.0))),
    ("gammaincc", 0, (F(2.0), F(3.0))), ("betainc", 2, (F(2.0), F(3.0), F(0.4))),
    ("erfcx", 0, (F(2.5),)), ("kl_div", 0, (F(0.5), F(2.0))),
]


@pytest.mark.parametrize("name,argnum,args", GRADIENTS, ids=[g[0] for g in GRADIENTS])
def test_special_gradient(backend, name, argnum, args):
    # jitted: an eager gradient through the fori_loops dispatches every step
    assert_close(jaxlab.jit(jaxlab.grad(getattr(lss, name), argnums=argnum))(*args),
                 jax.grad(getattr(jss, name), argnums=argnum)(*args), rtol=2e-5, atol=1e-6)


def test_softmax_vmap_over_rows(backend):
    x = F([[1.0, 2.0, 3.0], [3.0, 4.0, -1.0]])
    assert_close(jaxlab.vmap(lss.softmax)(x), jax.vmap(jss.softmax)(x), rtol=1e-6, atol=1e-7)


def test_multigammaln(backend):
    a = F([2.0, 3.5, 10.0])
    assert_close(lss.multigammaln(a, 3), jss.multigammaln(a, 3), rtol=1e-6)


def test_dtype_rules(backend):
    for name, args in [("gamma", (3,)), ("gammainc", (2, np.int32(3))), ("i0e", (np.int32(2),)),
                       ("zeta", (2.0, 1))]:
        ours, theirs = getattr(lss, name)(*args), getattr(jss, name)(*args)
        assert ours.dtype == theirs.dtype, name


@pytest.mark.parametrize("call,error", [
    (lambda m: m.polygamma(1.5, 2.0), ValueError),
    (lambda m: m.factorial(3, exact=True), NotImplementedError),
    (lambda m: m.comb(5, 2, exact=True), TypeError),
    (lambda m: m.zeta(2.0), NotImplementedError),
])
def test_special_errors(call, error):
    for module in (lss, jss):
        with pytest.raises(error):
            call(module)

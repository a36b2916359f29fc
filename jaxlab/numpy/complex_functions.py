"""jnp's complex-number functions: parts, conjugate, angle and the type tests."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.core import complex_rules as cr
from jaxlab.core import elementwise as ew
from jaxlab.numpy._util import arraylike_, dtype_of
from jaxlab.numpy.creation import zeros_like


def real(val: Any) -> Array:
    """The real part; a real array is returned as it is."""
    x = arraylike_("real", val)
    return cr.real_p.bind(x) if x.jdtype.is_complex else x


def imag(val: Any) -> Array:
    """The imaginary part; zeros for a real array."""
    x = arraylike_("imag", val)
    return cr.imag_p.bind(x) if x.jdtype.is_complex else zeros_like(x)


def conjugate(x: Any) -> Array:
    """The complex conjugate; a real array is returned as it is."""
    x = arraylike_("conjugate", x)
    return cr.conj_p.bind(x) if x.jdtype.is_complex else x


conj = conjugate


def angle(z: Any, deg: bool = False) -> Array:
    """The argument atan2(imag, real), in radians (degrees with deg=True); float32 for
    real input, as JAX."""
    from jaxlab.numpy.ufuncs import _float_args
    (x,) = _float_args(arraylike_("angle", z))
    re, im = real(x), imag(x)
    out = ew.atan2_p.bind(im, re)
    return out * (180.0 / 3.141592653589793) if deg else out


def iscomplexobj(x: Any) -> bool:
    """Whether x has a complex dtype (whatever its values)."""
    d = dtype_of(x)
    return isinstance(d, complex) or (not isinstance(d, (bool, int, float)) and d.is_complex)


def iscomplex(x: Any) -> Array:
    """Elementwise: the imaginary part is nonzero."""
    return imag(x) != 0


def isreal(x: Any) -> Array:
    """Elementwise: the imaginary part is zero."""
    return imag(x) == 0


def isrealobj(x: Any) -> bool:
    return not iscomplexobj(x)


__all__ = ["real", "imag", "conjugate", "conj", "angle", "iscomplexobj", "iscomplex",
           "isreal", "isrealobj"]

"""jaxlab.numpy: the jax.numpy API over lazy, fused arrays."""
from jaxlab.array import Array as ndarray  # noqa: F401
from jaxlab.numpy.dtype_functions import *  # noqa: F401,F403
from jaxlab.numpy.scalar_types import SCALAR_TYPES as _SCALAR_TYPES

globals().update(_SCALAR_TYPES)   # jnp.float32, jnp.int32, jnp.bool_, ...
from jaxlab.numpy.creation import *  # noqa: F401,F403
from jaxlab.numpy.creation import __all__ as _creation_all
from jaxlab.numpy.ufuncs import *  # noqa: F401,F403
from jaxlab.numpy.reductions import *  # noqa: F401,F403
from jaxlab.numpy.shape_ops import *  # noqa: F401,F403
from jaxlab.numpy.products import *  # noqa: F401,F403
from jaxlab.numpy.sorting import *  # noqa: F401,F403
from jaxlab.numpy import linalg  # noqa: F401
from jaxlab.numpy.indexing import *  # noqa: F401,F403  (also x[idx] and x.at)
from jaxlab.numpy.complex_functions import *  # noqa: F401,F403
from jaxlab.numpy.comparison import *  # noqa: F401,F403
from jaxlab.numpy.convolution import *  # noqa: F401,F403
from jaxlab.numpy.array_api import *  # noqa: F401,F403
from jaxlab.numpy.array_api import __array_namespace_info__  # noqa: F401
from jaxlab.numpy.linalg_products import cross, diagonal, trace  # noqa: F401
from jaxlab.numpy import fft  # noqa: F401,E402  (jnp.fft; after the names it uses)
# set ops, indexing helpers, array assembly and host utilities (apinp1)
from jaxlab.numpy.ordering import *  # noqa: F401,F403
from jaxlab.numpy.set_ops import *  # noqa: F401,F403
from jaxlab.numpy.index_tricks import *  # noqa: F401,F403
from jaxlab.numpy.rearranging import *  # noqa: F401,F403
from jaxlab.numpy.assembly import *  # noqa: F401,F403
from jaxlab.numpy.selection import *  # noqa: F401,F403
from jaxlab.numpy.host_utils import *  # noqa: F401,F403

__array_api_version__ = "2025.12"   # the standard's version jaxlab.numpy follows

pi = 3.141592653589793
e = 2.718281828459045
inf = float("inf")
nan = float("nan")
newaxis = None
# statistics, NaN-ignoring reductions, extra ufuncs, polynomials, windows (apinp2)
from jaxlab.numpy.nan_reductions import *  # noqa: F401,F403,E402
from jaxlab.numpy.quantiles import *  # noqa: F401,F403,E402
from jaxlab.numpy.math_ufuncs import *  # noqa: F401,F403,E402
from jaxlab.numpy.float_parts import *  # noqa: F401,F403,E402
from jaxlab.numpy.integer_ufuncs import *  # noqa: F401,F403,E402
from jaxlab.numpy.statistics import *  # noqa: F401,F403,E402
from jaxlab.numpy.spaced import *  # noqa: F401,F403,E402
from jaxlab.numpy.windows import *  # noqa: F401,F403,E402
from jaxlab.numpy.calculus import *  # noqa: F401,F403,E402
from jaxlab.numpy.polynomials import *  # noqa: F401,F403,E402
from jaxlab.numpy.vectorize import *  # noqa: F401,F403,E402
from jaxlab.numpy.apply_along import *  # noqa: F401,F403,E402
euler_gamma = 0.5772156649015329   # the Euler-Mascheroni constant, as jnp.euler_gamma
from jaxlab.numpy.histograms import *  # noqa: F401,F403,E402
from jaxlab.numpy.bit_packing import *  # noqa: F401,F403,E402
from jaxlab.numpy import _methods  # noqa: F401,E402  (operators and methods on Array; last)

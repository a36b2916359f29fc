"""jaxlab.lax: primitives with jax.lax's signatures."""
from jaxlab.lax import linalg  # noqa: F401
from jaxlab.lax.fft import FftType, fft  # noqa: F401
from jaxlab.lax.control_flow import cond, fori_loop, map, scan, switch, while_loop  # noqa: F401,A004
from jaxlab.lax.conv import conv_general_dilated, reduce_window  # noqa: F401
from jaxlab.lax.ops import *  # noqa: F401,F403
from jaxlab.lax.special import digamma, erf_inv, lgamma  # noqa: F401
from jaxlab.lax.gamma_sample_grad import random_gamma_grad  # noqa: F401
# jax.lax's functions beyond the primitives (apilax), each module one family:
from jaxlab.lax.float_math import *  # noqa: F401,F403
from jaxlab.lax.complex_parts import *  # noqa: F401,F403,A004
from jaxlab.lax.bits import *  # noqa: F401,F403
from jaxlab.lax.shaping import *  # noqa: F401,F403
from jaxlab.lax.slicing import *  # noqa: F401,F403
from jaxlab.lax.sorting import *  # noqa: F401,F403
from jaxlab.lax.gather_scatter import *  # noqa: F401,F403
from jaxlab.lax.reducing import *  # noqa: F401,F403,A004
from jaxlab.lax.scanning import *  # noqa: F401,F403
from jaxlab.lax.conv_layouts import (ConvDimensionNumbers,  # noqa: F401
                                     ConvGeneralDilatedDimensionNumbers, conv_dimension_numbers)
from jaxlab.lax.conv_variants import *  # noqa: F401,F403
from jaxlab.lax.dots import *  # noqa: F401,F403
from jaxlab.lax.special_functions import *  # noqa: F401,F403

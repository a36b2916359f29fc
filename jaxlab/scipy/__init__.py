"""jaxlab.scipy: the jax.scipy subset that programs from JAX's docs reach for."""
from jaxlab.scipy import linalg, special, stats  # noqa: F401
from jaxlab.scipy import integrate  # noqa: F401  (apiscipy)

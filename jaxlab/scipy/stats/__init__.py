"""jaxlab.scipy.stats: distributions as jax.scipy.stats has them (norm so far)."""
from jaxlab.scipy.stats import norm  # noqa: F401

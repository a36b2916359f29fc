"""jaxlab.scipy.stats: distributions as jax.scipy.stats has them, one module each."""
from jaxlab.scipy.stats import norm  # noqa: F401
# the other distributions (apiscipy)
from jaxlab.scipy.stats import (bernoulli, beta, betabinom, binom, cauchy, chi2,  # noqa: F401
                                dirichlet, expon, gamma, gennorm, geom, gumbel_l, gumbel_r,
                                laplace, logistic, multinomial, multivariate_normal, nbinom,
                                pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)

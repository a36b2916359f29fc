"""jaxlab: a JAX-like array compiler you can watch.

    import jaxlab, jaxlab.numpy as jnp
    with jaxlab.capture() as log:
        y = jnp.tanh(x * 2 + 1).sum(axis=1) * 3
        y.block_until_ready()
    print(log.summary())
"""
from jaxlab import backends as _backends  # noqa: F401  (registers the devices)
from jaxlab.array import Array
from jaxlab.engine.devices import Device, default_device, devices, set_default_device
from jaxlab.events import KernelEvent, capture
from jaxlab import numpy  # noqa: F401
from jaxlab.device_put import device_put
from jaxlab.api import (custom_jvp, custom_vjp, grad, hessian, jacfwd, jacrev, jit, jvp, linearize, make_jaxpr,
                        value_and_grad, vjp, vmap)
from jaxlab import lax, tree_util  # noqa: F401
from jaxlab import nn, optim, random  # noqa: F401
from jaxlab.backends.autotuning import autotune

__all__ = ["Array", "Device", "KernelEvent", "autotune", "capture", "custom_jvp", "custom_vjp", "default_device", "device_put",
           "devices", "grad", "hessian", "jacfwd", "jacrev", "jit", "jvp", "lax", "linearize",
           "make_jaxpr", "nn", "numpy", "optim", "random", "set_default_device", "tree_util",
           "value_and_grad", "vjp", "vmap"]
__version__ = "0.1.0"


def load_ipython_extension(ip: object) -> None:
    """`%load_ext jaxlab`: the magics; IPython is imported only now, never by the engine."""
    from jaxlab.lab import load_ipython_extension as load
    load(ip)


def unload_ipython_extension(ip: object) -> None:
    from jaxlab.lab import unload_ipython_extension as unload
    unload(ip)

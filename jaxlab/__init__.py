"""jaxlab: a JAX-like array compiler you can watch.

    import jaxlab, jaxlab.numpy as jnp
    with jaxlab.capture() as log:
        y = jnp.tanh(x * 2 + 1).sum(axis=1) * 3
        y.block_until_ready()
    print(log.summary())
"""
from jaxlab.array import Array
from jaxlab.configuration import config
from jaxlab.engine.devices import Device, default_device, devices, set_default_device
from jaxlab.events import KernelEvent, capture
from jaxlab import numpy  # noqa: F401
from jaxlab.device_put import device_put
from jaxlab.api import (custom_jvp, custom_vjp, grad, hessian, jacfwd, jacobian, jacrev, jit, jvp, linearize, make_jaxpr,
                        value_and_grad, vjp, vmap)
from jaxlab import lax, tree, tree_util  # noqa: F401
from jaxlab import nn, optim, random, scipy, test_util  # noqa: F401
from jaxlab import flatten_util, ops, typing  # noqa: F401  (jax.ops, jax.flatten_util, jax.typing)
from jaxlab.backends.autotuning import autotune, autotune_cache

__all__ = ["Array", "config", "Device", "KernelEvent", "autotune", "autotune_cache", "block_until_ready", "capture", "custom_jvp", "custom_vjp", "default_device", "device_put",
           "devices", "grad", "hessian", "jacfwd", "jacobian", "jacrev", "jit", "jvp", "lax", "linearize",
           "make_jaxpr", "nn", "numpy", "optim", "random", "scipy", "set_default_device", "test_util", "tree", "tree_util",
           "value_and_grad", "vjp", "vmap"]
__version__ = "0.1.0"


def block_until_ready(x: object) -> object:
    """Wait for every array in the pytree x to be computed; returns x."""
    for leaf in tree_util.tree_leaves(x):
        if hasattr(leaf, "block_until_ready"):
            leaf.block_until_ready()
    return x


def load_ipython_extension(ip: object) -> None:
    """`%load_ext jaxlab`: the magics; IPython is imported only now, never by the engine."""
    from jaxlab.lab import load_ipython_extension as load
    load(ip)


def unload_ipython_extension(ip: object) -> None:
    from jaxlab.lab import unload_ipython_extension as unload
    unload(ip)

# JAX's further top-level API (device queries, shapes, contexts, checkpoint, dtypes)
from jaxlab import dtypes  # noqa: E402,F401
from jaxlab.api import clear_caches  # noqa: E402,F401
from jaxlab.checkpointing import checkpoint, checkpoint_policies, remat  # noqa: E402,F401
from jaxlab.config_contexts import (default_matmul_precision, disable_jit,  # noqa: E402,F401
                                    enable_x64, numpy_dtype_promotion, numpy_rank_promotion)
from jaxlab.custom_gradients import (closure_convert, custom_gradient,  # noqa: E402,F401
                                     linear_transpose)
from jaxlab.device_queries import (default_backend, device_count, device_get,  # noqa: E402,F401
                                   local_device_count, local_devices, process_count,
                                   process_index)
from jaxlab.dtypes import float0  # noqa: E402,F401
from jaxlab.scopes import ensure_compile_time_eval, named_call, named_scope  # noqa: E402,F401
from jaxlab.shapes import ShapeDtypeStruct, eval_shape  # noqa: E402,F401

__all__ += ["ShapeDtypeStruct", "checkpoint", "checkpoint_policies", "clear_caches",
            "closure_convert", "custom_gradient", "default_backend", "default_matmul_precision",
            "device_count", "device_get", "disable_jit", "dtypes", "enable_x64",
            "ensure_compile_time_eval", "eval_shape", "float0", "linear_transpose",
            "local_device_count", "local_devices", "named_call", "named_scope",
            "numpy_dtype_promotion", "numpy_rank_promotion", "process_count", "process_index",
            "remat"]

"""Abstract evaluation: the output shapes and dtypes of a primitive.

Rather than a second copy of every shape rule, a primitive's lowering is run
on phantom lazy arrays: a device whose buffers hold nothing and whose kernels
never run. Shapes, dtypes and every error check come out exactly as eager
evaluation would produce them.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from jaxlab.backends.base import Backend, Executable
from jaxlab.core.avals import ShapedArray
from jaxlab.core.primitives import Primitive, abstract_evals, lower
from jaxlab.core.trace import new_dynamic
from jaxlab.engine import lazy as lz
from jaxlab.engine.buffer import Buffer
from jaxlab.engine.devices import Device, default_device
from jaxlab.ir.dtypes import DType


class ShapeOnlyBackend(Backend):
    """Holds no data and runs nothing: used to learn shapes."""
    name = "abstract"
    shape_only = True
    max_elements = 1 << 62   # nothing is indexed: any shape JAX can trace is fine

    def allocate(self, nbytes: int) -> None:
        return None

    def free(self, handle: Any) -> None:
        pass

    def write(self, handle: Any, data: np.ndarray) -> None:
        pass

    def read(self, handle: Any, dtype: DType, count: int) -> np.ndarray:
        raise RuntimeError("abstract values have no data")

    def copy(self, src: Any, src_offset: int, dst: Any, dst_offset: int, nbytes: int) -> None:
        pass   # nothing is held, so nothing moves

    def prepare_kernel(self, kernel: Any) -> Executable:
        return Executable(program=None)

    prepare_routine = prepare_kernel

    def dispatch(self, exe: Executable, inputs: Sequence, outputs: Sequence) -> Optional[float]:
        return None


PHANTOM = Device("abstract", ShapeOnlyBackend())


def phantom(aval: ShapedArray) -> lz.Lazy:
    return lz.from_buffer(Buffer(PHANTOM, aval.dtype, int(np.prod(aval.shape))), aval.shape,
                          aval.dtype)


def abstract_eval(prim: Primitive, avals: Sequence[ShapedArray], params: dict) \
        -> list[ShapedArray]:
    if prim in abstract_evals:
        return list(abstract_evals[prim](*avals, **params))
    # lowerings that call user code must evaluate, not stage, and the constants
    # that code makes (jnp.arange...) must live beside the phantom operands
    with new_dynamic(None), default_device(PHANTOM):
        out = lower(prim, [phantom(a) for a in avals], params)
    outs = out if prim.multiple_results else [out]
    return [ShapedArray(o.shape, o.dtype) for o in outs]

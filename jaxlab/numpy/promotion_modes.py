"""The config options that restrict jaxlab.numpy's implicit promotion, as JAX's:
jax_numpy_rank_promotion ('allow', 'warn', 'raise': binary operations on arrays of
different ranks) and jax_numpy_dtype_promotion ('standard', 'strict': no implicit
promotion between different dtypes; Python scalars only where the dtype stays)."""
from __future__ import annotations

import warnings
from typing import Any, Sequence

from jaxlab.configuration import config
from jaxlab.ir.dtypes import DType, _stacklevel_outside_jaxlab

_RANK_DOC = "https://docs.jax.dev/en/latest/rank_promotion_warning.html"


class TypePromotionError(ValueError):
    """An implicit promotion that jax_numpy_dtype_promotion='strict' refuses."""


def check_ranks(shapes: Sequence[tuple[int, ...]], op: str) -> None:
    """Raise or warn, as jax_numpy_rank_promotion says, when the operands of `op` that
    are not scalars have different ranks."""
    mode = config.jax_numpy_rank_promotion
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    listed = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        raise ValueError(f"Operands could not be broadcast together for {op} on shapes "
                         f"{listed} and with the config option jax_numpy_rank_promotion="
                         f"'raise'. For more information, see {_RANK_DOC}.")
    warnings.warn(f"Following NumPy automatic rank promotion for {op} on shapes {listed}. "
                  f"Set the jax_numpy_rank_promotion config option to 'allow' to disable "
                  f"this warning; for more information, see {_RANK_DOC}.",
                  UserWarning, stacklevel=_stacklevel_outside_jaxlab())


def check_dtypes(kinds: Sequence[Any], result: DType) -> None:
    """Under jax_numpy_dtype_promotion='strict': the strongly typed operands (DTypes;
    Python scalars and weak values are not) share one dtype, which is the result's."""
    if config.jax_numpy_dtype_promotion == "standard":
        return
    strong = {k for k in kinds if isinstance(k, DType)}
    if len(strong) > 1 or (strong and result not in strong):
        names = tuple(k.value if isinstance(k, DType) else str(type(k)) for k in kinds)
        raise TypePromotionError(
            f"Input dtypes {names} have no available implicit dtype promotion path when "
            f"jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
            f"output type, or set jax_numpy_dtype_promotion=standard.")

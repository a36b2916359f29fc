"""What the location-scale distributions share: x standardized by loc and scale."""
from __future__ import annotations

from typing import Any

from jaxlab.array import Array
from jaxlab.scipy.special import float_args


def standardized(x: Any, loc: Any, scale: Any) -> tuple[Array, Array]:
    """((x - loc) / scale, scale), promoted to one float dtype."""
    x, loc, scale = float_args(x, loc, scale)
    return (x - loc) / scale, scale

"""Convolution layouts: ConvDimensionNumbers (which dim of lhs, rhs and the output is
batch / feature / each spatial dim) from strings like ('NHWC', 'HWIO', 'NHWC')."""
from __future__ import annotations

from typing import Any, NamedTuple, Sequence, Union


class ConvDimensionNumbers(NamedTuple):
    """(batch, feature, spatial...) dims of lhs and out; (out feature, in feature,
    spatial...) dims of rhs."""
    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


ConvGeneralDilatedDimensionNumbers = Union[tuple[str, str, str], ConvDimensionNumbers, None]

# per position of the spec triple: its two leading letters
_LEADS = (("N", "C"), ("O", "I"), ("N", "C"))


def conv_dimension_numbers(lhs_shape: Sequence[int], rhs_shape: Sequence[int],
                           dimension_numbers: Any) -> ConvDimensionNumbers:
    """ConvDimensionNumbers from None (NC... / OI... / NC...), a triple of layout strings
    or ConvDimensionNumbers; spatial dims are ordered as rhs's string lists them."""
    lhs_shape, rhs_shape = tuple(lhs_shape), tuple(rhs_shape)
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(f"convolution requires lhs and rhs ndim to be equal, got "
                        f"{len(lhs_shape)} and {len(rhs_shape)}.")
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if dimension_numbers is None:
        identity = tuple(range(len(lhs_shape)))
        return ConvDimensionNumbers(identity, identity, identity)
    specs = tuple(dimension_numbers)
    if len(specs) != 3 or not all(isinstance(s, str) for s in specs):
        raise TypeError(f"convolution dimension_numbers must be None, a triple of strings or "
                        f"ConvDimensionNumbers, got {dimension_numbers!r}")
    for i, (spec, (a, b)) in enumerate(zip(specs, _LEADS)):
        if len(spec) != len(lhs_shape):
            raise TypeError(f"convolution dimension_numbers[{i}] must have len equal to the "
                            f"ndim of lhs and rhs, got {len(spec)} for lhs and rhs shapes "
                            f"{lhs_shape} and {rhs_shape}.")
        if spec.count(a) != 1 or spec.count(b) != 1:
            raise TypeError(f"convolution dimension_numbers[{i}] must contain the characters "
                            f"'{a}' and '{b}' exactly once, got {spec}.")
    lhs, rhs, out = specs
    spatial = [c for c in rhs if c not in "OI"]
    if sorted(spatial) != sorted(c for c in lhs if c not in "NC") or \
            sorted(spatial) != sorted(c for c in out if c not in "NC"):
        raise TypeError(f"convolution dimension_numbers must name the same spatial dims, got "
                        f"{specs}.")

    def spec_of(layout: str, a: str, b: str) -> tuple[int, ...]:
        return (layout.index(a), layout.index(b)) + tuple(layout.index(c) for c in spatial)
    return ConvDimensionNumbers(spec_of(lhs, "N", "C"), spec_of(rhs, "O", "I"),
                                spec_of(out, "N", "C"))

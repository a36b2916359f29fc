"""conv_with_general_padding and conv_transpose: conv_general_dilated with the
padding, dilation and kernel orientation each implies."""
from __future__ import annotations

from typing import Any, Sequence

from jaxlab.array import Array
from jaxlab.lax import ops
from jaxlab.lax.conv import Padding, conv_general_dilated
from jaxlab.lax.conv_layouts import conv_dimension_numbers
from jaxlab.numpy._util import asarray_

__all__ = ["conv_with_general_padding", "conv_transpose"]

# conv_transpose's default layouts by rank (TensorFlow's convention, as JAX)
_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                      4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_with_general_padding(lhs: Any, rhs: Any, window_strides: Sequence[int],
                              padding: Padding, lhs_dilation: Sequence[int] | None,
                              rhs_dilation: Sequence[int] | None, precision: Any = None,
                              preferred_element_type: Any = None) -> Array:
    """conv_general_dilated with NC(spatial) / OI(spatial) layouts."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision,
                                preferred_element_type=preferred_element_type)


def _transpose_padding(k: int, s: int, padding: str) -> tuple[int, int]:
    """The padding of the dilated input that makes a transposed conv the gradient of a
    forward conv with `padding` ('SAME' or 'VALID'), kernel extent k and stride s."""
    mode = padding.upper()
    if mode == "SAME":
        total = k + s - 2
        before = k - 1 if s > k - 1 else -(-total // 2)
    elif mode == "VALID":
        total = k + s - 2 + max(k - s, 0)
        before = k - 1
    else:
        # RuntimeError: the type JAX raises here
        raise RuntimeError(f"Unrecognized padding type: expected 'VALID' or 'SAME', got "
                           f"{padding}.")
    return before, total - before


def conv_transpose(lhs: Any, rhs: Any, strides: Sequence[int], padding: Padding,
                   rhs_dilation: Sequence[int] | None = None, dimension_numbers: Any = None,
                   transpose_kernel: bool = False, precision: Any = None,
                   preferred_element_type: Any = None,
                   use_consistent_padding: bool = False) -> Array:
    """The transposed (fractionally strided) convolution: lhs dilated by `strides`, then
    a stride-1 conv; transpose_kernel flips the kernel and swaps its I/O dims, making it
    the gradient of conv_general_dilated."""
    x, w = asarray_(lhs), asarray_(rhs)
    if dimension_numbers is None:
        if x.ndim not in _TRANSPOSE_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _TRANSPOSE_LAYOUTS[x.ndim]
    dn = conv_dimension_numbers(x.shape, w.shape, dimension_numbers)
    spatial = dn.rhs_spec[2:]
    dilation = tuple(rhs_dilation) if rhs_dilation is not None else (1,) * len(spatial)
    extents = [(w.shape[d] - 1) * r + 1 for d, r in zip(spatial, dilation)]
    if isinstance(padding, str):
        pads = [_transpose_padding(k, s, padding) for k, s in zip(extents, strides)]
    elif use_consistent_padding:   # the forward conv's padding, as PyTorch's
        pads = [(k - 1 - lo, k - 1 - hi) for k, (lo, hi) in zip(extents, padding)]
    else:
        pads = [tuple(p) for p in padding]
    if transpose_kernel:
        w = ops.rev(w, spatial)
        order = list(range(w.ndim))
        order[dn.rhs_spec[0]], order[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        w = ops.transpose(w, order)
    return conv_general_dilated(x, w, (1,) * len(spatial), pads, strides, dilation, dn,
                                precision=precision,
                                preferred_element_type=preferred_element_type)

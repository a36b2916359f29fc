"""conv_general_dilated and reduce_window, built on the `windows` view.

A convolution is a dot_general of the windowed input with the kernel over
(input channels, window offsets): one fused kernel after the padding copy.
Every derivative and batching rule comes from the primitives it is made of.
"""
from __future__ import annotations

from typing import Any, Sequence

from jaxlab.core.windows import windows_p
from jaxlab.lax import ops
from jaxlab.lax.conv_layouts import conv_dimension_numbers
from jaxlab.numpy._util import asarray_

Padding = Any   # "SAME" | "VALID" | sequence of (lo, hi)


def _explicit_padding(padding: Padding, in_sizes: Sequence[int], window: Sequence[int],
                      strides: Sequence[int], dilation: Sequence[int]) -> list[tuple[int, int]]:
    if isinstance(padding, str):
        mode = padding.upper()
        if mode == "VALID":
            return [(0, 0)] * len(in_sizes)
        if mode != "SAME":
            raise ValueError(f"padding must be 'SAME', 'VALID' or explicit pairs, got {padding!r}")
        pads = []
        for n, k, s, d in zip(in_sizes, window, strides, dilation):
            out = -(-n // s)
            total = max((out - 1) * s + (k - 1) * d + 1 - n, 0)
            pads.append((total // 2, total - total // 2))
        return pads
    pads = [tuple(int(v) for v in p) for p in padding]
    if len(pads) != len(in_sizes):
        raise ValueError(f"padding has {len(pads)} pairs for {len(in_sizes)} spatial dims")
    return pads


def conv_general_dilated(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Padding,
                         lhs_dilation: Sequence[int] | None = None,
                         rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision: Any = None,
                         preferred_element_type: Any = None) -> Any:
    """N-d convolution; any layout (dimension_numbers) is transposed to NC(spatial)
    inputs and OI(spatial) kernels around the computation."""
    lhs, rhs = asarray_(lhs), asarray_(rhs)
    dn = conv_dimension_numbers(lhs.shape, rhs.shape, dimension_numbers)
    out = _conv_nc(ops.transpose(lhs, dn.lhs_spec), ops.transpose(rhs, dn.rhs_spec),
                   window_strides, padding, lhs_dilation, rhs_dilation, feature_group_count,
                   batch_group_count, preferred_element_type)
    return ops.transpose(out, [dn.out_spec.index(d) for d in range(out.ndim)])


def _conv_nc(lhs: Any, rhs: Any, window_strides: Sequence[int], padding: Padding,
             lhs_dilation: Sequence[int] | None, rhs_dilation: Sequence[int] | None,
             feature_group_count: int, batch_group_count: int,
             preferred_element_type: Any) -> Any:
    """The convolution of NC(spatial) lhs and OI(spatial) rhs, NC(spatial) out."""
    if batch_group_count != 1:
        raise NotImplementedError("batch_group_count != 1")
    x, w = asarray_(lhs), asarray_(rhs)
    if x.jdtype is not w.jdtype:
        raise TypeError(f"conv needs lhs and rhs of one dtype, got {x.jdtype} and {w.jdtype}")
    nsp = x.ndim - 2
    if w.ndim != x.ndim:
        raise ValueError(f"conv: lhs {x.shape} and rhs {w.shape} must have the same rank")
    g = int(feature_group_count)
    n, c = x.shape[:2]
    o, cg = w.shape[:2]
    if c != cg * g or o % g:
        raise ValueError(f"conv: {c} input channels, kernel {w.shape} and "
                         f"feature_group_count={g} do not match")
    strides = tuple(window_strides)
    lhs_dil = tuple(lhs_dilation or (1,) * nsp)
    rhs_dil = tuple(rhs_dilation or (1,) * nsp)
    window = w.shape[2:]
    if any(d != 1 for d in lhs_dil):   # transposed conv: spread the input out first
        x = ops.pad(x, 0.0, [(0, 0, 0)] * 2 + [(0, 0, d - 1) for d in lhs_dil])
    pads = _explicit_padding(padding, x.shape[2:], window, strides, rhs_dil)
    x = ops.pad(x, 0.0, [(0, 0, 0)] * 2 + [(lo, hi, 0) for lo, hi in pads])
    axes = tuple(range(2, 2 + nsp))
    xw = windows_p.bind(x, axes=axes, sizes=tuple(window), strides=strides, dilation=rhs_dil)
    # xw: (N, C, P1, K1, P2, K2, ...) -> (N, G, Cg, P..., K...)
    positions = tuple(2 + 2 * i for i in range(nsp))
    offsets = tuple(3 + 2 * i for i in range(nsp))
    xw = ops.transpose(xw, (0, 1) + positions + offsets)
    out_sp = xw.shape[2:2 + nsp]
    xw = ops.reshape(xw, (n, g, cg) + out_sp + tuple(window))
    wg = ops.reshape(w, (g, o // g, cg) + tuple(window))
    k_axes = tuple(range(3 + nsp, 3 + 2 * nsp))
    out = ops.dot_general(xw, wg, (((2,) + k_axes, (2,) + tuple(range(3, 3 + nsp))),
                                   ((1,), (0,))),
                          preferred_element_type=preferred_element_type)
    # out: (G, N, P..., Og) -> (N, G*Og, P...)
    out = ops.transpose(out, (1, 0, 2 + nsp) + tuple(range(2, 2 + nsp)))
    return ops.reshape(out, (n, o) + out_sp)


def reduce_window(operand: Any, init_value: Any, computation: Any,
                  window_dimensions: Sequence[int], window_strides: Sequence[int],
                  padding: Padding) -> Any:
    """Max / min / sum pooling: `computation` is lax.max, lax.min or lax.add."""
    reducers = {ops.max: ("reduce_max", float("-inf")), ops.min: ("reduce_min", float("inf")),
                ops.add: ("reduce_sum", 0.0)}
    if computation not in reducers:
        raise NotImplementedError("reduce_window supports lax.max, lax.min and lax.add")
    name, pad_value = reducers[computation]
    x = asarray_(operand)
    pads = _explicit_padding(padding, x.shape, window_dimensions, window_strides,
                             (1,) * x.ndim)
    if any(lo or hi for lo, hi in pads):
        x = ops.pad(x, pad_value if x.jdtype.is_float else 0, [(lo, hi, 0) for lo, hi in pads])
    axes = tuple(a for a, k in enumerate(window_dimensions) if k != 1 or window_strides[a] != 1)
    xw = windows_p.bind(x, axes=axes, sizes=tuple(window_dimensions[a] for a in axes),
                        strides=tuple(window_strides[a] for a in axes),
                        dilation=(1,) * len(axes))
    offset_axes = tuple(a + i + 1 for i, a in enumerate(axes))
    out = getattr(ops, name)(xw, offset_axes)
    init = asarray_(init_value, x.jdtype)
    return computation(out, init) if name != "reduce_sum" or init_value != 0 else out

"""View and ShapeTracker: movement ops as index arithmetic, never as copies.

A View maps a logical index (i0, .., in) to a buffer position
`offset + sum(i_d * strides_d)`, valid where every `mask_d[0] <= i_d < mask_d[1]`
(invalid elements read as zero: that is how padding works). A ShapeTracker is
a stack of views for the reshapes one view cannot express: the last view takes
the logical index, and each view below reads the flat position of the one above.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Optional, Sequence

from jaxlab.ir.alu import AluExp
from jaxlab.ir.dtypes import DType

Mask = Optional[tuple[tuple[int, int], ...]]


def _prod(xs: Sequence[int]) -> int:
    return math.prod(xs)


def contiguous_strides(shape: Sequence[int]) -> tuple[int, ...]:
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc if n != 1 else 0)
        acc *= n
    return tuple(reversed(strides))


@dataclass(frozen=True)
class View:
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0
    mask: Mask = None

    @staticmethod
    def make(shape: Sequence[int], strides: Sequence[int], offset: int = 0,
             mask: Mask = None) -> "View":
        """Canonical form: size-1 dims have stride 0; a mask covering all is None."""
        shape = tuple(int(n) for n in shape)
        strides = tuple(0 if n == 1 else int(s) for n, s in zip(shape, strides))
        if mask is not None:
            mask = tuple((max(0, lo), min(n, hi)) for (lo, hi), n in zip(mask, shape))
            if any(lo >= hi for lo, hi in mask):
                mask = tuple((0, 0) for _ in shape)  # nothing is valid
            elif all(lo == 0 and hi == n for (lo, hi), n in zip(mask, shape)):
                mask = None
        return View(shape, strides, int(offset), mask)

    @staticmethod
    def contiguous(shape: Sequence[int]) -> "View":
        return View.make(shape, contiguous_strides(shape))

    @property
    def is_contiguous(self) -> bool:
        return self.offset == 0 and self.mask is None and \
            self.strides == contiguous_strides(self.shape)

    def _mask_or_full(self) -> tuple[tuple[int, int], ...]:
        return self.mask if self.mask is not None else tuple((0, n) for n in self.shape)

    # --- movement ops -------------------------------------------------------
    def permute(self, axes: Sequence[int]) -> "View":
        m = self.mask
        return View.make([self.shape[a] for a in axes], [self.strides[a] for a in axes],
                         self.offset, None if m is None else tuple(m[a] for a in axes))

    def expand(self, shape: Sequence[int]) -> "View":
        mask = None
        if self.mask is not None:
            mask = tuple(m if old == new else ((0, new) if m[1] > m[0] else (0, 0))
                         for m, old, new in zip(self.mask, self.shape, shape))
        return View.make(shape, [s if old == new else 0 for s, old, new
                                 in zip(self.strides, self.shape, shape)], self.offset, mask)

    def pad(self, pads: Sequence[tuple[int, int]]) -> "View":
        offset = self.offset - sum(lo * s for (lo, _), s in zip(pads, self.strides))
        shape = [n + lo + hi for n, (lo, hi) in zip(self.shape, pads)]
        mask = tuple((mlo + lo, mhi + lo) for (mlo, mhi), (lo, _)
                     in zip(self._mask_or_full(), pads))
        return View.make(shape, self.strides, offset, mask)

    def shrink(self, bounds: Sequence[tuple[int, int]]) -> "View":
        offset = self.offset + sum(lo * s for (lo, _), s in zip(bounds, self.strides))
        mask = None
        if self.mask is not None:
            mask = tuple((mlo - lo, mhi - lo) for (mlo, mhi), (lo, _) in zip(self.mask, bounds))
        return View.make([hi - lo for lo, hi in bounds], self.strides, offset, mask)

    def flip(self, axes: Sequence[int]) -> "View":
        strides, offset, mask = list(self.strides), self.offset, list(self._mask_or_full())
        for a in axes:
            n = self.shape[a]
            offset += (n - 1) * strides[a]
            strides[a] = -strides[a]
            mask[a] = (n - mask[a][1], n - mask[a][0])
        return View.make(self.shape, strides, offset, tuple(mask))

    def step(self, steps: Sequence[int]) -> "View":
        """Every k-th element along each dim (k >= 1), starting at the first."""
        shape = [-(-n // k) for n, k in zip(self.shape, steps)]
        mask = tuple((-(-lo // k), -(-hi // k)) for (lo, hi), k
                     in zip(self._mask_or_full(), steps))
        return View.make(shape, [s * k for s, k in zip(self.strides, steps)], self.offset, mask)

    def window(self, axes: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
               dilation: Sequence[int]) -> "View":
        """Each axis a becomes two: window position (stride s) and offset in the
        window (stride d): the overlapping view a convolution or a pool reads."""
        mask = self._mask_or_full()
        shape, st, m = [], [], []
        spec = {a: (k, s, d) for a, k, s, d in zip(axes, sizes, strides, dilation)}
        for i, (n, stride) in enumerate(zip(self.shape, self.strides)):
            if i not in spec:
                shape.append(n); st.append(stride); m.append(mask[i])
                continue
            if mask[i] != (0, n):
                raise ValueError("window() needs unmasked axes (realize padding first)")
            k, s, d = spec[i]
            span = (k - 1) * d + 1
            out = (n - span) // s + 1 if n >= span else 0
            shape += [out, k]; st += [stride * s, stride * d]; m += [(0, out), (0, k)]
        return View.make(shape, st, self.offset, tuple(m))

    def reshape(self, shape: Sequence[int]) -> Optional["View"]:
        """The same elements under a new shape as one view, or None if impossible."""
        shape = tuple(shape)
        if shape == self.shape:
            return self
        if self.mask is not None and any(lo >= hi for lo, hi in self.mask):
            if not shape:   # a 0-d view has no dim to carry the empty mask
                return None
            return View.make(shape, [0] * len(shape), 0, tuple((0, 0) for _ in shape))
        old = [(n, s, m) for n, s, m in zip(self.shape, self.strides, self._mask_or_full())
               if n != 1]
        new_dims = [n for n in shape if n != 1]
        strides_new, masks_new = _regroup(old, new_dims)
        if strides_new is None:
            return None
        it_s, it_m = iter(strides_new), iter(masks_new)
        strides, mask = [], []
        for n in shape:
            strides.append(next(it_s) if n != 1 else 0)
            mask.append(next(it_m) if n != 1 else (0, 1))
        return View.make(shape, strides, self.offset, tuple(mask))

    # --- index arithmetic ---------------------------------------------------
    def index_and_valid(self, idxs: Sequence[AluExp]) -> tuple[AluExp, AluExp]:
        index = AluExp.const(self.offset, DType.int32)
        valid = AluExp.const(True, DType.bool)
        for i, n, s in zip(idxs, self.shape, self.strides):
            if s != 0:
                index = index + i * s
        if self.mask is not None:
            for i, (lo, hi), n in zip(idxs, self.mask, self.shape):
                if lo > 0:
                    valid = valid & i.lt(lo).ne(True)
                if hi < n:
                    valid = valid & i.lt(hi)
        return index, valid


def _merge_dims(dims: list[tuple[int, int, tuple[int, int]]]) -> list:
    """Collapse neighbouring (size, stride, mask) dims that index like one dim."""
    out: list[tuple[int, int, tuple[int, int]]] = []
    for n, s, m in dims:
        if out:
            pn, ps, pm = out[-1]
            full = pm == (0, pn) and m == (0, n)
            if full and (pn == 1 or n == 1 or ps == s * n):
                out[-1] = (pn * n, s if n != 1 else ps, (0, pn * n))
                continue
        out.append((n, s, m))
    return out


def _regroup(old: list, new_dims: list[int]):
    """Split/merge (size, stride, mask) dims into new sizes; (None, None) if impossible."""
    strides, masks = [], []
    i = j = 0
    while i < len(old) or j < len(new_dims):
        if i >= len(old) or j >= len(new_dims):
            return None, None
        group_old, group_new = [old[i]], [new_dims[j]]
        i, j = i + 1, j + 1
        while _prod(d[0] for d in group_old) != _prod(group_new):
            if _prod(d[0] for d in group_old) < _prod(group_new):
                if i >= len(old):
                    return None, None
                group_old.append(old[i]); i += 1
            else:
                if j >= len(new_dims):
                    return None, None
                group_new.append(new_dims[j]); j += 1
        if len(group_old) == 1 and len(group_new) == 1:
            strides.append(group_old[0][1]); masks.append(group_old[0][2])
            continue
        if any(m != (0, n) for n, _, m in group_old):
            return None, None
        for (pn, ps, _), (n, s, _) in zip(group_old, group_old[1:]):
            if ps != s * n:
                return None, None
        acc = group_old[-1][1]
        group_strides = []
        for n in reversed(group_new):
            group_strides.append(acc)
            acc *= n
        strides.extend(reversed(group_strides))
        masks.extend((0, n) for n in group_new)
    return strides, masks


@dataclass(frozen=True)
class ShapeTracker:
    views: tuple[View, ...]

    @staticmethod
    def contiguous(shape: Sequence[int]) -> "ShapeTracker":
        return _contiguous_tracker(tuple(shape))

    @property
    def shape(self) -> tuple[int, ...]:
        return self.views[-1].shape

    @property
    def size(self) -> int:
        return _prod(self.shape)

    @property
    def is_contiguous(self) -> bool:
        return len(self.views) == 1 and self.views[0].is_contiguous

    def _top(self, view: View) -> "ShapeTracker":
        return ShapeTracker(self.views[:-1] + (view,))

    def permute(self, axes: Sequence[int]) -> "ShapeTracker":
        return self._top(self.views[-1].permute(axes))

    def expand(self, shape: Sequence[int]) -> "ShapeTracker":
        return self._top(self.views[-1].expand(shape))

    def pad(self, pads: Sequence[tuple[int, int]]) -> "ShapeTracker":
        return self._top(self.views[-1].pad(pads))

    def shrink(self, bounds: Sequence[tuple[int, int]]) -> "ShapeTracker":
        return self._top(self.views[-1].shrink(bounds))

    def flip(self, axes: Sequence[int]) -> "ShapeTracker":
        return self._top(self.views[-1].flip(axes))

    def step(self, steps: Sequence[int]) -> "ShapeTracker":
        return self._top(self.views[-1].step(steps))

    def window(self, axes: Sequence[int], sizes: Sequence[int], strides: Sequence[int],
               dilation: Sequence[int]) -> "ShapeTracker":
        return self._top(self.views[-1].window(axes, sizes, strides, dilation))

    def reshape(self, shape: Sequence[int]) -> "ShapeTracker":
        if _prod(shape) != self.size:
            raise ValueError(f"cannot reshape {self.shape} to {tuple(shape)}")
        view = self.views[-1].reshape(shape)
        if view is not None:
            return self._simplified(self._top(view))
        return ShapeTracker(self.views + (View.contiguous(shape),))

    def _simplified(self, st: "ShapeTracker") -> "ShapeTracker":
        # a contiguous top view over the same shape below it adds nothing
        views = list(st.views)
        while len(views) > 1 and views[-1].is_contiguous and views[-1].shape == views[-2].shape:
            views.pop()
        return ShapeTracker(tuple(views))

    def to_index(self, parts: Sequence[tuple[AluExp, int]]) -> tuple[AluExp, AluExp]:
        """(buffer index, validity) where `parts` gives a flat row-major variable
        for each run of logical dims, e.g. [(gidx, 2), (ridx, 1)] for a
        reduction over the last axis of a 3-d shape."""
        valid = AluExp.const(True, DType.bool)
        below_ndims = [len(v.shape) for v in reversed(self.views[:-1])] + [0]
        for view, below_ndim in zip(reversed(self.views), below_ndims):
            dims = list(zip(view.shape, view.strides, view._mask_or_full()))
            merged: list[tuple[int, int, tuple[int, int]]] = []
            idxs: list[AluExp] = []
            start = 0
            for flat, ndim in parts:
                segment = _merge_dims(dims[start:start + ndim])
                start += ndim
                stride = _prod(n for n, _, _ in segment)
                for n, _, _ in segment:
                    stride //= n
                    idxs.append((flat // stride) % n)
                merged.extend(segment)
            flat_view = View.make([d[0] for d in merged], [d[1] for d in merged], view.offset,
                                  tuple(d[2] for d in merged))
            index, v = flat_view.index_and_valid(idxs)
            valid = valid & v
            parts = [(index, below_ndim)]   # the view below reads this flat position
        return index, valid

    def short(self) -> str:
        v = self.views[-1]
        text = f"[{','.join(map(str, v.shape))}"
        if not self.is_contiguous:
            text += f" s={v.strides}" + (f" o={v.offset}" if v.offset else "")
            text += f" m={v.mask}" if v.mask is not None else ""
            text += f" +{len(self.views) - 1}v" if len(self.views) > 1 else ""
        return text + "]"


@functools.lru_cache(maxsize=4096)
def _contiguous_tracker(shape: tuple[int, ...]) -> ShapeTracker:
    return ShapeTracker((View.contiguous(shape),))

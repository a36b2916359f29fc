"""dot_general (one fused multiply-and-sum kernel) and the routine primitives."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from jaxlab.core.primitives import complex_lowerings, lowerings, primitive
from jaxlab.engine import dispatch
from jaxlab.engine import lazy as lz
from jaxlab.engine.fusion import Break, Reason
from jaxlab.engine.lazy import Lazy
from jaxlab.ir.alu import AluOp
from jaxlab.ir.dtypes import DType
from jaxlab.ir.kernel import Routine

dot_general_p = primitive("dot_general")


def _dot_general(x: Lazy, y: Lazy, *, dimension_numbers: Any,
                 preferred_element_type: DType | None = None) -> Lazy:
    """Both operands viewed as (batch, x_free, y_free, contract), multiplied,
    summed over contract: the kernel a matmul is, with nothing materialised."""
    dtype = preferred_element_type or x.dtype
    x, y = lz.cast(x, dtype), lz.cast(y, dtype)
    layout = dot_layout(x.shape, y.shape, dimension_numbers)
    prod = lz.elementwise(AluOp.Mul, [layout.lhs(x), layout.rhs(y)])
    return lz.reduce(prod, AluOp.Max if dtype is DType.bool else AluOp.Add, layout.contract)


@dataclass(frozen=True)
class DotLayout:
    """dot_general's operands as views of one (batch, x_free, y_free, contract) space."""
    lhs_order: tuple[int, ...]
    lhs_shape: tuple[int, ...]
    rhs_order: tuple[int, ...]
    rhs_shape: tuple[int, ...]
    full: tuple[int, ...]
    contract: tuple[int, ...]   # the axes of `full` summed over

    def lhs(self, x: Lazy) -> Lazy:
        return self._place(x, self.lhs_order, self.lhs_shape)

    def rhs(self, y: Lazy) -> Lazy:
        return self._place(y, self.rhs_order, self.rhs_shape)

    def _place(self, x: Lazy, order: tuple, shape: tuple) -> Lazy:
        x = lz.movement(x, "permute", order)
        return lz.movement(lz.movement(x, "reshape", shape), "expand", self.full)


def dot_layout(xs: tuple, ys: tuple, dimension_numbers: Any) -> DotLayout:
    (xc, yc), (xb, yb) = dimension_numbers
    for dx, dy in zip(xc, yc):
        if xs[dx] != ys[dy]:
            raise TypeError(f"dot_general: contracting dimensions differ: {xs} axis {dx} "
                             f"vs {ys} axis {dy}")
    for dx, dy in zip(xb, yb):
        if xs[dx] != ys[dy]:
            raise TypeError(f"dot_general: batch dimensions differ: {xs} vs {ys}")
    xf = [d for d in range(len(xs)) if d not in xc and d not in xb]
    yf = [d for d in range(len(ys)) if d not in yc and d not in yb]
    nb, nxf, nyf, nc = len(xb), len(xf), len(yf), len(xc)
    batch = [xs[d] for d in xb]
    contract = [xs[d] for d in xc]
    return DotLayout(
        lhs_order=tuple(list(xb) + xf + list(xc)),
        lhs_shape=tuple(batch + [xs[d] for d in xf] + [1] * nyf + contract),
        rhs_order=tuple(list(yb) + yf + list(yc)),
        rhs_shape=tuple(batch + [1] * nxf + [ys[d] for d in yf] + contract),
        full=tuple(batch + [xs[d] for d in xf] + [ys[d] for d in yf] + contract),
        contract=tuple(range(nb + nxf + nyf, nb + nxf + nyf + nc)))


lowerings[dot_general_p] = _dot_general


# --- routines: contiguous inputs, whole-array algorithms, never fused ----------

def run_routine(name: str, xs: Sequence[Lazy], outputs: Sequence[tuple[tuple, DType]],
                **params: Any) -> list[Lazy]:
    xs = [lz.realize(x, Reason(Break.ROUTINE, f"input of the {name} routine")) for x in xs]
    routine = Routine(name, tuple((x.shape, x.dtype) for x in xs), tuple(outputs),
                      tuple(sorted(params.items())))
    bufs = dispatch.run(xs[0].device, routine, [x.buffer for x in xs])
    return [lz.from_buffer(b, shape) for b, (shape, _) in zip(bufs, outputs)]


sort_p = primitive("sort")
argsort_p = primitive("argsort")
cholesky_p = primitive("cholesky")
triangular_solve_p = primitive("triangular_solve")
lu_p = primitive("lu", multiple_results=True)


# Narrow dtypes sort as a wider one of the same order (every value exact, NaN kept), so a
# routine is written for 32-bit keys only; unless the device's take them as they are
# (webgpu: fewer radix passes, and no float16 NaN through a float32 round trip, which
# NVIDIA's narrowing makes positive).
_SORTS_AS = {DType[narrow]: DType[wide] for narrow, wide in (
    ("float16", "float32"), ("bool", "uint32"), ("int8", "int32"), ("int16", "int32"),
    ("uint8", "uint32"), ("uint16", "uint32")) if narrow in DType.__members__}


def _last_axis(name: str, out_dtype: DType | None):
    def rule(x: Lazy, *, dimension: int) -> Lazy:
        nd = len(x.shape)
        if not -nd <= dimension < nd:
            raise ValueError(f"{name}: axis {dimension} out of bounds for shape {x.shape}")
        dimension %= nd
        perm = [d for d in range(nd) if d != dimension] + [dimension]
        moved = lz.movement(x, "permute", tuple(perm)) if dimension != nd - 1 else x
        narrow = getattr(x.device.backend, "narrow_sorts", False)
        keys = moved if narrow else lz.cast(moved, _SORTS_AS.get(x.dtype, x.dtype))
        (out,) = run_routine(name, [keys], [(moved.shape, out_dtype or keys.dtype)])
        out = lz.cast(out, out_dtype or x.dtype)
        inverse = tuple(perm.index(d) for d in range(nd))
        return lz.movement(out, "permute", inverse) if dimension != nd - 1 else out
    return rule


def _square_float(name: str, a: Lazy) -> None:
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"{name} needs square matrices in the last two axes, got {a.shape}")
    if not a.dtype.is_float:
        raise TypeError(f"{name} needs a floating point matrix, got {a.dtype}")


def _working(a: Lazy) -> Lazy:
    """The dtype linear algebra computes in: float16 widens to float32."""
    return lz.cast(a, DType.float32) if a.dtype is DType.float16 else a


def _cholesky(a: Lazy, *, symmetrize_input: bool = False) -> Lazy:
    """symmetrize_input: the routine factors (a + a^T) / 2 (each backend computes it as
    it reads a); else it reads a's lower triangle only."""
    _square_float("cholesky", a)
    x = _working(a)
    (low,) = run_routine("cholesky", [x], [(a.shape, x.dtype)], symmetrize=bool(symmetrize_input))
    return lz.cast(low, a.dtype)


def _triangular_solve(a: Lazy, b: Lazy, *, left_side: bool = False, lower: bool = False,
                      transpose_a: bool = False, unit_diagonal: bool = False) -> Lazy:
    _square_float("triangular_solve", a)
    n = a.shape[-1]
    side = b.shape[-2] if left_side else b.shape[-1]
    if side != n or a.shape[:-2] != b.shape[:-2]:
        raise ValueError(f"triangular_solve: a {a.shape} and b {b.shape} do not match "
                         f"(left_side={left_side})")
    x = _working(a)
    out = run_routine("triangular_solve", [x, lz.cast(b, x.dtype)], [(b.shape, x.dtype)],
                      left_side=bool(left_side), lower=bool(lower),
                      transpose_a=bool(transpose_a), unit_diagonal=bool(unit_diagonal))[0]
    return lz.cast(out, a.dtype)


def _lu(a: Lazy) -> tuple[Lazy, Lazy, Lazy]:
    if len(a.shape) < 2 or not a.dtype.is_float:
        raise ValueError(f"lu needs a floating point matrix, got {a.dtype}{list(a.shape)}")
    m, n = a.shape[-2:]
    batch = a.shape[:-2]
    x = _working(a)
    lu, pivots, perm = run_routine("lu", [x], [(a.shape, x.dtype), (batch + (min(m, n),), DType.int32),
                                               (batch + (m,), DType.int32)])
    return lz.cast(lu, a.dtype), pivots, perm


eigh_p = primitive("eigh", multiple_results=True)
svd_p = primitive("svd", multiple_results=True)
qr_p = primitive("qr", multiple_results=True)


def _swap_last(x: Lazy) -> Lazy:
    nd = len(x.shape)
    return lz.movement(x, "permute", tuple(range(nd - 2)) + (nd - 1, nd - 2))


def _float_matrix(name: str, a: Lazy) -> None:
    if len(a.shape) < 2 or not a.dtype.is_float:
        raise ValueError(f"{name} needs a floating point matrix (at least 2 axes), got "
                         f"{a.dtype}{list(a.shape)}")


def _eigh(a: Lazy, *, lower: bool = True) -> tuple[Lazy, Lazy]:
    """(vectors, values): values ascending, vectors as columns; only the `lower`
    (else upper) triangle is read."""
    _square_float("eigh", a)
    x = _working(a)
    n, batch = a.shape[-1], a.shape[:-2]
    v, w = run_routine("eigh", [x], [(a.shape, x.dtype), (batch + (n,), x.dtype)],
                       lower=bool(lower))
    return lz.cast(v, a.dtype), lz.cast(w, a.dtype)


def _svd(a: Lazy, *, full_matrices: bool = True, compute_uv: bool = True) -> list[Lazy]:
    """[s] or [s, u, vt], s descending. The routine takes tall matrices (m >= n): a wide
    one is transposed, and its factors swap back (a = v' s u'^T)."""
    _float_matrix("svd", a)
    m, n = a.shape[-2:]
    wide = m < n
    x = _working(_swap_last(a) if wide else a)
    rows, cols, batch = max(m, n), min(m, n), a.shape[:-2]
    ucols = rows if full_matrices else cols
    outputs = [(batch + (cols,), x.dtype)]
    if compute_uv:
        outputs += [(batch + (rows, ucols), x.dtype), (batch + (cols, cols), x.dtype)]
    found = [lz.cast(o, a.dtype) for o in run_routine(
        "svd", [x], outputs, full_matrices=bool(full_matrices), compute_uv=bool(compute_uv))]
    if compute_uv and wide:
        s, u, vt = found
        return [s, _swap_last(vt), _swap_last(u)]
    return found


def _qr(a: Lazy, *, full_matrices: bool = False) -> tuple[Lazy, Lazy]:
    """Householder QR as LAPACK's geqrf/orgqr: (q, r), r's diagonal may be negative."""
    _float_matrix("qr", a)
    x = _working(a)
    m, n = a.shape[-2:]
    cols, batch = m if full_matrices else min(m, n), a.shape[:-2]
    q, r = run_routine("qr", [x], [(batch + (m, cols), x.dtype), (batch + (cols, n), x.dtype)],
                       full_matrices=bool(full_matrices))
    return lz.cast(q, a.dtype), lz.cast(r, a.dtype)


eig_p = primitive("eig", multiple_results=True)

# where a routine computes eig (NumPy's LAPACK geev on the cpu device); JAX too computes
# it on the CPU only. The shape-only device traces it anywhere: the error comes when a
# program is lowered for a device.
EIG_PLATFORMS = frozenset({"cpu"})


def _eig(a: Any, *, compute_left_eigenvectors: bool = True,
         compute_right_eigenvectors: bool = True) -> list[Any]:
    """[w] + [vl] + [vr] (as asked) of general square matrices, all complex: w unordered
    as LAPACK's geev, vectors as unit columns (largest component real), vl^H a = w vl^H."""
    from jaxlab.engine import complex as cx
    from jaxlab.ir.dtypes import complex_dtype
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"eig needs square matrices in the last two axes, got {a.shape}")
    complex_input = cx.is_complex(a)
    if not (complex_input or a.dtype.is_float):
        raise TypeError(f"eig needs a floating point or complex matrix, got {a.dtype}")
    if a.device.platform not in EIG_PLATFORMS and not getattr(a.device.backend, "shape_only",
                                                              False):
        raise NotImplementedError(
            "Nonsymmetric eigendecomposition is only implemented on the CPU backend "
            f"(this array is on {a.device.platform}). If your matrix is symmetric or "
            "Hermitian, you should use eigh instead.")
    x = a.pair if complex_input else _working(a)
    n, batch = a.shape[-1], a.shape[:-2]
    vectors = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    outputs = [(batch + (n, 2), x.dtype)] + [(batch + (n, n, 2), x.dtype)] * vectors
    found = run_routine("eig", [x], outputs, left=bool(compute_left_eigenvectors),
                        right=bool(compute_right_eigenvectors), complex_input=complex_input)
    out_dtype = complex_dtype(x.dtype)
    return [cx.from_pair(o, out_dtype) for o in found]


lowerings.update({
    eigh_p: _eigh, svd_p: _svd, qr_p: _qr, eig_p: _eig,
    sort_p: _last_axis("sort", None), argsort_p: _last_axis("argsort", DType.int32),
    cholesky_p: _cholesky, triangular_solve_p: _triangular_solve, lu_p: _lu,
})


# --- differentiation and batching rules --------------------------------------
from jaxlab.core.primitives import batch_rules, jvp_rules, transpose_rules  # noqa: E402
from jaxlab.core.rule_helpers import (batch_at_front, bilinear_tangent, is_undef,  # noqa: E402
                                      jvp_zero)


def _jvp_dot(primals, tangents, **params):
    (x, y), (tx, ty) = primals, tangents
    out = dot_general_p.bind(x, y, **params)
    return [out], [bilinear_tangent(lambda a, b: dot_general_p.bind(a, b, **params),
                                    x, y, tx, ty, out)]


def _ranges(n: int, skip: Sequence[int]) -> list[int]:
    return [d for d in range(n) if d not in skip]


def _t_dot(cts, x, y, *, dimension_numbers, preferred_element_type=None):
    """Transpose of a contraction: contract the cotangent with the other operand
    over the free dims it shares, then permute into the operand's axis order."""
    from jaxlab.core.movement import transpose_p
    (ct,) = cts
    (xc, yc), (xb, yb) = dimension_numbers
    x_shape = x.aval.shape if is_undef(x) else x.shape
    y_shape = y.aval.shape if is_undef(y) else y.shape
    nb = len(xb)
    x_free = _ranges(len(x_shape), list(xc) + list(xb))
    y_free = _ranges(len(y_shape), list(yc) + list(yb))
    ct_batch = tuple(range(nb))
    ct_xfree = tuple(range(nb, nb + len(x_free)))
    ct_yfree = tuple(range(nb + len(x_free), nb + len(x_free) + len(y_free)))
    if is_undef(x):
        # ct (b, xf, yf) . y (b, yc, yf) over yf -> (b, xf, yc)
        out = dot_general_p.bind(ct, y, dimension_numbers=(
            (ct_yfree, tuple(y_free)), (ct_batch, tuple(yb))))
        # out axes: x's batch, x's free, then x's contracted dims in y's axis order
        src = list(xb) + x_free + [xc[i] for i in sorted(range(len(yc)), key=lambda i: yc[i])]
        perm = tuple(src.index(d) for d in range(len(x_shape)))
        return [transpose_p.bind(out, permutation=perm), None]
    # y undefined: ct (b, xf, yf) . x (b, xf, xc) over xf -> (b, yf, xc)
    out = dot_general_p.bind(ct, x, dimension_numbers=(
        (ct_xfree, tuple(x_free)), (ct_batch, tuple(xb))))
    src = list(yb) + y_free + [yc[i] for i in sorted(range(len(xc)), key=lambda i: xc[i])]
    perm = tuple(src.index(d) for d in range(len(y_shape)))
    return [None, transpose_p.bind(out, permutation=perm)]


def _b_dot(size, vals, dims, *, dimension_numbers, preferred_element_type=None):
    """Both operands batched at axis 0 as a new leading batch dimension."""
    from jaxlab.core.batching import move_to
    x, y = (move_to(v, d, 0, size) for v, d in zip(vals, dims))
    (xc, yc), (xb, yb) = dimension_numbers
    sh = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    dn = ((sh(xc), sh(yc)), ((0,) + sh(xb), (0,) + sh(yb)))
    return [dot_general_p.bind(x, y, dimension_numbers=dn,
                               preferred_element_type=preferred_element_type)], [0]


jvp_rules[dot_general_p] = _jvp_dot
transpose_rules[dot_general_p] = _t_dot
batch_rules[dot_general_p] = _b_dot


def _jvp_sort(primals, tangents, *, dimension):
    from jaxlab.core.indexing import gather_along
    (x,), (t,) = primals, tangents
    perm = argsort_p.bind(x, dimension=dimension)
    return [sort_p.bind(x, dimension=dimension)], [gather_along(t, perm, dimension)]


def _jvp_triangular_solve(primals, tangents, **params):
    """x = op(a)^-1 b: dx = op(a)^-1 (db - op(da) x) (left side)."""
    (a, b), (ta, tb) = primals, tangents
    x = triangular_solve_p.bind(a, b, **params)
    from jaxlab.core import rule_ops
    lower = bool(params.get("lower"))
    strict = -1 if lower else 1   # a unit diagonal is not read: only the strict triangle
    da = rule_ops.triangle(ta, strict if params.get("unit_diagonal") else 0, lower)
    da = rule_ops.swapaxes(da, -1, -2) if params.get("transpose_a") else da
    rhs = tb - (da @ x if params.get("left_side") else x @ da)
    return [x], [triangular_solve_p.bind(a, rhs, **params)]


def _t_triangular_solve(cts, a, b, **params):
    (ct,) = cts
    flipped = {**params, "transpose_a": not params.get("transpose_a", False)}
    return [None, triangular_solve_p.bind(a, ct, **flipped)]


def _jvp_cholesky(primals, tangents, **params):
    """dL = L phi(L^-1 dA L^-T), phi = lower triangle with half the diagonal."""
    from jaxlab.core import rule_ops
    (a,), (ta,) = primals, tangents
    low = cholesky_p.bind(a, **params)
    sym = (ta + rule_ops.swapaxes(ta, -1, -2)) * 0.5
    tmp = triangular_solve_p.bind(low, sym, left_side=True, lower=True)
    inner = triangular_solve_p.bind(low, tmp, left_side=False, lower=True, transpose_a=True)
    n = a.shape[-1]
    phi = rule_ops.triangle(inner, -1, lower=True) + inner * rule_ops.eye(n, a.jdtype) * 0.5
    return [low], [low @ phi]


jvp_rules.update({sort_p: _jvp_sort, argsort_p: jvp_zero(argsort_p),
                  triangular_solve_p: _jvp_triangular_solve, cholesky_p: _jvp_cholesky,
                  lu_p: jvp_zero(lu_p)})
transpose_rules[triangular_solve_p] = _t_triangular_solve

_shift_dimension = lambda p, n: {  # noqa: E731  (negative axes still count from the end)
    **p, "dimension": p["dimension"] + 1 if p["dimension"] >= 0 else p["dimension"]}
for _p in (sort_p, argsort_p):
    batch_rules[_p] = batch_at_front(_p, _shift_dimension)
for _p in (cholesky_p, triangular_solve_p, lu_p):
    batch_rules[_p] = batch_at_front(_p)   # routines take leading batch dims


# --- decompositions: JAX's derivative rules, through the primitives' own outputs -------

def _matrix_t(x: Any) -> Any:
    from jaxlab.core.rule_ops import swapaxes
    return swapaxes(x, -1, -2)


def _diagonal(x: Any) -> Any:
    from jaxlab.core.rule_ops import diagonal
    return diagonal(x)


def _adjoint(x: Any) -> Any:
    """x^H: the transpose, conjugated for complex x."""
    from jaxlab.core.complex_rules import conj_p
    t = _matrix_t(x)
    return conj_p.bind(t) if t.jdtype.is_complex else t


def _real(x: Any) -> Any:
    from jaxlab.core.complex_rules import real_p
    return real_p.bind(x) if x.jdtype.is_complex else x


def eigh_tangents(v: Any, w: Any, ta: Any) -> tuple[Any, Any]:
    """JAX's eigh rule: dw = re diag(V^H dA V), dV = V (F * V^H dA V) with F_ij =
    1 / (w_j - w_i) off the diagonal: infinite for repeated eigenvalues, as JAX's."""
    from jaxlab.core import rule_ops
    inner = _adjoint(v) @ ta @ v
    eye = rule_ops.eye(v.shape[-1], w.jdtype)
    gaps = 1.0 / (eye + rule_ops.expand_dims(w, -2) - rule_ops.expand_dims(w, -1)) - eye
    return v @ (gaps * inner), _real(_diagonal(inner))


def _jvp_eigh(primals, tangents, *, lower=True):
    (a,), (ta,) = primals, tangents
    v, w = eigh_p.bind(a, lower=lower)
    return [v, w], list(eigh_tangents(v, w, ta))


def svd_tangents(s: Any, u: Any, vt: Any, ta: Any, compute_uv: bool) -> list[Any]:
    """JAX's svd rule from the reduced factors: ds = re diag(U^H dA V); dU, dV from the
    antisymmetric parts, with the part of dA outside U's (or V's) span for non-square
    matrices."""
    from jaxlab.core import rule_ops
    m, n = ta.shape[-2:]
    v = _adjoint(vt)
    ds_mat = _adjoint(u) @ ta @ v
    ds = _real(_diagonal(ds_mat))
    if not compute_uv:
        return [ds]
    row = rule_ops.expand_dims(s, -2)                  # s_j along the columns
    col = _matrix_t(row)                               # s_i along the rows
    eye = rule_ops.eye(s.shape[-1], s.jdtype)
    diffs = (row + col) * (row - col)                  # s_j^2 - s_i^2
    f = 1.0 / (diffs + eye) - eye
    zero = (s == 0).astype(s.dtype)                    # 1 where s is 0, else 0
    s_inv = 1.0 / (s + zero) - zero
    du_dv_diag = 0.5 * (ds_mat - _adjoint(ds_mat)) * (rule_ops.expand_dims(s_inv, -1) * eye)
    dss, sds = row * ds_mat, col * ds_mat
    du = u @ (f * (dss + _adjoint(dss)) + du_dv_diag)
    dv = v @ (f * (sds + _adjoint(sds)))
    if m > n:
        dav = ta @ v
        du = du + (dav - u @ (_adjoint(u) @ dav)) / row
    if n > m:
        dau = _adjoint(ta) @ u
        dv = dv + (dau - v @ (vt @ dau)) / row
    return [ds, du, _adjoint(dv)]


def _jvp_svd(primals, tangents, *, full_matrices=True, compute_uv=True):
    (a,), (ta,) = primals, tangents
    m, n = a.shape[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for "
                                  "full matrices")
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True)
    return ([s, u, vt] if compute_uv else [s]), svd_tangents(s, u, vt, ta, compute_uv)


def check_qr_jvp(shape: tuple, full_matrices: bool) -> None:
    m, n = shape[-2:]
    if m < n or (full_matrices and m != n):
        raise NotImplementedError("Unimplemented case of QR decomposition derivative")


def qr_tangents(q: Any, r: Any, da_rinv: Any) -> tuple[Any, Any]:
    """JAX's rule for m >= n (reduced), given dA R^-1: with C = Q^H dA R^-1 and its
    strictly lower part L, Omega = L - L^H (+ i im diag C for complex, which keeps R's
    diagonal real): dQ = Q (Omega - C) + dA R^-1, dR = (C - Omega) R."""
    from jaxlab.core import rule_ops
    c = _adjoint(q) @ da_rinv
    low = rule_ops.triangle(c, -1, lower=True)
    omega = low - _adjoint(low)
    if c.jdtype.is_complex:
        omega = omega + rule_ops.eye(c.shape[-1], c.jdtype) * (c - _real(c).astype(c.dtype))
    return q @ (omega - c) + da_rinv, (c - omega) @ r


def _jvp_qr(primals, tangents, *, full_matrices=False):
    (a,), (ta,) = primals, tangents
    check_qr_jvp(a.shape, full_matrices)
    q, r = qr_p.bind(a, full_matrices=full_matrices)
    da_rinv = triangular_solve_p.bind(r, ta, left_side=False, lower=False)
    return [q, r], list(qr_tangents(q, r, da_rinv))


def _jvp_eig(primals, tangents, *, compute_left_eigenvectors=True,
             compute_right_eigenvectors=True):
    """Eigenvalues only, as JAX (eigenvector derivatives need assumptions JAX does not
    check): dw_j = u_j^H dA v_j / u_j^H v_j with the left and right vectors u, v."""
    if compute_left_eigenvectors or compute_right_eigenvectors:
        raise NotImplementedError(
            "The derivatives of eigenvectors are not implemented, only eigenvalues. "
            "See https://github.com/jax-ml/jax/issues/2748 for discussion.")
    (a,), (ta,) = primals, tangents
    w, vl, vr = eig_p.bind(a, compute_left_eigenvectors=True, compute_right_eigenvectors=True)
    from jaxlab.core.complex_rules import conj_p
    from jaxlab.core.reductions import reduce_prims
    left = conj_p.bind(vl)
    along = lambda x: reduce_prims["reduce_sum"].bind(x, axes=(x.ndim - 2,))  # noqa: E731
    return [w], [along(left * (ta.astype(vr.dtype) @ vr)) / along(left * vr)]


jvp_rules.update({eigh_p: _jvp_eigh, svd_p: _jvp_svd, qr_p: _jvp_qr, eig_p: _jvp_eig})
for _p in (eigh_p, svd_p, qr_p, eig_p):
    batch_rules[_p] = batch_at_front(_p)
complex_lowerings[eig_p] = _eig

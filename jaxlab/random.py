"""jaxlab.random: JAX's default PRNG (threefry2x32, partitionable), bit for bit.

Keys are raw uint32[2] arrays, as jax.random.PRNGKey returns them. Every
sample is threefry2x32(key, counter) with the counter the flat index of the
output element (its high and low 32 bits): sampling is elementwise work that
jit fuses, and vmap maps it over a batch of keys.
"""
from __future__ import annotations

import math
from typing import Any, Sequence

import ml_dtypes
import numpy as np

from jaxlab import lax
from jaxlab import numpy as jnp
from jaxlab.array import Array
from jaxlab.core.elementwise import threefry2x32_p
from jaxlab.ir.dtypes import DType, default_float, default_int, to_dtype
from jaxlab.key_array import KEY_DTYPE, KeyArray, KeyDType
from jaxlab.numpy._util import asarray_, broadcast_shapes, canonical_axis, static_shape

Shape = int | Sequence[int]

__all__ = ["PRNGKey", "key", "key_data", "key_impl", "key_dtype", "wrap_key_data", "clone", "split", "fold_in", "bits", "uniform", "normal", "randint",
           "permutation", "bernoulli", "gumbel", "categorical"]


# --- keys and counters -------------------------------------------------------------

def _check_key(name: str, key: Any) -> Array:
    """The raw uint32[2] words of a single key, typed (random.key) or raw (PRNGKey)."""
    if isinstance(key, KeyArray):
        if key.shape:
            raise TypeError(f"random.{name} accepts a single key, but was given a key array "
                            f"of shape {key.shape} != (). Use jaxlab.vmap for batching.")
        return key.data
    key = asarray_(key)
    if key.shape != (2,) or key.jdtype is not DType.uint32:
        raise TypeError(f"random.{name}: expected a raw key of shape (2,) and dtype uint32 "
                        f"(use vmap for a batch of keys), got {key.jdtype}{list(key.shape)}")
    return key


def _like_input(key: Any, data: Array) -> Any:
    """New key data, typed when the key given was typed."""
    return KeyArray(data) if isinstance(key, KeyArray) else data


def _check_shape(name: str, shape: tuple[int, ...], *param_shapes: tuple[int, ...]) -> None:
    if broadcast_shapes(shape, *param_shapes) != shape:
        raise ValueError(f"random.{name}: parameter shapes {list(param_shapes)} must broadcast "
                         f"to the shape argument {shape}")


def _to_uint32(name: str, x: Any) -> Array:
    """The low 32 bits, reinterpreted (as XLA's integer conversion does)."""
    x = asarray_(x)
    if x.jdtype.is_float or x.jdtype.is_bool:
        raise TypeError(f"random.{name}: expected an integer, got {x.jdtype}")
    return lax.convert_element_type(x, DType.uint32)


def _hash(key: Array, hi: Array, lo: Array) -> tuple[Array, Array]:
    """The two words of threefry2x32 keyed by `key`, at counters (hi, lo)."""
    k0, k1 = (jnp.broadcast_to(key[i], lo.shape) for i in (0, 1))
    return threefry2x32_p.bind(k0, k1, hi, lo)


def _hash_iota(key: Array, shape: tuple[int, ...]) -> tuple[Array, Array]:
    """Threefry of each element's flat index (a 64-bit counter split in two words)."""
    size = math.prod(shape)
    if size >= 2 ** 32:   # the high counter word would be nonzero
        raise NotImplementedError(f"random arrays of {size} >= 2**32 elements")
    lo = jnp.arange(size, dtype=DType.uint32).reshape(shape)
    return _hash(key, jnp.zeros(shape, DType.uint32), lo)


def PRNGKey(seed: Any) -> Array:
    """A raw key from an integer seed. Like JAX without x64, the seed is taken
    as a 32-bit integer, so the high word is 0 and the low word is seed mod 2**32."""
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        seed = np.uint32(int(seed) & 0xFFFFFFFF)
    seed = asarray_(seed)
    if seed.shape:
        raise TypeError(f"random.PRNGKey: the seed must be a scalar, got shape {seed.shape}")
    return jnp.stack([jnp.zeros((), DType.uint32), _to_uint32("PRNGKey", seed)])


def key(seed: Any, *, impl: Any = None) -> KeyArray:
    """A typed key (a 0-d key array) from an integer seed: PRNGKey's words, typed."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"random.key: only the threefry2x32 implementation exists, got {impl!r}")
    return KeyArray(PRNGKey(seed))


def key_impl(keys: Any) -> str:
    """The PRNG implementation's name (the one there is: threefry2x32)."""
    _check_key_like("key_impl", keys)
    return KEY_DTYPE.impl


def key_dtype(impl: Any = None) -> KeyDType:
    """The dtype of typed keys."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"random.key_dtype: only threefry2x32 exists, got {impl!r}")
    return KEY_DTYPE


def _check_key_like(name: str, keys: Any) -> None:
    if not isinstance(keys, KeyArray):
        data = asarray_(keys)
        if data.jdtype is not DType.uint32 or not data.shape or data.shape[-1] != 2:
            raise TypeError(f"random.{name}: expected a key array, got {data.jdtype}"
                            f"{list(data.shape)}")


def key_data(keys: Any) -> Array:
    """The uint32 words under typed keys (shape keys.shape + (2,)); raw keys as given."""
    return keys.data if isinstance(keys, KeyArray) else asarray_(keys)


def wrap_key_data(key_bits_array: Any, *, impl: Any = None) -> KeyArray:
    """Typed keys over uint32 data whose last axis holds a key's two words."""
    if impl not in (None, "threefry2x32"):
        raise ValueError(f"random.wrap_key_data: only threefry2x32 exists, got {impl!r}")
    data = asarray_(key_bits_array)
    if data.jdtype is not DType.uint32 or not data.shape or data.shape[-1] != 2:
        raise TypeError(f"random.wrap_key_data: expected uint32 data with a last axis of 2, "
                        f"got {data.jdtype}{list(data.shape)}")
    return KeyArray(data)


def clone(key: Any) -> Any:
    """The same key (keys are immutable values here, as in JAX without key reuse checks)."""
    return key


def split(key: Any, num: Shape = 2) -> Any:
    """`num` new keys (a shape when a tuple): key i is the two threefry words at counter i."""
    raw = _check_key("split", key)
    return _like_input(key, jnp.stack(_hash_iota(raw, static_shape(num)), axis=-1))


def fold_in(key: Any, data: Any) -> Any:
    """A new key from key and a 32-bit integer: the threefry words at counter (0, data)."""
    raw = _check_key("fold_in", key)
    data = _to_uint32("fold_in", data)
    if data.shape:
        raise TypeError(f"random.fold_in: data must be a scalar, got shape {data.shape} "
                        f"(use vmap for a batch)")
    return _like_input(key, jnp.stack(_hash(raw, jnp.zeros((), DType.uint32), data)))


def _bits(key: Array, shape: tuple[int, ...]) -> Array:
    w0, w1 = _hash_iota(key, shape)
    return w0 ^ w1


# the unsigned dtype of each bit width
_UNSIGNED = {8: DType.uint8, 16: DType.uint16, 32: DType.uint32, 64: DType.uint64}


def _bits_of_width(key: Array, shape: tuple[int, ...], width: int) -> Array:
    """JAX's random bits of `width` (threefry, partitionable): narrower widths keep the
    low bits of the 32-bit word, 64 bits join the two words of one counter."""
    if width == 64:
        w0, w1 = (lax.convert_element_type(w, DType.uint64) for w in _hash_iota(key, shape))
        return (w0 << np.uint64(32)) | w1
    return lax.convert_element_type(_bits(key, shape), _UNSIGNED[width])


def bits(key: Any, shape: Shape = (), dtype: Any = DType.uint32) -> Array:
    """Uniform random bits of an unsigned dtype (uint8 to uint64)."""
    dt = to_dtype(dtype)
    if dt not in _UNSIGNED.values():
        raise TypeError(f"random.bits: dtype must be an unsigned integer type, got {dt}")
    return _bits_of_width(_check_key("bits", key), static_shape(shape), 8 * dt.itemsize)


# --- floats ------------------------------------------------------------------------

def _float_dtype(name: str, dtype: Any) -> DType:
    """A sampler's float dtype: the default float when None (float64 under x64)."""
    dt = default_float() if dtype is None else to_dtype(dtype, f"random.{name}")
    if not dt.is_float:   # ValueError, as JAX
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {dt}")
    return dt


def _param_shape(name: str, shape: Shape | None, *params: Array) -> tuple[int, ...]:
    """The sample shape: `shape` when given (the parameters must broadcast to it),
    else the parameters' broadcast shape."""
    shapes = [p.shape for p in params]
    if shape is None:
        return broadcast_shapes(*shapes)
    shape = static_shape(shape)
    _check_shape(name, shape, *shapes)
    return shape


def _float_params(name: str, shape: Shape, dtype: Any, *params: Any) -> tuple:
    """(shape, the params as arrays of dtype) after checking dtype and broadcasting."""
    shape, dt = static_shape(shape), _float_dtype(name, dtype)
    arrays = [asarray_(p, dt) for p in params]
    _check_shape(name, shape, *(a.shape for a in arrays))
    return (shape, *arrays)


# XLA contracts JAX's `u * (maxval - minval) + minval` into a fused multiply-add on
# CPU and GPU, rounding once. Float32 ops round every step, so the fma is emulated
# with error-free transformations: exact product (Dekker), exact sum (Knuth) and a
# round-to-odd step that makes the final rounding correct (Boldo & Melquiond 2008).

def _two_sum(a: Array, b: Array) -> tuple[Array, Array]:
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


def _split(a: Array) -> tuple[Array, Array]:
    """a = hi + lo with 12 significant bits each (hi: a with its low 12 bits cleared)."""
    bits = lax.bitcast_convert_type(a, DType.uint32) & np.uint32(0xFFFFF000)
    hi = lax.bitcast_convert_type(bits, DType.float32)
    return hi, a - hi


def _two_product(a: Array, b: Array) -> tuple[Array, Array]:
    p = a * b
    (ah, al), (bh, bl) = _split(a), _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_round_to_odd(a: Array, b: Array) -> Array:
    """a + b rounded to the neighbour with an odd last bit when inexact."""
    s, err = _two_sum(a, b)
    bits = lax.bitcast_convert_type(s, DType.int32)
    toward_err = jnp.where((err > 0) == (s > 0), 1, -1)   # one ulp up or down in magnitude
    nudged = lax.bitcast_convert_type(bits + toward_err, DType.float32)
    return jnp.where((err != 0) & ((bits & 1) == 0), nudged, s)


def _fma(a: Array, b: Array, c: Array) -> Array:
    """a * b + c with a single rounding."""
    p, p_err = _two_product(a, b)
    s, s_err = _two_sum(c, p)
    return s + _add_round_to_odd(s_err, p_err)


def _exact_scaling(minval: Any, maxval: Any) -> bool:
    """Whether the span is a static power of two (as for the defaults, normal and
    gumbel): then u * span is exact and two roundings give the fma's result."""
    if not all(isinstance(v, (int, float, np.number)) for v in (minval, maxval)):
        return False
    span = np.float32(maxval) - np.float32(minval)
    return bool(span > 0 and np.frexp(span)[0] == 0.5)


def uniform(key: Any, shape: Shape = (), dtype: Any = None, minval: Any = 0.0,
            maxval: Any = 1.0) -> Array:
    """Uniform floats in [minval, maxval): random mantissa bits under exponent 0 give
    [1, 2), shifted and scaled."""
    key = _check_key("uniform", key)
    shape, lo, hi = _float_params("uniform", shape, dtype, minval, maxval)
    dt = lo.jdtype
    # as JAX: the mantissa's bits from random bits of the dtype's width (8 bits for a
    # mantissa under 8 bits: bfloat16); JAX puts them under the exponent of 1.0 and
    # subtracts 1, which is exactly mantissa * 2**-mantissa_bits
    width, mantissa_bits = 8 * dt.itemsize, int(ml_dtypes.finfo(dt.np).nmant)
    drawn = 8 if mantissa_bits < 8 else width
    unsigned = _UNSIGNED[width]
    raw = lax.convert_element_type(_bits_of_width(key, shape, drawn), unsigned)
    mantissa = jnp.right_shift(raw, np.array(drawn - mantissa_bits, unsigned.np))
    u = lax.convert_element_type(mantissa, dt) * np.array(2.0 ** -mantissa_bits, dt.np)
    lo, hi = jnp.broadcast_to(lo, shape), jnp.broadcast_to(hi, shape)
    exact = dt is not DType.float32 or _exact_scaling(minval, maxval)
    scaled = u * (hi - lo) + lo if exact else _fma(u, hi - lo, lo)
    return jnp.maximum(lo, scaled)


def normal(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """Standard normal samples: sqrt(2) erf_inv(u) for u uniform in (-1, 1)."""
    key = _check_key("normal", key)
    dt = _float_dtype("normal", dtype)
    lo = np.nextafter(np.array(-1.0, dt.np), np.array(0.0, dt.np))
    return lax.erf_inv(uniform(key, shape, dt, lo, 1.0)) * np.array(math.sqrt(2.0), dt.np)


def bernoulli(key: Any, p: Any = 0.5, shape: Shape | None = None) -> Array:
    """True with probability p (shape defaults to p's)."""
    key = _check_key("bernoulli", key)
    p = asarray_(p)
    if not p.jdtype.is_float:
        raise TypeError(f"random.bernoulli: p must be floating point, got {p.jdtype}")
    shape = p.shape if shape is None else static_shape(shape)
    _check_shape("bernoulli", shape, p.shape)
    return uniform(key, shape, p.jdtype) < p


def gumbel(key: Any, shape: Shape = (), dtype: Any = None) -> Array:
    """Standard Gumbel samples, -log(-log(u)) for u uniform in [tiny, 1)."""
    key = _check_key("gumbel", key)
    dt = _float_dtype("gumbel", dtype)
    tiny = float(ml_dtypes.finfo(dt.np).tiny)
    return -jnp.log(-jnp.log(uniform(key, shape, dt, tiny, 1.0)))


def categorical(key: Any, logits: Any, axis: int = -1, shape: Shape | None = None) -> Array:
    """Indices along `axis` drawn with probabilities softmax(logits), by the Gumbel-max
    trick. `shape` (default: logits' shape without axis) may add leading sample axes."""
    key = _check_key("categorical", key)
    logits = asarray_(logits)
    axis = canonical_axis(axis, logits.ndim)
    batch = logits.shape[:axis] + logits.shape[axis + 1:]
    shape = batch if shape is None else static_shape(shape)
    _check_shape("categorical", shape, batch)
    n_prefix = len(shape) - len(batch)
    sample_shape = shape[n_prefix:n_prefix + axis] + logits.shape[axis:axis + 1] + \
        shape[n_prefix + axis:]
    noise = gumbel(key, shape[:n_prefix] + sample_shape, logits.jdtype)
    return jnp.argmax(noise + logits, axis=axis - logits.ndim)


# --- integers and permutations -------------------------------------------------------

def _clip_convert(x: Array, dtype: DType) -> Array:
    """x in dtype, clipped to its range rather than wrapped."""
    (lo, hi), (x_lo, x_hi) = dtype.bounds, x.jdtype.bounds
    # bounds typed as x (a Python int past int32 would overflow, as in JAX)
    bounds = (asarray_(max(lo, x_lo), x.jdtype), asarray_(min(hi, x_hi), x.jdtype))
    return lax.convert_element_type(jnp.clip(x, *bounds), dtype)


def _int_param(x: Any) -> Array:
    x = asarray_(x)
    return x if x.jdtype.is_int else lax.convert_element_type(x, default_int())


def randint(key: Any, shape: Shape, minval: Any, maxval: Any,
            dtype: Any = DType.int32) -> Array:
    """Integers in [minval, maxval), as JAX: twice the dtype's width of random bits per
    value, reduced mod the span."""
    key = _check_key("randint", key)
    shape, dt = static_shape(shape), to_dtype(dtype)
    if not dt.is_int:
        raise TypeError(f"random.randint: dtype must be an integer type, got {dt}")
    if dt.itemsize < 4:   # as JAX: sampled in int32 (less bias), bounds clipped to dt's
        lo, hi = dt.bounds
        bounded = [jnp.clip(lax.convert_element_type(asarray_(v), DType.int32), lo, top)
                   for v, top in ((minval, hi), (maxval, hi + 1))]
        return lax.convert_element_type(randint(key, shape, *bounded, DType.int32), dt)
    minval, maxval = _int_param(minval), _int_param(maxval)
    _check_shape("randint", shape, minval.shape, maxval.shape)
    # maxval beyond dtype's range: the span is one more than the clipped values give
    out_of_range = maxval > _clip_convert(asarray_(dt.bounds[1], dt), maxval.jdtype)
    out_of_range = jnp.broadcast_to(out_of_range, shape)
    minval, maxval = (jnp.broadcast_to(_clip_convert(v, dt), shape) for v in (minval, maxval))
    keys, width = split(key), 8 * dt.itemsize
    unsigned = _UNSIGNED[width]
    higher, lower = (_bits_of_width(k, shape, width) for k in (keys[0], keys[1]))
    span = jnp.where(maxval <= minval, np.array(1, unsigned.np),
                     lax.convert_element_type(maxval - minval, unsigned))
    span = jnp.where(out_of_range & (maxval > minval), span + np.array(1, unsigned.np), span)
    # (higher * 2**width + lower) % span without wider integers: 2**width % span is
    # ((2**(width/2) % span)**2) % span, and (a*b) % n = ((a % n)*(b % n)) % n
    multiplier = lax.rem(jnp.full(span.shape, 2 ** (width // 2), unsigned), span)
    multiplier = lax.rem(multiplier * multiplier, span)
    offset = lax.rem(lax.rem(higher, span) * multiplier + lax.rem(lower, span), span)
    return minval + lax.convert_element_type(offset, dt)


def _shuffle(key: Array, x: Array, axis: int) -> Array:
    """JAX's sort-based shuffle: stable sorts by fresh random 32-bit keys, enough
    rounds that all elements likely get distinct key strings."""
    rounds = math.ceil(3 * math.log(max(1, x.size)) / math.log(2 ** 32 - 1))
    for _ in range(rounds):
        keys = split(key)
        key = keys[0]
        order = jnp.argsort(_bits(keys[1], x.shape), axis=axis)
        x = jnp.take_along_axis(x, order, axis=axis)
    return x


def permutation(key: Any, x: Any, axis: int = 0, independent: bool = False) -> Array:
    """A shuffled arange(x) for an integer x; else x shuffled along axis (the same
    permutation for every slice unless `independent`)."""
    key = _check_key("permutation", key)
    if isinstance(x, (int, np.integer)):
        x = jnp.arange(int(x))
    x = asarray_(x)
    if x.ndim == 0:
        raise TypeError("random.permutation: x must be an integer or at least 1-dimensional")
    axis = canonical_axis(axis, x.ndim)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    return jnp.take(x, _shuffle(key, jnp.arange(x.shape[axis]), 0), axis=axis)


# samplers built on the above
from jaxlab.random_distributions import *  # noqa: E402,F401,F403
from jaxlab.random_distributions import __all__ as _distributions  # noqa: E402
from jaxlab.random_gamma import *  # noqa: E402,F401,F403
from jaxlab.random_gamma import __all__ as _gamma_family  # noqa: E402
from jaxlab.random_discrete import *  # noqa: E402,F401,F403
from jaxlab.random_discrete import __all__ as _counts  # noqa: E402

__all__ += _distributions + _gamma_family + _counts

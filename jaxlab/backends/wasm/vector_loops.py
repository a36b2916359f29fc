"""WAT functions over contiguous runs of floats, SIMD128 lanes first, then one at a
time: the inner loops routines are made of (plane rotations, dot products, axpy).

Each function is written for one float type (f32: 4 lanes, f64: 2 lanes) and takes
byte addresses and an element count; `functions(names, ft)` gives the texts a
routine calls, each once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class FloatType:
    """A float type as Wasm spells it: scalar ops `f32.add`, vector ops `f32x4.add`."""
    name: str          # f32 | f64
    size: int          # bytes
    eps: float         # machine epsilon (spacing of 1.0)
    tiny: float        # smallest normal

    @property
    def lanes(self) -> int:
        return 16 // self.size

    @property
    def vec(self) -> str:
        return f"{self.name}x{self.lanes}"

    @property
    def shift(self) -> int:
        """log2 of the size: an index shifted by it is a byte offset."""
        return self.size.bit_length() - 1


F32 = FloatType("f32", 4, 2.0 ** -23, 2.0 ** -126)
F64 = FloatType("f64", 8, 2.0 ** -52, 2.0 ** -1022)


def _lanes_then_scalars(ft: FloatType, pointers: tuple[str, ...], vector_body: list[str],
                        scalar_body: list[str]) -> list[str]:
    """Loops over $n elements: whole vectors while they last, then single elements;
    every pointer in `pointers` advances with the index."""
    l, s = ft.lanes, ft.size

    def advance(step: int) -> list[str]:
        return [f"(local.set ${p} (i32.add (local.get ${p}) (i32.const {step})))"
                for p in pointers]
    first = pointers[0]
    return ([f"(local.set $end (i32.add (local.get ${first}) "
             f"(i32.shl (i32.and (local.get $n) (i32.const {-l})) (i32.const {ft.shift}))))",
             f";; {l} lanes at a time",
             "(block $vectors_done (loop $vectors",
             f"  (br_if $vectors_done (i32.ge_u (local.get ${first}) (local.get $end)))"]
            + [f"  {line}" for line in vector_body + advance(16)]
            + ["  (br $vectors)))",
               f"(local.set $end (i32.add (local.get ${first}) "
               f"(i32.shl (i32.and (local.get $n) (i32.const {l - 1})) (i32.const {ft.shift}))))",
               ";; the rest one at a time",
               "(block $scalars_done (loop $scalars",
               f"  (br_if $scalars_done (i32.ge_u (local.get ${first}) (local.get $end)))"]
            + [f"  {line}" for line in scalar_body + advance(s)]
            + ["  (br $scalars)))"])


def _function(head: str, comments: list[str], decls: str, setup: list[str], body: list[str],
              result: str = "") -> str:
    """One function's text: its signature, comments, locals, set-up, loops, result."""
    lines = ([head] + [f"  ;; {c}" for c in comments] + [f"  {decls}"]
             + [f"  {line}" for line in setup + body] + ([f"  {result}"] if result else []))
    return "\n".join(lines + [")"])


def _rot(ft: FloatType) -> str:
    t, v = ft.name, ft.vec
    body = _lanes_then_scalars(
        ft, ("x", "y"),
        ["(local.set $a (v128.load (local.get $x)))", "(local.set $b (v128.load (local.get $y)))",
         f"(v128.store (local.get $x) ({v}.relaxed_madd (local.get $vc) (local.get $a) "
         f"({v}.mul (local.get $vms) (local.get $b))))",
         f"(v128.store (local.get $y) ({v}.relaxed_madd (local.get $vs) (local.get $a) "
         f"({v}.mul (local.get $vc) (local.get $b))))"],
        [f"(local.set $sa ({t}.load (local.get $x)))", f"(local.set $sb ({t}.load (local.get $y)))",
         f"({t}.store (local.get $x) ({t}.sub ({t}.mul (local.get $c) (local.get $sa)) "
         f"({t}.mul (local.get $s) (local.get $sb))))",
         f"({t}.store (local.get $y) ({t}.add ({t}.mul (local.get $s) (local.get $sa)) "
         f"({t}.mul (local.get $c) (local.get $sb))))"])
    return _function(
        f"(func $rot (param $x i32) (param $y i32) (param $n i32) (param $c {t}) (param $s {t})",
        ["the plane rotation x, y <- c x - s y, s x + c y of two runs of n values",
         "(relaxed_madd: fused where the machine fuses)"],
        "(local $end i32) (local $a v128) (local $b v128) (local $vc v128) (local $vs v128)"
        f" (local $vms v128) (local $sa {t}) (local $sb {t})",
        [f"(local.set $vc ({v}.splat (local.get $c)))", f"(local.set $vs ({v}.splat (local.get $s)))",
         f"(local.set $vms ({v}.neg (local.get $vs)))"], body)


def _hsum(ft: FloatType, acc: str) -> str:
    """The sum of a vector local's lanes."""
    parts = [f"({ft.vec}.extract_lane {i} (local.get ${acc}))" for i in range(ft.lanes)]
    out = parts[0]
    for p in parts[1:]:
        out = f"({ft.name}.add {out} {p})"
    return out


def _dot(ft: FloatType) -> str:
    t, v = ft.name, ft.vec
    body = _lanes_then_scalars(
        ft, ("x", "y"),
        [f"(local.set $acc ({v}.relaxed_madd (v128.load (local.get $x)) "
         f"(v128.load (local.get $y)) (local.get $acc)))"],
        [f"(local.set $sum ({t}.add (local.get $sum) ({t}.mul ({t}.load (local.get $x)) "
         f"({t}.load (local.get $y)))))"])
    return _function(f"(func $dot (param $x i32) (param $y i32) (param $n i32) (result {t})",
                     ["x.y of two runs of n values"],
                     f"(local $end i32) (local $acc v128) (local $sum {t})", [], body,
                     f"({t}.add {_hsum(ft, 'acc')} (local.get $sum))")


def _axpy(ft: FloatType) -> str:
    t, v = ft.name, ft.vec
    body = _lanes_then_scalars(
        ft, ("x", "y"),
        [f"(v128.store (local.get $y) ({v}.add (v128.load (local.get $y)) "
         f"({v}.mul (local.get $va) (v128.load (local.get $x)))))"],
        [f"({t}.store (local.get $y) ({t}.add ({t}.load (local.get $y)) "
         f"({t}.mul (local.get $a) ({t}.load (local.get $x)))))"])
    return _function(f"(func $axpy (param $x i32) (param $y i32) (param $n i32) (param $a {t})",
                     ["y <- y + a x over two runs of n values"], "(local $end i32) (local $va v128)",
                     [f"(local.set $va ({v}.splat (local.get $a)))"], body)


def _scale(ft: FloatType) -> str:
    t, v = ft.name, ft.vec
    body = _lanes_then_scalars(
        ft, ("x",),
        [f"(v128.store (local.get $x) ({v}.mul (local.get $va) (v128.load (local.get $x))))"],
        [f"({t}.store (local.get $x) ({t}.mul (local.get $a) ({t}.load (local.get $x))))"])
    return _function(f"(func $scale (param $x i32) (param $n i32) (param $a {t})",
                     ["x <- a x over a run of n values"], "(local $end i32) (local $va v128)",
                     [f"(local.set $va ({v}.splat (local.get $a)))"], body)


def _dot_axpy(ft: FloatType) -> str:
    t, v = ft.name, ft.vec
    body = _lanes_then_scalars(
        ft, ("x", "y", "z"),
        ["(local.set $a (v128.load (local.get $x)))",
         f"(local.set $acc ({v}.relaxed_madd (local.get $a) (v128.load (local.get $y)) (local.get $acc)))",
         f"(v128.store (local.get $z) ({v}.relaxed_madd (local.get $vs) (local.get $a) "
         "(v128.load (local.get $z))))"],
        [f"(local.set $sa ({t}.load (local.get $x)))",
         f"(local.set $sum ({t}.add (local.get $sum) ({t}.mul (local.get $sa) ({t}.load (local.get $y)))))",
         f"({t}.store (local.get $z) ({t}.add ({t}.load (local.get $z)) ({t}.mul (local.get $s) (local.get $sa))))"])
    return _function(
        f"(func $dot_axpy (param $x i32) (param $y i32) (param $z i32) (param $n i32) (param $s {t}) (result {t})",
        ["x.y, and z <- z + s x, in one pass over x (a symmetric matrix-vector product",
         "from one triangle: a row's dot product and its column's update)"],
        f"(local $end i32) (local $a v128) (local $acc v128) (local $vs v128) (local $sa {t}) (local $sum {t})",
        [f"(local.set $vs ({v}.splat (local.get $s)))"], body,
        f"({t}.add {_hsum(ft, 'acc')} (local.get $sum))")


def _axpy2(ft: FloatType) -> str:
    t, v = ft.name, ft.vec
    body = _lanes_then_scalars(
        ft, ("x", "y", "z"),
        [f"(v128.store (local.get $z) ({v}.relaxed_madd (local.get $va) (v128.load (local.get $x)) "
         f"({v}.relaxed_madd (local.get $vb) (v128.load (local.get $y)) (v128.load (local.get $z)))))"],
        [f"({t}.store (local.get $z) ({t}.add ({t}.add ({t}.load (local.get $z)) "
         f"({t}.mul (local.get $b) ({t}.load (local.get $y)))) ({t}.mul (local.get $a) ({t}.load (local.get $x)))))"])
    return _function(
        f"(func $axpy2 (param $x i32) (param $y i32) (param $z i32) (param $n i32) (param $a {t}) (param $b {t})",
        ["z <- z + a x + b y over runs of n values (a rank-2 update of a row)"],
        "(local $end i32) (local $va v128) (local $vb v128)",
        [f"(local.set $va ({v}.splat (local.get $a)))", f"(local.set $vb ({v}.splat (local.get $b)))"],
        body)


FUNCTIONS: dict[str, Callable[[FloatType], str]] = {
    "rot": _rot, "dot": _dot, "axpy": _axpy, "scale": _scale, "dot_axpy": _dot_axpy,
    "axpy2": _axpy2,
}


def functions(code: str, ft: FloatType) -> list[str]:
    """The texts of the functions `code` calls (`call $rot`, ...), each once."""
    return [FUNCTIONS[name](ft) for name in FUNCTIONS if re.search(rf"call \${name}\b", code)]

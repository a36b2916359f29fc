"""Tracers and the trace stack (Autodidax's design), and the one dispatch point.

`bind(prim, *args)` finds the innermost active transformation among its
arguments, lifts every argument into that trace and lets the trace process
the primitive. With no transformation active, EvalTrace runs the primitive's
lowering on concrete Arrays (lazily, so it fuses).
"""
from __future__ import annotations

import contextlib
import itertools
import linecache
import operator
import sys
from types import FrameType
from typing import Any, Callable, Iterator, Optional, Sequence

from jaxlab import state
from jaxlab.array import Array, ArrayBase, wrap
from jaxlab.core.avals import ShapedArray
from jaxlab.core.primitives import Primitive, lower, results_weak
from jaxlab import events
from jaxlab.engine.lazy import Lazy, is_constant, merge_origins
from jaxlab.errors import ConcretizationTypeError
from jaxlab.ir import provenance
from jaxlab.ir.provenance import Origin, SourceInfo


class MainTrace:
    def __init__(self, level: int, trace_type: type, global_data: Any = None) -> None:
        self.level, self.trace_type, self.global_data = level, trace_type, global_data


class Trace:
    def __init__(self, main: MainTrace) -> None:
        self.main = main

    def pure(self, val: Any) -> Any:
        raise NotImplementedError

    lift = pure

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        raise NotImplementedError


class Tracer(ArrayBase):
    """A value inside a transformation; jaxlab.numpy treats it like an Array."""

    __slots__ = ("_trace",)

    @property
    def aval(self) -> ShapedArray:
        raise NotImplementedError

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def jdtype(self):
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    def full_lower(self) -> Any:
        return self

    def concrete_value(self) -> Optional[Array]:
        """The value when it is known while tracing (a JVP tracer's primal under grad),
        else None: Python may then branch on it, as in JAX."""
        return None

    def _concrete(self, what: str, convert: Optional[Callable[[Array], Any]]) -> Any:
        """convert(the known value); without one (NumPy conversion) always an error."""
        value = self.concrete_value() if convert is not None else None
        if value is not None:
            return convert(value)
        raise ConcretizationTypeError(
            f"{what} of a traced value {self.aval.str_short()} "
            f"(inside {type(self._trace).__name__[:-5].lower() or 'a'} tracing) at "
            f"{user_line()}. The value is not known while the function is being "
            f"traced.{self.provenance()} Use jaxlab.lax.cond / jnp.where instead of Python "
            f"control flow, or mark the argument static (jit's static_argnums).")

    def provenance(self) -> str:
        """Why the value is unknown, as a clause (staging traces name the arguments)."""
        return ""

    def __bool__(self) -> bool:
        return self._concrete("bool()", bool)

    def __float__(self) -> float:   # JAX refuses float() even of a known value
        return self._concrete("float()", None)

    def __int__(self) -> int:
        return self._concrete("int()", int)

    def __index__(self) -> int:
        return self._concrete("using as an index", operator.index)

    def item(self) -> Any:
        return self._concrete("item()", lambda v: v.item())

    def __array__(self, dtype: Any = None, copy: Any = None):
        return self._concrete("np.asarray()", None)   # as JAX: even a known value

    def tolist(self) -> Any:
        return self._concrete("tolist()", None)

    def __repr__(self) -> str:
        return f"Traced<{self.aval.str_short()}>with<{type(self._trace).__name__}>"


def is_jaxlab_module(name: str) -> bool:
    return name == "jaxlab" or name.startswith("jaxlab.")


def user_frame(frame: Optional[FrameType]) -> Optional[FrameType]:
    """The innermost frame from `frame` outwards whose module is not jaxlab's own:
    by module identity, so user code in any folder named `jaxlab` is the user's."""
    while frame is not None and is_jaxlab_module(frame.f_globals.get("__name__", "")):
        frame = frame.f_back
    return frame


def source_info() -> Optional[SourceInfo]:
    """The user's line that called into jaxlab, as an equation's source_info."""
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return None
    code = frame.f_code
    position = next(itertools.islice(code.co_positions(), frame.f_lasti // 2, None), None)
    line = frame.f_lineno
    column = position[2] if position and position[0] == line and position[2] is not None else 0
    return SourceInfo(code.co_filename, line, column, code.co_qualname)


def user_line() -> str:
    """`file:line (source)` of the user's own line that called into jaxlab."""
    frame = user_frame(sys._getframe(1))
    if frame is None:
        return "<unknown>"
    filename, lineno = frame.f_code.co_filename, frame.f_lineno
    return f"{filename}:{lineno} ({linecache.getline(filename, lineno).strip()})"


class EvalTrace(Trace):
    """No transformation: run the primitive's lowering on Arrays."""

    def pure(self, val: Any) -> Any:
        return val

    lift = pure

    def process_primitive(self, prim: Primitive, tracers: list, params: dict) -> list:
        ins = [t._lazy for t in tracers]
        if events.listening():   # someone shows kernels: say which line each came from
            from jaxlab.core.jaxpr import equation_text   # (jaxpr.py imports this module)
            origin = Origin(equation_text(prim, params), source_info())
            with provenance.equation(origin):
                out = lower(prim, ins, params)
            for o in out if prim.multiple_results else [out]:
                note_origin(o, ins, origin)
        else:
            out = lower(prim, ins, params)
        outs = list(out) if prim.multiple_results else [out]
        weak = results_weak(prim, [t._weak for t in tracers], params, len(outs))
        return [wrap(o, w) for o, w in zip(outs, weak)]


# Evaluation is level 0, below the transformations active in this context
# (state.trace_stack: each thread and asyncio task has its own, so a grad in one thread
# never sees another thread's jit tracing).
_EVAL = MainTrace(0, EvalTrace)


@contextlib.contextmanager
def new_main(trace_type: type, global_data: Any = None) -> Iterator[MainTrace]:
    stack = state.trace_stack.get()
    main = MainTrace(len(stack) + 1, trace_type, global_data)
    with state.trace_stack.scoped(stack + (main,)):
        yield main


@contextlib.contextmanager
def new_dynamic(main: Optional[MainTrace]) -> Iterator[None]:
    """Inside, `main` (a staging trace) captures every bind."""
    with state.dynamic_trace.scoped(main):
        yield


def find_top_trace(xs: Sequence[Any]) -> Trace:
    top = max((x._trace.main for x in xs if isinstance(x, Tracer)),
              default=_EVAL, key=lambda m: m.level)
    dynamic = state.dynamic_trace.get()
    if dynamic is not None and dynamic.level > top.level:
        top = dynamic
    return top.trace_type(top)


def full_raise(trace: Trace, val: Any) -> Any:
    if not isinstance(val, Tracer):
        if not isinstance(val, Array):
            raise TypeError(f"expected a jaxlab array, got {type(val).__name__}")
        return trace.pure(val)
    level = trace.main.level
    if val._trace.main is trace.main:
        return val
    if val._trace.main.level < level:
        return trace.lift(val)
    raise RuntimeError(f"a value from an inner transformation escaped its scope: {val} "
                       f"(did a traced value leak out of a jit/grad/vmap function?)")


def note_origin(out: Lazy, ins: Sequence[Lazy], origin: Origin) -> None:
    """`out` (not yet computed) was made by `origin` from `ins`."""
    if out.buffer is None:
        out.origin = merge_origins(*ins) + (origin,)


def full_lower(val: Any) -> Any:
    return val.full_lower() if isinstance(val, Tracer) else val


def bind(prim: Primitive, *args: Any, **params: Any) -> Any:
    for a in args:
        if not isinstance(a, ArrayBase):
            raise TypeError(f"{prim.name}: expected jaxlab arrays, got {type(a).__name__}")
    trace = find_top_trace(args)
    if len(args) > 1 and isinstance(trace, EvalTrace):
        mismatch = _device_mismatch(prim, args)
        if mismatch is not None:
            raise mismatch       # here, near the user's call, not deep in the engine
    tracers = [full_raise(trace, a) for a in args]
    outs = trace.process_primitive(prim, tracers, params)
    outs = [full_lower(o) for o in outs]
    return tuple(outs) if prim.multiple_results else outs[0]


def _device_mismatch(prim: Primitive, arrays: tuple) -> Optional[ValueError]:
    """JAX's ValueError for committed arrays on different devices, naming both operands.

    Constants (no buffers yet) follow the data, so only arrays holding data count."""
    placed = [(i, a) for i, a in enumerate(arrays) if not is_constant(a._lazy)]
    first_i, first = placed[0] if placed else (0, None)
    other = next(((i, a) for i, a in placed if a._lazy.device is not first._lazy.device), None)
    if other is None:
        return None
    other_i, second = other
    return ValueError(
        f"Received incompatible devices for {prim.name}: argument {first_i} is "
        f"{placement(first)} and argument {other_i} is {placement(second)}. "
        f"Put both on one device first, e.g. "
        f"jaxlab.device_put(x, jaxlab.devices({first._lazy.device.platform!r})[0]).")


def placement(array: Array) -> str:
    """`float32[2, 3] on WasmDevice(id=0)`: what an array is and where its data lives."""
    return f"{array.jdtype.name}{list(array.shape)} on {array._lazy.device}"


def get_aval(x: Any) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, Array):
        return ShapedArray(x.shape, x.jdtype, x._weak)
    raise TypeError(f"expected a jaxlab array, got {type(x).__name__}")

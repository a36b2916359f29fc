"""A jit program's launches bound once to its buffers and replayed as C calls.

A warm jit call on webgpu used to go launcher by launcher: per kernel a few
checks, a bind-group cache lookup (a tuple of the bound buffers hashed), a
pipeline lookup and three recorded commands, several microseconds of Python
each; a 30-kernel training step spent more host time than an H200 spent
running it. A call of a program binds the same arena, constants and scratch
every time, and its inputs and outputs come back from the buffer pool call
after call (a training loop alternates between two sets). So a ProgramReplay
binds every launch once per set of input and output buffers (its bind groups,
pipelines, grids packed as wgpu-native handles by fastpass) and a call records
the packed list into the open compute pass: three C calls a launch and no
Python object made. Threads: a replay belongs to one runner of the program
(engine/prepared.py), which a stateless program shares between threads, so its
state changes only under the device's lock; its scratch
buffers, held for the replay's life instead of taken from the pool per launch,
are written and read within one launch's passes, and launches run in the order
the lock recorded them.

The GPU starts on a call only at its submit, so the recording (encoder, launches,
finish) delays it. Where a call's launches went into a command buffer of their own,
the replay records the next call's right after the submit, while the GPU runs this
one, for the buffers the next call will most likely bind (`_record_next`); a next
call with exactly those buffers only submits it, any other drops it and records as
before. A command buffer binds buffers, not their contents, so it reads whatever the
call's inputs hold when it is submitted. None of its buffers can have been destroyed
meanwhile: the key's equality means the call holds them, and the pool destroys only
buffers it holds.
"""
from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from jaxlab.backends.webgpu.buffers import GpuBuffer
from jaxlab.backends.webgpu.plan import Plan

if TYPE_CHECKING:
    from jaxlab.backends.webgpu.runtime import WebGpuBackend

BINDINGS_KEPT = 8   # buffer sets bound per runner (a training loop cycles through 2-3)


class ProgramReplay:
    """`replay(handles)` records the program's launches with `handles` in the table's
    first places (the call's inputs and outputs); False when it cannot (the device was
    replaced since), and the caller takes the launcher path, which reports why."""

    def __init__(self, backend: "WebGpuBackend", launches: Sequence[tuple[Plan, list, list]],
                 table: Sequence[Any]) -> None:
        self._backend = backend
        self._generation = backend._generation
        self._launches = launches
        self._table = list(table)
        self._scratch: list[list[GpuBuffer]] = []   # each launch's, made on the first bind
        self._bound: "OrderedDict[tuple, tuple[list, list]]" = OrderedDict()
        self._last: Any = None                   # the last call's binding key
        self._next: dict[Any, Any] = {}          # binding key -> the one that came next
        # (binding key, command buffer, its release) recorded for the next call
        self._ahead: Optional[tuple[Any, Any, Callable[[Any], None]]] = None

    def __call__(self, handles: Sequence[GpuBuffer]) -> bool:
        backend = self._backend
        if backend._generation != self._generation:
            return False
        key = backend.binding_key(handles)
        with backend._lock:
            bound = self._bound.get(key)
            if bound is None:
                if any(h.generation != self._generation for h in handles):
                    return False
                bound = self._bind(handles)
                self._bound[key] = bound
                if len(self._bound) > BINDINGS_KEPT:
                    self._next.pop(self._bound.popitem(last=False)[0], None)
            if backend._replay(*bound, self._take_ahead(key)):
                self._record_next(key)
        return True

    def _take_ahead(self, key: Any) -> Any:
        """The command buffer recorded ahead for this call, if it guessed its buffers."""
        ahead, self._ahead = self._ahead, None
        if ahead is None:
            return None
        if ahead[0] == key:
            return ahead[1]
        ahead[2](ahead[1])
        return None

    def _record_next(self, key: Any) -> None:
        """Record the next call now, while the GPU runs this one, for the buffers that
        followed this call's the last time: a loop's calls cycle through a few sets
        (the same one when each call's outputs are freed before the next: the pool
        hands them back; two sets when each step's results feed the next; more where
        outputs of one size trade places in the pool)."""
        if self._last is not None:
            self._next[self._last] = key
        self._last = key
        guess = self._next.get(key)
        if guess is not None and guess in self._bound:
            recorded = self._backend._record_ahead(self._bound[guess][0])
            if recorded is not None:
                self._ahead = (guess, *recorded)

    def _bind(self, handles: Sequence[GpuBuffer]) -> tuple[list, list]:
        """(packed launches, the pipelines and bind groups they use: held with them)."""
        backend = self._backend
        if not self._scratch:
            self._scratch = [[backend.allocate(n) for n in plan.scratch]
                             for plan, _, _ in self._launches]
        table = self._table.copy()
        table[:len(handles)] = handles
        work = []
        with backend._guard("binding a jit program's buffers"):
            self._bind_work(table, work)
        return backend._pack(work), [(pipeline, group) for pipeline, group, _ in work]

    def _bind_work(self, table: list, work: list) -> None:
        backend = self._backend
        for (plan, ins, outs), scratch in zip(self._launches, self._scratch):
            bound = [table[x] for x in ins] + [table[o] for o in outs] + scratch
            for p in plan.passes:
                pipeline, layout = backend._pipeline(p)
                work.append((pipeline, backend._bind_group(layout, p, bound), p.program.grid))

    def __del__(self) -> None:
        if self._ahead is not None:
            self._ahead[2](self._ahead[1])
        for scratch in self._scratch:
            for h in scratch:
                self._backend.free(h)

"""The one helper that pauses Python's cyclic garbage collector around a burst of allocation.

Data flow: none; callers wrap work in `with gc_paused():`.  Loading a vocabulary (registry,
files, gguf, train) makes some 10^5 objects (token bytes, texts, dict entries); encoding or
counting a big text (core, stream) makes thousands of small containers that live until the call
returns (the ids of each merged piece); building masks or a compiled schema (constrain) makes
many expressions and derivative rows.  None of these form reference cycles, yet every 700
allocations set off a young-generation collection that walks them all and finds no garbage:
~20 % of a load, 4-17 ms per MB of encoded text natively (12-26 ms under Pyodide), up to half
of a first mask on a large JSON schema.  Pausing loses nothing; the collector is resumed on the
way out if it was running on the way in.
"""

from __future__ import annotations

import gc

__all__ = ["gc_paused"]


class gc_paused:
    """`with gc_paused():` -- the collector paused for the block, resumed after it if it ran
    before.  (A class, not a generator: leaving a generator-based context manager allocates its
    StopIteration right after the collector is back on, which alone can set off the collection
    of everything the block made.)"""

    __slots__ = ("_was",)

    def __enter__(self) -> None:
        self._was = gc.isenabled()
        if self._was:
            gc.disable()

    def __exit__(self, *exc) -> None:
        if self._was:
            gc.enable()

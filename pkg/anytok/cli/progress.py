"""The live status line of `count` on stderr: only on a terminal, only once the work has taken
a moment (small work shows nothing), redrawn at most ten times a second, erased at the end."""

from __future__ import annotations

import sys
import time

SHOW_AFTER = 0.5  # seconds
EVERY = 0.1


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"


def _tokens(n: int) -> str:
    if n >= 10**6:
        return f"{n / 10**6:.1f}M"
    if n >= 10**4:
        return f"{n / 10**3:.0f}k"
    return str(n)


class Progress:
    def __init__(self, enabled: bool, total_files: int | None, total_bytes: int | None, stream=None):
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.total_files = total_files
        self.total_bytes = total_bytes
        self.files = 0
        self.bytes = 0
        self.tokens = 0
        self.start = time.monotonic()
        self.last = 0.0
        self.shown = False

    def advance(self, files: int = 0, nbytes: int = 0, tokens: int = 0) -> None:
        self.files += files
        self.bytes += nbytes
        self.tokens += tokens
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < SHOW_AFTER or now - self.last < EVERY:
            return
        self.last = now
        self.stream.write("\r\x1b[K" + self.line(now))
        self.stream.flush()
        self.shown = True

    def line(self, now: float) -> str:
        elapsed = max(now - self.start, 1e-9)
        rate = self.bytes / elapsed
        files = f"{self.files}/{self.total_files} files" if self.total_files else f"{self.files} files"
        parts = [files, _size(self.bytes), f"{_tokens(self.tokens)} tokens", f"{_size(rate)}/s"]
        if self.total_bytes and rate > 0 and self.bytes < self.total_bytes:
            eta = (self.total_bytes - self.bytes) / rate
            parts.append(f"ETA {eta:.0f}s" if eta < 100 else f"ETA {eta / 60:.0f}min")
        return " · ".join(parts)

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self.shown = False

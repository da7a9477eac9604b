"""Errors raised while building a constraint.

Every error is raised when the constraint is built (`constrain.regex(...)` and friends), never
while masks are computed: a constraint that builds is fully supported, so a mask is never wrong
because of a half-understood pattern.
"""

from __future__ import annotations


class ConstraintError(ValueError):
    """Base class: the constraint cannot be built."""


class RegexSyntaxError(ConstraintError):
    """The regular expression is malformed (as Rust's regex-syntax would reject it)."""

    def __init__(self, message: str, pattern: str, pos: int):
        super().__init__(f"{message} at offset {pos} in regex {pattern!r}")
        self.pattern = pattern
        self.pos = pos


class UnsupportedFeatureError(ConstraintError, NotImplementedError):
    """The constraint uses a feature anytok does not implement yet; `feature` names it."""

    def __init__(self, feature: str, detail: str = ""):
        msg = f"unsupported by anytok.constrain: {feature}"
        super().__init__(msg + (f" ({detail})" if detail else ""))
        self.feature = feature

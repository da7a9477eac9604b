"""`.gitignore` patterns, as git reads them (gitignore(5)), compiled to `re` patterns.

A pattern file is a list of rules; each rule matches a path relative to the folder that holds
the file.  For one path, the last rule that matches decides (a `!` rule re-includes), and the
rules of a deeper `.gitignore` come after those of the folders above it, so they win.  A folder
that is excluded is not entered at all: as in git, nothing inside it can be re-included.

Syntax handled (all of gitignore(5)): blank lines and `#` comments; `\\#`, `\\!`, `\\ ` and
other backslash escapes; trailing spaces dropped unless escaped; `!` negation; a trailing `/`
(folders only); a `/` at the start or in the middle anchors the rule to its folder, otherwise
it matches at any depth; `*`, `?`, `[...]` (with `!` or `^` for "not", ranges and `[:alpha:]`
style classes) never match `/`; `**/` at the start, `/**` at the end and `/**/` in the middle
span folders; any other `**` is a plain `*`.  Matching is case-sensitive, as git's default on
Linux.  tests/test_cli_walk.py compares the files a walk keeps with `git ls-files`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_CLASSES = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9", "graph": "!-~", "lower": "a-z", "print": " -~", "punct": "!-/:-@\\[-`{-~",
    "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9A-Fa-f",
}


class Rule(NamedTuple):
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    source: str  # the line as written, for messages


def _bracket(glob: str, i: int) -> tuple[str, int] | None:
    """The `re` class for the bracket expression starting at glob[i] == "[", and the index after
    it; None if it is not closed (then "[" is a literal)."""
    j = i + 1
    negate = j < len(glob) and glob[j] in "!^"
    if negate:
        j += 1
    parts: list[str] = []
    first = True
    while j < len(glob):
        c = glob[j]
        if c == "]" and not first:
            body = "".join(parts)
            return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), j + 1
        first = False
        if c == "[" and glob.startswith("[:", j):
            end = glob.find(":]", j + 2)
            if end != -1 and glob[j + 2 : end] in _CLASSES:
                parts.append(_CLASSES[glob[j + 2 : end]])
                j = end + 2
                continue
        if c == "\\" and j + 1 < len(glob):
            j += 1
            c = glob[j]
        if j + 2 < len(glob) and glob[j + 1] == "-" and glob[j + 2] != "]":
            hi = glob[j + 2]
            if hi == "\\" and j + 3 < len(glob):
                hi = glob[j + 3]
                j += 1
            parts.append(f"{re.escape(c)}-{re.escape(hi)}" if c <= hi else "")
            j += 3
            continue
        parts.append(re.escape(c))
        j += 1
    return None


def glob_to_regex(glob: str) -> str:
    """A gitignore glob (no leading `!`, no trailing `/`) -> `re` source matching a whole path."""
    anchored = "/" in glob
    if glob.startswith("/"):
        glob = glob[1:]
    out: list[str] = [] if anchored else ["(?:.*/)?"]
    i = 0
    n = len(glob)
    while i < n:
        c = glob[i]
        if c == "*":
            j = i
            while j < n and glob[j] == "*":
                j += 1
            whole_segment = (i == 0 or glob[i - 1] == "/") and (j == n or glob[j] == "/")
            if j - i >= 2 and whole_segment:
                if j == n:  # "**" at the end: everything below (or everything, alone)
                    out.append(".*")
                else:  # "**/": zero or more folders
                    out.append("(?:.*/)?")
                    j += 1
            else:
                out.append("[^/]*")
            i = j
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            got = _bracket(glob, i)
            if got is None:
                out.append(re.escape(c))
                i += 1
            else:
                out.append(got[0])
                i = got[1]
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def parse_line(line: str) -> Rule | None:
    """One line of a .gitignore file -> a Rule, or None for blank lines and comments."""
    line = line.rstrip("\r\n")
    if not line or line.startswith("#"):
        return None
    # Trailing spaces go, unless the last one is escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped != line and stripped.endswith("\\") and not stripped.endswith("\\\\"):
        stripped += " "
    line = stripped
    if not line:
        return None
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    dir_only = line.endswith("/") and not line.endswith("\\/")
    if dir_only:
        line = line.rstrip("/")
    if not line:
        return None
    try:
        regex = re.compile(glob_to_regex(line), re.DOTALL)
    except re.error:  # a pattern git would not match anything with
        return None
    return Rule(regex, negate, dir_only, line)


def parse(text: str) -> list[Rule]:
    return [r for r in map(parse_line, text.splitlines()) if r is not None]


class IgnoreStack:
    """The rules in force in one folder: (base, rules) pairs, outermost first.  `base` is the
    folder's path relative to the walk's root ("" for the root, else ending in "/")."""

    __slots__ = ("layers",)

    def __init__(self, layers: tuple[tuple[str, list[Rule]], ...] = ()):
        self.layers = layers

    def push(self, base: str, rules: list[Rule]) -> "IgnoreStack":
        return IgnoreStack(self.layers + ((base, rules),)) if rules else self

    def ignored(self, rel: str, is_dir: bool) -> bool:
        """Whether `rel` (relative to the walk's root, no trailing slash) is ignored."""
        verdict = False
        for base, rules in self.layers:
            if not rel.startswith(base):
                continue
            sub = rel[len(base):]
            for rule in rules:
                if rule.dir_only and not is_dir:
                    continue
                if rule.regex.fullmatch(sub):
                    verdict = not rule.negate
        return verdict

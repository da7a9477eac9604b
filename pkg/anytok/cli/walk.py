"""From the paths on the command line to the files to count.

A file named on the command line is always taken.  A folder is walked recursively, in name
order, as ripgrep and tokei walk one: `.gitignore` files at every level (and, in a git
repository, those of the folders above up to its top, and `.git/info/exclude`) exclude what
they match; `.git` folders are never entered; hidden entries (names starting with ".") are
left out unless `hidden`; symbolic links are not followed; `--include` globs keep only the
files they match and `--exclude` globs drop files and folders (both in .gitignore syntax,
matched against the path below the walked folder).  Paths come out joined to the folder as
it was given, so `anytok count src/` lists `src/a.py`.
"""

from __future__ import annotations

import os
from typing import Iterator, NamedTuple

from . import gitignore


class Found(NamedTuple):
    path: str  # as shown to the user
    size: int
    explicit: bool  # named on the command line (not found by a walk)


class Problem(NamedTuple):
    path: str
    reason: str


def _read_rules(path: str) -> list[gitignore.Rule]:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return gitignore.parse(f.read())
    except OSError:
        return []


def _git_top(folder: str) -> str | None:
    """The top folder of the git work tree holding `folder`, if any."""
    d = os.path.abspath(folder)
    while True:
        if os.path.exists(os.path.join(d, ".git")):
            return d
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


class Walker:
    def __init__(self, *, hidden: bool = False, gitignore_files: bool = True,
                 include: list[str] = (), exclude: list[str] = ()):
        self.hidden = hidden
        self.use_gitignore = gitignore_files
        self.include = [r for r in map(gitignore.parse_line, include) if r is not None]
        self.exclude = [r for r in map(gitignore.parse_line, exclude) if r is not None]

    def paths(self, args: list[str]) -> Iterator[Found | Problem]:
        for arg in args:
            try:
                st = os.stat(arg)
            except OSError as e:
                yield Problem(arg, e.strerror or str(e))
                continue
            if os.path.isdir(arg):
                yield from self._walk_root(arg)
            else:
                yield Found(arg, st.st_size, True)

    def _initial_stack(self, root: str) -> tuple[gitignore.IgnoreStack, str]:
        """Rules from above `root` (within its git work tree) and the prefix of root's own path
        relative to the anchor the rules are written against."""
        stack = gitignore.IgnoreStack()
        if not self.use_gitignore:
            return stack, ""
        top = _git_top(root)
        if top is None:
            return stack, ""
        rel_root = os.path.relpath(os.path.abspath(root), top)
        prefix = "" if rel_root == "." else rel_root.replace(os.sep, "/") + "/"
        stack = stack.push("", _read_rules(os.path.join(top, ".git", "info", "exclude")))
        # .gitignore files of the folders from the top down to (not including) root.
        d, base = top, ""
        parts = [p for p in prefix.split("/") if p]
        for part in parts:
            stack = stack.push(base, _read_rules(os.path.join(d, ".gitignore")))
            d = os.path.join(d, part)
            base += part + "/"
        return stack, prefix

    def _excluded(self, sub: str, is_dir: bool) -> bool:
        verdict = False
        for rule in self.exclude:
            if rule.dir_only and not is_dir:
                continue
            if rule.regex.fullmatch(sub):
                verdict = not rule.negate
        return verdict

    def _included(self, sub: str) -> bool:
        if not self.include:
            return True
        verdict = False
        for rule in self.include:
            if rule.regex.fullmatch(sub):
                verdict = not rule.negate
        return verdict

    def _walk_root(self, root: str) -> Iterator[Found | Problem]:
        stack, prefix = self._initial_stack(root)
        yield from self._walk(root, "", prefix, stack)

    def _walk(self, folder: str, sub: str, prefix: str, stack: gitignore.IgnoreStack) -> Iterator[Found | Problem]:
        """`folder` as shown; `sub` its path below the walked root ("" or ending in "/");
        `prefix` + `sub` its path relative to the anchor of the ignore rules."""
        if self.use_gitignore:
            stack = stack.push(prefix + sub, _read_rules(os.path.join(folder, ".gitignore")))
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as e:
            yield Problem(folder, e.strerror or str(e))
            return
        for entry in entries:
            name = entry.name
            if name == ".git" or (not self.hidden and name.startswith(".")):
                continue
            try:
                if entry.is_symlink():
                    continue
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError as e:
                yield Problem(os.path.join(folder, name), e.strerror or str(e))
                continue
            rel = sub + name
            if stack.ignored(prefix + rel, is_dir) or self._excluded(rel, is_dir):
                continue
            shown = os.path.join(folder, name)
            if is_dir:
                yield from self._walk(shown, rel + "/", prefix, stack)
            elif entry.is_file(follow_symlinks=False) and self._included(rel):
                try:
                    size = entry.stat(follow_symlinks=False).st_size
                except OSError as e:
                    yield Problem(shown, e.strerror or str(e))
                    continue
                yield Found(shown, size, False)

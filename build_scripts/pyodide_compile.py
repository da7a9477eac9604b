"""Compile the .py files of a zip to .pyc, under the Python that runs this script.

    (under Pyodide, through pyodide_run.mjs) pyodide_compile.py MODE IN.zip OUT.zip

build_web.py runs this with Pyodide's own CPython, so the bytecode's magic number and the
compiler are exactly those of the interpreter that loads it in the browser.  OUT.zip holds only
the compiled files, as unchecked hash-based .pyc (PEP 552): the importer uses them without
reading or stat-ing any source, which is the point (the browser's Python spends most of its
start compiling), and a .pyc's bytes depend only on its source, not on any file time.

MODE names where the .pyc go and which file name the code objects carry (tracebacks):
  stdlib   `json/__init__.py` -> `json/__init__.pyc` beside it (zipimport's layout), compiled as
           `/lib/python3XY.zip/json/__init__.py`, where Pyodide mounts the standard library.
  package  `anytok/core.py` -> `anytok/__pycache__/core.cpython-3XY.pyc` (the layout the
           file-system importer reads, for a wheel unpacked into site-packages), compiled as
           that file's path under site-packages.
  checked  as `package`, but a *checked* hash-based .pyc: the importer hashes the source and
           uses the .pyc only if it matches (for a module whose source a page may replace: the
           worker's glue).

Two more modes write sources, not .pyc, each under its own name: the same code with no
comments and no layout of its own (`ast.unparse` of its tree, by this interpreter, which
parses every syntax of the Python that will run it), checked to parse back to the same tree:
  unparse         docstrings kept (the standard library's lazily fetched part: ~22 % fewer
                  deflated bytes)
  unparse-nodocs  docstrings dropped too (jinja2 and markupsafe, which never read their own)
"""

import ast

import importlib.util
import sys
import sysconfig
import zipfile
from importlib._bootstrap_external import _code_to_hash_pyc


def target(mode: str, name: str) -> tuple[str, str]:
    """(name of the .pyc in OUT.zip, file name the code carries) for the source `name`."""
    if mode == "stdlib":
        major, minor = sys.version_info[:2]
        return name[:-3] + ".pyc", f"/lib/python{major}{minor}.zip/{name}"
    if mode in ("package", "checked"):
        return importlib.util.cache_from_source(name), f"{sysconfig.get_path('purelib')}/{name}"
    raise SystemExit(f"pyodide_compile: unknown mode {mode!r}")


def _docstring_free(tree: ast.Module) -> ast.Module:
    for node in ast.walk(tree):
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
                and isinstance(node.body[0].value.value, str)):
            node.body = node.body[1:] or [ast.Pass()]
    return tree


def unparsed(source: bytes, name: str, docstrings: bool) -> bytes:
    tree = ast.parse(source, name)
    if not docstrings:
        tree = _docstring_free(tree)
    text = ast.unparse(tree) + "\n"
    if ast.dump(ast.parse(text)) != ast.dump(tree):
        raise SystemExit(f"pyodide_compile: {name} does not unparse to the same code")
    return text.encode()


def main() -> None:
    mode, src, dst = sys.argv[1:4]
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            if not info.filename.endswith(".py"):
                continue
            source = zin.read(info)
            if mode in ("unparse", "unparse-nodocs"):
                out = zipfile.ZipInfo(info.filename, date_time=info.date_time)
                out.external_attr = 0o644 << 16
                out.compress_type = zipfile.ZIP_DEFLATED
                zout.writestr(out, unparsed(source, info.filename, mode == "unparse"))
                continue
            pyc_name, file_name = target(mode, info.filename)
            code = compile(source, file_name, "exec", dont_inherit=True)
            data = _code_to_hash_pyc(code, importlib.util.source_hash(source), checked=mode == "checked")
            out = zipfile.ZipInfo(pyc_name, date_time=info.date_time)
            out.external_attr = 0o644 << 16
            out.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(out, bytes(data))


main()

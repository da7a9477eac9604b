// Run a Python script under Pyodide's own CPython, in Node, with a host folder mounted.
//
//   node build_scripts/pyodide_run.mjs PYODIDE_DIR HOST_DIR SCRIPT.py [ARGS...]
//
// PYODIDE_DIR is the npm package's folder (web/node_modules/pyodide).  HOST_DIR is mounted at
// /host (NODEFS), so the script reads its inputs and writes its outputs there; sys.argv is
// [SCRIPT.py, ARGS...].  Used by build_web.py to compile .pyc files with exactly the
// interpreter that will load them in the browser.  A Python exception exits with status 1.
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const [pyodideDir, hostDir, script, ...args] = process.argv.slice(2);
if (!script) {
  console.error("usage: node pyodide_run.mjs PYODIDE_DIR HOST_DIR SCRIPT.py [ARGS...]");
  process.exit(2);
}
const { loadPyodide } = await import(resolve(pyodideDir, "pyodide.mjs"));
// PYTHONNODEBUGRANGES set here is passed on: code compiled under it carries line numbers but no
// column ranges (build_web.py's .pyc: a quarter smaller; tracebacks lose only their ^^^ marks).
const env = process.env.PYTHONNODEBUGRANGES ? { PYTHONNODEBUGRANGES: process.env.PYTHONNODEBUGRANGES } : {};
const py = await loadPyodide({ indexURL: resolve(pyodideDir) + "/", env, stdout: (s) => console.log(s), stderr: (s) => console.error(s) });
py.FS.mkdirTree("/host");
py.FS.mount(py.FS.filesystems.NODEFS, { root: resolve(hostDir) }, "/host");
py.globals.set("_argv", py.toPy([script, ...args]));
try {
  py.runPython("import sys; sys.argv = list(_argv); del _argv");
  py.runPython(readFileSync(script, "utf8"), { filename: script });
} catch (err) {
  console.error(err.message);
  process.exit(1);
}

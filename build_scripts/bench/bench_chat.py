"""Counting a long chat: anytok.chat beside gpt-tokenizer (OpenAI chat) and transformers (templates).

    .venv/bin/python build_scripts/bench/bench_chat.py [--messages 200] [--rounds 5]

A seeded conversation of N messages (system, then alternating user / assistant turns of 1 to 60
lines cut from ../shared/corpora/en_emma.txt) is counted, in this one run:

* OpenAI chat, gpt-4o: `anytok.chat.count` against gpt-tokenizer 4.0.0's `encodeChat(...).length`
  in Node (timed inside Node, module load excluded), both warm (after one call) and cold (the first
  call on fresh text, a new conversation each round: no piece cached);
* chat templates, Qwen 3 and Llama 3.1: `tok.apply_chat_template(messages)` against transformers
  5.23.0's (`return_dict=False`), warm;
* the Llama 3.1 template in a page (headless Chromium, web/dist/ served from 127.0.0.1 as by
  serve_demo.py): `tok.applyChatTemplate` timed in the page: its first use (one short message:
  fetching and importing jinja2, compiling the template), the conversation's first call (its
  text never tokenized before) and then warm, beside transformers' time for the same
  conversation natively (`--no-page` leaves it out).

It prints the median milliseconds of each and the ratio anytok / peer (below 1: anytok faster).
The references come from build_scripts/fetch/fetch_chat.py; Node must be on PATH.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "build_scripts" / d) for d in ("", "bench", "fetch", "gen")]  # build_scripts' folders
from fetch_chat import fetch as fetch_chat  # noqa: E402

NODE_BENCH = r"""
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
const [root, file] = process.argv.slice(2)
const m = await import(pathToFileURL(`${root}/esm/model/gpt-4o.js`).href)
const { warm, cold } = JSON.parse(readFileSync(file, 'utf8'))
const ms = (f) => { const t = performance.now(); const n = f(); return [performance.now() - t, n] }
m.encodeChat(warm)
const out = { warm: [], cold: [], n: 0 }
for (let i = 0; i < cold.length; i++) out.warm.push(ms(() => (out.n = m.encodeChat(warm).length))[0])
for (const c of cold) out.cold.push(ms(() => m.encodeChat(c).length)[0])
process.stdout.write(JSON.stringify(out))
"""


def conversation(rng: random.Random, lines: list[str], n: int) -> list[dict]:
    msgs = [{"role": "system", "content": "You are a careful reader of novels."}]
    for i in range(n - 1):
        start = rng.randrange(0, len(lines) - 60)
        text = "\n".join(lines[start:start + rng.randrange(1, 60)])
        msgs.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return msgs


def median_ms(f, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


PAGE_BENCH = """async ([messages, rounds]) => {
    const { AnyTok } = await import('/anytok.js');
    const text = async (u) => (await fetch(u)).text();
    const tok = await AnyTok.load({ data: await text('/bench-chat/tokenizer.json'),
                                    config: await text('/bench-chat/tokenizer_config.json') });
    let t = performance.now();
    await tok.applyChatTemplate([{ role: 'user', content: 'hi' }]);
    const jinja = performance.now() - t;  // fetching and importing jinja2, compiling the template
    t = performance.now();
    const ids = await tok.applyChatTemplate(messages);
    const first = performance.now() - t;  // the conversation's text tokenized for the first time
    const warm = [];
    for (let i = 0; i < rounds; i++) {
        t = performance.now();
        await tok.applyChatTemplate(messages);
        warm.push(performance.now() - t);
    }
    warm.sort((a, b) => a - b);
    return { ids, jinja, first, warm: warm[Math.floor(warm.length / 2)] };
}"""


def _serve(body: bytes):
    return lambda route: route.fulfill(status=200, body=body)


def page_template(folder: Path, messages: list[dict], rounds: int) -> dict:
    """The Llama 3.1 template's ids and times (ms) in a page: the first call, the median warm one."""
    import bench_common

    with bench_common.dist_page() as page:
        for f in ("tokenizer.json", "tokenizer_config.json"):
            page.route(f"**/bench-chat/{f}", _serve((folder / f).read_bytes()))
        return page.evaluate(PAGE_BENCH, [messages, rounds])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--messages", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--no-page", action="store_true", help="leave out the in-page template timing")
    args = ap.parse_args()
    corpus = ROOT.parent / "shared" / "corpora" / "en_emma.txt"
    lines = [x for x in corpus.read_text(encoding="utf-8").splitlines() if x.strip()]
    rng = random.Random(200)
    warm = conversation(rng, lines, args.messages)
    colds = [conversation(rng, lines, args.messages) for _ in range(args.rounds)]
    folder = fetch_chat()

    import anytok
    from anytok import chat

    chat.count(warm[:2], "gpt-4o")  # load the encoding
    n = chat.count(warm, "gpt-4o")
    ours_warm = median_ms(lambda: chat.count(warm, "gpt-4o"), args.rounds)
    cold_iter = iter(colds)
    ours_cold = median_ms(lambda: chat.count(next(cold_iter), "gpt-4o"), args.rounds)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "input.json"
        data.write_text(json.dumps({"warm": warm, "cold": colds}))
        script = Path(tmp) / "bench.mjs"
        script.write_text(NODE_BENCH)
        out = json.loads(subprocess.run(["node", str(script), str(folder / "gpt-tokenizer"), str(data)],
                                        capture_output=True, text=True, check=True).stdout)
    if out["n"] != n:
        raise SystemExit(f"gpt-tokenizer counts {out['n']}, anytok {n}: not the same chat")
    chars = sum(len(m["content"]) for m in warm)
    print(f"{args.messages} messages, {chars} characters, {n} tokens (gpt-4o); median ms of {args.rounds}")
    print(f"{'':34}{'anytok':>10}{'peer':>10}{'ratio':>8}")
    for label, a, b in (("OpenAI chat warm / gpt-tokenizer", ours_warm, statistics.median(out["warm"])),
                        ("OpenAI chat cold / gpt-tokenizer", ours_cold, statistics.median(out["cold"]))):
        print(f"{label:34}{a:10.2f}{b:10.2f}{a / b:8.2f}")

    import transformers

    for name in ("qwen3", "llama3_1"):
        tok = anytok.load(str(folder / name))
        ref = transformers.AutoTokenizer.from_pretrained(str(folder / name))
        ids = tok.apply_chat_template(warm)
        if ids != ref.apply_chat_template(warm, return_dict=False):
            raise SystemExit(f"{name}: anytok's ids differ from transformers'")
        a = median_ms(lambda: tok.apply_chat_template(warm), args.rounds)
        b = median_ms(lambda: ref.apply_chat_template(warm, return_dict=False), args.rounds)
        label = f"template {name} / transformers"
        print(f"{label:34}{a:10.2f}{b:10.2f}{a / b:8.2f}")
        if name == "llama3_1" and not args.no_page:
            page = page_template(folder / name, warm, args.rounds)
            if page["ids"] != ids:
                raise SystemExit("llama3_1: the page's ids differ from native anytok's")
            print(f"{'template llama3_1 page, 1st use':34}{page['jinja']:10.2f}"
                  "   (one short message: fetching and importing jinja2, compiling the template)")
            for label, ms in (("template llama3_1 page, cold text", page["first"]),
                              ("template llama3_1 page, warm", page["warm"])):
                print(f"{label:34}{ms:10.2f}{b:10.2f}{ms / b:8.2f}   (peer: transformers natively)")


if __name__ == "__main__":
    main()

"""anytok.chat in the page (tok.encodeChat / tok.countChat through the worker) against native
anytok.chat, which tests/test_chat.py checks against gpt-tokenizer and openai-harmony."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from browser_support import CHROMIUM, CHROMIUM_ARGS, JS_LOAD, DemoServer, new_context
from test_chat import _harmony_conversation, _message, _request

from anytok import chat

pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def page():
    assert Path(CHROMIUM).exists(), f"{CHROMIUM} is missing: apt-get install -y chromium (build_scripts/test.sh does)"
    server = DemoServer()
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        ctx, guard = new_context(b)
        pg = ctx.new_page()
        pg.goto(server.url + "anytok-assets.json")
        yield pg
        ctx.close()
        guard.check()
        b.close()
    server.close()


def test_chat_in_the_page_equals_native(page):
    rng = random.Random(77)
    for name in ("o200k_base", "cl100k_base", "o200k_harmony"):
        page.evaluate(JS_LOAD, [name])
    cases = []
    for model, name in (("gpt-4o", "o200k_base"), ("gpt-3.5-turbo", "cl100k_base"), (None, "cl100k_base")):
        messages = [_message(rng, False) for _ in range(4)]
        cases.append({"name": name, "model": model, "messages": messages, "request": _request(rng)})
    harmony = _harmony_conversation(rng)
    got = page.evaluate(
        """async ([cases, harmony]) => {
            const out = [];
            for (const c of cases) {
                const tok = window.toks[c.name];
                const opts = c.model ? { model: c.model } : {};
                out.push({
                    ids: await tok.encodeChat(c.messages, opts),
                    count: await tok.countChat(c.messages, opts),
                    parts: await tok.countChat(c.messages, { ...opts, perMessage: true }),
                    request: await tok.countChat(c.request, opts),
                });
            }
            const h = window.toks.o200k_harmony;
            let wrong = null;
            try { await window.toks.o200k_base.encodeChat([], { model: "gpt-4" }); } catch (e) { wrong = e.message; }
            return { out, harmony: await h.encodeChat(harmony), harmonyCount: await h.countChat(harmony.messages), wrong };
        }""",
        [cases, harmony],
    )
    for c, g in zip(cases, got["out"]):
        model = c["model"] or "gpt-4"
        assert g["ids"] == chat.encode(c["messages"], model)
        assert g["count"] == chat.count(c["messages"], model) == sum(g["parts"])
        assert g["parts"] == chat.message_counts(c["messages"], model)
        assert g["request"] == chat.count_request(c["request"], model)
    assert got["harmony"] == chat.harmony_render(harmony)
    assert got["harmonyCount"] == len(got["harmony"])
    assert "uses cl100k_base" in got["wrong"]

"""anytok.chat in the page (tok.encodeChat / tok.countChat through the worker) against native
anytok.chat, which tests/test_chat.py checks against gpt-tokenizer and openai-harmony."""

from __future__ import annotations

import json
import random

import pytest

from browser_support import JS_LOAD, demo_context
from test_chat import _harmony_conversation, _message, _request, _text

from anytok import chat

pytestmark = pytest.mark.xdist_group("browser")


@pytest.fixture(scope="module")
def browser_context():
    """A browser context and the demo server's address."""
    with demo_context(viewport={"width": 1360, "height": 1000}) as (ctx, url):
        yield ctx, url


@pytest.fixture(scope="module")
def page(browser_context):
    ctx, url = browser_context
    pg = ctx.new_page()
    pg.goto(url + "anytok-assets.json")
    return pg


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


def _shown(page) -> dict:
    """What the Chat view shows once it has counted the current messages."""
    page.wait_for_selector("#chat-view[data-state=ready]", state="attached")
    return page.evaluate("""() => ({
        total: document.getElementById("chat-total").textContent,
        shares: [...document.querySelectorAll("#chat-messages .chat-share")].map((s) => Number(s.dataset.tokens)),
        prime: Number(document.getElementById("chat-prime").dataset.tokens),
        ids: [...document.querySelectorAll("#chat-tokens .t")].map((t) => Number(t.dataset.id)),
        blocks: [...document.querySelectorAll("#chat-tokens .chat-block")].map((b) => b.children.length),
        messages: window.anytokChatDemo.messages.map(({ role, content }) => ({ role, content })),
    })""")


def billed_shares(report: dict, n: int) -> list[int]:
    """Each message's tokens in a request_report (its own part and its images'), then the reply priming."""
    return [sum(p["tokens"] for p in report["parts"] if p["part"].startswith(f"message {i + 1} ("))
            for i in range(n)] + [next(p["tokens"] for p in report["parts"] if p["part"] == "reply priming")]


def _check(shown: dict, messages: list, model: str) -> None:
    assert shown["messages"] == messages
    parts = chat.message_counts(messages, model)
    if model.startswith("gpt-oss"):
        total = chat.count(messages, model)
        assert shown["total"] == f"{total:,}"
        assert shown["shares"] + [shown["prime"]] == parts == shown["blocks"] and sum(parts) == total
        assert shown["ids"] == chat.harmony_render({"messages": messages})
    else:
        # the headline is the request as billed (chat.request_report), its text as ChatML tokens
        report = chat.request_report({"messages": messages}, model)
        assert shown["total"] == f"{report['tokens']:,}"
        assert shown["shares"] + [shown["prime"]] == billed_shares(report, len(messages))
        assert sum(shown["shares"]) + shown["prime"] == report["tokens"]
        assert shown["blocks"] == parts
        assert shown["ids"] == chat.encode(messages, model)


def test_demo_chat_view_counts_a_pasted_conversation_as_native(browser_context):
    # The demo's Chat view: a conversation pasted as JSON, then edited by hand (add, type, move,
    # change a role, remove), counted for every model in the list: the total shown, each
    # message's share and the coloured tokens are native anytok.chat's (tests/test_chat.py
    # checks that against gpt-tokenizer and openai-harmony).
    ctx, url = browser_context
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "?view=chat")
    _check(_shown(page), _shown(page)["messages"], "gpt-4o")  # the example it opens with
    rng = random.Random(36)
    roles = ["system", "user", "assistant", "user", "assistant", "developer", "user"]
    messages = [{"role": r, "content": _text(rng, False) + rng.choice(["", "\nline two", " café 👋"])} for r in roles]
    page.click("#chat-paste")
    page.fill("#chat-json", json.dumps({"messages": messages}))
    page.click("#chat-json-apply")
    options = page.eval_on_selector_all("#chat-model option", "os => os.map((o) => o.value)")
    assert options == ["gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-4.1-mini", "gpt-4", "gpt-3.5-turbo", "gpt-oss-120b"]
    for model in options:
        page.select_option("#chat-model", model)
        _check(_shown(page), messages, model)
    # Edits by hand, on gpt-oss (harmony) then gpt-3.5-turbo.
    page.click("#chat-add")
    page.locator("#chat-messages .chat-content").last.fill("One more question?\nYes.")
    messages.append({"role": "assistant", "content": "One more question?\nYes."})
    rows = page.locator("#chat-messages .chat-row")
    rows.nth(len(messages) - 1).locator(".chat-role").select_option("user")
    messages[-1]["role"] = "user"
    rows.nth(len(messages) - 1).locator(".chat-up").click()
    messages[-2], messages[-1] = messages[-1], messages[-2]
    _check(_shown(page), messages, "gpt-oss-120b")
    page.select_option("#chat-model", "gpt-3.5-turbo")
    page.locator("#chat-messages .chat-row").nth(1).locator(".chat-remove").click()
    del messages[1]
    page.locator("#chat-messages .chat-row").nth(0).locator(".chat-down").click()
    messages[0], messages[1] = messages[1], messages[0]
    _check(_shown(page), messages, "gpt-3.5-turbo")
    # gpt-oss with a reasoning effort and a date: harmony's system message first, counted apart.
    page.select_option("#chat-model", "gpt-oss-120b")
    page.select_option("#chat-effort", "high")
    page.fill("#chat-date", "2025-06-28")
    full = [{"role": "system", "content": [{"type": "system_content", "reasoning_effort": "high",
                                            "conversation_start_date": "2025-06-28"}]}] + messages
    shown = _shown(page)
    parts = chat.message_counts(full, "gpt-oss-120b")
    assert shown["ids"] == chat.harmony_render({"messages": full})
    assert [int(page.get_attribute("#chat-system-share", "data-tokens"))] + shown["shares"] + [shown["prime"]] == parts
    assert shown["total"] == f"{sum(parts):,}" and shown["blocks"] == parts
    page.select_option("#chat-effort", "")
    _check(_shown(page), messages, "gpt-oss-120b")
    # Bad input: a clear message, nothing counted silently.
    page.click("#chat-paste")
    page.fill("#chat-json", "[1, 2")
    page.click("#chat-json-apply")
    assert page.get_attribute("#chat-view", "data-state") == "error"
    assert "Not a conversation" in page.inner_text("#chat-message")
    assert errors == []


# ---- Hugging Face chat templates: tok.applyChatTemplate -------------------------------------

TEMPLATE_PAGE_MODELS = ["llama3_1", "qwen3"]  # (Gemma 3's tokenizer.json is 33 MB: natively only)
RAISES = "{{ raise_exception('roles must alternate user/assistant/user/assistant!') }}"


def _template_cases(rng: random.Random) -> list[dict]:
    """A few conversations with the options that change a template's output (python names)."""
    from test_chat import DOCUMENTS, TOOLS, _template_conversation

    options = [{"add_generation_prompt": True}, {"tools": TOOLS, "add_generation_prompt": True},
               {"enable_thinking": False, "add_generation_prompt": True}, {"documents": DOCUMENTS},
               {"continue_final_message": True}, {}]
    cases = [{"messages": _template_conversation(rng), "options": o, "perMessage": i < 3} for i, o in enumerate(options)]
    # A tool call and its result, and a conversation a template refuses (no user message).
    cases.append({"messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "tool_calls": [{"type": "function", "function": {
            "name": "get_weather", "arguments": {"city": "Paris"}}}]},
        {"role": "tool", "name": "get_weather", "content": "22 C"}],
        "options": {"tools": TOOLS, "add_generation_prompt": True}})
    cases.append({"messages": [{"role": "system", "content": "only a system prompt"}],
                  "options": {"add_generation_prompt": True}})
    cases.append({"messages": [{"role": "user", "content": "hi"}], "options": {"chat_template": RAISES}})
    return cases


def _serve(body: bytes):
    return lambda route: route.fulfill(status=200, body=body, headers={"Content-Type": "application/json"})


def _native_template(tok, case: dict, tokenize: bool):
    try:
        return {"value": tok.apply_chat_template(case["messages"], tokenize=tokenize, **case["options"])}
    except ValueError as e:
        return {"error": str(e)}


JS_TEMPLATE_CASES = """async ([key, cases]) => {
    const names = { add_generation_prompt: "addGenerationPrompt", continue_final_message: "continueFinalMessage",
                    chat_template: "chatTemplate" };
    const out = [];
    for (const c of cases) {
        const opts = Object.fromEntries(Object.entries(c.options).map(([k, v]) => [names[k] ?? k, v]));
        const one = async (tokenize) => {
            try {
                return { value: await window.templateToks[key].applyChatTemplate(c.messages, { ...opts, tokenize }) };
            } catch (e) {
                return { error: e.message, isError: e instanceof Error };
            }
        };
        const parts = c.perMessage ? await window.templateToks[key].applyChatTemplate(c.messages, { ...opts, perMessage: true }) : null;
        out.push({ text: await one(false), ids: await one(true), parts });
    }
    return out;
}"""


def test_apply_chat_template_in_the_page_equals_native(browser_context):
    # tok.applyChatTemplate in the page against native apply_chat_template (which
    # tests/test_chat.py holds equal to transformers 5.23.0's): Llama 3.1 and Qwen 3 templates
    # with tools, a tool call, documents, a generation prompt, enable_thinking, a continued final
    # message, and templates that raise (their own message, as a JS Error).  jinja2 is fetched
    # only when the first template is rendered, once.
    import anytok
    from fetch_chat import fetch as fetch_chat

    ctx, url = browser_context
    page = ctx.new_page()
    requests = []
    ctx.on("request", lambda r: requests.append(r.url))
    folder = fetch_chat()
    for name in TEMPLATE_PAGE_MODELS:
        for f in ("tokenizer.json", "tokenizer_config.json"):
            body = (folder / name / f).read_bytes()
            page.route(f"**/chat-models/{name}/{f}",
                       _serve(body))
    page.goto(url + "anytok-assets.json")
    from test_npm_node import _small_tokenizer_json

    loaded = page.evaluate(
        """async (small) => {
            const { AnyTok } = await import('/anytok.js');
            const text = async (u) => (await fetch(u)).text();
            window.templateToks = {
                // tokenizer.json as text, tokenizer_config.json as a parsed object ...
                llama3_1: await AnyTok.load({ data: await text("/chat-models/llama3_1/tokenizer.json"),
                                             config: JSON.parse(await text("/chat-models/llama3_1/tokenizer_config.json")) }),
                // ... or by URL, with the config's text
                qwen3: await AnyTok.load({ url: "/chat-models/qwen3/tokenizer.json",
                                          config: await text("/chat-models/qwen3/tokenizer_config.json") }),
            };
            const bare = await AnyTok.load({ data: small });  // a tokenizer.json without a config
            let refused = null;
            try { await bare.applyChatTemplate([{ role: "user", content: "hi" }]); } catch (e) { refused = e.message; }
            return { has: Object.values(window.templateToks).map((t) => t.hasChatTemplate), bare: bare.hasChatTemplate, refused };
        }""", _small_tokenizer_json())
    assert loaded["has"] == [True, True] and loaded["bare"] is False
    assert "no chat template" in loaded["refused"]
    assert not [u for u in requests if "/jinja-" in u], requests  # nothing of jinja2 before a template is used
    rng = random.Random(3636)
    compared = raised = 0
    for name in TEMPLATE_PAGE_MODELS:
        tok = anytok.load(str(folder / name))
        cases = _template_cases(rng)
        got = page.evaluate(JS_TEMPLATE_CASES, [name, cases])
        for case, g in zip(cases, got):
            want_text, want_ids = _native_template(tok, case, False), _native_template(tok, case, True)
            if "error" in want_text:
                assert g["text"] == {"error": want_text["error"], "isError": True}, case
                assert g["ids"]["error"] == want_ids["error"], case
                raised += 1
                continue
            assert g["text"] == want_text, case
            assert g["ids"] == want_ids, case
            if case.get("perMessage"):  # what each message adds, and the generation prompt's share
                o = case["options"]
                assert g["parts"] == chat.message_counts(case["messages"], tok, add_generation_prompt=o["add_generation_prompt"],
                                                         **{k: v for k, v in o.items() if k != "add_generation_prompt"})
            compared += 1
    assert compared >= 12 and raised >= 2  # (the raising template, Qwen 3's "No user query found")
    assert any("roles must alternate" in g["text"].get("error", "") for g in got)
    assert len([u for u in requests if "/jinja-" in u]) == 1, requests


def test_demo_chat_view_renders_an_opened_chat_template(browser_context):
    # The Chat view with a Hugging Face tokenizer opened with its tokenizer_config.json (Qwen 3,
    # whose template renders tools): the total, each message's share, the generation prompt's
    # share and the coloured tokens are native anytok.chat's with that tokenizer's template
    # (tests/test_chat.py: as transformers), without and with tools.
    import anytok
    from fetch_chat import fetch as fetch_chat

    ctx, url = browser_context
    folder = fetch_chat() / "qwen3"
    page = ctx.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url + "?view=chat")
    _shown(page)
    page.set_input_files("#chat-template-files", [
        {"name": f, "mimeType": "application/json", "buffer": (folder / f).read_bytes()}
        for f in ("tokenizer.json", "tokenizer_config.json")])
    page.wait_for_function("() => document.getElementById('chat-model').value.startsWith('template:')")
    shown = _shown(page)
    messages = shown["messages"]
    tok = anytok.load(str(folder))
    parts = chat.message_counts(messages, tok)
    assert shown["shares"] + [shown["prime"]] == parts == shown["blocks"]
    assert shown["total"] == f"{chat.count(messages, tok):,}" == f"{sum(parts):,}"
    assert shown["ids"] == tok.apply_chat_template(messages, add_generation_prompt=True)
    assert "chat template" in page.inner_text("#chat-which")
    # The Tools (JSON) field: given to the template (shares and ids with tools) ...
    from test_chat import TOOLS

    page.click(".chat-tools-row summary")
    page.fill("#chat-tools", json.dumps(TOOLS))
    shown = _shown(page)
    assert shown["ids"] == tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True)
    assert shown["shares"] + [shown["prime"]] == chat.message_counts(messages, tok, tools=TOOLS)
    assert shown["ids"] != tok.apply_chat_template(messages, add_generation_prompt=True)  # (the tools are in it)
    # ... and, for an OpenAI model, counted as a Chat Completions request's tools; a message's name
    page.select_option("#chat-model", "gpt-4o")
    page.locator("#chat-messages .chat-name").nth(1).fill("alice")
    named = [dict(m) for m in messages]
    named[1]["name"] = "alice"
    shown = _shown(page)
    assert shown["ids"] == chat.encode(named, "gpt-4o")
    assert shown["blocks"] == chat.message_counts(named, "gpt-4o")
    report = chat.request_report({"messages": named, "tools": TOOLS}, "gpt-4o")
    assert shown["shares"] + [shown["prime"]] == billed_shares(report, len(named))
    assert shown["total"] == f"{report['tokens']:,}"  # the headline includes the tools
    assert int(page.get_attribute("#chat-request", "data-tokens")) == chat.count_request({"messages": named, "tools": TOOLS}, "gpt-4o")
    page.fill("#chat-tools", "[{")
    assert page.get_attribute("#chat-view", "data-state") == "error" and "Tools:" in page.inner_text("#chat-message")
    # only the config: a clear message, nothing counted
    page.set_input_files("#chat-template-files", [
        {"name": "tokenizer_config.json", "mimeType": "application/json", "buffer": (folder / "tokenizer_config.json").read_bytes()}])
    assert page.get_attribute("#chat-view", "data-state") == "error"
    assert "tokenizer.json with its tokenizer_config.json" in page.inner_text("#chat-message")
    assert errors == []

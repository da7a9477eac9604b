"""The demo page's Chat view on real requests, in Chromium: tools, an assistant's tool calls, a
tool message's tool_call_id, content-part arrays, images (pasted as data URLs, picked, dropped)
and parts that are not counted.  Its headline must be native `chat.request_report`'s tokens
(tests/test_chat_request.py holds that equal to gpt-tokenizer's countChatCompletionTokens
where it accepts the request, and checked here too on the request's text), its shares each
message's billed tokens, and what it does not count must be listed on screen."""

from __future__ import annotations

import base64
import io
import json

import pytest

from browser_support import demo_context
from test_chat import TOOLS
from test_chat_browser import _shown, billed_shares
from test_chat_request import _run_node

from anytok import chat

pytestmark = pytest.mark.xdist_group("browser")


def _image(fmt: str, w: int, h: int) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (w, h), (30, 120, 200)).save(out, fmt)
    return out.getvalue()


def _data_url(fmt: str, w: int, h: int) -> str:
    return f"data:image/{fmt.lower()};base64," + base64.b64encode(_image(fmt, w, h)).decode()


@pytest.fixture(scope="module")
def page():
    with demo_context(viewport={"width": 1360, "height": 1000}) as (ctx, url):
        pg = ctx.new_page()
        errors = []
        pg.on("pageerror", lambda e: errors.append(str(e)))
        pg.goto(url + "?view=chat")
        _shown(pg)
        yield pg
        assert errors == []


def _state(page) -> dict:
    shown = _shown(page)
    shown.update(page.evaluate("""() => ({
        request: { ...window.anytokChatDemo.extra, messages: window.anytokChatDemo.messages,
                   ...(window.anytokChatDemo.tools ? { tools: window.anytokChatDemo.tools } : {}) },
        breakdown: document.getElementById("chat-breakdown").textContent,
        notCounted: [...document.querySelectorAll("#chat-not-counted li code")].map((c) => c.textContent),
        notCountedShown: !document.getElementById("chat-not-counted").hidden,
        chips: [...document.querySelectorAll("#chat-messages .chat-image-part, #chat-messages .chat-other-part")]
            .map((c) => c.querySelector(".chat-image-about").textContent),
        marks: document.querySelectorAll("#chat-tokens .chat-image-mark").length,
        status: document.getElementById("chat-message").textContent,
    })"""))
    return shown


def _check(state: dict, model: str) -> dict:
    """The page's numbers against native anytok.chat for the request it holds."""
    request = state["request"]
    report = chat.request_report(request, model)
    assert state["total"] == f"{report['tokens']:,}"
    assert state["shares"] + [state["prime"]] == billed_shares(report, len(request["messages"]))
    assert state["notCounted"] == [x["where"] for x in report["not_counted"]]
    assert state["notCountedShown"] == bool(report["not_counted"])
    text = [{"role": m["role"], "content": m["content"] if isinstance(m["content"], str) else
             "".join(p["text"] for p in m["content"] or [] if p.get("type") == "text")}
            for m in request["messages"]]
    text = [{**t, "content": t["content"] or ""} for t in text]
    assert state["ids"] == chat.encode(text, model)
    return report


def _functions_twin(request: dict) -> dict:
    """The request's text in gpt-tokenizer's form: string contents (images left out), the tool
    call as function_call, the tool message as the function message answering it."""
    names, messages = {}, []
    for m in request["messages"]:
        content = m["content"] if not isinstance(m["content"], list) else \
            "".join(p["text"] for p in m["content"] if p["type"] == "text")
        if m.get("tool_calls"):
            call = m["tool_calls"][0]
            names[call["id"]] = call["function"]["name"]
            messages.append({"role": "assistant", "content": content, "function_call": call["function"]})
        elif m["role"] == "tool":
            messages.append({"role": "function", "name": names[m["tool_call_id"]], "content": content})
        else:
            messages.append({"role": m["role"], "content": content})
    return {"messages": messages, "functions": [t["function"] for t in request["tools"]],
            **({"function_call": request["tool_choice"]} if "tool_choice" in request else {})}


def test_chat_view_counts_requests_with_tools_calls_parts_and_images(page):
    big = _data_url("PNG", 1024, 1024)
    request = {"model": "gpt-4o", "tool_choice": "auto", "temperature": 0, "tools": TOOLS, "messages": [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [
            {"type": "text", "text": "Weather in Paris? "}, {"type": "text", "text": "And what is this?"},
            {"type": "image_url", "image_url": {"url": big, "detail": "high"}},
            {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "call_1", "type": "function", "function": {
            "name": "get_weather", "arguments": json.dumps({"city": "Paris"})}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "22 C, sunny"}]}
    page.click("#chat-paste")
    page.fill("#chat-json", json.dumps(request))
    page.click("#chat-json-apply")
    state = _state(page)
    assert state["request"] == request  # nothing of the pasted request dropped
    report = _check(state, "gpt-4o")
    # the headline is the billed request: tools, the tool call, the tool's answer, the image
    twin = _run_node([{"model": "gpt-4o", "op": "count_request", "request": _functions_twin(request)}])[0]["value"]
    assert report["tokens"] == twin + 765
    assert "image (1) 765" in state["breakdown"] and "tool definitions (2)" in state["breakdown"]
    assert state["notCounted"] == ["messages[1].content[3]"] and "not counted" in state["status"]
    assert state["chips"] == ["1024x1024 · 765 tokens", "image — not counted"] and state["marks"] == 1
    # Editing by hand: an assistant message with a tool call, and the tool message answering it.
    page.click("#chat-add")
    rows = page.locator("#chat-messages .chat-row")
    rows.nth(4).locator(".chat-role").select_option("assistant")
    rows.nth(4).locator(".chat-add-call").click()
    rows.nth(4).locator(".chat-call-args").fill('{"city": "Rome"}')
    page.click("#chat-add")
    rows.nth(5).locator(".chat-role").select_option("tool")
    rows.nth(5).locator(".chat-tool-call-id").fill("call_2")
    rows.nth(5).locator(".chat-content").fill("18 C")
    state = _state(page)
    assert state["request"]["messages"][4:] == [
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_2", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Rome"}'}}]},
        {"role": "tool", "content": "18 C", "tool_call_id": "call_2"}]
    _check(state, "gpt-4o")
    # A second call in the same message (parallel calls): counted without them, and said so.
    rows.nth(4).locator(".chat-add-call").click()
    state = _state(page)
    assert "messages[4].tool_calls" in state["notCounted"]
    _check(state, "gpt-4o")
    rows.nth(4).locator(".chat-call-remove").last.click()
    # Images picked for the system message and dropped on the user's: counted by their headers.
    rows.nth(0).locator(".chat-image-file").set_input_files(
        [{"name": "small.gif", "mimeType": "image/gif", "buffer": _image("GIF", 100, 60)}])
    page.wait_for_function("() => window.anytokChatDemo.messages[0].content.length === 2")
    jpeg = _image("JPEG", 2048, 4096)
    page.evaluate("""async ([b64]) => {
        const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
        const dt = new DataTransfer();
        dt.items.add(new File([bytes], "tall.jpg", { type: "image/jpeg" }));
        const row = document.querySelectorAll("#chat-messages .chat-row")[1];
        row.scrollIntoView({ block: "center" });
        const r = row.getBoundingClientRect();
        row.dispatchEvent(new DragEvent("drop", { dataTransfer: dt, bubbles: true, cancelable: true,
                                                 clientX: r.left + r.width / 2, clientY: r.top + r.height / 2 }));
    }""", [base64.b64encode(jpeg).decode()])
    page.wait_for_function("() => window.anytokChatDemo.messages[1].content.length === 5")
    state = _state(page)
    report = _check(state, "gpt-4o")
    assert [p["tokens"] for p in report["parts"] if ": image " in p["part"]] == [255, 765, 1105]
    assert page.locator("#text").input_value() != "" and "JFIF" not in page.locator("#text").input_value()
    # Other models: the image rule of each family, or none (gpt-4: the images are listed as not counted).
    for model in ("gpt-4o-mini", "gpt-4.1-mini", "gpt-4"):
        page.select_option("#chat-model", model)
        report = _check(_state(page), model)
    assert [x["where"] for x in report["not_counted"]][:3] == [
        "messages[0].content[1]", "messages[1].content[2]", "messages[1].content[3]"]
    page.select_option("#chat-model", "gpt-4o")
    # A part of another kind (audio) is kept, shown and said not counted; a bad request is an error
    # with the previous result marked stale.
    request = _state(page)["request"]
    request["messages"][1]["content"].append({"type": "input_audio", "input_audio": {"data": "", "format": "wav"}})
    page.click("#chat-paste")
    page.fill("#chat-json", json.dumps(request))
    page.click("#chat-json-apply")
    state = _state(page)
    assert "messages[1].content[5]" in state["notCounted"] and state["chips"][-1] == 'a "input_audio" part — not counted'
    _check(state, "gpt-4o")
    rows.nth(3).locator(".chat-tool-call-id").fill("call_9")
    page.wait_for_selector("#chat-view[data-state=error]", state="attached")
    assert "tool_call_id 'call_9'" in page.inner_text("#chat-message")
    assert page.locator("#chat-tokens.stale").count() == 1 and page.inner_text("#chat-total") == "–"
    rows.nth(3).locator(".chat-tool-call-id").fill("call_1")
    _check(_state(page), "gpt-4o")


def test_chat_view_names_an_opened_model_from_its_files(page):
    # A small tokenizer.json with a tokenizer_config.json holding a chat template (and the
    # tokenizer class Qwen2Tokenizer), then the same with a config.json naming the model.
    from test_npm_node import _small_tokenizer_json

    page.select_option("#chat-model", "gpt-4o")
    page.click("#chat-paste")
    page.fill("#chat-json", json.dumps([{"role": "user", "content": "Hello"}]))
    page.click("#chat-json-apply")
    _shown(page)
    config = {"tokenizer_class": "Qwen2Tokenizer",
              "chat_template": "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"}
    files = [{"name": "tokenizer.json", "mimeType": "application/json", "buffer": _small_tokenizer_json().encode()},
             {"name": "tokenizer_config.json", "mimeType": "application/json", "buffer": json.dumps(config).encode()}]
    page.set_input_files("#chat-template-files", files)
    page.wait_for_function("() => document.getElementById('chat-model').value === 'template:1'")
    _shown(page)
    # its tokenizer_config.json names the tokenizer class (Qwen2Tokenizer)
    assert page.eval_on_selector("#chat-model", "s => s.selectedOptions[0].text") == "Qwen2 tokenizer · chat template"
    del config["tokenizer_class"]  # then the template's own markers
    files[1]["buffer"] = json.dumps(config).encode()
    page.set_input_files("#chat-template-files", files)
    page.wait_for_function("() => document.getElementById('chat-model').value === 'template:2'")
    _shown(page)
    assert page.eval_on_selector("#chat-model", "s => s.selectedOptions[0].text") == "ChatML (Qwen-style) template · chat template"
    model = {"_name_or_path": "Qwen/Qwen3-0.6B", "architectures": ["Qwen3ForCausalLM"]}
    page.set_input_files("#chat-template-files", files + [
        {"name": "config.json", "mimeType": "application/json", "buffer": json.dumps(model).encode()}])
    page.wait_for_function("() => document.getElementById('chat-model').value === 'template:3'")
    _shown(page)
    assert page.eval_on_selector("#chat-model", "s => s.selectedOptions[0].text") == "Qwen/Qwen3-0.6B · chat template"
    assert "Qwen/Qwen3-0.6B" in page.inner_text("#chat-which")
    page.select_option("#chat-model", "gpt-4o")
    _shown(page)


def test_count_chat_report_in_the_page_equals_native(page):
    # tok.countChat(request, { report: true }) (and imageSizes, autoDetail) against native
    # chat.request_report, on a Responses API request and a Chat Completions one.
    responses = {"instructions": "Be brief.", "tools": [{"type": "function", **TOOLS[0]["function"]}],
                 "input": [{"role": "user", "content": [
                     {"type": "input_text", "text": "What is this?"},
                     {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "auto"},
                     {"type": "input_image", "file_id": "file-1"}]},
                     {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
                     {"type": "function_call_output", "call_id": "c1", "output": "rain"},
                     {"type": "reasoning", "summary": []}]}
    sizes = {"https://example.com/a.png": [1800, 2400]}
    got = page.evaluate("""async ([request, sizes]) => {
        const { AnyTok } = await import('/anytok.js');
        const tok = await AnyTok.load({ encoding: "o200k_base" });
        return [await tok.countChat(request, { model: "gpt-4.1", report: true, imageSizes: sizes }),
                await tok.countChat(request, { model: "gpt-4.1-mini", report: true, imageSizes: sizes, autoDetail: "low" }),
                await tok.countChat({ messages: [{ role: "user", content: [{ type: "text", text: "hi" }] }] })];
    }""", [responses, sizes])
    assert got[0] == chat.request_report(responses, "gpt-4.1", image_sizes=sizes)
    assert got[1] == chat.request_report(responses, "gpt-4.1-mini", image_sizes=sizes, auto_detail="low")
    assert [x["where"] for x in got[0]["not_counted"]] == ["input[3]", "input[0].content[2]"]
    assert got[2] == chat.count_request({"messages": [{"role": "user", "content": "hi"}]})

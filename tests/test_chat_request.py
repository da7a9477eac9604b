"""anytok.chat on real requests: content-part arrays, tools, tool calls, tool messages, the
Responses API's form, images, and what is reported as not counted.

Reference: gpt-tokenizer 4.0.0's countChatCompletionTokens / encodeChat in Node
(tests/chat_reference.mjs).  It takes string contents and the functions form only, so each
generated request is sent to it as its twin in that form (text parts joined into one string, a
tool call as the assistant's function_call, a tool message as the function message answering
it, tools as functions), and anytok must count the request as written exactly as the reference
counts the twin.  Images add OpenAI's published tokens (tests/test_chat_images.py checks those).
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
from fetch_chat import fetch as fetch_chat  # noqa: E402  (build_scripts/fetch/, on the path by conftest.py)

from anytok import chat  # noqa: E402
from anytok.chat import NotCountedError  # noqa: E402

FULL = os.environ.get("ANYTOK_FULL") == "1"
MODELS = ["gpt-4o", "gpt-4.1", "gpt-4", "gpt-3.5-turbo"]
WORDS = ["hello", "world", " ", "\n", "Grüße", "日本語", "😀", "x" * 30, "def f(x):\n  return x",
         "1234", "don't", "<|im_start|>", "Ω≈"]


def _run_node(cases: list[dict]) -> list[dict]:
    node = shutil.which("node")
    assert node, "Node (>= 20) is needed for the gpt-tokenizer reference"
    folder = fetch_chat() / "gpt-tokenizer"
    proc = subprocess.run([node, str(ROOT / "tests" / "chat_reference.mjs"), str(folder)],
                          input=json.dumps(cases), capture_output=True, text=True, check=True)
    return json.loads(proc.stdout)


def _text(rng: random.Random) -> str:
    return "".join(rng.choice(WORDS) + rng.choice(["", " "]) for _ in range(rng.randrange(0, 6)))


def _parts(rng: random.Random, text: str, kinds=("text",)) -> list[dict]:
    """`text` cut into text parts (which join back to it)."""
    cuts = sorted(rng.sample(range(len(text) + 1), min(len(text) + 1, rng.randrange(0, 4))))
    pieces, at = [], 0
    for c in cuts + [len(text)]:
        pieces.append(text[at:c])
        at = c
    return [{"type": rng.choice(kinds), "text": p} for p in pieces if p or rng.random() < 0.3]


def _pair(rng: random.Random) -> tuple[dict, dict]:
    """(a request as written with tools, content parts and tool calls, its functions-form twin)."""
    tools = [{"type": "function", "function": {
        "name": f"fn_{i}", **({"description": _text(rng) or "does it"} if rng.random() < 0.6 else {}),
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string", "description": "the city"},
            "n": {"type": "integer", "enum": [1, 2]}}, "required": ["city"]}}}
        for i in range(rng.randrange(0, 4))]
    written, twin = [], []
    if rng.random() < 0.5:
        text = _text(rng) or "Be brief."
        written.append({"role": "system", "content": _parts(rng, text) if rng.random() < 0.5 else text})
        twin.append({"role": "system", "content": text})
    for turn in range(rng.randrange(1, 4)):
        text = _text(rng) or "hi"
        m = {"role": "user", "content": _parts(rng, text)}
        t = {"role": "user", "content": text}
        if rng.random() < 0.2:
            m["name"] = t["name"] = "ann"
        written.append(m)
        twin.append(t)
        if tools and rng.random() < 0.6:
            fn = rng.choice(tools)["function"]["name"]
            args = json.dumps({"city": _text(rng)})
            content = None if rng.random() < 0.7 else (_text(rng) or "calling")
            written.append({"role": "assistant", "content": content, "tool_calls": [
                {"id": f"call_{turn}", "type": "function", "function": {"name": fn, "arguments": args}}]})
            twin.append({"role": "assistant", "content": content, "function_call": {"name": fn, "arguments": args}})
            result = _text(rng) or "{}"
            written.append({"role": "tool", "tool_call_id": f"call_{turn}",
                            "content": _parts(rng, result) if rng.random() < 0.5 else result})
            twin.append({"role": "function", "name": fn, "content": result})
        text = _text(rng)
        written.append({"role": "assistant", "content": _parts(rng, text, ("text",)) if text else text})
        twin.append({"role": "assistant", "content": text})
    req, ref = {"model": "x", "messages": written}, {"messages": twin}
    if tools:
        req["tools"] = tools
        ref["functions"] = [t["function"] for t in tools]
        choice = rng.choice([None, "auto", "none", "forced"])
        if choice == "forced":
            req["tool_choice"] = {"type": "function", "function": {"name": tools[0]["function"]["name"]}}
            ref["function_call"] = {"name": tools[0]["function"]["name"]}
        elif choice:
            req["tool_choice"] = ref["function_call"] = choice
    return req, ref


def _responses_form(req: dict, rng: random.Random) -> dict:
    """The request in the Responses API's form (instructions, input items, flat tools)."""
    out: dict = {"model": "x", "input": []}
    msgs = list(req["messages"])
    if msgs and msgs[0]["role"] == "system" and isinstance(msgs[0]["content"], str) and msgs[0]["content"]:
        out["instructions"] = msgs.pop(0)["content"]
    for m in msgs:
        if m.get("tool_calls"):
            if m.get("content"):
                return {}  # an assistant text beside a call has no single-item twin
            for c in m["tool_calls"]:
                out["input"].append({"type": "function_call", "call_id": c["id"],
                                     "name": c["function"]["name"], "arguments": c["function"]["arguments"]})
        elif m["role"] == "tool":
            if not isinstance(m["content"], str):
                return {}
            out["input"].append({"type": "function_call_output", "call_id": m["tool_call_id"],
                                 "output": m["content"]})
        else:
            content = m["content"]
            if isinstance(content, list):
                kind = "output_text" if m["role"] == "assistant" else "input_text"
                content = [{**p, "type": kind} for p in content]
            item = {"role": m["role"], "content": content}
            if rng.random() < 0.5:
                item["type"] = "message"
            if "name" in m:
                item["name"] = m["name"]
            out["input"].append(item)
    if "tools" in req:
        out["tools"] = [{"type": "function", **t["function"]} for t in req["tools"]]
    if isinstance(req.get("tool_choice"), dict):
        out["tool_choice"] = {"type": "function", "name": req["tool_choice"]["function"]["name"]}
    elif "tool_choice" in req:
        out["tool_choice"] = req["tool_choice"]
    return out


@pytest.fixture(scope="module")
def pairs():
    rng = random.Random(4545)
    n = 400 if FULL else 30
    cases, pairs = [], []
    for model in MODELS:
        for _ in range(n):
            req, ref = _pair(rng)
            pairs.append((model, req, ref, _responses_form(req, rng)))
            cases.append({"model": model, "op": "count_request", "request": ref})
            cases.append({"model": model, "op": "encode",
                          "messages": [{"role": m["role"], "content": m["content"] or ""}
                                       for m in ref["messages"]
                                       if m["role"] != "function" and not m.get("function_call")]})
    results = _run_node(cases)
    return [(p, results[2 * i], results[2 * i + 1]) for i, p in enumerate(pairs)]


def test_requests_with_parts_tools_and_calls_like_gpt_tokenizer(pairs):
    responses = 0
    for (model, req, ref, resp), want, _ in pairs:
        assert "error" not in want, want
        assert chat.count_request(req, model=model) == want["value"], (req, ref)
        report = chat.request_report(req, model=model)
        assert report["tokens"] == want["value"] and report["not_counted"] == []
        assert sum(p["tokens"] for p in report["parts"]) == want["value"]
        if resp:
            assert chat.count_request(resp, model=model) == want["value"], resp
            responses += 1
    assert responses > len(pairs) // 4


def test_encode_content_parts_like_gpt_tokenizer(pairs):
    checked = 0
    for (model, req, ref, _), _, want in pairs:
        if "error" in want:
            assert "special token" in want["error"]
            continue
        messages = [{"role": m["role"], "content": m["content"] or ""}
                    for m in req["messages"] if m["role"] != "tool" and not m.get("tool_calls")]
        assert chat.encode(messages, model=model) == want["value"]
        assert chat.count(messages, model=model) == len(want["value"])
        checked += 1
    assert checked > 10


# ---- images -------------------------------------------------------------------------------------

def _png_url(w: int, h: int) -> str:
    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (w, h), (200, 10, 10)).save(out, "PNG")
    return "data:image/png;base64," + base64.b64encode(out.getvalue()).decode()


def test_images_in_requests():
    text = [{"type": "text", "text": "What is in these images?"}]
    big, small = _png_url(1024, 1024), _png_url(2048, 4096)
    req = {"messages": [{"role": "user", "content": text + [
        {"type": "image_url", "image_url": {"url": big, "detail": "high"}},
        {"type": "image_url", "image_url": {"url": small, "detail": "high"}},
        {"type": "image_url", "image_url": {"url": small, "detail": "low"}},
        {"type": "image_url", "image_url": {"url": big}}]}]}
    plain = chat.count_request({"messages": [{"role": "user", "content": "What is in these images?"}]})
    # the guide's examples: 765 (1024 x 1024 high), 1105 (2048 x 4096 high), 85 (low); auto as high
    report = chat.request_report(req, model="gpt-4o")
    assert report["tokens"] == plain + 765 + 1105 + 85 + 765
    assert [p["part"] for p in report["parts"][1:5]] == [
        "message 1 (user): image 1024x1024, detail high",
        "message 1 (user): image 2048x4096, detail high",
        "message 1 (user): image 2048x4096, detail low",
        "message 1 (user): image 1024x1024, detail auto, auto as high"]
    assert chat.count_request(req, model="gpt-4o", auto_detail="low") == plain + 765 + 1105 + 85 + 85
    # patches: 1024 and 1452 patches, times gpt-4.1-mini's 1.62, rounded up
    plain41 = chat.count_request({"messages": [{"role": "user", "content": "What is in these images?"}]},
                                 "gpt-4.1-mini")
    mini = [chat.image_tokens(w, h, "gpt-4.1-mini") for w, h in [(1024, 1024), (2048, 4096)]]
    assert mini[0] == 1659  # ceil(1024 * 1.62)
    assert chat.count_request(req, "gpt-4.1-mini") == plain41 + 2 * mini[0] + 2 * mini[1]
    # Responses API input_image items (image_url a string, detail beside it), and sizes given
    resp = {"input": [{"role": "user", "content": [
        {"type": "input_text", "text": "What is in these images?"},
        {"type": "input_image", "image_url": "https://example.com/a.png", "detail": "high"},
        {"type": "input_image", "file_id": "file-123", "detail": "low"}]}]}
    sizes = {"https://example.com/a.png": (2048, 4096), "file-123": (10, 10)}
    assert chat.count_request(resp, "gpt-4o", image_sizes=sizes) == plain + 1105 + 85
    assert chat.count_request(resp, "gpt-4o", image_sizes=lambda ref: sizes[ref]) == plain + 1105 + 85
    # without sizes: counted without them, and said
    report = chat.request_report(resp, "gpt-4o")
    assert report["tokens"] == plain
    assert [x["where"] for x in report["not_counted"]] == ["input[0].content[1]", "input[0].content[2]"]
    assert "size is unknown" in report["not_counted"][0]["why"]
    with pytest.raises(NotCountedError, match="2 parts of the request cannot be counted"):
        chat.count_request(resp, "gpt-4o")
    # chat.count / message_counts add images too; encode refuses them (no ids)
    msgs = [{"role": "user", "content": text + [{"type": "image_url", "image_url": {"url": big, "detail": "high"}}]}]
    twin = [{"role": "user", "content": "What is in these images?"}]
    assert chat.count(msgs, "gpt-4o") == chat.count(twin, "gpt-4o") + 765
    assert chat.message_counts(msgs, "gpt-4o")[0] == chat.message_counts(twin, "gpt-4o")[0] + 765
    assert chat.count_till_limit(msgs, 10**6, "gpt-4o") == chat.count(msgs, "gpt-4o")
    with pytest.raises(ValueError, match="has no ids"):
        chat.encode(msgs, "gpt-4o")
    with pytest.raises(ValueError, match="no published image-token rule"):
        chat.count(msgs, "gpt-4")
    with pytest.raises(ValueError, match="detail must be one of"):
        chat.count_request({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": big, "detail": "ultra"}}]}]})
    with pytest.raises(ValueError, match="not a PNG, JPEG"):
        chat.count_request({"messages": [{"role": "user", "content": [
            {"type": "image_url", "image_url": {"url": "data:image/bmp;base64,Qk0AAAAA"}}]}]})


def test_what_is_not_counted_is_reported():
    call = {"id": "1", "type": "function", "function": {"name": "f", "arguments": "{}"}}
    fn = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}
    req = {"model": "gpt-4o", "temperature": 0.2, "frobnicate": 1,
           "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}},
           "tools": [fn, {"type": "web_search"}], "tool_choice": "required",
           "messages": [
               {"role": "user", "content": [{"type": "text", "text": "hi"},
                                            {"type": "input_audio", "input_audio": {"data": "", "format": "wav"}}]},
               {"role": "assistant", "content": None, "tool_calls": [call, {**call, "id": "2"}]},
               {"role": "tool", "tool_call_id": "2", "content": "sunny"},
               {"role": "user", "content": "ok", "audio": {"id": "a"}}]}
    report = chat.request_report(req, "gpt-4o")
    assert {x["where"] for x in report["not_counted"]} == {
        "frobnicate", "response_format", "tools[1]", "tool_choice", "messages[0].content[1]",
        "messages[1].tool_calls", "messages[3].audio"}
    # the rest is what the reference counts for the request without them
    rest = {"functions": [fn["function"]], "messages": [
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": None},
        {"role": "function", "name": "f", "content": "sunny"}, {"role": "user", "content": "ok"}]}
    want = _run_node([{"model": "gpt-4o", "op": "count_request", "request": rest}])[0]["value"]
    assert report["tokens"] == want
    with pytest.raises(NotCountedError, match="7 parts of the request cannot be counted") as e:
        chat.count_request(req, "gpt-4o")
    assert e.value.report == report
    # a Responses request's items without a known count, and an invalid request still raises
    assert chat.request_report({"input": [{"type": "reasoning", "summary": []},
                                          {"role": "user", "content": "hi"}]})["not_counted"] == [
        {"where": "input[0]", "why": "an input item of type 'reasoning' has no known token count"}]
    with pytest.raises(ValueError, match="tool_call_id '9'"):
        chat.request_report({"messages": [{"role": "tool", "tool_call_id": "9", "content": "x"}]})
    with pytest.raises(ValueError, match="'messages' \\(Chat Completions\\) or 'input'"):
        chat.request_report({"prompt": "hi"})


# ---- CLI -----------------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "anytok", "count", *args], capture_output=True, text=True)


def test_cli_count_chat_request_with_parts_and_images(pairs, tmp_path):
    (model, req, ref, resp), want, _ = next(p for p in pairs if p[0][0] == "gpt-4o" and p[0][1].get("tools"))
    f = tmp_path / "request.json"
    f.write_text(json.dumps(req))
    p = _cli("--chat", str(f), "-m", "gpt-4o")
    assert (p.returncode, p.stdout, p.stderr) == (0, f"{want['value']}\n", "")
    img = {"messages": [{"role": "user", "content": [
        {"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": _png_url(1024, 1024), "detail": "high"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/x.png"}}]}]}
    f.write_text(json.dumps(img))
    p = _cli("--chat", str(f), "-m", "gpt-4o", "--json")
    doc = json.loads(p.stdout)
    assert p.returncode == 1 and doc["tokens"] == chat.request_report(img, "gpt-4o")["tokens"]
    assert doc["results"][0]["not_counted"][0].startswith("messages[0].content[2]: the image")
    assert "not counted: messages[0].content[2]" in p.stderr
    f.write_text(json.dumps(resp or {"input": "hello"}))
    p = _cli("--chat", str(f), "-m", "gpt-4o", "-v")
    assert p.returncode == 0 and p.stdout.splitlines()[-1].split()[0] == \
        str(chat.count_request(resp or {"input": "hello"}, "gpt-4o"))

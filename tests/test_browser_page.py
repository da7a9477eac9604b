"""The demo page as a tool: layout at phone, tablet and desktop sizes, the Count view's ids and
copy, the Compare view and its token-tax panel, Constrain's finished state and search, typing
into a 1 MB text, and axe-core's accessibility rules.

Debian's Chromium through Playwright, against the real demo server (browser_support.py); every
request that would leave 127.0.0.1 fails the test.  Numbers shown by the page are checked
against native anytok (itself checked against tiktoken and `tokenizers` elsewhere).
Screenshots of every view at every size go to build/web-test/ (gitignored) for people to look at.
"""

from __future__ import annotations

import json

import pytest

from browser_support import ROOT, new_context, wait_status
from browser_support import browser, demo_url  # noqa: F401 (module fixtures: a Chromium, the demo server)
from conftest import anytok_encoding

pytestmark = pytest.mark.xdist_group("browser")

SIZES = [(375, 812), (768, 1024), (1400, 1000)]
VIEWS = ["count", "train", "constrain", "compare", "chat"]
SHOTS = ROOT / "build" / "web-test"


@pytest.fixture(scope="module")
def profile(browser, demo_url):
    """One browser profile for the module's demo pages: the pages after the first restore the
    start-up snapshot and read the vocabulary from Cache Storage (a fresh profile's first visit
    is tested on its own, test_first_visit_shows_download_progress_and_ready_time)."""
    ctx, guard = new_context(browser, viewport={"width": 1400, "height": 1000})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=demo_url.rstrip("/"))
    ctx.guard = guard
    yield ctx
    ctx.close()
    guard.check()


@pytest.fixture(scope="module")
def page(profile, demo_url):
    """One ready demo page for the module (a Pyodide boot costs seconds); tests put it back in
    the Count view with its sample text."""
    pg = profile.new_page()
    errors = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.goto(demo_url)
    wait_status(pg)
    pg.sample = pg.input_value("#text")
    yield pg
    pg.close()
    assert errors == []


def scheme_page(profile, demo_url, scheme: str, width: int, height: int):
    """A new demo page of the module's profile, ready, seeing the system's colour scheme `scheme`
    (prefers-color-scheme, as a context's color_scheme sets it)."""
    pg = profile.new_page()
    pg.set_viewport_size({"width": width, "height": height})
    pg.emulate_media(color_scheme=scheme)
    pg.goto(demo_url)
    wait_status(pg)
    return pg


@pytest.fixture
def count_view(page):
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.click("#view-count")
    if page.is_visible("#file-view"):
        page.click("#back-to-editor")
    if page.input_value("#text") != page.sample or page.input_value("#special") != "text" or page.input_value("#encoding") != "o200k_base":
        page.select_option("#special", "text")
        page.select_option("#encoding", "o200k_base")
        set_text(page, page.sample)
    wait_status(page)
    return page


def set_text(page, text: str) -> None:
    page.evaluate(
        """([text]) => {
            const el = document.querySelector('#text');
            el.value = text;
            el.dispatchEvent(new InputEvent('input', { inputType: 'insertFromPaste' }));
        }""",
        [text],
    )
    wait_status(page)


def shown_count(page) -> int:
    return int(page.get_attribute("#count", "data-count"))


def show_view(page, view: str) -> None:
    page.click(f"#view-{view}")
    if view == "constrain" and page.is_hidden("#constrain-run"):
        page.click("#constrain-start")
        page.wait_for_function("window.anytokConstrainDemo.state === 'ready'")
    if view == "compare":
        page.wait_for_function("window.anytokCompareDemo.state === 'ready'")
    if view == "count":
        wait_status(page)


# Every visible control of the view: its size, and whether the point at its centre hits it.
JS_CONTROLS = """(view) => {
    const root = view === 'count' ? [document.querySelector('header'), ...document.querySelectorAll('.banner'), document.querySelector('main.layout'), document.querySelector('footer')]
                                  : [document.querySelector('header'), document.querySelector('#' + view + '-view')];
    const out = [];
    for (const r of root) {
        for (const el of r.querySelectorAll('button, select, input, textarea, a, summary, [tabindex]')) {
            const box = el.getBoundingClientRect();
            if (!box.width || !box.height || getComputedStyle(el).visibility === 'hidden') continue;
            if (el.tagName !== 'SUMMARY' && el.closest('details:not([open])')) continue;  // folded away
            el.scrollIntoView({ block: 'center', inline: 'center' });
            const b = el.getBoundingClientRect();
            const hit = document.elementFromPoint(b.left + b.width / 2, b.top + b.height / 2);
            const name = el.id || el.getAttribute('aria-label') || el.textContent.trim().slice(0, 30) || el.tagName;
            out.push({
                name, tag: el.tagName, width: b.width, height: b.height,
                hits: Boolean(hit) && (hit === el || el.contains(hit) || (el.tagName === 'A' && hit.closest('a') === el)),
                hitName: hit ? (hit.id || hit.className || hit.tagName) : null,
                inLink: el.tagName === 'A',
            });
        }
    }
    window.scrollTo(0, 0);
    return out;
}"""


def test_every_view_fits_phone_tablet_and_desktop_with_reachable_controls(page):
    SHOTS.mkdir(parents=True, exist_ok=True)
    problems = []
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        for view in VIEWS:
            show_view(page, view)
            page.wait_for_timeout(100)
            scroll, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
            if scroll > inner:
                problems.append(f"{view} at {width}px: page is {scroll}px wide")
            for c in page.evaluate(JS_CONTROLS, view):
                if not c["hits"]:
                    problems.append(f"{view} at {width}px: {c['name']} is covered by {c['hitName']}")
                if not c["inLink"] and c["tag"] != "TEXTAREA" and min(c["height"], c["width"]) < 40:
                    problems.append(f"{view} at {width}px: {c['name']} is {c['width']:.0f}x{c['height']:.0f} px")
            page.screenshot(path=str(SHOTS / f"{view}-{width}x{height}.png"), full_page=True)
    page.set_viewport_size({"width": 1400, "height": 1000})
    page.click("#view-count")
    assert problems == [], "\n".join(problems)


def test_every_control_is_reachable_with_the_tab_key(page):
    # Issue #45: keyboard reachable controls.  Tab is pressed through the whole page in each
    # view; every visible, enabled control of the view must have had the focus.
    missing = {}
    for view in VIEWS:
        show_view(page, view)
        page.evaluate("() => { document.activeElement?.blur(); for (const e of document.querySelectorAll('[data-tabbed]')) delete e.dataset.tabbed; }")
        n = page.evaluate("document.querySelectorAll('button, select, input, textarea, a, summary, [tabindex]').length")
        for _ in range(n + 5):
            page.keyboard.press("Tab")
            page.evaluate("() => { const a = document.activeElement; if (a && a !== document.body) a.dataset.tabbed = '1'; }")
        missing[view] = page.evaluate("""(view) => {
            const root = view === 'count' ? document.querySelector('main.layout') : document.querySelector('#' + view + '-view');
            const out = [];
            for (const el of [...document.querySelector('header').querySelectorAll('button, select, a'),
                              ...root.querySelectorAll('button, select, input, textarea, a, summary, [tabindex]')]) {
                const box = el.getBoundingClientRect();
                if (!box.width || !box.height || el.disabled || el.tabIndex < 0 || getComputedStyle(el).visibility === 'hidden') continue;
                if (el.tagName !== 'SUMMARY' && el.closest('details:not([open])')) continue;
                if (!el.dataset.tabbed) out.push(el.id || el.getAttribute('aria-label') || el.textContent.trim().slice(0, 30) || el.tagName);
            }
            return out;
        }""", view)
    page.click("#view-count")
    assert missing == {v: [] for v in VIEWS}, missing


def test_dark_and_light_follow_the_system(profile, demo_url):
    colours = {}
    for scheme in ("light", "dark"):
        pg = scheme_page(profile, demo_url, scheme, 800, 700)
        colours[scheme] = pg.evaluate(
            "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color, "
            "getComputedStyle(document.querySelector('.card')).backgroundColor]"
        )
        pg.screenshot(path=str(SHOTS / f"count-{scheme}.png"))
        pg.close()
        profile.guard.check()

    def luminance(css: str) -> float:
        r, g, b = [int(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    assert luminance(colours["light"][0]) > 200 and luminance(colours["light"][1]) < 80
    assert luminance(colours["dark"][0]) < 50 and luminance(colours["dark"][1]) > 180
    assert luminance(colours["dark"][2]) < 60


# --- the Count view -------------------------------------------------------------------------

def test_ids_view_copy_and_token_details_equal_native(count_view):
    page = count_view
    text = "Héllo\tworld\n  国 龘 ꙮ 🦜 <|endoftext|>\n"
    set_text(page, text)
    enc = anytok_encoding("o200k_base")
    ids = enc.encode(text, disallowed_special=())
    assert shown_count(page) == len(ids)

    # Ids mode: the view shows the ids, in order; Both shows text and ids.
    page.click("#show-ids")
    shown = page.evaluate("Array.from(document.querySelectorAll('#tokens .t'), (t) => t.textContent)")
    assert [int(i) for i in " ".join(shown).split()] == ids
    page.click("#show-both")
    assert page.locator("#tokens .t .tx").count() == page.locator("#tokens .t .id").count() > 0
    page.click("#show-text")
    assert page.locator("#tokens .t .id").count() == 0

    # Whitespace marked distinctly: tab →, line feed ↵, space ·; \r (kept only in a file: the
    # editor turns it into \n) ␍.
    view = page.text_content("#tokens")
    assert "→" in view and "↵" in view and "·" in view
    marks = page.evaluate("""async () => {
        const { markHTML, markText } = await import('/visible.js');
        return [markText('a \\t\\r\\n\\u00a0b'), markHTML('<a>\\r\\n')];
    }""")
    assert marks == ["a·→␍↵␣b", '&lt;a&gt;<span class="ws">␍↵\n</span>']

    # Distinct token borders: each token has an edge and neighbours differ in colour.
    look = page.evaluate("""() => Array.from(document.querySelectorAll('#tokens .t'), (t) => {
        const c = getComputedStyle(t);
        return [c.boxShadow, c.backgroundColor];
    })""")
    assert all(shadow != "none" and "inset" in shadow for shadow, _ in look), look[:3]
    assert all(a[1] != b[1] for a, b in zip(look, look[1:])), look[:6]

    # Characters split between tokens (龘, ꙮ, 🦜 in o200k_base): each token shows the bytes it holds.
    pieces = [enc.decode_single_token_bytes(i) for i in ids]
    partial = [p for p in pieces if not _valid_utf8(p)]
    labels = page.evaluate("Array.from(document.querySelectorAll('#tokens .t.byte .tx'), (t) => t.textContent)")
    assert len(partial) >= 7
    assert labels == ["".join(f"<0x{b:02X}>" for b in p) for p in partial]

    # Copy: JSON and space separated, the ids of the whole text.
    page.click("#copy-json")
    page.wait_for_function("document.querySelector('#copied').textContent.startsWith('Copied')")
    assert json.loads(page.evaluate("navigator.clipboard.readText()")) == ids
    page.click("#copy-spaced")
    page.wait_for_function("document.querySelector('#copied').textContent.startsWith('Copied')")
    assert [int(i) for i in page.evaluate("navigator.clipboard.readText()").split(" ")] == ids

    # Hover and tap: text, id, byte length and character span, as native offsets give them.
    offsets = []
    at = 0
    for token in enc.decode_tokens_bytes(ids):
        offsets.append(at)
        at += len(token)
    page.hover("#tokens .t >> nth=1")
    info = page.text_content("#inspect")
    second = enc.decode_single_token_bytes(ids[1])
    assert f"id {ids[1]}" in info and f"{len(second)} bytes" in info
    assert f"characters {len(enc.decode(ids[:1]))}–{len(enc.decode(ids[:2]))}" in info
    page.click("#tokens .t >> nth=0")
    assert page.locator("#tokens .t.picked").count() == 1
    # From the keyboard: the token view takes the focus, arrows move from token to token.
    page.focus("#tokens")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("[...document.querySelectorAll('#tokens .t')].indexOf(document.querySelector('#tokens .t.picked'))") == 1
    assert f"id {ids[1]}" in page.text_content("#inspect")

    # A file with \r\n line ends is counted as it is, and its \r shows as ␍.
    crlf = "one\r\ntwo\r\n"
    page.set_input_files("#file", files=[{"name": "crlf.txt", "mimeType": "text/plain", "buffer": crlf.encode()}])
    page.wait_for_selector("#file-view:not([hidden])")
    wait_status(page)
    assert shown_count(page) == enc.count(crlf, disallowed_special=())
    assert page.text_content("#tokens").count("␍↵") == 2
    page.click("#back-to-editor")
    wait_status(page)


def _valid_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def test_a_refused_special_token_names_the_menu_and_marks_results_stale(count_view):
    page = count_view
    set_text(page, "Before <|endoftext|> after")
    page.select_option("#special", "error")
    wait_status(page, "error")
    message = page.text_content("#error")
    assert "Special tokens menu" in message and "special token <|endoftext|>" in message
    assert "allowed_special" not in message and "allowedSpecial" not in message
    assert page.evaluate("document.querySelector('main.layout').classList.contains('stale')")
    assert page.is_visible("#stale-note")
    assert page.text_content("#count") == "–"
    # Dismissible; the next good count clears the stale mark.
    page.click("#error-box button.dismiss")
    assert page.is_hidden("#error-box")
    page.select_option("#special", "text")
    wait_status(page)
    assert not page.evaluate("document.querySelector('main.layout').classList.contains('stale')")
    assert page.is_hidden("#stale-note")


# --- the Compare view -----------------------------------------------------------------------

def test_compare_and_token_tax_equal_native_counts(page):
    page.set_viewport_size({"width": 1400, "height": 1000})
    show_view(page, "compare")
    text = "Tokenizers differ: 日本語のテキスト, Ελληνικά, код на русском, and def f(x): return x**2\n"
    page.click("#compare-add")
    page.select_option("#compare-pick-2", "gpt2")
    page.fill("#compare-text", text)
    page.wait_for_function(
        "([text]) => window.anytokCompareDemo.state === 'ready' && window.anytokCompareDemo.results.length === 3"
        " && window.anytokCompareDemo.tax.names.length === 3 && window.anytokCompareDemo.text === text",
        arg=[text],
    )
    got = page.evaluate("window.anytokCompareDemo.results")
    names = ["o200k_base", "cl100k_base", "gpt2"]
    native = [len(anytok_encoding(n).encode(text, disallowed_special=())) for n in names]
    assert [r["name"] for r in got] == names
    assert [r["count"] for r in got] == native
    cells = page.evaluate("Array.from(document.querySelectorAll('#compare-grid .count'), (c) => +c.dataset.count)")
    assert cells == native
    ratios = page.evaluate("Array.from(document.querySelectorAll('#compare-grid .ratio'), (c) => c.textContent)")
    assert ratios[1] == f"{native[1] / native[0]:.2f}×" and ratios[2] == f"{native[2] / native[0]:.2f}×"

    tax = page.evaluate("window.anytokCompareDemo.tax")
    sentences = json.loads((ROOT / "web" / "dist" / "examples" / "udhr_article_1.json").read_text())
    assert len(sentences) >= 12 and sentences[0]["code"] == "eng"
    assert [l["code"] for l in tax["languages"]] == [s["code"] for s in sentences]
    for i, name in enumerate(names):
        enc = anytok_encoding(name)
        assert tax["counts"][i] == [len(enc.encode(s["text"], disallowed_special=())) for s in sentences], name
    bars = page.evaluate("Array.from(document.querySelectorAll('#tax-chart .tax-bar'), (b) => +b.dataset.count)")
    assert bars == [tax["counts"][i][j] for j in range(len(sentences)) for i in range(3)]
    page.click("#compare-remove")
    page.wait_for_function("window.anytokCompareDemo.state === 'ready' && window.anytokCompareDemo.results.length === 2")


def test_udhr_sentences_are_article_1_of_the_pinned_package():
    import build_web

    sentences = build_web.udhr_article_1()
    assert len(sentences) == len(build_web.UDHR_ARTICLE_1) >= 12
    english = sentences[0]
    assert english["code"] == "eng" and english["text"].startswith("All human beings are born free and equal in dignity and rights.")
    assert all(s["text"] and "<" not in s["text"] for s in sentences)


# --- the Constrain view ---------------------------------------------------------------------

def test_constrain_search_busy_sign_carriage_return_and_finished_state(page):
    from anytok import constrain

    page.set_viewport_size({"width": 1400, "height": 1000})
    page.click("#view-constrain")
    pattern = "(yes|no)\\r\\n!"
    page.select_option("#constrain-kind", "regex")
    page.fill("#constrain-spec", pattern)
    if page.is_visible("#constrain-filter"):  # (left from an earlier test; hidden before a first start)
        page.fill("#constrain-filter", "")
    page.click("#constrain-start")
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    enc = anytok_encoding("o200k_base")
    m = constrain.regex(pattern).matcher(enc)

    def listed(query: str) -> list[int]:
        before = page.get_attribute("#constrain-view", "data-listed")
        page.fill("#constrain-filter", query)
        page.wait_for_function("([b]) => document.querySelector('#constrain-view').dataset.listed !== b", arg=[before])
        return page.eval_on_selector_all("#constrain-allowed button", "bs => bs.map((b) => +b.dataset.id)")

    # By text: every allowed token whose text holds "ye"; by id: those whose id starts so.
    allowed = m.allowed()
    assert sorted(listed("ye")) == sorted(i for i in allowed if "ye" in enc.decode([i]))
    some = allowed[len(allowed) // 2]
    assert some in listed(str(some))
    assert "allowed tokens match" in page.inner_text("#constrain-list-note")

    # A busy sign while a step runs.
    listed("yes")
    busy = page.evaluate("""() => {
        document.querySelector('#constrain-allowed button').click();
        return !document.querySelector('#constrain-busy').hidden;
    }""")
    assert busy
    page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    assert page.is_hidden("#constrain-busy")
    for t in page.evaluate("window.anytokConstrainDemo.tokens"):
        assert m.consume(t)

    # \r has its own mark, apart from \n and the space.
    texts = page.eval_on_selector_all("#constrain-allowed button", "bs => bs.map((b) => b.textContent)")
    listed("")
    texts = page.eval_on_selector_all("#constrain-allowed button", "bs => bs.map((b) => b.textContent)")
    assert texts and all(t.startswith("␍") for t in texts), texts

    # Walk to the end: then finished, nothing allowed, no random step.
    for _ in range(8):
        if page.evaluate("window.anytokConstrainDemo.finished"):
            break
        page.click("#constrain-random")
        page.wait_for_selector("#constrain-view[data-state=ready]", state="attached")
    assert page.evaluate("window.anytokConstrainDemo.finished")
    stats = page.inner_text("#constrain-stats")
    assert "finished" in stats and "allowed" not in stats
    assert page.is_disabled("#constrain-random")
    assert page.locator("#constrain-allowed button").count() == 0
    assert "finished" in page.inner_text("#constrain-list-note")
    page.click("#view-count")


# --- accessibility --------------------------------------------------------------------------

AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"


def test_axe_core_finds_no_serious_or_critical_violation_in_any_view(profile, demo_url):
    found = {}
    for scheme in ("light", "dark"):
        pg = scheme_page(profile, demo_url, scheme, 1400, 1000)
        pg.add_script_tag(path=str(AXE))
        shown = [(size, view) for size in SIZES for view in VIEWS] if scheme == "light" else \
            [((1400, 1000), "count"), ((1400, 1000), "compare")]
        for (width, height), view in shown:
            pg.set_viewport_size({"width": width, "height": height})
            show_view(pg, view)
            result = pg.evaluate("""async () => {
                const r = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } });
                return r.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
                    .map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 5).map((n) => n.target.join(' ')) }));
            }""")
            if result:
                found[f"{view} at {width}px ({scheme})"] = result
        pg.close()
        profile.guard.check()
    assert found == {}, json.dumps(found, indent=1)


# --- responsiveness -------------------------------------------------------------------------

def _trace(cdp, page) -> list[dict]:
    """Stop the CDP trace started on `cdp` and return its events."""
    import base64

    done = []
    cdp.on("Tracing.tracingComplete", lambda e: done.append(e))
    cdp.send("Tracing.end")
    while not done:
        page.wait_for_timeout(50)
    chunks = []
    while True:
        r = cdp.send("IO.read", {"handle": done[0]["stream"]})
        chunks.append(base64.b64decode(r["data"]) if r.get("base64Encoded") else r["data"].encode())
        if r.get("eof"):
            break
    cdp.send("IO.close", {"handle": done[0]["stream"]})
    data = json.loads(b"".join(chunks))
    return data["traceEvents"] if isinstance(data, dict) else data


def test_typing_into_a_1mb_text_blocks_the_main_thread_at_most_50ms(count_view, corpora):
    # Issue #45: a keystroke at the end of a 1 MB text blocks the main thread at most 50 ms.  A
    # long-task observer (Chromium reports each task of 50 ms or more) is registered before
    # typing; each long task it reports is then looked up in a Chromium trace of the same
    # keystrokes, where the task's own thread time is read: on this shared machine (load often
    # ten times its cores) a task's wall time is mostly waiting for a core, so the bound is on
    # the time the page's main thread worked in it.  Every main-thread task of the typing
    # window is held to the same bound.  (Chromium's <textarea> costs ~100-300 ms a key with
    # 1 MB in it: the editor holds a window of the text, demo.js showWindow.)
    page = count_view
    text = (corpora["en"] + "\n" + corpora["ja"])[: 1 << 20]
    text = text[: text.rfind("\n") + 1] + "The end"
    set_text(page, text)
    enc = anytok_encoding("o200k_base")
    assert shown_count(page) == enc.count(text, disallowed_special=())
    assert page.evaluate("window.anytokDemo.text()") == text
    assert len(page.input_value("#text")) < 30_000 and page.is_visible("#window-note")
    page.wait_for_timeout(1500)  # the table of every encoding, counted after a pause
    cdp = page.context.new_cdp_session(page)
    cdp.send("Tracing.start", {"categories": "toplevel,devtools.timeline", "transferMode": "ReturnAsStream"})
    page.evaluate("""() => {
        window.longTasks = [];
        new PerformanceObserver((list) => {
            for (const e of list.getEntries()) window.longTasks.push([e.startTime, e.duration]);
        }).observe({ type: 'longtask' });
        const el = document.querySelector('#text');
        el.focus();
        el.setSelectionRange(el.value.length, el.value.length);
    }""")
    # The page's clock against the trace's: a time stamp written into both at one moment.
    now = page.evaluate("() => { console.timeStamp('anytok-clock'); return performance.now(); }")
    for key in " and so on":
        page.keyboard.type(key)
        page.wait_for_timeout(80)
    wait_status(page)
    page.wait_for_timeout(1500)  # and the table again
    got = page.evaluate("({ longTasks: window.longTasks, update: window.anytokDemo.lastUpdate, end: performance.now() })")
    events = _trace(cdp, page)
    cdp.detach()
    text += " and so on"
    assert shown_count(page) == enc.count(text, disallowed_special=())
    assert page.evaluate("window.anytokDemo.text()") == text
    assert got["update"]["reencodedBytes"] < 20_000, got["update"]

    clock = next(e for e in events if e.get("name") == "TimeStamp" and "anytok-clock" in json.dumps(e.get("args", {})))
    pid, tid = clock["pid"], clock["tid"]
    shift = clock["ts"] / 1000 - now  # trace ms = page ms + shift
    tasks = [e for e in events if e.get("ph") == "X" and e["pid"] == pid and e["tid"] == tid
             and e["name"] in ("ThreadControllerImpl::RunTask", "RunTask") and e["ts"] / 1000 >= clock["ts"] / 1000
             and e["ts"] / 1000 <= got["end"] + shift]
    keys = [e for e in events if e.get("name") == "EventDispatch" and e["tid"] == tid
            and (e.get("args", {}).get("data") or {}).get("type") == "keypress"]
    assert len(keys) == len(" and so on"), len(keys)
    assert tasks and all("tdur" in t for t in tasks)

    def thread_ms(start: float, end: float) -> float:
        """Main-thread time of the tasks in [start, end] (page ms)."""
        return sum(t["tdur"] for t in tasks if start + shift - 1 <= t["ts"] / 1000 <= end + shift) / 1000

    worked = [(round(start), round(duration), thread_ms(start, start + duration)) for start, duration in got["longTasks"]]
    assert all(ms <= 50 for _, _, ms in worked), worked
    busiest = max(tasks, key=lambda t: t["tdur"])
    assert busiest["tdur"] <= 50_000, (busiest, worked)

    # The window moves over the text without changing it; typed text lands where the window is.
    page.click("#window-earlier")
    window = page.input_value("#text")
    at = text.index(window)
    assert 0 < at and at + len(window) < len(text) and page.evaluate("window.anytokDemo.text()") == text
    page.evaluate("() => document.querySelector('#text').setSelectionRange(0, 0)")
    page.keyboard.type("X")
    wait_status(page)
    text = text[:at] + "X" + text[at:]
    assert page.evaluate("window.anytokDemo.text()") == text
    assert shown_count(page) == enc.count(text, disallowed_special=())
    set_text(page, page.sample)
    assert page.is_hidden("#window-note") and page.input_value("#text") == page.sample


def test_first_visit_shows_download_progress_and_ready_time(browser, demo_url):
    import re

    ctx, guard = new_context(browser, viewport={"width": 1000, "height": 800})
    ctx.add_init_script("""
        window.barSeen = [];
        const look = setInterval(() => {
            const bar = document.querySelector('#boot-progress');
            if (bar && !bar.hidden) window.barSeen.push([bar.value, bar.max]);
            if (document.body?.dataset.status === 'ready') clearInterval(look);
        }, 15);
    """)
    pg = ctx.new_page()
    pg.goto(demo_url)
    wait_status(pg)
    seen = pg.evaluate("window.barSeen")
    got = pg.evaluate("({ downloaded: window.anytokDemo.downloaded, readyAfter: window.anytokDemo.readyAfter, ms: window.anytokDemo.lastUpdate.ms })")
    runtime = pg.text_content("#runtime")
    ctx.close()
    guard.check()
    # Pyodide, the standard library, the wheel and the vocabulary: megabytes, watched coming in.
    assert got["downloaded"] > 2_000_000, got
    assert seen and all(0 < v <= m for v, m in seen), seen[:5]
    assert re.match(r"Ready in \d+\.\d s, \d+\.\d MB loaded · Python ", runtime), runtime
    # "Time" is the count's own: start-up is not in it.
    assert got["ms"] < got["readyAfter"], got

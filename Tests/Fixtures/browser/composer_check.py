#!/usr/bin/env python3
"""Drives the live composer (`context-host serve --listen`, page at /) in headless Chromium with
real input events, and checks the static route's defences over raw HTTP.

    composer_check.py HOST_BINARY ARTIFACT_DIR

Starts the host on a free loopback port with a scratch manifest folder (Note and Location),
launches Debian's `chromium` over the DevTools protocol on a pipe (check_page.py's Browser, with
`--headless` (Chromium's new headless mode) and, as root in a container, `--no-sandbox`, which
Chromium needs there), and uses only Input.dispatchMouseEvent, Input.dispatchKeyEvent and
Input.insertText to act, like a person: no DOM .click() or value setting. It attaches a Note through
its form (first with the title left out: the field error must show), searches and attaches a
Location, attaches and removes a third item, opens a detail, sends and checks the envelope, then
adds a manifest to the watched folder and waits for `providers/changed` on the page. Every wait has
a deadline; a timeout is a FAIL. Prints `PASS name` / `FAIL name: why` per check and exits 0 only
if all passed. Screenshots and chromium.log go to ARTIFACT_DIR.
Used by Tests/IntegrationTests/ComposerPageTests.swift.
"""
import http.client
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import base64

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_page import Browser, find_chromium  # noqa: E402  (the shared DevTools-over-pipe driver)

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "web"))
from ws_check import Host as ListenerHost, check  # noqa: E402  (the shared `serve --listen` process, PASS/FAIL lines)
import ws_check  # noqa: E402  (its counts of checks and failures)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


class Host(ListenerHost):
    """`context-host serve --listen 127.0.0.1:0 --manifests FOLDER` (ws_check.py's host), plus the
    composer page's URL (`page`) it prints right after the listening line."""

    def __init__(self, binary, manifests, extra=()):
        super().__init__(binary, ["--listen", "127.0.0.1:0", "--manifests", manifests, *extra])
        line = self.wait_for(r"composer at (http://\S+)", 5)
        if line is None:
            self.stop()
            raise RuntimeError("the host serves no composer page (no 'composer at' after 'listening on'); stderr:\n" + "\n".join(self.lines))
        self.page = re.search(r"composer at (http://\S+)", line).group(1)


def http_get(port, path, headers):
    """One GET over raw HTTP (any Host or Origin can be sent): (status, headers dict, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
    try:
        connection.putrequest("GET", path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        connection.endheaders()
        response = connection.getresponse()
        body = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, body
    finally:
        connection.close()


def static_route(host, web_root):
    """The static route's headers and refusals (controls first: what exists and what is served)."""
    own = {"Host": f"127.0.0.1:{host.port}"}
    status, headers, body = http_get(host.port, "/", own)
    csp = headers.get("content-security-policy", "")
    check("GET /: 200, the composer page", status == 200 and b"composer.js" in body, f"{status} {body[:120]!r}")
    check("GET /: strict CSP (script-src 'self', no inline script, no framing)",
          "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp
          and "default-src 'none'" in csp and "frame-ancestors 'none'" in csp, csp)
    check("GET /: nosniff, text/html, no CORS header",
          headers.get("x-content-type-options") == "nosniff" and headers.get("content-type", "").startswith("text/html")
          and not any(k.startswith("access-control") for k in headers), json.dumps(headers))
    status, headers, body = http_get(host.port, "/ctxui.js", own)
    check("GET /ctxui.js: text/javascript", status == 200 and headers.get("content-type", "").startswith("text/javascript"),
          f"{status} {headers.get('content-type')}")
    status, headers, _ = http_get(host.port, "/ctxui.css", own)
    check("GET /ctxui.css: the gallery's stylesheet, text/css", status == 200 and headers.get("content-type", "").startswith("text/css"),
          f"{status} {headers.get('content-type')}")
    # Traversal: the control shows the target exists relative to the web root; the route refuses.
    target = os.path.join(web_root, "..", "Package.swift")
    check("control: ../Package.swift exists beside the web root", os.path.isfile(target), target)
    for path in ("/../Package.swift", "/%2e%2e/Package.swift", "/..%2fPackage.swift", "//etc/passwd", "/web/../Package.swift",
                 "/Package.swift", "/index.html/../../Package.swift", "/.%2e/.%2e/etc/passwd"):
        status, _, body = http_get(host.port, path, own)
        check(f"GET {path}: 404, nothing outside the file table", status == 404 and b"swift-tools-version" not in body and b"root:" not in body,
              f"{status} {body[:80]!r}")
    # The gate runs before the static route too.
    status, _, _ = http_get(host.port, "/", {"Host": f"127.0.0.1:{host.port}", "Origin": f"http://127.0.0.1:{host.port}"})
    check("control: GET / with the listener's own Origin: 200", status == 200, str(status))
    status, _, _ = http_get(host.port, "/composer.js", {"Host": f"127.0.0.1:{host.port}", "Origin": "http://evil.example"})
    check("GET /composer.js with a foreign Origin: 403", status == 403, str(status))
    status, _, _ = http_get(host.port, "/", {"Host": f"rebind.example:{host.port}"})
    check("GET / with a rebinding Host: 403", status == 403, str(status))


class Page:
    """One tab, acted on with real input events only."""

    def __init__(self, browser, session, deadline_seconds):
        self.browser = browser
        self.session = session
        self.deadline_seconds = deadline_seconds

    def deadline(self, seconds=None):
        return time.monotonic() + (seconds or self.deadline_seconds)

    def call(self, method, params=None, seconds=None):
        return self.browser.call(method, params or {}, session=self.session, deadline=self.deadline(seconds))

    def evaluate(self, expression):
        answer = self.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in answer:
            raise RuntimeError(f"evaluate failed: {expression}: {json.dumps(answer['exceptionDetails'])[:400]}")
        return answer["result"].get("value")

    def wait(self, expression, what, seconds=20):
        """Polls until `expression` is truthy; raises TimeoutError (a failure) after `seconds`."""
        deadline = time.monotonic() + seconds
        while True:
            # (A page still loading may not have the elements yet: an exception counts as "not yet".)
            # A DOM node comes back as {} (falsy here): it counts as true.
            value = self.evaluate("(() => { try { const v = (%s); return v && v.nodeType ? true : v; } catch (e) { return null; } })()" % expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise TimeoutError(f"waited {seconds} s for {what} ({expression})")
            time.sleep(0.1)

    def center(self, selector):
        """Scrolls the element into view and returns its centre in viewport pixels."""
        box = self.wait("""(() => { const e = document.querySelector(%s); if (!e) return null;
            e.scrollIntoView({block: "center", inline: "center"}); const r = e.getBoundingClientRect();
            return r.width > 0 && r.height > 0 ? {x: r.left + r.width / 2, y: r.top + r.height / 2} : null; })()""" % json.dumps(selector),
            f"a visible {selector}")
        return box["x"], box["y"]

    def click(self, selector):
        x, y = self.center(selector)
        self.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
        self.call("Input.dispatchMouseEvent", {"type": "mousePressed", "x": x, "y": y, "button": "left", "buttons": 1, "clickCount": 1})
        self.call("Input.dispatchMouseEvent", {"type": "mouseReleased", "x": x, "y": y, "button": "left", "buttons": 0, "clickCount": 1})

    def type_keys(self, text):
        """Types each character as a key press (keyDown with its text, keyUp)."""
        for character in text:
            code = "Key" + character.upper() if character.isalpha() else ""
            self.call("Input.dispatchKeyEvent", {"type": "keyDown", "text": character, "unmodifiedText": character,
                                                 "key": character, "code": code})
            self.call("Input.dispatchKeyEvent", {"type": "keyUp", "key": character, "code": code})

    def insert_text(self, text):
        self.call("Input.insertText", {"text": text})

    def screenshot(self, directory, name):
        size = self.evaluate("({w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight})")
        shot = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                                   "clip": {"x": 0, "y": 0, "width": size["w"], "height": min(size["h"], 8000), "scale": 1}})
        with open(os.path.join(directory, name), "wb") as file:
            file.write(base64.b64decode(shot["data"]))


HOSTILE = "<img src=x onerror=\"window.__pwned=1\">"


def renderer(page):
    """ctxui.js on hostile provider output, in the page (its CSP in force): every string stays text,
    no unsafe URL becomes a link or an image; the same link and image rules as the gallery's
    HTMLRender (Tests/ContextClientTests/HTMLRenderTests.swift checks the Swift side)."""
    script = """(async () => {
        const ctxui = await import("/ctxui.js");
        const hostile = %s;
        // What a renderer that used markup would make of it (in a DOMParser document: inert).
        const control = new DOMParser().parseFromString(hostile, "text/html");
        const chip = ctxui.chip({title: hostile, subtitle: hostile, icon: hostile, fallbackText: hostile,
            thumbnail: "data:text/html;base64,PHNjcmlwdD4=", tone: 'x" onmouseover="1'});
        const detail = ctxui.detail({title: hostile, blocks: [
            {type: "text", style: "markdown", text: "**" + hostile + "** `" + hostile + "`"},
            {type: "link", url: "javascript:window.__pwned=1", title: hostile},
            {type: "link", url: " https://example.com", title: "leading space"},
            {type: "link", url: "https://example.com/a", title: "ok"},
            {type: "image", dataURI: "data:image/svg+xml;utf8,<svg onload=alert(1)>", alt: hostile},
            {type: "image", dataURI: "data:image/png;base64,iVBORw0KGgo=", alt: "ok"},
            {type: "facts", facts: [{label: hostile, value: hostile}]},
            {type: "list", items: [hostile]},
            {type: "future-block", fallback: hostile}]});
        const form = ctxui.liveForm({title: hostile, fields: [{id: "a", kind: "text", label: hostile, help: hostile, placeholder: hostile},
            {id: "b", kind: "future-kind", label: "b", fallback: hostile}]}, {onSubmit() {}});
        form.showErrors({a: hostile, ghost: hostile}, hostile);
        const all = [chip, detail, form];
        const count = (selector) => all.reduce((n, e) => n + e.querySelectorAll(selector).length, 0);
        return {
            controlMadeImage: control.querySelectorAll("img[onerror]").length,
            images: all.flatMap((e) => [...e.querySelectorAll("img")].map((i) => i.getAttribute("src"))),
            links: all.flatMap((e) => [...e.querySelectorAll("a")].map((a) => a.getAttribute("href"))),
            handlers: count("[onerror], [onload], [onmouseover], script, iframe, object, embed"),
            literal: [chip, detail, form].every((e) => e.textContent.includes(hostile)),
            chipClass: chip.className,
            safeLink: ["https://a", "HTTP://a", "mailto:a@b", "geo:1,2", "javascript:x", "data:text/html,x", " https://a", "https://a b", "vbscript:x"].map(ctxui.isSafeLink),
            safeImage: ["data:image/png;base64,AAAA", "data:image/svg+xml;base64,AAAA", "data:image/png;base64,", "data:image/png;base64,AA AA",
                        "data:text/html;base64,AAAA", "https://example.com/a.png", "data:image/png,AAAA"].map(ctxui.isSafeImage),
        };
    })()""" % json.dumps(HOSTILE)
    answer = page.call("Runtime.evaluate", {"expression": script, "awaitPromise": True, "returnByValue": True})
    if "exceptionDetails" in answer:
        check("ctxui.js renders hostile provider output", False, json.dumps(answer["exceptionDetails"])[:400])
        return
    result = answer["result"]["value"]
    check("control: the hostile string as markup makes an <img onerror>", result["controlMadeImage"] == 1, str(result["controlMadeImage"]))
    check("ctxui.js: hostile strings stay text (no handler attribute, script or frame; shown literally)",
          result["handlers"] == 0 and result["literal"] and result["chipClass"] == "chip tone-neutral", json.dumps(result)[:400])
    check("ctxui.js: only the data:image/png survives as an image", result["images"] == ["data:image/png;base64,iVBORw0KGgo="], str(result["images"]))
    check("ctxui.js: only the https link is a link", result["links"] == ["https://example.com/a"], str(result["links"]))
    check("ctxui.js: the gallery's link rule (http, https, mailto, geo; no spaces)",
          result["safeLink"] == [True, True, True, True, False, False, False, False, False], str(result["safeLink"]))
    check("ctxui.js: the gallery's image rule (Base64 data:image only)",
          result["safeImage"] == [True, True, False, False, False, False, False], str(result["safeImage"]))
    check("the hostile markup never ran", page.evaluate("window.__pwned === undefined"))


def composer(page, host, manifests, artifacts):
    q = json.dumps
    page.wait("document.body.dataset.state === 'ready'", "the page to connect and list the providers", 30)
    check("page connected over /rpc from its own origin", "Connected" in page.evaluate("document.getElementById('status').textContent"),
          page.evaluate("document.getElementById('status').textContent"))
    enabled = page.evaluate("[...document.querySelectorAll('button.provider:not([disabled])')].map(b => b.dataset.providerId)")
    check("picker: Note and Location available", "com.contexthost.note" in enabled and "com.contexthost.location" in enabled, str(enabled))
    renderer(page)
    page.screenshot(artifacts, "1-picker.png")

    # Note, first with the title left out.
    page.click('button.provider[data-provider-id="com.contexthost.note"]')
    page.wait("document.querySelector('#panel form.ctx-form [data-field=title] input')", "the Note form")
    page.click("#panel [data-field=body] textarea")
    page.insert_text("Milk, eggs and **bread**.\nAlso coffee.")
    page.click("#panel form.ctx-form button[type=submit]")
    error = page.wait("""(() => { const e = document.querySelector('#panel [data-field=title].has-error .field-error');
        return e && !e.hidden ? e.textContent : null; })()""", "the title's field error")
    check("Note submitted without a title: the field error is shown", len(error) > 2, error)
    page.screenshot(artifacts, "2-note-field-error.png")
    page.click("#panel [data-field=title] input")
    page.type_keys("Groceries")
    page.click("#panel form.ctx-form button[type=submit]")
    page.wait("document.querySelector('#chips .attached[data-item-type=note]')", "the Note chip")
    title = page.evaluate("document.querySelector('#chips .attached .chip-title').textContent")
    check("Note attached: its chip", title == "Groceries", title)

    # Location, through the live search.
    page.click('button.provider[data-provider-id="com.contexthost.location"]')
    page.click("#panel [data-field=place] input")
    page.type_keys("Par")
    page.wait("[...document.querySelectorAll('#panel .search-results button.option .option-label')].some(e => e.textContent === 'Paris')",
              "'Paris' among the search results")
    labels = page.evaluate("[...document.querySelectorAll('#panel .search-results .option-label')].map(e => e.textContent)")
    check("Location search 'Par': live results from collect/query", labels and labels[0] == "Paris", str(labels))
    page.screenshot(artifacts, "3-location-search.png")
    page.click("#panel .search-results li:first-child button.option")
    page.click("#panel form.ctx-form button[type=submit]")
    page.wait("document.querySelectorAll('#chips .attached').length === 2", "the Location chip")
    check("Location attached: two chips", page.evaluate("document.querySelectorAll('#chips .attached').length") == 2)

    # A third item, removed again.
    page.click('button.provider[data-provider-id="com.contexthost.note"]')
    page.wait("document.querySelector('#panel form.ctx-form [data-field=title] input')", "the Note form again")
    page.click("#panel [data-field=title] input")
    page.insert_text("Scratch")
    page.click("#panel [data-field=body] textarea")
    page.insert_text("to be removed")
    page.click("#panel form.ctx-form button[type=submit]")
    page.wait("document.querySelectorAll('#chips .attached').length === 3", "the third chip")
    page.click("#chips .attached:nth-child(3) button.remove")
    page.wait("document.querySelectorAll('#chips .attached').length === 2", "the third chip removed")
    budget = page.evaluate("document.getElementById('budget').textContent")
    check("remove: back to two chips, the composer says 2 items", budget.startswith("2 of"), budget)

    # The Location's detail.
    page.click("#chips .attached:nth-child(2) button.open")
    page.wait("document.querySelector('#detail .detail svg.map-svg')", "the Location detail with its map")
    detail_title = page.evaluate("document.querySelector('#detail .detail-title').textContent")
    check("detail: the Location's detail with a map", "Paris" in detail_title, detail_title)
    page.screenshot(artifacts, "4-detail.png")

    # Send.
    page.click("#message")
    page.insert_text("See the attached note and place.")
    page.click("#send")
    page.wait("document.querySelector('#sent pre.json')", "the sent envelope")
    envelope = json.loads(page.evaluate("document.querySelector('#sent pre.json').textContent"))
    names = [item.get("displayName") for item in envelope.get("contextItems", [])]
    check("send: the envelope has the text and both items in order",
          envelope.get("text") == "See the attached note and place." and len(names) == 2
          and names[0] == "Groceries" and "Paris" in (names[1] or ""), json.dumps(envelope)[:400])
    note = base64.b64decode(envelope["contextItems"][0]["encodedContent"]).decode("utf-8", "replace")
    check("send: the note's encoded content is its Markdown", "Milk, eggs and **bread**." in note, note[:200])
    check("send: the page shows each envelope item", page.evaluate("document.querySelectorAll('#sent .envelope-item').length") == 2)
    check("send: the composer is emptied", page.evaluate("document.querySelectorAll('#chips .attached').length") == 0)
    page.screenshot(artifacts, "5-sent.png")

    # providers/changed, live: a new manifest in the watched folder.
    shutil.copy(os.path.join(ROOT, "manifests", "device-info.yaml"), os.path.join(manifests, "device-info.yaml"))
    added = """[...document.querySelectorAll('#events li[data-event="providers/changed"]')]
        .some(e => e.textContent.includes('added: com.contexthost.device-info'))"""
    page.wait(added, "providers/changed with the added provider on the page", 30)
    page.wait('document.querySelector(\'button.provider[data-provider-id="com.contexthost.device-info"]\')', "the new provider in the picker")
    check("providers/changed: shown with the added provider, and the picker updated", True)
    page.screenshot(artifacts, "6-providers-changed.png")


def hostile_web_root(binary):
    """--web-root with a file that is a symbolic link out of the folder: the host refuses to start.
    Control: the same folder with a regular copy starts and serves."""
    folder = tempfile.mkdtemp(prefix="composer-webroot-")
    try:
        for name in os.listdir(os.path.join(ROOT, "web")):
            shutil.copy(os.path.join(ROOT, "web", name), os.path.join(folder, name))
        control = Host(binary, os.path.join(ROOT, "manifests"), ["--no-watch", "--web-root", folder])
        try:
            status, _, body = http_get(control.port, "/composer.js", {"Host": f"127.0.0.1:{control.port}"})
            check("control: --web-root with regular files serves them", status == 200 and b"ContextHostClient" in body, str(status))
        finally:
            control.stop()
        os.remove(os.path.join(folder, "composer.js"))
        os.symlink(os.path.join(ROOT, "Package.swift"), os.path.join(folder, "composer.js"))
        with open(os.path.join(folder, "composer.js"), "rb") as f:
            check("control: the planted link reads Package.swift when followed", b"swift-tools-version" in f.read())
        result = subprocess.run([binary, "serve", "--listen", "127.0.0.1:0", "--no-watch", "--web-root", folder],
                                cwd=ROOT, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        error = result.stderr.decode("utf-8", "replace")
        check("--web-root with a symbolic link: refused at start, naming the file",
              result.returncode != 0 and "composer.js is a symbolic link" in error and "listening" not in error,
              f"exit {result.returncode}: {error[:300]}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    binary, artifacts = sys.argv[1], os.path.abspath(sys.argv[2])
    executable = find_chromium()
    if executable is None:
        print("FAIL chromium: not installed; install it with 'sudo apt-get install -y chromium' (.ci/run does this on CI)", flush=True)
        return 1
    shutil.rmtree(artifacts, ignore_errors=True)
    os.makedirs(artifacts)
    manifests = tempfile.mkdtemp(prefix="composer-manifests-")
    for name in ("note.yaml", "location.yaml"):
        with open(os.path.join(ROOT, "manifests", name), encoding="utf-8") as f:
            text = f.read()
        # The Location gazetteer's default paths are relative to the manifest's folder. The
        # preview budget (also the availability check's: Location reads its 2.5 MB gazetteer then)
        # is raised from 500 ms so a busy 2-core CI machine does not make a provider unavailable.
        with open(os.path.join(manifests, name), "w", encoding="utf-8") as f:
            f.write(text.replace("../data/", ROOT + "/data/").replace("preview: 500ms", "preview: 10s"))
    host = Host(binary, manifests)
    user_data_dir = tempfile.mkdtemp(prefix="composer-chromium-")
    browser = None
    try:
        static_route(host, os.path.join(ROOT, "web"))
        hostile_web_root(binary)
        with open(os.path.join(artifacts, "chromium.log"), "wb") as log:
            browser = Browser(executable, user_data_dir, log)
        deadline = time.monotonic() + 30
        target = browser.call("Target.createTarget", {"url": "about:blank"}, deadline=deadline)["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True}, deadline=deadline)["sessionId"]
        for method in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
            browser.call(method, session=session, deadline=deadline)
        browser.call("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": 1000, "deviceScaleFactor": 1, "mobile": False},
                     session=session, deadline=deadline)
        page = Page(browser, session, 30)
        navigation = page.call("Page.navigate", {"url": host.page})
        check("navigate to the composer", not navigation.get("errorText"), navigation.get("errorText", ""))
        try:
            composer(page, host, manifests, artifacts)
        except (TimeoutError, RuntimeError, ConnectionError, KeyError, IndexError) as error:
            check("scenario finished", False, f"{type(error).__name__}: {error}")
            try:
                page.screenshot(artifacts, "failure.png")
            except Exception:
                pass
        browser.drain(0.3)
        problems, requests, _ = browser.page_events()
        own = (host.page, host.page.replace("http://", "ws://"), "data:")
        foreign = [url for url in requests if not url.startswith(own)]
        inline = [p for p in problems if "inline event handler" in p]
        check("control: the CSP blocked the control's inline handler (one violation)", len(inline) == 1, str(len(inline)))
        problems = [p for p in problems if "inline event handler" not in p]
        check("no other console errors, exceptions or CSP violations", not problems, "; ".join(problems)[:800])
        check("no request to another origin", not foreign, str(foreign[:5]))
    finally:
        if browser:
            browser.close()
        host.stop()
        shutil.rmtree(user_data_dir, ignore_errors=True)
        shutil.rmtree(manifests, ignore_errors=True)
    print(f"{ws_check.checks - ws_check.failures} of {ws_check.checks} checks passed", flush=True)
    return 0 if ws_check.failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

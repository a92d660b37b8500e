#!/usr/bin/env python3
"""Loads a local HTML page in headless Chromium and reports what a person would see go wrong.

Usage: check_page.py PAGE.html SCREENSHOT_DIR [--section-selector CSS] [--timeout SECONDS]

Drives Debian's `chromium` over the DevTools protocol on a pipe (--remote-debugging-pipe:
NUL-terminated JSON messages, fd 3 to the browser, fd 4 from it), with the standard library only.
It opens the page, waits for the load event, and collects:
  - console errors (console.error/assert), uncaught exceptions, browser log errors (CSP
    violations, failed loads);
  - every network request the page made, and the ones that failed (a static page from a file
    should make none besides itself);
  - the ids of the elements matching the section selector (default section[id^=provider-]);
  - a full-page screenshot (full-page.png) and one per section (section-<id>.png) in SCREENSHOT_DIR.
Prints one JSON object on stdout:
  {"title", "sections":[ids], "errors":[text], "requests":[urls], "failedRequests":[text],
   "scripts": n, "screenshots":[paths], "pageSize":{"width","height"}, "browser": version}
Exit status: 0 when the page was checked (the caller judges the result), 2 on a usage error,
3 when chromium is missing or did not answer in time.
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import base64
import fcntl
import select


class Browser:
    def __init__(self, executable, user_data_dir, log_file):
        to_browser_read, to_browser_write = os.pipe()
        from_browser_read, from_browser_write = os.pipe()
        # Keep the child's ends away from 3 and 4 so the dup2 below cannot clobber them.
        child_in = fcntl.fcntl(to_browser_read, fcntl.F_DUPFD_CLOEXEC, 10)
        child_out = fcntl.fcntl(from_browser_write, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_read)
        os.close(from_browser_write)

        def wire():
            os.dup2(child_in, 3, inheritable=True)
            os.dup2(child_out, 4, inheritable=True)
            os.setsid()

        arguments = [
            executable, "--headless", "--remote-debugging-pipe", "--disable-gpu",
            "--user-data-dir=" + user_data_dir, "--no-first-run", "--no-default-browser-check",
            "--disable-extensions", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
            "--password-store=basic", "--use-mock-keychain", "--window-size=1280,900", "about:blank",
        ]
        if os.geteuid() == 0:
            arguments.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.process = subprocess.Popen(
            arguments, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file,
            close_fds=False, preexec_fn=wire)
        os.close(child_in)
        os.close(child_out)
        self.write_fd = to_browser_write
        self.read_fd = from_browser_read
        self.buffer = b""
        self.next_id = 1
        self.events = []

    def send(self, method, params=None, session=None):
        message_id = self.next_id
        self.next_id += 1
        message = {"id": message_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        data = json.dumps(message).encode() + b"\0"
        while data:
            written = os.write(self.write_fd, data)
            data = data[written:]
        return message_id

    def read_message(self, deadline):
        while b"\0" not in self.buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("chromium did not answer in time")
            ready, _, _ = select.select([self.read_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.read_fd, 1 << 20)
            if not chunk:
                raise ConnectionError("chromium closed the DevTools pipe (see chromium.log)")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, params=None, session=None, deadline=None):
        message_id = self.send(method, params, session)
        while True:
            message = self.read_message(deadline)
            if message.get("id") == message_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message.get("result", {})
            if "method" in message:
                self.events.append(message)

    def wait_for_event(self, name, deadline):
        for index, event in enumerate(self.events):
            if event["method"] == name:
                return self.events.pop(index)
        while True:
            message = self.read_message(deadline)
            if message.get("method") == name:
                return message
            if "method" in message:
                self.events.append(message)

    def drain(self, seconds):
        """Collects events arriving within `seconds`."""
        deadline = time.monotonic() + seconds
        try:
            while True:
                message = self.read_message(deadline)
                if "method" in message:
                    self.events.append(message)
        except TimeoutError:
            pass

    def page_events(self):
        """What the events collected so far say of the page: its errors (exceptions, console
        errors and asserts, error log entries), the URLs it requested, and the requests that failed."""
        errors, requests, failed = [], [], []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                errors.append("exception: " + details.get("exception", {}).get("description", details.get("text", "?")))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                texts = [str(arg.get("value", arg.get("description", ""))) for arg in params.get("args", [])]
                errors.append(f"console.{params['type']}: " + " ".join(texts))
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                entry = params["entry"]
                errors.append(f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}".strip())
            elif method == "Network.requestWillBeSent":
                requests.append(params.get("request", {}).get("url", "?"))
            elif method == "Network.loadingFailed":
                failed.append(f"{params.get('type', '?')}: {params.get('errorText') or params.get('blockedReason') or '?'}")
        return errors, requests, failed

    def close(self):
        try:
            self.send("Browser.close")
            self.process.wait(timeout=5)
        except Exception:
            pass
        if self.process.poll() is None:
            try:
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.process.wait()
        for fd in (self.write_fd, self.read_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def main():
    arguments = sys.argv[1:]
    selector = "section[id^=provider-]"
    timeout = 40.0
    positional = []
    index = 0
    while index < len(arguments):
        if arguments[index] == "--section-selector":
            selector = arguments[index + 1]
            index += 2
        elif arguments[index] == "--timeout":
            timeout = float(arguments[index + 1])
            index += 2
        else:
            positional.append(arguments[index])
            index += 1
    if len(positional) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    page, screenshot_dir = os.path.abspath(positional[0]), os.path.abspath(positional[1])
    if not os.path.isfile(page):
        print(f"error: {page} does not exist", file=sys.stderr)
        return 2
    executable = find_chromium()
    if executable is None:
        print("error: chromium is not installed; install it with 'sudo apt-get install -y chromium' "
              "(.ci/run does this on CI)", file=sys.stderr)
        return 3
    os.makedirs(screenshot_dir, exist_ok=True)
    deadline = time.monotonic() + timeout
    user_data_dir = tempfile.mkdtemp(prefix="gallery-chromium-")
    log_path = os.path.join(screenshot_dir, "chromium.log")
    with open(log_path, "wb") as log_file:
        browser = Browser(executable, user_data_dir, log_file)
    try:
        version = browser.call("Browser.getVersion", deadline=deadline).get("product", "?")
        target = browser.call("Target.createTarget", {"url": "about:blank"}, deadline=deadline)["targetId"]
        session = browser.call("Target.attachToTarget", {"targetId": target, "flatten": True}, deadline=deadline)["sessionId"]
        for method in ("Runtime.enable", "Log.enable", "Page.enable", "Network.enable"):
            browser.call(method, session=session, deadline=deadline)
        browser.call("Emulation.setDeviceMetricsOverride",
                     {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
                     session=session, deadline=deadline)
        url = "file://" + page
        browser.events.clear()
        navigation = browser.call("Page.navigate", {"url": url}, session=session, deadline=deadline)
        browser.wait_for_event("Page.loadEventFired", deadline)
        browser.drain(0.5)  # late console messages and requests
        errors, requests, failed = browser.page_events()
        if navigation.get("errorText"):
            errors.insert(0, f"navigation failed: {navigation['errorText']}")

        probe = browser.call("Runtime.evaluate", {
            "expression": """JSON.stringify({
                title: document.title,
                sections: [...document.querySelectorAll(%s)].map(e => {
                    const r = e.getBoundingClientRect();
                    return {id: e.id, x: r.left + scrollX, y: r.top + scrollY, width: r.width, height: r.height};
                }),
                scripts: document.scripts.length,
                width: document.documentElement.scrollWidth,
                height: document.documentElement.scrollHeight
            })""" % json.dumps(selector),
            "returnByValue": True,
        }, session=session, deadline=deadline)
        if "exceptionDetails" in probe:
            errors.append("probe failed: " + json.dumps(probe["exceptionDetails"]))
            info = {"title": "", "sections": [], "scripts": -1, "width": 1280, "height": 900}
        else:
            info = json.loads(probe["result"]["value"])

        screenshots = []

        def capture(name, clip):
            # Chromium cannot draw much more than 16,000 pixels in one capture: scale tall ones down.
            scale = min(1.0, 16000 / max(clip["height"], 1))
            shot = browser.call("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": dict(clip, scale=scale),
            }, session=session, deadline=deadline)
            path = os.path.join(screenshot_dir, name)
            with open(path, "wb") as file:
                file.write(base64.b64decode(shot["data"]))
            screenshots.append(path)

        capture("full-page.png", {"x": 0, "y": 0, "width": info["width"], "height": info["height"]})
        for section in info["sections"]:
            safe = "".join(c if c.isalnum() or c in ".-_" else "_" for c in section["id"])
            capture(f"section-{safe}.png", {
                "x": max(section["x"] - 8, 0), "y": max(section["y"] - 8, 0),
                "width": section["width"] + 16, "height": section["height"] + 16,
            })
        result = {
            "title": info["title"],
            "sections": [section["id"] for section in info["sections"]],
            "errors": errors,
            "requests": requests,
            "failedRequests": failed,
            "scripts": info["scripts"],
            "screenshots": screenshots,
            "pageSize": {"width": info["width"], "height": info["height"]},
            "browser": version,
        }
        print(json.dumps(result, indent=2))
        return 0
    except (TimeoutError, ConnectionError, RuntimeError) as error:
        print(f"error: {error}; chromium's log: {log_path}", file=sys.stderr)
        return 3
    finally:
        browser.close()
        shutil.rmtree(user_data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

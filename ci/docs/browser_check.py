#!/usr/bin/env python3
"""Open the built documentation site in a real browser (headless Chromium) and fail on what a reader would see
broken.

It serves ``build/docs/site`` on 127.0.0.1, then, through the Chrome DevTools protocol, loads the home page, the
dashboard, the install page, every package's overview and Evidence page, an API reference, the notebooks, the
gallery and its examples, and fails when

- the page logs a console error or throws an uncaught exception;
- a resource fails to load (a 404, or any request that leaves 127.0.0.1: the site must work offline);
- the API page has no API section (no ``.doc-object`` rendered by mkdocstrings), or shows raw TeX;
- the claims dashboard has no table of claims, or its first column (the verdict) is not inside the window, or a
  notebook page, the gallery or one of its examples shows no figure (a rendered ``<img>``);
- text overflows horizontally (issue 66): the page is wider than the window, a paragraph, list item or heading
  reaches past the window's right edge, or a code block cuts its lines at the frame;

and saves a screenshot of each page. Without a Chromium on PATH (Debian's ``chromium`` package) it fails with
``--require`` (``make docs`` passes it; ``.ci/run`` installs Chromium when it is missing) and otherwise says so and
exits 0.

Usage: ``python ci/docs/browser_check.py [--site build/docs/site] [--shots build/docs/screenshots]``
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import functools
import http.server
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # noqa: D102 - keep CI output short
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(site: Path):
    handler = functools.partial(_Quiet, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()


class Browser:
    """A headless Chromium driven over the DevTools protocol (one tab)."""

    def __init__(self, exe: str):
        import websocket  # noqa: PLC0415 - the docs dependency group

        self.port = _free_port()
        self.profile = tempfile.mkdtemp(prefix="iclr25-chromium-")
        self.proc = subprocess.Popen(
            [exe, "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
             "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
             f"--remote-debugging-port={self.port}", f"--user-data-dir={self.profile}", "--window-size=1400,1000",
             "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.time() + 30
        targets = None
        while time.time() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/json", timeout=2) as r:
                    targets = [t for t in json.load(r) if t.get("type") == "page"]
                if targets:
                    break
            except OSError:
                time.sleep(0.2)
        if not targets:
            self.close()
            raise RuntimeError("chromium did not open its DevTools port within 30 s")
        self.ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"], timeout=60, suppress_origin=True)
        self._id = 0
        self.events: list[dict] = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params):
        self._id += 1
        my = self._id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def drain(self, seconds: float) -> None:
        self.ws.settimeout(0.2)
        end = time.time() + seconds
        while time.time() < end:
            try:
                msg = json.loads(self.ws.recv())
            except Exception:  # noqa: BLE001 - a timeout: nothing arrived
                continue
            if "method" in msg:
                self.events.append(msg)
        self.ws.settimeout(60)

    def evaluate(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        return res.get("result", {}).get("value")

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.ws.close()
        self.proc.terminate()
        with contextlib.suppress(Exception):
            self.proc.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)


def problems_of(events: list[dict], base: str) -> list[str]:
    out = []
    requests: dict[str, str] = {}
    for e in events:
        m, p = e["method"], e.get("params", {})
        if m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            out.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append(f"uncaught exception: {d.get('exception', {}).get('description') or d.get('text')}")
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            out.append(f"browser error: {p['entry'].get('text')} {p['entry'].get('url', '')}".strip())
        elif m == "Network.requestWillBeSent":
            url = p["request"]["url"]
            requests[p["requestId"]] = url
            if not (url.startswith(base) or url.startswith("data:") or url.startswith("blob:")
                    or url == "about:blank"):
                out.append(f"request leaves the site: {url}")
        elif m == "Network.responseReceived" and p["response"].get("status", 200) >= 400:
            out.append(f"HTTP {p['response']['status']}: {p['response']['url']}")
        elif m == "Network.loadingFailed" and not p.get("canceled"):
            out.append(f"failed to load: {requests.get(p['requestId'], '?')} ({p.get('errorText')})")
    return sorted(set(out))


def overflow_problems(info: dict) -> list[str]:
    """What a reader would see cut off or scrolled sideways on a page (``check_page``'s ``overflow`` list)."""
    return [f"horizontal overflow: {o}" for o in info.get("overflow") or []]


def check_page(b: Browser, base: str, path: str, shot: Path, *, need_api: bool, need_table: bool = False,
               need_image: bool = False) -> dict:
    b.events.clear()
    b.call("Page.navigate", url=f"{base}/{path}")
    deadline = time.time() + 30
    while time.time() < deadline and b.evaluate("document.readyState") != "complete":
        time.sleep(0.2)
    b.drain(1.0)  # let late requests and console messages arrive
    info = b.evaluate(r"""({title: document.title,
        api: document.querySelectorAll('.doc-object').length,
        mathRendered: [...document.querySelectorAll('math')].filter(e => e.getBoundingClientRect().height > 0).length,
        rawMath: (document.body.innerText.match(/\.\. math::|:math:`|\\frac\{/g) || []).length,
        tableRows: document.querySelectorAll('article table tbody tr, .md-content table tbody tr').length,
        images: [...document.querySelectorAll('img')].filter(e => e.naturalWidth > 0 && e.getBoundingClientRect().height > 0).length,
        h1: (document.querySelector('h1') || {}).textContent || '',
        verdictRight: (() => { const td = document.querySelector('.md-content table tbody td');
                               return td ? td.getBoundingClientRect().right : null; })(),
        width: document.documentElement.clientWidth,
        overflow: (() => {
            const W = document.documentElement.clientWidth, out = [];
            const name = e => e.tagName.toLowerCase() + ' "' + e.textContent.trim().slice(0, 50) + '"';
            if (document.documentElement.scrollWidth > W + 1)
                out.push('the page is ' + document.documentElement.scrollWidth + ' px wide in a ' + W + ' px window');
            for (const e of document.querySelectorAll('.md-content pre'))
                if (e.scrollWidth > e.clientWidth + 1) out.push('code cut at the frame: ' + name(e));
            for (const e of document.querySelectorAll('.md-content p, .md-content li, .md-content h1, .md-content h2, .md-content h3'))
                if (!e.closest('table') && e.getBoundingClientRect().right > W + 1) out.push('text past the window: ' + name(e));
            return out.slice(0, 5); })()})""")
    if need_table:  # the screenshot shows the main claims' table with its verdict column, not the page's top
        b.evaluate("(() => { const h = [...document.querySelectorAll('h2')].find(e => "
                   "e.textContent.startsWith('Main claims')); if (h) h.scrollIntoView({block: 'start'}); })()")
        time.sleep(0.3)
    if need_image:  # the screenshot shows the first figure, not the top of a long page
        b.evaluate("(() => { const i = [...document.querySelectorAll('img')].find(e => e.naturalWidth > 0);"
                   " if (i) i.scrollIntoView({block: 'center'}); })()")
        time.sleep(0.3)
    png = b.call("Page.captureScreenshot", format="png")["data"]
    shot.parent.mkdir(parents=True, exist_ok=True)
    shot.write_bytes(base64.b64decode(png))
    probs = problems_of(b.events, base)
    if need_api and not info["api"]:
        probs.append("no API section (.doc-object) on the page")
    if need_table and not info["tableRows"]:
        probs.append("no table rows on the page (the claims dashboard must list claims)")
    if need_image and not info["images"]:
        probs.append("no rendered figure (<img>) on the page")
    if need_table and info["verdictRight"] is not None and info["verdictRight"] > info["width"]:
        probs.append(f"the dashboard's verdict column ends at {info['verdictRight']:.0f} px, outside the "
                     f"{info['width']} px window")
    probs += overflow_problems(info)
    if info["rawMath"]:
        probs.append(f"{info['rawMath']} equations left as raw reStructuredText/TeX")
    return {"page": path, "title": info["title"], "h1": info["h1"].strip(), "api_objects": info["api"],
            "equations": info["mathRendered"], "table_rows": info["tableRows"], "images": info["images"],
            "screenshot": str(shot), "problems": probs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--site", type=Path, default=ROOT / "build" / "docs" / "site")
    ap.add_argument("--shots", type=Path, default=ROOT / "build" / "docs" / "screenshots")
    ap.add_argument("--pages", nargs="*", default=None,
                    help="pages to load (default: the home page, the claims dashboard, the install page, every "
                         "package's overview and Evidence page, bopito's API reference, every notebook, the "
                         "gallery and each of its examples)")
    ap.add_argument("--require", action="store_true", help="fail when no Chromium is installed")
    args = ap.parse_args(argv)
    exe = next((shutil.which(n) for n in BROWSERS if shutil.which(n)), None)
    if exe is None:
        print("browser check: skipped, no chromium on PATH (Debian: apt-get install chromium)")
        return 1 if args.require else 0
    if not (args.site / "index.html").is_file():
        print(f"browser check: {args.site} has no index.html; run make docs first", file=sys.stderr)
        return 2
    notebooks = sorted(p.parent.name for p in (args.site / "notebooks").glob("*/index.html"))
    examples = sorted(p.parent.relative_to(args.site).as_posix() for p in (args.site / "gallery").glob("*/*/index.html"))
    gallery = ["gallery/"] if (args.site / "gallery" / "index.html").is_file() else []
    pages = args.pages if args.pages is not None else (
        ["", "claims/", "install/", "packages/bopito/api/"]
        + sorted(f"packages/{e.parent.name}/" for e in (args.site / "packages").glob("*/index.html"))
        + sorted(f"packages/{e.parent.parent.name}/evidence/" for e in (args.site / "packages").glob("*/evidence/index.html"))
        + [f"notebooks/{n}/" for n in notebooks] + gallery + [f"{e}/" for e in examples])
    results = []
    with serve(args.site) as base:
        b = Browser(exe)
        try:
            for path in pages:
                name = path.strip("/").replace("/", "-") or "home"
                results.append(check_page(b, base, path, args.shots / f"{name}.png",
                                          need_api=path.rstrip("/").endswith("api"),
                                          need_table=path.strip("/") == "claims",
                                          need_image=path.startswith(("notebooks/", "gallery/"))))
        finally:
            b.close()
    bad = 0
    for r in results:
        status = "ok" if not r["problems"] else "FAILED"
        bad += bool(r["problems"])
        print(f"browser check: /{r['page']} {status} - {r['title']!r}, {r['api_objects']} API objects, "
              f"{r['equations']} equations rendered, {r['table_rows']} table rows, {r['images']} figures, "
              f"screenshot {r['screenshot']}")
        for p in r["problems"]:
            print(f"    {p}")
    (args.shots / "report.json").write_text(json.dumps(results, indent=2))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

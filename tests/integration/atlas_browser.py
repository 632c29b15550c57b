"""Open every page of a kcs publish bundle in headless Chromium and fail on
a console message of level error or warning, an uncaught exception, a
failed load (network or file), an image that did not load, a request that
leaves file:// (the atlas must work offline), or an internal link whose
file or #id does not exist in the rendered page it points to.

Talks to Chromium over the DevTools protocol on a pipe
(--remote-debugging-pipe: JSON messages separated by NUL on fds 3 and 4),
so it needs no Python package beyond the standard library.
Usage: atlas_browser.py CHROMIUM BUNDLE_DIR SCREENSHOT.png [PAGE.html ...]
(pages default to every .html of the bundle)."""
import base64
import json
import os
import subprocess
import sys
import time
import urllib.parse

chromium, bundle, shot = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
pages = sys.argv[4:] or sorted(
    os.path.relpath(os.path.join(r, n), bundle)
    for r, _, ns in os.walk(bundle) for n in ns if n.endswith(".html"))

to_r, to_w = os.pipe()    # we write, chromium reads (its fd 3)
from_r, from_w = os.pipe()  # chromium writes (its fd 4), we read


def child_fds():
    os.dup2(to_r, 3)
    os.dup2(from_w, 4)


proc = subprocess.Popen(
    [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe",
     "--no-first-run", "--disable-extensions", "--user-data-dir=" + os.path.join(
         os.environ.get("TMPDIR", "/tmp"), "kcs-chromium-%d" % os.getpid()), "about:blank"],
    preexec_fn=child_fds, pass_fds=(3, 4), stdout=subprocess.DEVNULL,
    stderr=subprocess.DEVNULL)
os.close(to_r)
os.close(from_w)
buf = b""
next_id = 0
events = []


def send(method, params=None, session=None):
    global next_id
    next_id += 1
    msg = {"id": next_id, "method": method, "params": params or {}}
    if session:
        msg["sessionId"] = session
    os.write(to_w, json.dumps(msg).encode() + b"\0")
    return next_id


def read_msg(deadline):
    global buf
    while b"\0" not in buf:
        if time.time() > deadline:
            raise TimeoutError("chromium did not answer")
        chunk = os.read(from_r, 1 << 20)
        if not chunk:
            raise RuntimeError("chromium closed the pipe")
        buf += chunk
    raw, buf = buf.split(b"\0", 1)
    return json.loads(raw)


def call(method, params=None, session=None, timeout=30):
    i = send(method, params, session)
    deadline = time.time() + timeout
    while True:
        m = read_msg(deadline)
        if m.get("id") == i:
            if "error" in m:
                raise RuntimeError("%s: %s" % (method, m["error"]))
            return m.get("result", {})
        events.append(m)


def wait_event(name, session, timeout=30):
    deadline = time.time() + timeout
    for i, m in enumerate(events):
        if m.get("method") == name and m.get("sessionId") == session:
            del events[i]
            return m
    while True:
        m = read_msg(deadline)
        if m.get("method") == name and m.get("sessionId") == session:
            return m
        events.append(m)


problems = []
ids_cache = {}
COLLECT = """JSON.stringify({
  links: Array.from(document.querySelectorAll('a[href]')).map(a => new URL(a.getAttribute('href'), document.baseURI).href),
  ids: Array.from(document.querySelectorAll('[id]')).map(e => e.id),
  images: Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0]),
  svgs: document.querySelectorAll('svg').length})"""
try:
    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    sess = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    for dom in ("Page", "Runtime", "Log", "Network"):
        call(dom + ".enable", session=sess)
    call("Emulation.setDeviceMetricsOverride", {"width": 1280, "height": 1600,
                                                 "deviceScaleFactor": 1, "mobile": False},
         session=sess)
    rendered = {}
    for page in pages:
        url = "file://" + urllib.parse.quote(os.path.join(bundle, page))
        events.clear()
        call("Page.navigate", {"url": url}, session=sess)
        wait_event("Page.loadEventFired", sess)
        info = json.loads(call("Runtime.evaluate", {"expression": COLLECT, "returnByValue": True},
                               session=sess)["result"]["value"])
        rendered[page] = info
        if page == os.environ.get("ATLAS_SHOT_PAGE", "index.html"):
            png = call("Page.captureScreenshot", {"format": "png"}, session=sess)["data"]
            os.makedirs(os.path.dirname(os.path.abspath(shot)), exist_ok=True)
            with open(shot, "wb") as f:
                f.write(base64.b64decode(png))
        for m in events:
            meth, p = m.get("method"), m.get("params", {})
            if meth == "Runtime.consoleAPICalled" and p.get("type") in ("error", "warning", "assert"):
                problems.append("%s: console %s: %s" % (page, p["type"],
                                " ".join(str(a.get("value", a.get("description"))) for a in p.get("args", []))))
            elif meth == "Runtime.exceptionThrown":
                problems.append("%s: exception: %s" % (page, p["exceptionDetails"].get("text")))
            elif meth == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                problems.append("%s: %s: %s" % (page, p["entry"]["level"], p["entry"]["text"]))
            elif meth == "Network.loadingFailed":
                problems.append("%s: a load failed: %s" % (page, p.get("errorText")))
            elif meth == "Network.requestWillBeSent":
                u = p["request"]["url"]
                if not u.startswith(("file://", "data:", "about:")):
                    problems.append("%s: fetches %s (the atlas must work offline)" % (page, u))
        for src, ok in info["images"]:
            if not ok:
                problems.append("%s: image did not load: %s" % (page, src))
    # links: the file exists inside the bundle, the #id exists in its rendered DOM
    for page, info in rendered.items():
        for href in info["links"]:
            u = urllib.parse.urlparse(href)
            if u.scheme in ("http", "https", "mailto"):
                continue
            if u.scheme != "file":
                problems.append("%s: link %s" % (page, href))
                continue
            path = urllib.parse.unquote(u.path)
            if not os.path.isfile(path) or not path.startswith(bundle + "/"):
                problems.append("%s: dead link %s" % (page, href))
                continue
            if u.fragment:
                rel = os.path.relpath(path, bundle)
                ids = rendered[rel]["ids"] if rel in rendered else None
                if ids is None:
                    ids = ids_cache.get(rel)
                if ids is None:
                    problems.append("%s: link %s into a page not opened" % (page, href))
                elif u.fragment not in ids:
                    problems.append("%s: dead link %s (no such id)" % (page, href))
    n_svg = sum(i["svgs"] for i in rendered.values())
finally:
    try:
        call("Browser.close", timeout=5)
    except Exception:
        pass
    proc.kill()
    proc.wait()

for p in problems[:50]:
    print("atlas_browser: " + p, file=sys.stderr)
if problems:
    print("atlas_browser: %d problems in %d pages" % (len(problems), len(pages)), file=sys.stderr)
    sys.exit(1)
if not os.path.getsize(shot):
    sys.exit("atlas_browser: empty screenshot")
print("atlas_browser: %d pages, %d links, %d figures: no console error, failed load or dead "
      "link; screenshot %s" % (len(pages), sum(len(i["links"]) for i in rendered.values()),
                               n_svg, shot))

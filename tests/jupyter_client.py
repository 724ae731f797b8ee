#!/usr/bin/python3
"""A Jupyter client through the app proxy, as a browser would do it
(tests/test_e2e_interactive.c), with packaged libraries only: urllib with a
cookie jar and websocket-client (Debian python3-websocket).

  jupyter_client.py URL_WITH_TOKEN CODE

URL_WITH_TOKEN is what `sokovan app-token SESSION jupyter` prints. The
token is traded for the proxy's cookie (302), the notebook's tree page
sets Jupyter's _xsrf cookie, a kernel is created through the REST API
(POST with X-XSRFToken), its channels are opened over WebSocket with both
cookies, CODE is executed, and the kernel is deleted again. Prints
"kernel=ID", "result=TEXT" (the execute_result's text/plain) and
"status=ok"; exits 1 with the reason otherwise.
"""
import http.cookiejar
import json
import sys
import urllib.error
import urllib.request
import uuid

import websocket


def fail(why):
    print("error=%s" % why)
    sys.exit(1)


def session_open(url):
    jar = http.cookiejar.CookieJar()
    op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    base = url.split("?")[0]
    if not base.endswith("/"):
        base += "/"
    with op.open(url) as r:            # token -> cookie, then the app
        r.read()
    with op.open(base + "tree") as r:  # sets _xsrf
        r.read()
    cookies = {c.name: c.value for c in jar}
    if "sokovan_app" not in cookies or "_xsrf" not in cookies:
        fail("cookies after sign-in: %s" % sorted(cookies))
    return op, base, cookies


def api(op, base, cookies, method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(base + path, data=data, method=method)
    req.add_header("X-XSRFToken", cookies["_xsrf"])
    req.add_header("Content-Type", "application/json")
    with op.open(req) as r:
        text = r.read().decode()
        return r.status, json.loads(text) if text else None


def message(session, code):
    return {
        "header": {"msg_id": uuid.uuid4().hex, "username": "sokovan-test",
                   "session": session, "msg_type": "execute_request",
                   "version": "5.3", "date": ""},
        "parent_header": {}, "metadata": {}, "channel": "shell",
        "buffers": [],
        "content": {"code": code, "silent": False, "store_history": True,
                    "user_expressions": {}, "allow_stdin": False,
                    "stop_on_error": True},
    }


def execute(base, cookies, kernel, code):
    ws_base = base.replace("http://", "ws://", 1).replace("https://",
                                                          "wss://", 1)
    session = uuid.uuid4().hex
    url = "%sapi/kernels/%s/channels?session_id=%s" % (ws_base, kernel,
                                                       session)
    cookie = "; ".join("%s=%s" % kv for kv in cookies.items())
    ws = websocket.create_connection(url, timeout=120,
                                     header=["Cookie: " + cookie])
    msg = message(session, code)
    ws.send(json.dumps(msg))
    result, idle = None, False
    while result is None or not idle:
        m = json.loads(ws.recv())
        if m.get("parent_header", {}).get("msg_id") != msg["header"]["msg_id"]:
            continue
        t = m["msg_type"]
        if t == "execute_result":
            result = m["content"]["data"]["text/plain"]
        elif t == "error":
            fail("kernel error: %s" % m["content"].get("evalue"))
        elif t == "status" and m["content"]["execution_state"] == "idle":
            idle = True
            if result is None:
                fail("idle without a result")
    ws.close()
    return result


def main():
    if len(sys.argv) != 3:
        fail("usage: jupyter_client.py URL_WITH_TOKEN CODE")
    op, base, cookies = session_open(sys.argv[1])
    status, k = api(op, base, cookies, "POST", "api/kernels",
                    {"name": "python3"})
    if status != 201:
        fail("POST api/kernels: %d" % status)
    print("kernel=%s" % k["id"])
    print("result=%s" % execute(base, cookies, k["id"], sys.argv[2]))
    status, _ = api(op, base, cookies, "DELETE", "api/kernels/" + k["id"])
    if status != 204:
        fail("DELETE the kernel: %d" % status)
    print("status=ok")


if __name__ == "__main__":
    try:
        main()
    except urllib.error.HTTPError as e:
        fail("%s %d %s" % (e.url, e.code, e.read()[:200]))
    except (OSError, websocket.WebSocketException) as e:
        fail(repr(e))

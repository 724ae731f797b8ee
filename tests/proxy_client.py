#!/usr/bin/python3
"""The app proxy's test client (tests/test_e2e_proxy.c), with packaged
libraries only: urllib (cookies, redirects), http.client (keep-alive),
hashlib, and websocket-client (Debian python3-websocket).

  proxy_client.py cookie URL_WITH_TOKEN      follow the token -> cookie
                                             exchange, then GET the app twice
  proxy_client.py get URL [TOKEN]            status and body ('-': no token)
  proxy_client.py keepalive HOST PORT PATH TOKEN N
                                             N GETs on one connection
  proxy_client.py sha URL TOKEN              sha256 and size of the body
  proxy_client.py ws URL TOKEN               WebSocket echo of 3 messages
  proxy_client.py wsloop URL TOKEN SIZE      on one WebSocket, a SIZE-byte
                                             message and its echo every
                                             second until killed
  proxy_client.py wsping URL TOKEN           one echo, then only pings (a
                                             forgotten tab) until killed
"""
import hashlib
import http.client
import http.cookiejar
import os
import ssl
import sys
import urllib.error
import urllib.request


def cookie(url):
    jar = http.cookiejar.CookieJar()
    op = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    with op.open(url) as r:
        first = r.read().decode()
    names = sorted(c.name for c in jar)
    # The token is gone from the URL after the exchange: only the cookie
    # authenticates this second request.
    base = url.split("?")[0]
    with op.open(base) as r:
        second = r.read().decode()
    print("cookies=%s" % ",".join(names))
    print("httponly=%s" % all(c.has_nonstandard_attr("HttpOnly") for c in jar))
    print("first=%s" % first.strip())
    print("second=%s" % second.strip())


def tls_context():
    """$SKV_PROXY_CA: verify an https proxy against this PEM file."""
    ca = os.environ.get("SKV_PROXY_CA")
    return ssl.create_default_context(cafile=ca) if ca else None


def get(url, token):
    req = urllib.request.Request(url)
    if token != "-":
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, context=tls_context()) as r:
            print(r.status, r.read().decode().strip())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode().strip())


def keepalive(host, port, path, token, n):
    c = http.client.HTTPConnection(host, int(port))
    socks = set()
    for _ in range(int(n)):
        c.request("GET", path, headers={"Authorization": "Bearer " + token})
        r = c.getresponse()
        body = r.read().decode().strip()
        socks.add(id(c.sock))
        print(r.status, body)
    print("connections=%d" % len(socks))


def sha(url, token):
    req = urllib.request.Request(url)
    req.add_header("Authorization", "Bearer " + token)
    h, n = hashlib.sha256(), 0
    with urllib.request.urlopen(req) as r:
        while True:
            b = r.read(1 << 20)
            if not b:
                break
            h.update(b)
            n += len(b)
    print(h.hexdigest(), n)


def ws(url, token):
    import websocket
    c = websocket.create_connection(
        url, header=["Authorization: Bearer " + token], timeout=20)
    for m in ["hello", "x" * 200000, "bye"]:
        c.send(m)
        got = c.recv()
        print("echo %d %s" % (len(got), got == m))
    c.close()


def wsloop(url, token, size):
    import time
    import websocket
    c = websocket.create_connection(
        url, header=["Authorization: Bearer " + token], timeout=20)
    n, m = 0, "t" * int(size)
    while True:
        c.send(m)
        if c.recv() != m:
            sys.exit("wrong echo")
        n += 1
        print("echo %d" % n, flush=True)
        time.sleep(1)


def wsping(url, token):
    import time
    import websocket
    c = websocket.create_connection(
        url, header=["Authorization: Bearer " + token], timeout=20)
    c.send("open")
    print("echo %s" % c.recv(), flush=True)
    while True:
        c.ping()
        time.sleep(1)


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"cookie": cookie, "get": get, "keepalive": keepalive, "sha": sha,
     "ws": ws, "wsloop": wsloop, "wsping": wsping}[cmd](*args)

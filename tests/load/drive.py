#!/usr/bin/env python3
"""Sends COUNT requests of one kind, one after another over one keep-alive connection, and fails
on any answer that is not a success. The fixed request mix of tests/load/callgrind.sh.

    drive.py URL COUNT KIND [JSON-BODY]

KIND is `get` (GET URL), `rpc` (POST JSON-BODY), `rpc_gzip` (the same, accepting gzip: every
answer must come back gzipped) or `pair` (svc_handshake of $LOAD_INTENT and $LOAD_CONTRACT, then
svc_render of the handshake it answered: COUNT pairs). The bearer is $LOAD_BEARER."""

import gzip
import http.client
import json
import os
import re
import sys
import urllib.parse

url, count, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3]
body = sys.argv[4] if len(sys.argv) > 4 else ""
target = urllib.parse.urlsplit(url)
connection = http.client.HTTPConnection(target.hostname, target.port, timeout=60)
headers = {
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
    "authorization": "Bearer " + os.environ.get("LOAD_BEARER", "load"),
}


def send(method, payload=None, extra=None):
    connection.request(method, target.path, body=payload, headers={**headers, **(extra or {})})
    response = connection.getresponse()
    raw = response.read()
    if extra and response.getheader("content-encoding") != "gzip":
        sys.exit(f"drive.py: the answer was not gzipped: {response.status} {raw[:300]!r}")
    text = (gzip.decompress(raw) if extra else raw).decode()
    failed = re.match(r'\{"jsonrpc":"2\.0","id":[^,]*,"error":', text) or '"isError":true' in text
    if response.status != 200 or failed:
        sys.exit(f"drive.py: unexpected answer {response.status}: {text[:300]}")
    return text


def tool(name, arguments):
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return json.loads(send("POST", json.dumps(request)))["result"]["structuredContent"]


for _ in range(count):
    if kind == "get":
        send("GET")
    elif kind == "rpc":
        send("POST", body)
    elif kind == "rpc_gzip":
        send("POST", body, {"accept-encoding": "gzip"})
    elif kind == "pair":
        contract = json.loads(os.environ["LOAD_CONTRACT"])
        handshake = tool("svc_handshake", {"intent": os.environ["LOAD_INTENT"], "blueprintDraft": {"contract": contract}})
        rendered = tool("svc_render", {"handshakeId": handshake["handshakeId"], "props": {"title": "load"}})
        if rendered["cache"]["hit"] is not True:
            sys.exit(f"drive.py: the render was not a cache hit: {rendered}")
    else:
        sys.exit(f"drive.py: unknown kind {kind}")

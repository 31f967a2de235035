#!/usr/bin/env python3
"""A real third-party OAuth client: the official Python SDK (PyPI ``mcp``, its
``OAuthClientProvider``, which also checks that the metadata ``issuer`` matches the
authorization server it discovered) against an svc server started with ``serve --oauth``.

    SVC_PEER_API_KEY=svc_... tests/peers/.venv/bin/python tests/peers/python_sdk_oauth.py http://127.0.0.1:PORT/mcp
    SVC_PEER_PAIR_CODE=123456 tests/peers/.venv/bin/python tests/peers/python_sdk_oauth.py http://127.0.0.1:PORT/mcp

From the server URL alone the SDK discovers, registers and "redirects the browser"; the
redirect handler plays the person: it submits the consent form with the key or the pair code,
and checks that the redirect carries ``state`` and an ``iss`` byte-identical to the metadata
``issuer``. The SDK exchanges the code and the script lists tools. Exits 0 on success; on a
failure prints ``python-sdk-oauth: FAIL: <what>`` to stderr and exits 1.
"""

from __future__ import annotations

import html
import os
import re
import sys
import traceback
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
from mcp import ClientSession
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

REDIRECT_URL = "http://127.0.0.1:47614/callback"
CLIENT_NAME = "svc python-sdk oauth peer"


class PeerFailure(Exception):
    pass


def check(condition: Any, message: str, detail: Any = None) -> None:
    if not condition:
        raise PeerFailure(message + ("" if detail is None else f"\n  got: {detail!r}"))


def log(message: str) -> None:
    print(f"python-sdk-oauth: {message}", flush=True)


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


class Person:
    """Approves the consent page the SDK sends the browser to."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.answer: dict[str, list[str]] = {}

    async def approve(self, authorization_url: str) -> None:
        async with httpx.AsyncClient(follow_redirects=False) as http:
            page = await http.get(authorization_url)
            check(page.status_code == 200, "no consent form", (page.status_code, page.text))
            check(CLIENT_NAME in page.text, "the consent form does not name the client", page.text)
            form = {
                name: html.unescape(value)
                for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', page.text)
            }
            action = html.unescape(re.search(r'<form method="post" action="([^"]+)">', page.text).group(1))
            if os.environ.get("SVC_PEER_PAIR_CODE"):
                form["pair_code"] = os.environ["SVC_PEER_PAIR_CODE"]
                log("consent: submitting the pair code")
            else:
                check(os.environ.get("SVC_PEER_API_KEY"), "set SVC_PEER_API_KEY or SVC_PEER_PAIR_CODE")
                form["api_key"] = os.environ["SVC_PEER_API_KEY"]
                log("consent: submitting a key")
            answer = await http.post(action, data=form)
            check(answer.status_code == 302, "the consent POST did not redirect", (answer.status_code, answer.text))
            location = urlsplit(answer.headers["location"])
            check(f"{location.scheme}://{location.netloc}{location.path}" == REDIRECT_URL, "redirected elsewhere", location)
            self.answer = parse_qs(location.query)
            metadata = (await http.get(f"{self.base}/.well-known/oauth-authorization-server")).json()
            check(self.answer.get("iss") == [metadata["issuer"]], "iss is not the metadata issuer", self.answer)

    async def callback(self) -> tuple[str, str | None]:
        return self.answer["code"][0], self.answer.get("state", [None])[0]


async def run(url: str) -> None:
    parts = urlsplit(url)
    person = Person(f"{parts.scheme}://{parts.netloc}")
    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=url,
        client_metadata=OAuthClientMetadata(
            client_name=CLIENT_NAME,
            redirect_uris=[REDIRECT_URL],
            grant_types=["authorization_code"],
            response_types=["code"],
            token_endpoint_auth_method="none",
            scope="mcp",
        ),
        storage=storage,
        redirect_handler=person.approve,
        callback_handler=person.callback,
    )
    async with create_mcp_http_client(auth=provider) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                check(storage.client is not None and storage.client.client_secret is None, "no public client", storage.client)
                check(storage.tokens is not None and storage.tokens.refresh_token is None, "tokens", storage.tokens)
                log(f"registered {storage.client.client_id}; token exchanged")
                listed = await session.list_tools()
                names = [t.name for t in listed.tools]
                check("svc_render" in names, "tools/list lacks svc_render", names)
                log(f"tools/list with the OAuth token: {len(names)} tools")
    log("OK")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python_sdk_oauth.py <http://127.0.0.1:PORT/mcp>", file=sys.stderr)
        return 2
    try:
        anyio.run(run, sys.argv[1])
        return 0
    except PeerFailure as failure:
        print(f"python-sdk-oauth: FAIL: {failure}", file=sys.stderr)
    except BaseException:  # noqa: BLE001 - any crash of the peer is a failure to report
        print(f"python-sdk-oauth: FAIL: {traceback.format_exc()}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())

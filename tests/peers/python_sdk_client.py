#!/usr/bin/env python3
"""A real third-party MCP peer: the official Python SDK client (PyPI ``mcp``,
version pinned in requirements.txt) over Streamable HTTP against an svc ``/mcp``
endpoint.

    tests/peers/.venv/bin/python tests/peers/python_sdk_client.py http://127.0.0.1:PORT/mcp

Runs initialize -> tools/list -> svc_handshake -> svc_render -> svc_update ->
svc_consume and asserts on the real results. Exits 0 on success; on any failure it
prints ``python-sdk-client: FAIL: <what>`` to stderr and exits 1. The bearer sent is
$SVC_PEER_BEARER, or ``test`` (any bearer works on a ``serve --dev-allow-all`` server).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import traceback
from contextlib import asynccontextmanager
from typing import Any, AsyncIterator

import anyio
from mcp import ClientSession
from mcp.shared._httpx_utils import create_mcp_http_client

try:  # mcp >= 1.24: the transport takes a ready httpx client (headers set on it).
    from mcp.client.streamable_http import streamable_http_client
except ImportError:  # older 1.x: only the headers-taking form exists.
    streamable_http_client = None  # type: ignore[assignment]
    from mcp.client.streamable_http import streamablehttp_client

EXPECTED_TOOLS = [
    "svc_handshake",
    "svc_render",
    "svc_update",
    "svc_amend",
    "svc_consume",
    "svc_emit",
    "svc_get_session",
    "svc_get_render_source",
    "svc_list_sessions",
    "svc_list_gadgets",
    "svc_list_themes",
]


class PeerFailure(Exception):
    pass


def check(condition: Any, message: str, detail: Any = None) -> None:
    if not condition:
        shown = "" if detail is None else "\n  got: " + json.dumps(detail, indent=2, default=str)
        raise PeerFailure(message + shown)


def log(message: str) -> None:
    print(f"python-sdk-client: {message}", flush=True)


@asynccontextmanager
async def open_streams(url: str, headers: dict[str, str]) -> AsyncIterator[tuple[Any, Any]]:
    if streamable_http_client is not None:
        async with create_mcp_http_client(headers=headers) as http:
            # 1.x yields (read, write, get_session_id); 2.x yields (read, write).
            async with streamable_http_client(url, http_client=http) as streams:
                yield streams[0], streams[1]
    else:
        async with streamablehttp_client(url, headers=headers) as (read, write, _session_id):
            yield read, write


def dump(result: Any) -> Any:
    return result.model_dump(mode="json", by_alias=True, exclude_none=True)


async def call(
    session: ClientSession, name: str, args: dict[str, Any], progress_callback: Any = None
) -> tuple[Any, dict[str, Any]]:
    """Calls a tool and returns (result, structuredContent), failing on an error result."""
    result = await session.call_tool(name, args, progress_callback=progress_callback)
    check(not result.isError, f"{name} returned an error result", dump(result))
    sc = result.structuredContent
    check(isinstance(sc, dict), f"{name} returned no structuredContent object", dump(result))
    check(isinstance(result.content, list), f"{name} returned no content list", dump(result))
    return result, sc


async def run(url: str) -> None:
    bearer = os.environ.get("SVC_PEER_BEARER") or "test"
    async with open_streams(url, {"Authorization": f"Bearer {bearer}"}) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            log(
                f"connected to {init.serverInfo.name} {init.serverInfo.version}, "
                f"protocol {init.protocolVersion}"
            )
            check(init.serverInfo.name, "initialize result has no serverInfo.name", dump(init))
            check(init.capabilities.tools is not None, "server does not declare the tools capability", dump(init))

            # tools/list: every svc_* tool with an object input schema.
            listed = await session.list_tools()
            by_name = {t.name: t for t in listed.tools}
            missing = [n for n in EXPECTED_TOOLS if n not in by_name]
            check(not missing, f"tools/list lacks {', '.join(missing)}", sorted(by_name))
            for name in EXPECTED_TOOLS:
                schema = by_name[name].inputSchema
                check(schema.get("type") == "object", f"{name}.inputSchema.type is not 'object'", schema)
            log(f"tools/list: {len(listed.tools)} tools, all {len(EXPECTED_TOOLS)} svc_* tools present")

            # svc_handshake
            _, hs = await call(
                session,
                "svc_handshake",
                {
                    "intent": f"python sdk peer {time.time_ns()}",
                    "blueprintDraft": {
                        "contract": {
                            "propsSpec": {
                                "type": "object",
                                "properties": {"title": {"type": "string"}, "count": {"type": "integer"}},
                                "required": ["title"],
                            },
                            "actionSpec": {"approve": {"description": "The user approves."}},
                            "streamSpec": {},
                            "contextSpec": {},
                        }
                    },
                },
            )
            check(isinstance(hs.get("handshakeId"), str) and hs["handshakeId"], "handshake has no handshakeId", hs)
            check(hs.get("action") in ("create", "reuse", "update", "replace"), "handshake action is not a go", hs)
            check(isinstance(hs.get("suggestion"), dict), "handshake has no suggestion", hs)
            check(
                isinstance(hs.get("propsSchemaHash"), str) and re.fullmatch(r"[0-9a-f]{64}", hs["propsSchemaHash"]),
                "handshake propsSchemaHash is not 64 lowercase hex digits",
                hs,
            )
            log(f"svc_handshake: {hs['action']} ({hs['suggestion'].get('origin')}), handshakeId {hs['handshakeId']}")

            # svc_render, following its progress (a progress callback makes the SDK send
            # _meta.progressToken; the server streams notifications/progress, then the result)
            progress: list[tuple[float, str]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progress.append((value, message or ""))

            rendered, rs = await call(
                session,
                "svc_render",
                {"handshakeId": hs["handshakeId"], "props": {"title": "Order 42", "count": 1}},
                progress_callback=on_progress,
            )
            check(rs.get("outcome") == "rendered", "svc_render outcome is not 'rendered'", rs)
            check((rs.get("cache") or {}).get("hit") is False, "the unique intent should generate", rs)
            stages = [message.split(":")[0] for _, message in progress]
            for stage in ("queued", "prompting", "compiling", "done"):
                check(stage in stages, f"svc_render progress has no {stage!r} stage", progress)
            check(stages.index("queued") < stages.index("compiling") < stages.index("done"), "stages out of order", progress)
            check(all(b[0] > a[0] for a, b in zip(progress, progress[1:])), "progress does not increase", progress)
            log(f"svc_render progress: {' -> '.join(stages)}")
            session_id = rs.get("sessionId")
            check(isinstance(session_id, str) and session_id, "svc_render has no sessionId", rs)
            check(
                rs.get("resourceUri") == f"ui://svc/render/{session_id}",
                "svc_render resourceUri is not ui://svc/render/<sessionId>",
                rs,
            )
            check(isinstance(rs.get("blueprintId"), str), "svc_render has no blueprintId", rs)
            check(isinstance((rs.get("cache") or {}).get("hit"), bool), "svc_render has no cache.hit", rs)
            meta = rendered.meta or {}
            check(
                (meta.get("ui") or {}).get("resourceUri") == rs["resourceUri"],
                "svc_render result _meta.ui.resourceUri does not mirror resourceUri",
                meta,
            )
            check(isinstance(meta.get("ai.svc/render"), dict), "svc_render result has no _meta['ai.svc/render']", meta)
            log(f"svc_render: rendered, sessionId {session_id}")

            # svc_update (replace with changed props) -> epoch 2
            _, up = await call(
                session,
                "svc_update",
                {"sessionId": session_id, "kind": "replace", "props": {"title": "Order 42 (approved?)", "count": 2}},
            )
            check(up.get("sessionId") == session_id, "svc_update sessionId differs", up)
            check(up.get("updated") is True, "svc_update updated is not true", up)
            check(up.get("epoch") == 2, "svc_update epoch is not 2 after the first changing update", up)
            check(
                up.get("resourceUri") == f"ui://svc/render/{session_id}#2",
                "svc_update resourceUri is not epoch-pinned ui://svc/render/<sessionId>#2",
                up,
            )
            log(f"svc_update: updated, epoch {up['epoch']}")

            # svc_consume (timeout 0: immediate)
            _, cs = await call(session, "svc_consume", {"sessionId": session_id, "timeout": 0})
            check(isinstance(cs.get("events"), list), "svc_consume events is not a list", cs)
            check(cs.get("status") == "active", "svc_consume status is not 'active'", cs)
            log(f"svc_consume: {len(cs['events'])} event(s), status {cs['status']}")

            log("OK")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: python_sdk_client.py <http://127.0.0.1:PORT/mcp>", file=sys.stderr)
        return 2
    try:
        anyio.run(run, sys.argv[1])
    except PeerFailure as err:
        print(f"python-sdk-client: FAIL: {err}", file=sys.stderr)
        return 1
    except BaseException:  # noqa: BLE001 - any transport/SDK error is a peer failure
        print("python-sdk-client: FAIL: unexpected error:\n" + traceback.format_exc(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

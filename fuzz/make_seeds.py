#!/usr/bin/env python3
"""Writes the starting seeds of fuzz/corpus/<target>/ (run from the repository root). The
hostile ones are the inputs of issue 13; the corpus test (fuzzing/tests/corpus.rs) runs them all
on stable. Seeds a fuzzer later finds are added beside these by hand, never regenerated."""

import json
import os

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


def seed(target, name, data):
    os.makedirs(os.path.join(ROOT, target), exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    elif not isinstance(data, bytes):
        data = json.dumps(data, separators=(",", ":")).encode()
    with open(os.path.join(ROOT, target, name), "wb") as f:
        f.write(data)


# contract: a draft, or { contract, props }.
simple = {
    "propsSpec": {"type": "object", "properties": {"title": {"type": "string"}, "count": {"type": "integer"}}},
    "actionSpec": {"ping": {"type": "object"}},
    "streamSpec": {"ticks": {"mode": "append", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}}}},
}
seed("contract", "simple", {"contract": simple, "props": {"title": "t", "count": 1}})
seed("contract", "simple_bad_props", {"contract": simple, "props": {"title": 3}})
seed("contract", "unknown_keys", {"propsSpec": {"type": "object"}, "colour": "red", "actionSpec": []})


def ref_chain(links):
    defs = {f"l{i}": {"$ref": f"#/$defs/l{i - 1}"} for i in range(1, links)}
    defs["l0"] = {"type": "string"}
    return {"contract": {"propsSpec": {"type": "object", "properties": {"x": {"$ref": f"#/$defs/l{links - 1}"}}, "$defs": defs}}, "props": {"x": "v"}}


# Issue 13 #1: a $ref chain (12,500 links there; 2,000 here stays under contract_bytes, so the
# ref_depth budget is what refuses it) and one just over that budget.
seed("contract", "ref_chain_2000", ref_chain(2000))
seed("contract", "ref_chain_40", ref_chain(40))

# Issue 13 #3: level i is allOf of two $refs to level i-1, 41 levels (2^40 steps to validate).
levels = {"l0": {"type": "string"}}
for i in range(1, 41):
    levels[f"l{i}"] = {"allOf": [{"$ref": f"#/$defs/l{i - 1}"}, {"$ref": f"#/$defs/l{i - 1}"}]}
seed("contract", "allof_explosion_41", {"contract": {"propsSpec": {"type": "object", "properties": {"x": {"$ref": "#/$defs/l40"}}, "$defs": levels}}, "props": {"x": "v"}})

# The same explosion driven by the value: each allOf branch steps into `a` and refers back.
recursive = {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}, "$defs": {"n": {"allOf": [{"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}, {"type": "object", "properties": {"a": {"$ref": "#/$defs/n"}}}]}}}
deep = "v"
for _ in range(41):
    deep = {"a": deep}
seed("contract", "allof_recursive_41_deep_value", {"contract": {"propsSpec": recursive}, "props": deep})
seed("contract", "nul_in_schema", {"contract": {"propsSpec": {"type": "object", "properties": {"a\u0000b": {"type": "string"}}}}, "props": {"a\u0000b": "\u0000"}})

# tsx_compile: component source.
seed("tsx_compile", "component", "import { useState } from 'react';\nexport default function Card({ title }: { title: string }) {\n  const [n, setN] = useState(0);\n  return <button onClick={() => setN(n + 1)}>{title} {n}</button>;\n}\n")
# Issue 13 #2: parentheses 2,000 deep (about 4 KB).
seed("tsx_compile", "parens_2000_deep", "export default function C() { return " + "(" * 2000 + "1" + ")" * 2000 + "; }\n")
seed("tsx_compile", "jsx_500_deep", "export default function C() { return " + "<div>" * 500 + "x" + "</div>" * 500 + "; }\n")
seed("tsx_compile", "forbidden_uses", "import x from 'node:fs';\nexport default function C() { fetch('/x'); return <div>{eval('1')}</div>; }\n")
seed("tsx_compile", "nul_byte", b"export default function C() { return <div>\x00</div>; }\n")
seed("tsx_compile", "unterminated", "export default function C() { return <div>{'")

# jsonrpc_request: a /mcp POST body.
seed("jsonrpc_request", "tools_call", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "svc_list_sessions", "arguments": {}}})
seed("jsonrpc_request", "notification", {"jsonrpc": "2.0", "method": "notifications/initialized"})
seed("jsonrpc_request", "response", {"jsonrpc": "2.0", "id": "a", "result": {}})
seed("jsonrpc_request", "batch", [{"jsonrpc": "2.0", "id": 1, "method": "ping"}])
seed("jsonrpc_request", "object_id", {"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping"})
seed("jsonrpc_request", "nul_bytes", b'{"jsonrpc":"2.0","id":1,"method":"tools/call\\u0000","params":{"name":"a\x00"}}')
seed("jsonrpc_request", "huge_id", '{"jsonrpc":"2.0","id":1e400,"method":"ping"}')
seed("jsonrpc_request", "deep_params", '{"jsonrpc":"2.0","id":1,"method":"ping","params":' + '{"a":' * 200 + "1" + "}" * 201)

# ws_frame: a /ws text frame.
seed("ws_frame", "subscribe", {"type": "subscribe", "payload": {"sessionId": "s", "wsToken": "t", "fromSeq": 3}})
seed("ws_frame", "action", {"type": "action", "payload": {"sessionId": "s", "type": "data:submit", "payload": {"action": "save", "data": {"n": 1}}, "clientSeq": 7}})
# Issue 13 #10: clientSeq 1e20 and "x" (refused, never dropped).
seed("ws_frame", "client_seq_1e20", '{"type":"action","payload":{"type":"data:submit","payload":{"action":"a"},"clientSeq":1e20}}')
seed("ws_frame", "client_seq_text", {"type": "action", "payload": {"type": "data:submit", "payload": {"action": "a"}, "clientSeq": "x"}})
seed("ws_frame", "client_seq_2_pow_53", {"type": "action", "payload": {"type": "data:submit", "payload": {"action": "a"}, "clientSeq": 9007199254740992}})
seed("ws_frame", "nul_in_session", {"type": "subscribe", "payload": {"sessionId": "s\u0000", "wsToken": "t"}})
seed("ws_frame", "channel_subscribe", {"type": "channel_subscribe", "payload": {"channel": "orders"}})
seed("ws_frame", "ping", {"type": "ping"})
seed("ws_frame", "not_json", "{type: ping")

# manifest: a registry artifact manifest.
signature = {"algorithm": "ed25519", "publicKeyId": "abcdefghijklmnop", "bundleSha384": "sha384-OLBgp1GsljhM2TJ+sbHjaiH9txEUvgdDTAzHv2P24donTt6/529l+9Ua0vFImLlb"}
gadget = {"kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.2.3", "visibility": "private", "description": "Charts", "tags": ["chart"], "signature": signature, "authorPublicKey": "A" * 43 + "=", "gadget": {"exports": [{"hook": "useChart", "description": "d", "usage": "u", "example": "e"}]}}
seed("manifest", "gadget", gadget)
blueprint = dict(gadget, kind="blueprint", name="orders")
del blueprint["gadget"]
blueprint["blueprint"] = {"contract": simple, "entryPoint": "index.tsx", "fixtureProps": {"title": "t"}}
seed("manifest", "blueprint", blueprint)
seed("manifest", "gadget_kind_blueprint_body", dict(blueprint, kind="gadget"))
seed("manifest", "bad_version", dict(gadget, version="01.2.3-\u0000"))
seed("manifest", "blueprint_ref_chain", dict(blueprint, blueprint=dict(blueprint["blueprint"], contract=ref_chain(40)["contract"])))

# app_manifest: an app manifest (svc.json) or a blueprint's svc.ui.json (svc-manifest).
app = {"app": {"gadgets": [{"package": "@acme/maps", "version": "1.0.0", "exports": [{"hook": "useMap"}], "connect": ["https://tiles.example.com"]}], "defaultThemeId": "default", "availableThemeIds": ["default"]}, "blueprints": {"include": ["uis/**/svc.ui.json", ".svc/installed-blueprints/*/svc.ui.json"]}, "registry": "https://registry.example"}
seed("app_manifest", "app", app)
seed("app_manifest", "ui", {"id": "order-approval", "name": "Order approval", "entryPoint": "index.tsx", "featured": True, "mount": "mcpApps", "contract": simple, "fixtureProps": {"title": "x"}})
seed("app_manifest", "ui_minimal", {"id": "@acme/invoice@1.2.0", "contract": {}, "entryPoint": "index.tsx"})
seed("app_manifest", "empty_object", {})
seed("app_manifest", "not_json", '{ "app": ')
seed("app_manifest", "empty", "")
# Deep nesting: past serde_json's 128 levels, and just under it inside free-form values.
seed("app_manifest", "deep_include", '{"blueprints":{"include":' + "[" * 5000 + "]" * 5000 + "}}")
seed("app_manifest", "deep_fixture_props", '{"id":"d","entryPoint":"i.tsx","fixtureProps":' + '{"a":' * 120 + "1" + "}" * 121)
seed("app_manifest", "deep_contract", '{"id":"d","entryPoint":"i.tsx","contract":{"propsSpec":' + '{"items":' * 120 + "{}" + "}" * 121 + "}")
# Huge strings: a 60 KB name, id and glob.
seed("app_manifest", "huge_ui_name", {"id": "x", "name": "n" * 60000, "entryPoint": "index.tsx"})
seed("app_manifest", "huge_glob", {"blueprints": {"include": ["*" * 2 + "/" + "[a-z]" * 10000]}})
seed("app_manifest", "huge_theme_ids", {"app": {"availableThemeIds": ["t" * 100] * 500}})
# Bad globs: an unclosed class, `***`, `**` inside a name.
seed("app_manifest", "bad_glob_class", {"blueprints": {"include": ["uis/[/svc.ui.json"]}})
seed("app_manifest", "bad_glob_stars", {"blueprints": {"include": ["ok/*.json", "uis/***/svc.ui.json"]}})
seed("app_manifest", "bad_glob_recursive", {"blueprints": {"include": ["uis/a**/svc.ui.json"]}})
seed("app_manifest", "glob_escapes_directory", {"blueprints": {"include": ["../../../etc/*", "/abs/**/svc.ui.json"]}})
# Wrong types.
seed("app_manifest", "app_is_text", {"app": "x"})
seed("app_manifest", "gadgets_object", {"app": {"gadgets": {"package": "@acme/maps"}}})
seed("app_manifest", "include_text", {"blueprints": {"include": "uis/*"}})
seed("app_manifest", "ui_wrong_types", {"id": 7, "entryPoint": ["index.tsx"], "featured": "yes", "mount": "react"})
seed("app_manifest", "top_level_array", [app])
# Rules past the schema: transports, theme ids.
seed("app_manifest", "gadget_relative_bundle", {"app": {"gadgets": [{"package": "@acme/maps", "version": "1", "bundleUrl": "/maps.js"}]}})
seed("app_manifest", "gadget_bare_connect", {"app": {"gadgets": [{"package": "@acme/maps", "version": "1", "connect": ["tiles.example.com"]}]}})
seed("app_manifest", "unknown_themes", {"app": {"availableThemeIds": ["neon", "plaid"]}})
seed("app_manifest", "default_not_available", {"app": {"defaultThemeId": "default", "availableThemeIds": ["nope", "dark"]}})
seed("app_manifest", "no_default_allowlist", {"app": {"availableThemeIds": ["nope", "dark"]}})
seed("app_manifest", "nul_bytes", b'{"app":{"defaultThemeId":"default\\u0000"},"blueprints":{"include":["a\\u0000/*"]},"registry":"\x00"}')
seed("app_manifest", "invalid_utf8", b'{"registry":"\xff\xfe"}')

-- One JSON-RPC request, sent again and again: the body comes from $LOAD_BODY, the bearer from
-- $LOAD_BEARER (tests/load/run.sh sets both), an Accept-Encoding from $LOAD_ACCEPT_ENCODING
-- when set (then every answer must come back in that coding). Any answer but 200 is counted as
-- an error.
--
-- With $LOAD_CHECK_EACH=0 no answer is looked at here: wrk calls Lua for an answer only when
-- `response` is defined, and then first copies the answer's headers and body into Lua strings;
-- searching the 97 KiB unencoded card document cost that row a sixth of its throughput, on the
-- cores the server shares with wrk (BENCHMARKS.md, session 40). /healthz's row runs without a
-- script; run.sh checks such a row's answers by their mean size instead (`measure_by_size`).
wrk.method = "POST"
wrk.body = os.getenv("LOAD_BODY")
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Authorization"] = "Bearer " .. (os.getenv("LOAD_BEARER") or "load")
local encoding = os.getenv("LOAD_ACCEPT_ENCODING") or ""
if encoding ~= "" then
  wrk.headers["Accept-Encoding"] = encoding
end

local failures = 0

local function check(status, headers, body)
  -- A JSON-RPC error or a tool error travels in a 200: count those too. The tool error is looked
  -- for from its rarer `E`: LuaJIT's plain find stops at every occurrence of the first byte, and
  -- a leading `"` made the check of a 23 KB tools/list cost wrk (on the server's cores) about
  -- 15% of the row's throughput (BENCHMARKS.md, session 15).
  -- A compressed answer cannot be searched; that it came back compressed is what is checked.
  local unexpected
  if encoding ~= "" then
    unexpected = (headers["content-encoding"] or headers["Content-Encoding"]) ~= encoding
  else
    unexpected = body:find('^{"jsonrpc":"2.0","id":[^,]*,"error":') or body:find('Error":true', 1, true)
  end
  if status ~= 200 or unexpected then
    failures = failures + 1
    if failures == 1 then
      io.stderr:write("rpc.lua: unexpected answer " .. status .. ": " .. body:sub(1, 300) .. "\n")
    end
  end
end

if os.getenv("LOAD_CHECK_EACH") ~= "0" then
  response = check
end

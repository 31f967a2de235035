-- The warm reuse pair: svc_handshake of a cached blueprint, then svc_render of the handshake it
-- answered. Connections of one wrk thread share this state: every handshake answer queues its
-- id, and the next request sent renders the oldest queued id (else it is a new handshake).
-- $LOAD_INTENT and $LOAD_CONTRACT name the blueprint run.sh primed.
local bearer = "Bearer " .. (os.getenv("LOAD_BEARER") or "load")
local handshake = string.format(
  '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"svc_handshake","arguments":{"intent":"%s","blueprintDraft":{"contract":%s}}}}',
  os.getenv("LOAD_INTENT"), os.getenv("LOAD_CONTRACT"))
local headers = {
  ["Content-Type"] = "application/json",
  ["Accept"] = "application/json, text/event-stream",
  ["Authorization"] = bearer,
}
local pending = {}
local failures = 0

function request()
  local id = table.remove(pending, 1)
  if id then
    local body = string.format(
      '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"svc_render","arguments":{"handshakeId":"%s","props":{"title":"load"}}}}',
      id)
    return wrk.format("POST", nil, headers, body)
  end
  return wrk.format("POST", nil, headers, handshake)
end

function response(status, headers, body)
  local id = body:match('"handshakeId":"([^"]+)"')
  if id and not body:find('"sessionId"', 1, true) then
    table.insert(pending, id)
  end
  local miss = body:find('"hit":false', 1, true)
  if status ~= 200 or miss or body:find('Error":true', 1, true) or body:find('^{"jsonrpc":"2.0","id":[^,]*,"error":') then
    failures = failures + 1
    if failures == 1 then
      io.stderr:write("warm_pair.lua: unexpected answer " .. status .. ": " .. body:sub(1, 300) .. "\n")
    end
  end
end

-- wrk script of bench/serve_load.sh: POSTs infer requests to vm_serve, rotating over
-- the prepared JSON bodies $SERVE_BODIES_DIR/body_*.json (tiny BERT at mixed lengths),
-- and prints one parsable line when done. With $SERVE_MAX_REQUESTS, each of wrk's
-- threads stops after its share of that many responses.
local bodies = {}
local dir = os.getenv("SERVE_BODIES_DIR")
for i = 0, 63 do
  local f = io.open(string.format("%s/body_%d.json", dir, i), "rb")
  if not f then break end
  bodies[#bodies + 1] = f:read("*a")
  f:close()
end
assert(#bodies > 0, "no bodies in " .. tostring(dir))

local counter = 0
local answered = 0
local limit = nil

-- Runs in wrk's main Lua state once per thread: numbers the threads, so each seeds its
-- own generator (every thread's state otherwise starts from the same seed).
local threads_set_up = 0
function setup(thread)
  threads_set_up = threads_set_up + 1
  thread:set("thread_number", threads_set_up)
end

function init(args)
  local total = tonumber(os.getenv("SERVE_MAX_REQUESTS") or "")
  local threads = tonumber(os.getenv("SERVE_WRK_THREADS") or "1")
  if total then limit = math.ceil(total / threads) end
  math.randomseed(thread_number or 1)
  counter = math.random(#bodies) - 1  -- threads start at different bodies
end

function request()
  counter = counter + 1
  local body = bodies[(counter % #bodies) + 1]
  return wrk.format("POST", nil, {["Content-Type"] = "application/json"}, body)
end

if os.getenv("SERVE_MAX_REQUESTS") then
  function response(status, headers, body)
    answered = answered + 1
    if limit and answered >= limit then wrk.thread:stop() end
  end
end

function done(summary, latency, requests)
  local errors = summary.errors
  io.write(string.format(
      "RESULT requests=%d seconds=%.2f rps=%.1f p50_ms=%.2f p99_ms=%.2f non2xx=%d socket_errors=%d\n",
      summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
      latency:percentile(50) / 1000, latency:percentile(99) / 1000, errors.status,
      errors.connect + errors.read + errors.write + errors.timeout))
end

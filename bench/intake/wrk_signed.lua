-- wrk script for bench/bench_intake_wrk.py: POSTs signed webhook deliveries.
--
-- The bench writes N distinct bodies (one per PR number) and their X-Hub-Signature-256
-- values before the clock starts (HMAC covers the body only, so a body signed once can
-- be sent many times). Every request gets its own X-GitHub-Delivery, so a server that
-- dedupes by delivery id stores every request. Environment:
--   WRK_DELIVERIES  directory holding index.txt ("<file> <signature> <event>" per line)
--   WRK_RUN         a tag that makes delivery ids unique across runs
-- done() prints one JSON line (prefixed "WRK_JSON ") for the bench to parse.

local deliveries = {}
local counter = 0
local thread_id = 0
local run_tag = os.getenv("WRK_RUN") or "run"
local next_thread = 0

function setup(thread)
  thread:set("thread_id", next_thread)
  next_thread = next_thread + 1
end

function init(args)
  local dir = os.getenv("WRK_DELIVERIES")
  for line in io.lines(dir .. "/index.txt") do
    local file, signature, event = line:match("^(%S+) (%S+) (%S+)$")
    local handle = assert(io.open(dir .. "/" .. file, "rb"))
    local body = handle:read("*a")
    handle:close()
    deliveries[#deliveries + 1] = {body = body, signature = signature, event = event}
  end
  thread_id = tonumber(wrk.thread:get("thread_id")) or 0
end

function request()
  counter = counter + 1
  local d = deliveries[(counter % #deliveries) + 1]
  local headers = {
    ["Content-Type"] = "application/json",
    ["User-Agent"] = "GitHub-Hookshot/bench-wrk",
    ["X-GitHub-Event"] = d.event,
    ["X-GitHub-Delivery"] = string.format("%s-%d-%d", run_tag, thread_id, counter),
    ["X-Hub-Signature-256"] = d.signature,
  }
  return wrk.format("POST", nil, headers, d.body)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests":%d,"duration_us":%d,"bytes":%d,"non_2xx":%d,' ..
    '"connect_errors":%d,"read_errors":%d,"write_errors":%d,"timeouts":%d,' ..
    '"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, summary.bytes, e.status, e.connect, e.read,
    e.write, e.timeout, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max))
end

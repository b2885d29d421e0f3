#!/usr/bin/env bash
# Time to the first answer token: a cold `north exec` against
# `north exec --attach` to a running `north serve`, in a project with an MCP
# server (North's own test server on Node, 20 tools). A cold run starts the
# server and waits for its tools before the first request; an attached run
# finds the project and its server warm. Scripted model (no network); the
# harness measures the first byte of standard output.
#
#   scripts/bench-attach.sh [RUNS]    default 20
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-20}"
command -v node >/dev/null || { echo "needs node" >&2; exit 2; }
cargo build --release -q -p north
north="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/north"
server_js="$(pwd)/tests/interop/mcp/fake-server.mjs"
work="$(mktemp -d /tmp/nb.XXXXXX)"
trap 'kill "$serve_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/project/.git" "$work/home"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" XDG_STATE_HOME="$work/home/state" \
  XDG_DATA_HOME="$work/home/data" XDG_RUNTIME_DIR="$work/run"
cat > "$work/project/.mcp.json" <<JSON
{"mcpServers": {"bench": {"command": "node", "args": ["$server_js", "many", "--count", "20"]}}}
JSON
python3 - "$runs" "$work" <<'PY'
import json, sys
runs, work = int(sys.argv[1]), sys.argv[2]
json.dump({"turns": [{"text": "first token"}]}, open(f"{work}/one.json", "w"))
json.dump({"turns": [{"text": "first token"}] * (runs + 1)}, open(f"{work}/many.json", "w"))
PY
cd "$work/project"
"$north" serve --trust --script "$work/many.json" --listen "unix:$work/s.sock" > "$work/ready" &
serve_pid=$!
for _ in $(seq 100); do [ -s "$work/ready" ] && break; sleep 0.05; done
python3 - "$north" "$work" "$runs" <<'PY'
import statistics, subprocess, sys, time
north, work, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
def first_byte(args):
    start = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    p.stdout.read(1)
    t = time.perf_counter() - start
    p.stdout.read()
    p.wait()
    return t * 1000
cold = [first_byte([north, "exec", "--trust", "--script", f"{work}/one.json", "hi"]) for _ in range(runs)]
# The first attached run opens the project on the server (its MCP server starts then).
first = first_byte([north, "exec", f"--attach=unix:{work}/s.sock", "hi"])
warm = [first_byte([north, "exec", f"--attach=unix:{work}/s.sock", "hi"]) for _ in range(runs - 1)]
q = lambda xs, p: sorted(xs)[min(len(xs) - 1, int(p * len(xs)))]
print(f"cold north exec:          median {statistics.median(cold):7.1f} ms  p95 {q(cold, .95):7.1f} ms  ({runs} runs)")
print(f"exec --attach, first run: {first:7.1f} ms (the server opens the project, its MCP server starts)")
print(f"exec --attach, warm:      median {statistics.median(warm):7.1f} ms  p95 {q(warm, .95):7.1f} ms  ({runs - 1} runs)")
PY

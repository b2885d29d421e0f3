#!/usr/bin/env bash
# Long sessions, many sessions and many tools (release build, scripted model,
# no network):
#
# 1. One `north serve` session driven through 1,000 prompts over its unix
#    socket, each a tool call (`read_file`) and an answer, with a
#    condensation every 50 prompts: the server's RSS and peak RSS at prompts
#    100, 500 and 1,000; then the session resumed cold by `north exec
#    --continue` (wall time of the whole process, against a fresh session).
# 2. 100 idle sessions opened on a second server: its RSS before and after
#    (memory per session), and one prompt's time with none and with 100
#    idle beside it.
# 3. 200 MCP tools over 10 servers (North's test server on Node, 20 tools
#    each): the first request's bytes (deferred behind tool search) and a
#    cold one-turn `north exec` with 0, 1, 5 and 10 servers.
#
#   scripts/bench-serve.sh [PROMPTS]     default 1000
set -euo pipefail
cd "$(dirname "$0")/.."
prompts="${1:-1000}"
command -v node >/dev/null || { echo "needs node" >&2; exit 2; }
cargo build --release -q -p north
north="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/north"
server_js="$(pwd)/tests/interop/mcp/fake-server.mjs"
work="$(mktemp -d /tmp/nb.XXXXXX)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/project/.git" "$work/idle/.git" "$work/tools/.git" "$work/home" "$work/run"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" XDG_STATE_HOME="$work/home/state" \
  XDG_DATA_HOME="$work/home/data" XDG_RUNTIME_DIR="$work/run"
for i in $(seq 0 9); do
  python3 -c "print('\n'.join('line %d of file $i, with some text to read back' % n for n in range(12)))" \
    > "$work/project/f$i.txt"
done
python3 - "$prompts" "$work" <<'PY'
import json, sys
prompts, work = int(sys.argv[1]), sys.argv[2]
turns = []
for i in range(prompts):
    condense = i % 50 == 49
    notes = '<<<NOTES_JSON>>>{"actions":["condense_now"]}<<<END_NOTES_JSON>>>' if condense else ""
    turns.append({"text": f"{notes}Reading f{i % 10}.txt. ",
                  "tool_calls": [{"id": f"r{i}", "name": "read_file", "args": {"path": f"f{i % 10}.txt"}}]})
    if condense:
        turns.append({"text": f"Summary after prompt {i}: the files were read in turn."})
    turns.append({"text": f"Prompt {i} done."})
json.dump({"turns": turns}, open(f"{work}/long.json", "w"))
json.dump({"turns": [{"text": "ok"}] * 400}, open(f"{work}/short.json", "w"))
json.dump([{"text": "Hello."}], open(f"{work}/hello.json", "w"))
PY

serve() { # DIR SCRIPT SOCKET
  (cd "$1" && exec "$north" serve --trust --script "$2" --listen "unix:$3" > "$3.ready") &
  pids+=($!)
  for _ in $(seq 200); do [ -s "$3.ready" ] && break; sleep 0.05; done
  echo "${pids[-1]}"
}
long_pid="$(serve "$work/project" "$work/long.json" "$work/long.sock")"
idle_pid="$(serve "$work/idle" "$work/short.json" "$work/idle.sock")"

python3 - "$work" "$long_pid" "$idle_pid" "$prompts" <<'PY'
import json, os, socket, sys, time
work, long_pid, idle_pid, prompts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])

def status(pid):
    fields = {}
    for line in open(f"/proc/{pid}/status"):
        k, _, v = line.partition(":")
        fields[k] = v.strip()
    return int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024

class Client:
    def __init__(self, sock):
        s = socket.socket(socket.AF_UNIX)
        s.connect(sock)
        self.f = s.makefile("rw")
        self.n = 0
        ready = json.loads(open(sock + ".ready").readline())
        self.send({"token": open(ready["token_file"]).read()})
        self.call("initialize", {"protocolVersion": 1})
    def send(self, msg):
        self.f.write(json.dumps(msg) + "\n"); self.f.flush()
    def call(self, method, params):
        self.n += 1
        self.send({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params})
        while True:
            m = json.loads(self.f.readline())
            if m.get("method") == "session/request_permission":
                opts = m["params"]["options"]
                allow = next(o for o in opts if o["kind"].startswith("allow"))
                self.send({"jsonrpc": "2.0", "id": m["id"],
                           "result": {"outcome": {"outcome": "selected", "optionId": allow["optionId"]}}})
            elif m.get("id") == self.n and "method" not in m:
                if "error" in m:
                    sys.exit(f"{method}: {m['error']}")
                return m["result"]
    def new(self, cwd):
        return self.call("session/new", {"cwd": cwd, "mcpServers": []})["sessionId"]
    def prompt(self, sid, text):
        return self.call("session/prompt", {"sessionId": sid, "prompt": [{"type": "text", "text": text}]})

c = Client(f"{work}/long.sock")
sid = c.new(f"{work}/project")
print(f"1. one served session, {prompts} prompts (read_file + answer; condensed every 50):")
t0 = time.perf_counter()
for i in range(1, prompts + 1):
    c.prompt(sid, f"read file {i % 10} please")
    if i in (100, 500, 1000) or i == prompts:
        rss, hwm = status(long_pid)
        print(f"   after prompt {i:>5}: RSS {rss:6.1f} MiB, peak {hwm:6.1f} MiB, {time.perf_counter() - t0:6.1f} s so far")

i = Client(f"{work}/idle.sock")
first = i.new(f"{work}/idle")
def timed_prompt():
    t = time.perf_counter(); i.prompt(first, "hi"); return (time.perf_counter() - t) * 1000
before = [timed_prompt() for _ in range(20)]
rss0, _ = status(idle_pid)
for _ in range(100):
    i.new(f"{work}/idle")
rss1, _ = status(idle_pid)
after = [timed_prompt() for _ in range(20)]
med = lambda xs: sorted(xs)[len(xs) // 2]
print("2. 100 idle sessions on one server:")
print(f"   RSS {rss0:.1f} MiB with 1 session, {rss1:.1f} MiB with 101: {(rss1 - rss0) * 1024 / 100:.0f} KiB per idle session")
print(f"   a prompt in the first session: median {med(before):.1f} ms alone, {med(after):.1f} ms beside 100 idle")
PY
kill "$long_pid" "$idle_pid" 2>/dev/null || true
sleep 0.5

python3 - "$north" "$work" "$server_js" <<'PY'
import json, os, statistics, subprocess, sys, time
north, work, server_js = sys.argv[1], sys.argv[2], sys.argv[3]
def run(args, cwd):
    t = time.perf_counter()
    p = subprocess.run(args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    if p.returncode:
        sys.exit(f"{args}: {p.stderr.decode()[-1500:]}")
    return (time.perf_counter() - t) * 1000
hello = [north, "exec", "--trust", "--script", f"{work}/hello.json"]
resumed = statistics.median([run(hello + ["--continue", "hi"], f"{work}/project") for _ in range(5)])
fresh = statistics.median([run(hello + ["hi"], f"{work}/project") for _ in range(5)])
print(f"   resumed cold (north exec --continue, whole process): {resumed:.0f} ms; a fresh session: {fresh:.0f} ms")

print("3. MCP servers (20 tools each), cold north exec, one turn:")
for n in (0, 1, 5, 10):
    servers = {f"s{k}": {"command": "node", "args": [server_js, "many", "--count", "20"]} for k in range(n)}
    json.dump({"mcpServers": servers}, open(f"{work}/tools/.mcp.json", "w"))
    rec = f"{work}/req{n}.jsonl"
    times = []
    for _ in range(3):
        if os.path.exists(rec):
            os.remove(rec)
        times.append(run(hello + ["--record-requests", rec, "hi"], f"{work}/tools"))
    req = json.loads(open(rec).readline())
    print(f"   {n:>2} servers ({20 * n:>3} tools): median {statistics.median(times):6.0f} ms, "
          f"first request {len(json.dumps(req)):,} bytes with {len(req.get('tools', []))} tool definitions")
PY

#!/usr/bin/env bash
# The first request's bytes, North against Codex, both on the OpenAI
# Responses wire to one local recorder (which answers 400 after keeping the
# body: only the first request matters). Project: an 80-line README and 40
# Rust files. Two setups: the default, and everything configured — two
# skills, web search, an MCP server of 50 tools (North's test server on
# Node), and for North an agent of the project's.
#
#   scripts/bench-first-request.sh      (CODEX_BIN names Codex's binary)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v node >/dev/null || { echo "needs node" >&2; exit 2; }
[ -n "${NORTH_BIN:-}" ] || cargo build --release -q -p north
north="${NORTH_BIN:-$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/north}"
server_js="$(pwd)/tests/interop/mcp/fake-server.mjs"
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$work"' EXIT

cat > "$work/recorder.py" <<'PY'
import http.server, sys
class Keep(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        open(sys.argv[1], "a").write(f"{len(body)}\n")
        self.send_response(400)
        self.send_header("content-type", "application/json")
        self.end_headers()
        self.wfile.write(b'{"error":{"message":"recorded","type":"invalid_request_error"}}')
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Keep)
print(server.server_address[1], flush=True)
server.serve_forever()
PY
python3 "$work/recorder.py" "$work/sizes" > "$work/port" &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(head -n1 "$work/port")/v1"

first_request() { # SETUP NAME COMMAND...
  local setup="$1" name="$2"; shift 2
  : > "$work/sizes"
  (cd "$work/$setup/project" && HOME="$work/$setup/home" XDG_CONFIG_HOME="$work/$setup/home/config" \
    XDG_STATE_HOME="$work/$setup/home/state" XDG_DATA_HOME="$work/$setup/home/data" \
    CODEX_HOME="$work/$setup/codex" OPENAI_API_KEY=sk-bench OPENAI_BASE_URL="$url" MOCK_API_KEY=sk-bench \
    timeout 120 "$@" "Summarise this repository" > /dev/null 2>&1 || true)
  printf '| %s | %s | %s |\n' "$setup" "$name" "$(head -n1 "$work/sizes")"
}

for setup in default configured; do
  p="$work/$setup/project"
  mkdir -p "$p" "$work/$setup/home" "$work/$setup/codex"
  git -C "$p" init -q
  python3 - "$p" <<'PY'
import sys
p = sys.argv[1]
open(f"{p}/README.md", "w").write("".join(f"Line {i} of a long README that explains the project.\n" for i in range(80)))
for i in range(40):
    open(f"{p}/module_{i:02}.rs", "w").write("fn f() {}\n" * (i + 1))
PY
  cat > "$work/$setup/codex/config.toml" <<TOML
model = "gpt-5.2"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "$url"
wire_api = "responses"
env_key = "MOCK_API_KEY"
TOML
done
c="$work/configured"
for skill in deploy release; do
  for dir in "$c/project/.north/skills/$skill" "$c/codex/skills/$skill"; do
    mkdir -p "$dir"
    printf -- '---\nname: %s\ndescription: The %s steps of this project\n---\nSteps.\n' "$skill" "$skill" > "$dir/SKILL.md"
  done
done
mkdir -p "$c/project/.north/agents" "$c/home/config/north"
printf -- '---\nname: reviewer\ndescription: Reviews a change for bugs\n---\nYou review code.\n' \
  > "$c/project/.north/agents/reviewer.md"
printf '{"web_search": {"searxng_url": "http://127.0.0.1:9/search"}}\n' > "$c/home/config/north/config.json"
printf '{"mcpServers": {"many": {"command": "node", "args": ["%s", "many", "--count", "50"]}}}\n' \
  "$server_js" > "$c/project/.mcp.json"
cat >> "$c/codex/config.toml" <<TOML

[tools]
web_search = true

[mcp_servers.many]
command = "node"
args = ["$server_js", "many", "--count", "50"]
TOML

echo "| setup | agent | first request bytes |"
echo "|---|---|---|"
for setup in default configured; do
  first_request "$setup" north "$north" exec --trust --provider openai --openai-api responses --model gpt-5.2
  if [ -n "${CODEX_BIN:-}" ]; then
    first_request "$setup" codex "$CODEX_BIN" exec --skip-git-repo-check
  fi
done

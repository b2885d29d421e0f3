#!/usr/bin/env bash
# One headless "hello" turn, North against Codex, on the same machine and
# the same local mock (OpenAI Responses on 127.0.0.1): wall time and peak RSS.
# Usage: scripts/bench-hello.sh [RUNS]   (prints a markdown table)
# Codex is measured when CODEX_BIN names its binary (e.g. the one the
# @openai/codex package installs); otherwise only North's row is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-50}"
cargo build --release -q -p north -p north-test-support
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release"
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

"$target/north-fake-server" responses "Hello from the fake server, streamed in several deltas." \
  > "$work/url" 2>/dev/null &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url="$(head -n1 "$work/url")"

mkdir -p "$work/project" "$work/home" "$work/codex"
printf '# Bench project\nA small project for benchmarks.\n' > "$work/project/README.md"
cat > "$work/codex/config.toml" <<TOML
model = "gpt-5.2"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "$url/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
TOML

python3 - "$target/north" "${CODEX_BIN:-}" "$url" "$work" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
north, codex, url, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
home = os.path.join(work, "home")
env = dict(os.environ, HOME=home, XDG_STATE_HOME=os.path.join(home, "state"),
           XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_DATA_HOME=os.path.join(home, "data"),
           OPENAI_API_KEY="sk-bench-not-a-real-key", OPENAI_BASE_URL=url + "/v1",
           CODEX_HOME=os.path.join(work, "codex"), MOCK_API_KEY="sk-bench-not-a-real-key")
project = os.path.join(work, "project")

def measure(args):
    def once(prefix=()):
        p = subprocess.run(list(prefix) + args, env=env, cwd=project,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit(f"{args} failed: {p.stderr.decode()}")
        return p
    once()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        once()
        times.append((time.perf_counter() - t0) * 1000)
    peak = 0
    for _ in range(5):
        p = once(["/usr/bin/time", "-f", "%M"])
        peak = max(peak, int(p.stderr.decode().strip().splitlines()[-1]))
    return statistics.median(times), peak / 1024

rows = [("north exec (Responses)", [north, "exec", "--provider", "openai", "--openai-api", "responses", "hi"])]
if codex:
    rows.append(("codex exec", [codex, "exec", "--skip-git-repo-check", "hi"]))
results = [(name, *measure(args)) for name, args in rows]
print("| command | median ms | peak RSS MiB | runs |")
print("|---|---|---|---|")
for name, med, rss in results:
    print(f"| {name} | {med:.1f} | {rss:.1f} | {runs} |")
if len(results) == 2:
    print(f"\nNorth / Codex wall time: {results[0][1] / results[1][1]:.3f}x")
PY

#!/usr/bin/env bash
# Whole-binary benchmarks: wall time and peak RSS of `north --version`, of a
# one-turn `north exec` session, and of a session with one tool round trip,
# each against a local fake Anthropic server on 127.0.0.1.
# Usage: scripts/bench-binary.sh [RUNS]   (prints a markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-200}"
cargo build --release -q -p north -p north-test-support
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release"
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

# Started in this shell (not in $(...)), so the EXIT trap can stop them.
for mode in anthropic anthropic-tool; do
  "$target/north-fake-server" "$mode" "Hello from the fake server, streamed in several deltas." \
    > "$work/$mode.url" 2>/dev/null &
  pids+=($!)
done
for mode in anthropic anthropic-tool; do
  for _ in $(seq 50); do [ -s "$work/$mode.url" ] && break; sleep 0.1; done
done
text_url="$(head -n1 "$work/anthropic.url")"
tool_url="$(head -n1 "$work/anthropic-tool.url")"

# A small project to run in, with isolated XDG dirs.
mkdir -p "$work/project" "$work/home"
printf '# Bench project\nA small project for benchmarks.\n' > "$work/project/README.md"
printf 'fn main() {}\n' > "$work/project/main.rs"

python3 - "$target/north" "$text_url" "$tool_url" "$work" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
north, text_url, tool_url, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
home = os.path.join(work, "home")
base = dict(os.environ, ANTHROPIC_API_KEY="sk-bench-not-a-real-key", HOME=home,
            XDG_STATE_HOME=os.path.join(home, "state"), XDG_CONFIG_HOME=os.path.join(home, "config"),
            XDG_DATA_HOME=os.path.join(home, "data"))
project = os.path.join(work, "project")

def measure(args, url):
    env = dict(base, ANTHROPIC_BASE_URL=url)
    def once(prefix=()):
        p = subprocess.run(list(prefix) + args, env=env, cwd=project, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if p.returncode != 0:
            sys.exit(f"{args} failed: {p.stderr.decode()}")
        return p
    once()  # warm the project card cache, like any session after the first
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        once()
        times.append((time.perf_counter() - t0) * 1000)
    # Peak RSS from GNU time (%M, KiB): the exec'd binary alone.
    peak = 0
    for _ in range(10):
        p = once(["/usr/bin/time", "-f", "%M"])
        peak = max(peak, int(p.stderr.decode().strip().splitlines()[-1]))
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], peak / 1024

rows = [("north --version", [north, "--version"], text_url),
        ("north exec: one-turn session", [north, "exec", "hi"], text_url),
        ("north exec: one tool round trip (read_file)", [north, "exec", "read the README"], tool_url)]
print("| command | median ms | p95 ms | peak RSS MiB | runs |")
print("|---|---|---|---|---|")
for name, args, url in rows:
    med, p95, rss = measure(args, url)
    print(f"| {name} | {med:.2f} | {p95:.2f} | {rss:.1f} | {runs} |")
PY

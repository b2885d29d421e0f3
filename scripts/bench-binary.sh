#!/usr/bin/env bash
# Whole-binary benchmarks: wall time and peak RSS of `north --version` and of a
# one-turn `north exec` against a local fake provider on 127.0.0.1.
# Usage: scripts/bench-binary.sh [RUNS]   (prints a markdown table)
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-200}"
cargo build --release -q -p north -p north-test-support
target="${CARGO_TARGET_DIR:-target}/release"

"$target/north-fake-server" anthropic "Hello from the fake server, streamed in several deltas." > /tmp/north-bench-url.$$ &
server=$!
trap 'kill $server 2>/dev/null; rm -f /tmp/north-bench-url.$$' EXIT
for _ in $(seq 50); do [ -s /tmp/north-bench-url.$$ ] && break; sleep 0.1; done
url="$(head -n1 /tmp/north-bench-url.$$)"

python3 - "$target/north" "$url" "$runs" <<'PY'
import os, statistics, subprocess, sys, time
north, url, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
env = dict(os.environ, ANTHROPIC_API_KEY="sk-bench-not-a-real-key", ANTHROPIC_BASE_URL=url)

def measure(args):
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        times.append((time.perf_counter() - t0) * 1000)
        if p.returncode != 0:
            sys.exit(f"{args} failed: {p.stderr.decode()}")
    # Peak RSS from GNU time (%M, KiB): the exec'd binary alone, not the
    # forked Python image that RUSAGE_CHILDREN would also count.
    peak = 0
    for _ in range(10):
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] + args, env=env,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        peak = max(peak, int(p.stderr.decode().strip().splitlines()[-1]))
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], peak / 1024

rows = [("north --version", [north, "--version"]),
        ("north exec (one turn, local fake Anthropic server)", [north, "exec", "hi"])]
print(f"| command | median ms | p95 ms | peak RSS MiB | runs |")
print(f"|---|---|---|---|---|")
for name, args in rows:
    med, p95, rss = measure(args)
    print(f"| {name} | {med:.2f} | {p95:.2f} | {rss:.1f} | {runs} |")
PY

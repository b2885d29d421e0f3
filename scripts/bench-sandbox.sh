#!/usr/bin/env bash
# Sandbox start overhead: `north sandbox -- true` against `north --version`
# (the binary's own start) and a bare `true`, N runs each, release build.
#
#   scripts/bench-sandbox.sh [N]    default 200
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-200}"
cargo build --release -q -p north
north="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/north"
time_ms() {
  local start end
  start=$(date +%s%N)
  for _ in $(seq "$n"); do "$@" >/dev/null 2>&1; done
  end=$(date +%s%N)
  echo "scale=3; ($end - $start) / 1000000 / $n" | bc
}
bare=$(time_ms true)
start=$(time_ms "$north" --version)
sandboxed=$(time_ms "$north" sandbox -- true)
# A command's network through North's proxy: its own namespace and bridge
# (the socket need not exist until something connects).
proxied=$(time_ms "$north" sandbox --proxy /tmp/north-bench-none/proxy.sock -- true)
echo "per run (mean of $n): true ${bare} ms; north --version ${start} ms; north sandbox -- true ${sandboxed} ms; with the proxy's namespace and bridge ${proxied} ms"
echo "sandbox overhead over North's own start: $(echo "scale=3; $sandboxed - $start" | bc) ms; the network namespace and bridge add $(echo "scale=3; $proxied - $sandboxed" | bc) ms"

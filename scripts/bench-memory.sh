#!/usr/bin/env bash
# Memory benchmark of the bounded tools (release build): read_file and
# search_text on a 200 MB file that is one line, and a command printing 1 GiB.
# Prints peak RSS (GNU time) and wall time for each, and the size of the
# result the model would receive.
#
#   scripts/bench-memory.sh
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p north
north="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/north"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project"
cd "$work/project"
python3 - <<'PY'
with open("big.txt", "w") as f:
    chunk = "abcdefghij" * 100_000
    for i in range(200):
        f.write(chunk)
        if i == 150:
            f.write("NEEDLE")
    f.write("\n")
PY
run() {
  local label="$1"; shift
  /usr/bin/time -f "%M %e" -o "$work/time" "$north" "$@" > "$work/out" 2>/dev/null || true
  read -r kib secs < "$work/time"
  printf '%-44s peak RSS %6.1f MiB  wall %5.2f s  result %8d bytes\n' \
    "$label" "$(echo "$kib / 1024" | bc -l)" "$secs" "$(wc -c < "$work/out")"
}
run "read_file, 200 MB one-line file" tool read_file --args '{"path":"big.txt"}'
run "read_file, same file at offset 150,000,000" tool read_file --args '{"path":"big.txt","offset":150000000}'
run "search_text literal, 200 MB one line" tool search_text --args '{"query":"NEEDLE"}'
run "search_text regex, 200 MB one line" tool search_text --args '{"query":"NEE[D]LE","regex":true}'
run "shell_run printing 1 GiB" tool shell_run --yes --args '{"command":"yes 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde | head -c 1073741824","timeoutMs":600000}'

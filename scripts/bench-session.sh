#!/usr/bin/env bash
# Session durability benchmark: a scripted session of STEPS model steps (each
# reads a file, so every step appends an assistant message and a tool result),
# run by the release binary under strace. Reports the bytes North wrote into
# the session directory against the session's final size on disk, the peak
# RSS, and the wall time. The files are small enough that the session never
# needs condensing on its own; with CONDENSE_EVERY, every that many steps the
# model asks for a condensation (`condense_now`), which appends a record —
# the log is never rewritten, so the bytes stay linear either way.
#
#   scripts/bench-session.sh [STEPS] [CONDENSE_EVERY]    default 300, none
set -euo pipefail
cd "$(dirname "$0")/.."
steps="${1:-300}"
condense_every="${2:-0}"
command -v strace >/dev/null || { echo "needs strace (apt-get install strace)" >&2; exit 2; }
cargo build --release -q -p north
north="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release/north"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/project" "$work/home"
for i in $(seq 0 9); do
  python3 -c "print('\n'.join('line %d of file $i, with some text to read back' % n for n in range(12)))" \
    > "$work/project/f$i.txt"
done
python3 - "$steps" "$work/script.json" "$condense_every" <<'PY'
import json, sys
steps, out, every = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
turns = []
for i in range(steps - 1):
    condense = every and i % every == every - 1
    notes = '<<<NOTES_JSON>>>{"actions":["condense_now"]}<<<END_NOTES_JSON>>>' if condense else ""
    turns.append({"text": f"{notes}Step {i}: reading f{i % 10}.txt. ",
                  "tool_calls": [{"id": f"r{i}", "name": "read_file", "args": {"path": f"f{i % 10}.txt"}}]})
    if condense:
        # The summary request comes before the next step's.
        turns.append({"text": f"Summary after step {i}: the files were read in turn."})
turns.append({"text": "Done."})
json.dump(turns, open(out, "w"))
PY
cd "$work/project"
env HOME="$work/home" XDG_CONFIG_HOME="$work/home/config" XDG_STATE_HOME="$work/home/state" \
  XDG_DATA_HOME="$work/home/data" \
  /usr/bin/time -f "%M %e" -o "$work/time.txt" \
  strace -f -y -qq -e trace=write,pwrite64,writev -e signal=none -o "$work/strace.txt" \
  "$north" exec --max-steps "$((steps + 10))" --script "$work/script.json" "read the files" \
  > /dev/null 2>&1
python3 - "$work" <<'PY'
import os, re, sys
work = sys.argv[1]
sessions = os.path.join(work, "project", ".north", "sessions")
sid = os.listdir(sessions)[0]
sdir = os.path.join(sessions, sid)
written = {}
for line in open(os.path.join(work, "strace.txt")):
    m = re.search(r'^\d+\s+\w+\(\d+<([^>]*)>.*\)\s+=\s+(\d+)', line)
    if m and "/.north/sessions/" in m.group(1):
        name = os.path.basename(m.group(1))
        name = "temp files" if name.endswith(".tmp") else name
        written[name] = written.get(name, 0) + int(m.group(2))
sizes = {f: os.path.getsize(os.path.join(sdir, f)) for f in os.listdir(sdir) if not f.startswith(".")}
rss_kib, secs = open(os.path.join(work, "time.txt")).read().split()
total_w, total_s = sum(written.values()), sum(sizes.values())
print(f"steps: {sys.argv[0] and ''}{len(open(os.path.join(sdir, 'log.jsonl')).readlines())} log records")
for f in sorted(set(written) | set(sizes)):
    print(f"  {f:16} written {written.get(f, 0):>10,} B   final {sizes.get(f, 0):>10,} B")
log_w, log_s = written.get("log.jsonl", 0), sizes.get("log.jsonl", 1)
print(f"log.jsonl: written / final = {log_w / log_s:.2f}")
print(f"whole session dir: written {total_w:,} B / final {total_s:,} B = {total_w / max(total_s, 1):.2f}")
print(f"peak RSS {int(rss_kib) / 1024:.1f} MiB, wall {secs} s")
PY

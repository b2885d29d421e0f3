#!/usr/bin/env bash
# Regenerates crates/north/hot.ld: the code a short session runs, placed
# together at the front of the release binary's text. A session maps the
# executable 64 KB around each page it touches, so hot code spread over the
# 18 MB of text cost ~12 MB of resident pages; packed together it costs
# what it is (README, "Performance").
#
# Runs `north --version`, a one-turn `north exec` and one with a tool round
# trip under valgrind's callgrind against the local fake server, maps every
# executed instruction to its input section through the linker's map, and
# writes those sections as linker-script patterns with the symbol hashes
# left out (so the list still matches after unrelated changes; a function
# that no longer matches is linked where it would have been anyway).
#
# Usage: scripts/orderfile.sh        (needs valgrind; re-run after big changes)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "orderfile: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

# The linker's map: kept where NORTH_LINK_MAP says (then an unchanged build
# links nothing again), else in the scratch dir.
map="${NORTH_LINK_MAP:-$work/north.map}"
NORTH_LINK_MAP="$map" cargo build --release -q -p north -p north-test-support
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release"
[ -s "$map" ] || { echo "orderfile: the link wrote no map (only release builds with Rust's linker on Linux do)" >&2; exit 1; }

for mode in anthropic anthropic-tool; do
  "$target/north-fake-server" "$mode" "Hello from the fake server." > "$work/$mode.url" 2>/dev/null &
  pids+=($!)
done
for mode in anthropic anthropic-tool; do
  for _ in $(seq 50); do [ -s "$work/$mode.url" ] && break; sleep 0.1; done
done

mkdir -p "$work/project" "$work/home"
printf '# Project\nA small project.\n' > "$work/project/README.md"
printf 'fn main() {}\n' > "$work/project/main.rs"
profile() {
  local name="$1" url="$2"; shift 2
  (cd "$work/project" && env ANTHROPIC_API_KEY=sk-orderfile-not-a-key ANTHROPIC_BASE_URL="$url" \
    HOME="$work/home" XDG_STATE_HOME="$work/home/state" XDG_CONFIG_HOME="$work/home/config" \
    XDG_DATA_HOME="$work/home/data" \
    valgrind -q --tool=callgrind --dump-instr=yes --callgrind-out-file="$work/$name.cg" \
    "$target/north" "$@" > /dev/null 2>&1) || { echo "orderfile: north $* failed under valgrind" >&2; exit 1; }
}
text_url="$(head -n1 "$work/anthropic.url")"
tool_url="$(head -n1 "$work/anthropic-tool.url")"
profile version "$text_url" --version
profile exec "$text_url" exec hi   # the first run writes the project card
profile hello "$text_url" exec hi
profile tool "$tool_url" exec "read the README"

python3 - "$map" "$work"/*.cg > "$work/hot.ld" <<'PY'
import bisect, re, sys
map_file, profiles = sys.argv[1], sys.argv[2:]
section = re.compile(r'^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+.*:\((\.text\.[^)\s]*)\)\s*$')
sections = []
for line in open(map_file):
    m = section.match(line)
    if m:
        start = int(m.group(1), 16)
        sections.append((start, start + int(m.group(2), 16), m.group(3)))
sections.sort()
starts = [s[0] for s in sections]

def executed(path):
    """Instruction addresses in the executable, by object: valgrind names the
    executable's own .text; code it cannot place (the hot section, once this
    file is in use) is "???" and at its run-time address."""
    names, current, pos = {}, None, 0
    for line in open(path):
        line = line.rstrip('\n')
        m = re.match(r'(c?ob)=\((\d+)\)\s*(.*)', line)
        if m:
            if m.group(3):
                names[m.group(2)] = m.group(3)
            if m.group(1) == 'ob':
                current = names.get(m.group(2))
            continue
        if not line or line[0].isalpha():
            continue
        tok = line.split()[0]
        if tok.startswith('0x'):
            pos = int(tok, 16)
        elif tok[0] in '+-':
            step = int(tok[1:], 0)
            pos += step if tok[0] == '+' else -step
        elif tok != '*':
            continue
        if current and (current.endswith('/north') or current == '???'):
            yield current, pos

def section_of(addr):
    i = bisect.bisect_right(starts, addr) - 1
    return i if i >= 0 and addr < sections[i][1] else None

by_object = {}
for path in profiles:
    for obj, addr in executed(path):
        by_object.setdefault(obj, set()).add(addr)
hot = set()
entries = set(starts)
for obj, addrs in by_object.items():
    # Where valgrind placed the executable (0: file addresses; 0x108000:
    # its load address for a PIE): the one at which function entries line up.
    base = max((0, 0x108000), key=lambda b: sum(1 for a in addrs if a - b in entries))
    for addr in addrs:
        i = section_of(addr - base)
        if i is not None:
            hot.add(i)
if len(hot) < 100:
    sys.exit(f"orderfile: only {len(hot)} executed sections found; the map and the profile disagree")

patterns, seen = [], set()
for i in sorted(hot):
    name = sections[i][2]
    name = re.sub(r'17h[0-9a-f]{16}E$', '17h*E', name)           # legacy mangling's hash
    if re.match(r'\.text\.(unlikely\.)?_R', name):
        name = re.sub(r'Cs[0-9A-Za-z]+_', 'Cs*_', name)          # v0 mangling's crate hash
    if name not in seen:
        seen.add(name)
        patterns.append(name)
size = sum(sections[i][1] - sections[i][0] for i in hot)
print("/* Generated by scripts/orderfile.sh: the text sections a short session")
print(f"   executes ({len(hot)} sections, {size // 1024} KiB), placed first. */")
print("SECTIONS\n{\n  .text.hot :\n  {")
for p in patterns:
    print(f"    *({p})")
print("  }\n}\nINSERT BEFORE .text;")
print(f"orderfile: {len(hot)} sections, {size // 1024} KiB, {len(patterns)} patterns", file=sys.stderr)
PY
mv "$work/hot.ld" crates/north/hot.ld

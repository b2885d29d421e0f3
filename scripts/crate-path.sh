#!/usr/bin/env bash
# The crates one `north exec` turn that runs a sandboxed command passes
# through, measured rather than read off the code: the turn runs under
# valgrind's callgrind (every call, with its caller), and the call graph is
# reduced to North's crates. Prints
#   - the stack when the sandboxed shell is spawned (gdb), as crates;
#   - every crate of North's whose code ran, and the calls between them;
#   - the crates the binary itself calls into, and which functions;
#   - every call from one of North's library crates into the binary (a
#     callback: front ends hand the runtime data, never code), and what
#     else called into the binary (the runtime polling its own futures,
#     argument parsing).
#
# Usage: scripts/crate-path.sh [NORTH_BINARY]   (default: a debug build)
# Needs valgrind, gdb and python3. The scripted provider answers, so nothing
# reaches a network.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "crate-path: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
bin="${1:-}"
if [ -z "$bin" ]; then
  cargo build -q -p north
  bin="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/debug/north"
fi
bin="$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")"
[ -x "$bin" ] || { echo "crate-path: $bin is not an executable" >&2; exit 2; }
work="$(mktemp -d)"
trap '[ -n "${CRATE_PATH_KEEP:-}" ] && cp "$work/exec.cg" "$CRATE_PATH_KEEP"; rm -rf "$work"' EXIT

mkdir -p "$work/project" "$work/home"
printf '# Project\n' > "$work/project/README.md"
cat > "$work/script.json" <<'JSON'
[{"tool_calls": [{"id": "c1", "name": "shell_run", "args": {"command": "touch made.txt"}}]},
 {"text": "done"}]
JSON
run() {
  rm -f "$work/project/made.txt"
  (cd "$work/project" && env -i PATH="$PATH" HOME="$work/home" \
    XDG_STATE_HOME="$work/home/state" XDG_CONFIG_HOME="$work/home/config" XDG_DATA_HOME="$work/home/data" \
    "$@" > "$work/out.txt" 2>&1) || {
    cat "$work/out.txt" >&2; echo "crate-path: the turn failed under $1" >&2; exit 1; }
  [ -f "$work/project/made.txt" ] || { cat "$work/out.txt" >&2; echo "crate-path: the command did not run" >&2; exit 1; }
}
turn=("$bin" exec --script "$work/script.json" --yes "make the file")

# The stack when the sandboxed shell is spawned (the line that hands the
# PTY its command), as the crates its frames' sources are in.
if command -v gdb >/dev/null; then
  line="$(grep -n 'spawn_command(cmd)' crates/north-tools/src/shell/session.rs | head -n1 | cut -d: -f1)"
  run gdb -q -batch -ex 'set pagination off' -ex "break north-tools/src/shell/session.rs:$line" \
    -ex run -ex bt -ex continue --args "${turn[@]}"
  echo 'The stack when the sandboxed shell is spawned (innermost last):'
  grep -E '^#[0-9]+ ' "$work/out.txt" | grep -oE ' at crates/[^/]+/src/[^ ]+' | sed 's/^ at crates\///' | tac |
    awk -F/ '{ print "  " $0; if ($1 != last) { path = path (path ? " -> " : "") $1; n++ }; last = $1 }
      END { print "  crates, in order: " path " -> (the child: north sandbox -> north-sandbox -> bash)"; print "  " n " crates on the stack" }'
  echo
fi

run valgrind -q --tool=callgrind --callgrind-out-file="$work/exec.cg" "${turn[@]}"

python3 - "$work/exec.cg" <<'PY'
import collections, re, sys

names = {}
def name(token):
    """A function name of callgrind's compressed form: "(id) name" the
    first time, "(id)" after."""
    m = re.match(r'\((\d+)\)\s*(.*)', token)
    if not m:
        return token
    if m.group(2):
        names[m.group(1)] = m.group(2)
    return names.get(m.group(1), '?')

edges = collections.Counter()
caller = callee = None
for line in open(sys.argv[1]):
    if line.startswith('fn='):
        caller = name(line[3:].strip())
    elif line.startswith('cfn='):
        callee = name(line[4:].strip())
    elif line.startswith('calls=') and caller and callee:
        edges[(caller, callee)] += int(line[6:].split()[0])

def crate(function):
    """The crate a demangled Rust name belongs to: the first path segment,
    past `<`, `&`, `mut`, `dyn` (an impl's self type)."""
    s = function
    while True:
        s = s.lstrip('<&*( ')
        for word in ('mut ', 'dyn ', 'const ', 'impl '):
            if s.startswith(word):
                s = s[len(word):]
                break
        else:
            break
    m = re.match(r'([A-Za-z_]\w*)::', s)
    return m.group(1) if m else None

def ours(c):
    return c == 'north' or (c or '').startswith('north_')

between = collections.Counter()
ran = set()
for (a, b), n in edges.items():
    ca, cb = crate(a), crate(b)
    for c in (ca, cb):
        if ours(c):
            ran.add(c)
    if ours(ca) and ours(cb) and ca != cb:
        between[(ca, cb)] += n
print(f'\nNorth crates whose code ran ({len(ran)}): ' + ', '.join(sorted(ran)))
print('Calls between them (caller -> callee: calls):')
for (a, b), n in sorted(between.items()):
    print(f'  {a} -> {b}: {n}')

entered = collections.defaultdict(set)
for (a, b) in edges:
    ca, cb = crate(a), crate(b)
    if ca == 'north' and cb != 'north' and ours(cb):
        entered[cb].add(re.sub(r'::h[0-9a-f]{16}$', '', b))
print(f'\nCrates the binary itself calls into ({len(entered)}):')
for c, fs in sorted(entered.items(), key=lambda kv: -len(kv[1])):
    print(f'  {c} ({len(fs)} functions): ' + ', '.join(sorted(f.split('::')[-1] if '<' not in f else f for f in fs))[:300])

back = collections.Counter()
into = collections.Counter()
for (a, b), n in edges.items():
    if crate(b) != 'north':
        continue
    ca = crate(a)
    if ours(ca) and ca != 'north':
        back[(a, b)] += n
    elif not ours(ca):
        into[ca or '?'] += n
print(f'\nCalls from North\'s libraries back into the binary: {sum(back.values())}')
for (a, b), n in sorted(back.items(), key=lambda kv: -kv[1])[:20]:
    print(f'  {a[:90]}\n    -> {b[:90]} ({n})')
print('Calls into the binary from outside North (the runtime polling its own futures, parsing): '
      + ', '.join(f'{c} {n}' for c, n in into.most_common()))
PY

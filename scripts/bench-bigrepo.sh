#!/usr/bin/env bash
# North in a big repository against a small one (release build, local mock
# provider, one machine): a generated git repository of DIRS x FILES small
# files (default 2,000 x 100 = 200,000) and a 10-file one.
#
#   scripts/bench-bigrepo.sh [DIRS] [FILES] [RUNS]     default 2000 100 5
#
# Rows: a `north exec` turn that only answers (also the first after a
# commit, when the project card is computed again) and one that writes a file
# (scripted provider: the model's side costs nothing) — in the big tree
# with the snapshot watcher the first turn started (measured once it
# listens) and without it (NORTH_SNAPSHOT_WATCHER=off) — their peak RSS, and
# the tools that look at the whole tree (`find_files`, `search_text`,
# `list_root`) beside ripgrep. With CODEX_BIN set, `codex exec` answers
# the same prompt from a local mock in both repositories. Then the
# snapshot benchmark on the big tree: a whole walk (what a new process
# does) against watched snapshots (a long session: the TUI, serve, ACP).
set -euo pipefail
cd "$(dirname "$0")/.."
dirs="${1:-2000}"
files="${2:-100}"
runs="${3:-5}"
cargo build --release -q -p north -p north-test-support
target="$(cd "${CARGO_TARGET_DIR:-target}" && pwd)/release"
work="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; rm -rf "$work"' EXIT

"$target/north-fake-server" responses "Hello from the fake server." > "$work/url" 2>/dev/null &
pids+=($!)
for _ in $(seq 50); do [ -s "$work/url" ] && break; sleep 0.1; done
url="$(head -n1 "$work/url")"
mkdir -p "$work/home" "$work/codex"
cat > "$work/codex/config.toml" <<TOML
model = "gpt-5.2"
model_provider = "mock"

[model_providers.mock]
name = "mock"
base_url = "$url/v1"
wire_api = "responses"
env_key = "MOCK_API_KEY"
TOML

python3 - "$work" "$dirs" "$files" <<'PY'
import os, subprocess, sys
work, dirs, files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def repo(path, n_dirs, n_files):
    os.makedirs(path)
    with open(os.path.join(path, "README.md"), "w") as f:
        f.write("# Bench\nA generated repository.\n")
    for d in range(n_dirs):
        sub = os.path.join(path, "src", f"m{d // 100:02}", f"d{d:04}")
        os.makedirs(sub)
        for i in range(n_files):
            with open(os.path.join(sub, f"f{i:03}.rs"), "w") as f:
                f.write(f"// module {d} file {i}\npub fn f{i}() -> usize {{ {d * n_files + i} }}\n")
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=path, check=True)
    subprocess.run(git + ["add", "-A"], cwd=path, check=True)
    subprocess.run(git + ["commit", "-qm", "init"], cwd=path, check=True)
repo(os.path.join(work, "small"), 1, 10)
repo(os.path.join(work, "big"), dirs, files)
PY
cat > "$work/hello.json" <<'JSON'
[{"text": "Hello."}]
JSON
cat > "$work/edit.json" <<'JSON'
[{"tool_calls": [{"id": "w", "name": "edit_create_file", "args": {"path": "bench-note.txt", "content": "noted\n"}}]},
 {"text": "Written."}]
JSON

python3 - "$target/north" "${CODEX_BIN:-}" "$url" "$work" "$runs" <<'PY'
import os, shutil, statistics, subprocess, sys, time
north, codex, url, work, runs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
home = os.path.join(work, "home")
env = dict(os.environ, HOME=home, XDG_STATE_HOME=os.path.join(home, "state"),
           XDG_RUNTIME_DIR=os.path.join(work, "run"),
           XDG_CONFIG_HOME=os.path.join(home, "config"), XDG_DATA_HOME=os.path.join(home, "data"),
           OPENAI_API_KEY="sk-bench-not-a-real-key", OPENAI_BASE_URL=url + "/v1",
           CODEX_HOME=os.path.join(work, "codex"), MOCK_API_KEY="sk-bench-not-a-real-key")

def once(args, cwd, prefix=()):
    t0 = time.perf_counter()
    p = subprocess.run(list(prefix) + args, env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ms = (time.perf_counter() - t0) * 1000
    if p.returncode != 0:
        sys.exit(f"{args} failed: {p.stderr.decode()[-2000:]}")
    return ms, p

def measure(args, cwd, before=None):
    if before: before()
    first, _ = once(args, cwd)
    times = []
    for _ in range(runs):
        if before: before()
        times.append(once(args, cwd)[0])
    if before: before()
    _, p = once(args, cwd, ["/usr/bin/time", "-f", "%M"])
    rss = int(p.stderr.decode().strip().splitlines()[-1]) / 1024
    return first, statistics.median(times), rss

os.makedirs(os.path.join(work, "run"), mode=0o700)
no_watcher = dict(env, NORTH_SNAPSHOT_WATCHER="off")

def watcher_listens():
    # The first turn in the big tree started it; it listens once it has
    # walked and watched the tree itself.
    run = os.path.join(work, "run", "north")
    for _ in range(1200):
        if os.path.isdir(run) and any(n.endswith(".sock") for n in os.listdir(run)):
            return
        time.sleep(0.05)
    sys.exit("the snapshot watcher did not start")

def fresh_note(cwd):
    def go():
        try: os.remove(os.path.join(cwd, "bench-note.txt"))
        except FileNotFoundError: pass
    return go

rows = []
for name in ("small", "big"):
    cwd = os.path.join(work, name)
    hello = [north, "exec", "--script", os.path.join(work, "hello.json"), "hi"]
    edit = [north, "exec", "--mode", "auto", "--script", os.path.join(work, "edit.json"), "note it"]
    rows.append((f"north exec, answer only ({name})", *measure(hello, cwd)))
    # The project card is computed again when HEAD moves.
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    def empty_commit(cwd=cwd):
        subprocess.run(git + ["commit", "-q", "--allow-empty", "-m", "bench"], cwd=cwd, check=True)
    def change_commit(cwd=cwd):
        with open(os.path.join(cwd, "README.md"), "a") as f:
            f.write("more\n")
        subprocess.run(git + ["commit", "-q", "-am", "bench"], cwd=cwd, check=True)
    rows.append((f"north exec, answer only, after an empty commit ({name})",
                 *measure(hello, cwd, empty_commit)))
    rows.append((f"north exec, answer only, after a commit that changes a file ({name})",
                 *measure(hello, cwd, change_commit)))
    if name == "big":
        watched = env
        env = no_watcher
        rows.append((f"north exec, writes a file, no watcher ({name})",
                     *measure(edit, cwd, fresh_note(cwd))))
        env = watched
        fresh_note(cwd)()
        once(edit, cwd)
        watcher_listens()
    rows.append((f"north exec, writes a file ({name})", *measure(edit, cwd, fresh_note(cwd))))
    if codex:
        rows.append((f"codex exec, answer only ({name})",
                     *measure([codex, "exec", "--skip-git-repo-check", "hi"], cwd)))
    for tool, args in [("find_files", '{"pattern":"f042.rs"}'),
                       ("search_text", '{"query":"f99() -> usize { 199999 }"}'),
                       ("list_root", '{}')]:
        rows.append((f"north tool {tool} ({name})", *measure([north, "tool", tool, "--args", args], cwd)))
    if shutil.which("rg"):
        def rg(cwd=cwd):
            subprocess.run(["rg", "-F", "-c", "f99() -> usize { 199999 }", "."], cwd=cwd,
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
            return 0
        ts = []
        for _ in range(runs):
            t0 = time.perf_counter(); rg(); ts.append((time.perf_counter() - t0) * 1000)
        rows.append((f"ripgrep, same search ({name})", ts[0], statistics.median(ts), float("nan")))

print("| command | first ms | median ms | peak RSS MiB |")
print("|---|---|---|---|")
for name, first, med, rss in rows:
    print(f"| {name} | {first:.0f} | {med:.0f} | {rss:.1f} |")
PY

echo
echo "Snapshots of the big tree (north-tools bench):"
NORTH_BENCH_TREE="$work/big" cargo bench -q -p north-tools --bench snapshot 2>/dev/null

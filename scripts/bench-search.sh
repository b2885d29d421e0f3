#!/usr/bin/env bash
# Times north-tools' search_text against ripgrep on the same generated tree
# (50,000 files by default), end to end as processes.
#
#   scripts/bench-search.sh [TREE_DIR]      FILES=N to change the tree size
#
# Uses hyperfine when installed, else a plain loop with `time`. Needs `rg`
# (Debian/Ubuntu: apt-get install -y ripgrep hyperfine).
set -euo pipefail

cd "$(dirname "$0")/.."
FILES="${FILES:-50000}"
DIR="${1:-${TMPDIR:-/tmp}/north-bench-tree-$FILES}"
QUERY="needle_handler"
REGEX='needle_\w+\(event'

cargo build --quiet --release -p north-tools --example search_tree
BIN="${CARGO_TARGET_DIR:-target}/release/examples/search_tree"

if [ ! -d "$DIR" ]; then
    echo "generating $FILES files in $DIR"
    "$BIN" generate "$DIR" "$FILES"
fi
command -v rg >/dev/null || { echo "rg is not installed" >&2; exit 1; }

echo "matches: north=$("$BIN" search "$DIR" "$QUERY") rg=$(rg --no-require-git -F -c "$QUERY" "$DIR" | wc -l) files"

if command -v hyperfine >/dev/null; then
    hyperfine --warmup 3 --runs "${RUNS:-20}" \
        -n "north literal" "$BIN search $DIR $QUERY" \
        -n "rg literal" "rg -n --column --no-config --no-require-git -F $QUERY $DIR" \
        -n "north regex" "$BIN search $DIR '$REGEX' regex" \
        -n "rg regex" "rg -n --column --no-config --no-require-git '$REGEX' $DIR"
else
    for run in "north literal:$BIN search $DIR $QUERY" \
               "rg literal:rg -n --column --no-config --no-require-git -F $QUERY $DIR"; do
        name="${run%%:*}"; cmd="${run#*:}"
        echo "$name"
        time (for _ in $(seq 10); do eval "$cmd" >/dev/null; done)
    done
fi

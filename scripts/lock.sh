#!/usr/bin/env bash
# Reproducible dependency versions. `Cargo.lock` itself is not tracked because cargo writes
# the default registry's address into it; `pinned.lock` is the same file with that address
# replaced by the placeholder `registry+DEFAULT`, so a fresh clone builds exactly the
# versions CI tested.
#
#   scripts/lock.sh restore   write Cargo.lock from pinned.lock (the registry's source id is
#                             read from cargo itself); then `cargo build --locked` works
#   scripts/lock.sh save      write pinned.lock from the current Cargo.lock (after adding or
#                             updating a dependency: `cargo update -p CRATE`, then save)
#   scripts/lock.sh check     fail if pinned.lock and Cargo.lock disagree, or if Cargo.lock
#                             no longer matches the manifests
set -euo pipefail
cd "$(dirname "$0")/.."
PLACEHOLDER='registry+DEFAULT'

registry_source() {
  # Any registry dependency of a workspace member names the default registry; asking with
  # --no-deps needs no resolution and writes no lockfile.
  local id
  id=$(cargo metadata --format-version 1 --no-deps |
    grep -o '"source":"registry+[^"]*"' | head -n 1 | sed 's/^"source":"//; s/"$//')
  [ -n "$id" ] || { echo "lock.sh: cannot find the default registry's source id" >&2; exit 1; }
  printf '%s' "$id"
}

case ${1:-} in
  restore)
    [ -f pinned.lock ] || { echo "lock.sh: pinned.lock is missing" >&2; exit 1; }
    src=$(registry_source)
    sed "s|\"$PLACEHOLDER\"|\"$src\"|" pinned.lock >Cargo.lock.tmp
    mv Cargo.lock.tmp Cargo.lock
    cargo update --workspace --locked --quiet ||
      { echo "lock.sh: pinned.lock does not match the manifests; run 'cargo update' and 'scripts/lock.sh save'" >&2; exit 1; }
    echo "Cargo.lock restored from pinned.lock"
    ;;
  save)
    [ -f Cargo.lock ] || cargo generate-lockfile
    src=$(registry_source)
    sed "s|\"$src\"|\"$PLACEHOLDER\"|" Cargo.lock >pinned.lock
    if grep -q '://' pinned.lock; then
      echo "lock.sh: pinned.lock still holds an address (a non-default source?):" >&2
      grep -n '://' pinned.lock >&2
      exit 1
    fi
    echo "pinned.lock saved ($(grep -c '^\[\[package\]\]' pinned.lock) packages)"
    ;;
  check)
    src=$(registry_source)
    diff -q <(sed "s|\"$PLACEHOLDER\"|\"$src\"|" pinned.lock) Cargo.lock >/dev/null ||
      { echo "lock.sh: Cargo.lock differs from pinned.lock; run 'scripts/lock.sh save' (or 'restore')" >&2; exit 1; }
    cargo update --workspace --locked --quiet
    echo "pinned.lock is up to date"
    ;;
  *) sed -n '2,12p' "$0"; exit 2 ;;
esac

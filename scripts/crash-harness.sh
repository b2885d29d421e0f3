#!/usr/bin/env bash
# The long run of North's crash harness (crates/north/tests/it/crash.rs): SIGKILL
# at random points during edit-batch applies and session writes, then start an
# entry point (north tool / exec / mesh in turn) and check that no file is torn
# or mixed, no accepted edit is lost, no temp file or journal survives and every
# session reads back.
#
#   scripts/crash-harness.sh [ROUNDS]    default 500
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-500}
NORTH_CRASH_ROUNDS=$rounds cargo test -p north --test it crash:: -- --nocapture 2>&1 |
  grep -E "crash harness:|test result|panicked|torn|mixed|lost" || true

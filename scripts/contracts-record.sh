#!/usr/bin/env bash
# Usage: npm run contracts:record
#
# Runs every test that drives a real client (the files that start a recorder) with
# MINIPOD_RECORD=1, which writes their exchanges with minipod to test/contract/recorded/ afresh,
# one file per scenario; test/contract/recorded.test.ts replays them in every run. The service's
# Python clients must be importable (installed, or MINIPOD_CLIENTS): recording without them fails
# rather than keep stale recordings. Review the result with `git diff test/contract/recorded`.
set -euo pipefail
cd "$(dirname "$0")/.."
npm run build --silent
mapfile -t files < <(grep -l 'await recorder(' test/e2e/*.test.ts)
rm -f test/contract/recorded/*.json
MINIPOD_RECORD=1 npx vitest run "${files[@]}"

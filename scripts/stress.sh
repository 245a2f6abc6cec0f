#!/usr/bin/env bash
# Runs every test file that starts processes (the browser tests, the end-to-end tests, and any
# other test that spawns the CLI, Python or Chromium) ROUNDS times in a row, with the suite's own
# concurrency (vitest.config.ts) and BURNERS busy loops beside it, as on a loaded 2-core machine.
# Stops at the first failing round. Usage: scripts/stress.sh [ROUNDS=20] [BURNERS=2] [FILE...]
# (FILEs: only those, to go over a few tests quickly).
# Run nothing else with vitest in this checkout meanwhile: its global setup rebuilds dist/.
set -uo pipefail
cd "$(dirname "$0")/.."
rounds="${1:-20}"
burners="${2:-2}"
logs="$(mktemp -d "${TMPDIR:-/tmp}/minipod-stress.XXXXXX")"

files=("${@:3}")
if [ "${#files[@]}" = 0 ]; then
  mapfile -t files < <({
    ls test/browser/*.test.ts test/e2e/*.test.ts
    grep -rlE 'from "node:child_process"|support/(cli|python|python-package)\.js|launchChromium' test --include='*.test.ts'
  } | sort -u)
fi

pids=()
stop_burners() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done; }
trap stop_burners EXIT
trap 'exit 130' INT TERM
for _ in $(seq "$burners"); do
  yes >/dev/null &
  pids+=("$!")
done

echo "stress: ${#files[@]} files, $rounds rounds, $burners CPU burners; logs in $logs"
start=$SECONDS
for round in $(seq "$rounds"); do
  t=$SECONDS
  # The first round builds dist/ (test/global-setup.ts); the others run on that build.
  reuse=0
  if [ "$round" -gt 1 ]; then reuse=1; fi
  MINIPOD_TEST_REUSE_BUILD=$reuse npx vitest run "${files[@]}" >"$logs/round-$round.log" 2>&1
  status=$?
  summary="$(sed 's/\x1b\[[0-9;]*m//g' "$logs/round-$round.log" | grep -E '^ +Tests ' | tail -1 | sed 's/^ *//')"
  echo "round $round: $((SECONDS - t)) s, ${summary:-no summary}"
  if [ "$status" != 0 ]; then
    sed 's/\x1b\[[0-9;]*m//g' "$logs/round-$round.log" | grep -E '^ *(FAIL|×) ' | sort -u
    echo "stress: round $round of $rounds failed after $((SECONDS - start)) s; its log: $logs/round-$round.log"
    exit 1
  fi
done
echo "stress: $rounds rounds passed in $((SECONDS - start)) s"

#!/usr/bin/env bash
# `npm run bench:capture` in a base commit (default d58afa4, the tree issue 16 measured as "today")
# and in this checkout, back to back on one machine, ROUNDS times (default 2) alternating base, this;
# then one table of the scenario both benches measure alike — recording callback -> call.completed
# enqueued, no webhook subscription — with the load average at each start.
#
#   scripts/bench-capture.sh [base-commit]     # quiet machine: uptime first, nothing else running
#
# BENCH_CALLS (default 1000: d58afa4's bench reads the same at 200 and 1,000, this tree's 200-call window
# lasts ~3 s and is ~25 % warm-up; docs/decisions.md) is passed to both; the memory part is skipped in
# this tree (BENCH_MEMORY=0; the base has no switch and runs its own, after its timed part). The base is
# cloned as scripts/bench-tests.sh does ($BENCH_DIR, default /tmp/callcap-bench-<base>, kept). Each
# run's output is kept next to the table (.tmp/bench-capture/*.log).
set -euo pipefail
rounds=${ROUNDS:-2}
calls=${BENCH_CALLS:-1000}
log_folder=bench-capture
# shellcheck source=scripts/bench-base.sh
source "$(dirname "$0")/bench-base.sh" "$@"

run() { # <tag> <label> <tree> <round>
  local label=$2 tree=$3 log="$logs/$1-$4.log" load rate
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  (cd "$tree" && BENCH_CALLS=$calls BENCH_MEMORY=0 npm run bench:capture >"$log" 2>&1)
  # the first "recording callback" row: in both benches, no subscription (in this tree, uninstrumented)
  rate=$(grep -m1 '^recording callback' "$log" | grep -oE '[0-9]+\.[0-9]+' | head -1 || true)
  rows+=("| $label | $rate | $load |")
  echo "${rows[-1]}"
}

alternate_then_table "| tree | calls/s ($calls calls, concurrency 10) | load average at start |" \
  "| --- | ---: | --- |"

#!/usr/bin/env bash
# `npm test` in a base commit (default d58afa4, the tree issue 16 measured as "today") and in this
# checkout, back to back on one machine, ROUNDS times (default 1) alternating base, this; then one
# table: wall time, CPU time (user + sys of every process the run started) and files/tests, per run.
#
#   scripts/bench-tests.sh [base-commit]      # e.g. on a quiet machine: uptime first, nothing else running
#
# The base is cloned from this repository into $BENCH_DIR (default /tmp/callcap-bench-<base>) with its
# own `npm ci` the first time (kept for later runs). Each run's full output is kept next to the table
# (.tmp/bench-tests/*.log). Both runners order files by their own last run (.tmp/test-times.json):
# the first run of a fresh clone goes alphabetically, as a fresh CI checkout does.
set -euo pipefail
rounds=${ROUNDS:-1}
log_folder=bench-tests
# shellcheck source=scripts/bench-base.sh
source "$(dirname "$0")/bench-base.sh" "$@"

run() { # <tag> <label> <tree> <round>
  local label=$2 tree=$3 log="$logs/$1-$4.log"
  local load
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  (cd "$tree" && /usr/bin/time -f 'TIME %e %U %S' npm test >"$log" 2>&1) || true
  local t files
  t=$(grep '^TIME ' "$log" | tail -1)
  files=$(grep -E '^ℹ files ' "$log" | tail -1 | sed -E 's/^ℹ files ([0-9]+), failed ([0-9]+) · tests ([0-9]+).*/\1 files (\2 failed), \3 tests/')
  rows+=("$(echo "$t" | awk -v l="$label" -v f="$files" -v ld="$load" \
    '{ printf "| %s | %.0f s | %.0f s | %s | %s |", l, $2, $3 + $4, f, ld }')")
  echo "${rows[-1]}"
}

alternate_then_table "| tree | wall | CPU (user + sys) | files / tests | load average at start |" \
  "| --- | ---: | ---: | --- | --- |"

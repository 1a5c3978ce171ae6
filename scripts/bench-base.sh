# Sourced by scripts/bench-tests.sh and scripts/bench-capture.sh: the base commit's own clone of this
# repository, made with its own `npm ci` the first time and kept for later runs.
#   in:  $1 the base commit (default d58afa4, the tree issue 16 measured as "today"); BENCH_DIR (default
#        /tmp/callcap-bench-<base>); log_folder (the caller's folder under .tmp/)
#   out: base, here (this checkout), dir (the base's clone), logs (.tmp/<log_folder>, created);
#        alternate_then_table, which runs the caller's run() and prints the rows it collected
base=${1:-d58afa4}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${BENCH_DIR:-/tmp/callcap-bench-$base}
logs="$here/.tmp/$log_folder"
mkdir -p "$logs"

if [ ! -d "$dir/node_modules" ]; then
  rm -rf "$dir"
  git clone --quiet "$here" "$dir"
  git -C "$dir" checkout --quiet "$base"
  (cd "$dir" && npm ci --no-audit --no-fund >"$logs/npm-ci-base.log" 2>&1)
fi

rows=()
# ROUNDS times run() (the caller's: <tag> <label> <tree> <round>, appending a table row to rows) on the
# base, then on this checkout; then the table: its header ($1), its alignment line ($2) and the rows.
alternate_then_table() {
  for r in $(seq 1 "$rounds"); do
    run base "base $(git -C "$dir" rev-parse --short HEAD)" "$dir" "$r"
    run this "this $(git -C "$here" rev-parse --short HEAD)" "$here" "$r"
  done
  echo
  echo "$1"
  echo "$2"
  printf '%s\n' "${rows[@]}"
}

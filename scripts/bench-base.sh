# Sourced by scripts/bench-tests.sh and scripts/bench-capture.sh: the base commit's own clone of this
# repository, made with its own `npm ci` the first time and kept for later runs.
#   in:  $1 the base commit (default d58afa4, the tree issue 16 measured as "today"); BENCH_DIR (default
#        /tmp/callcap-bench-<base>); log_folder (the caller's folder under .tmp/)
#   out: base, here (this checkout), dir (the base's clone), logs (.tmp/<log_folder>, created)
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

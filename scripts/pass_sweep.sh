#!/usr/bin/env bash
# Robustness sweep (never-crash check, minutes; not part of CI): every .hlo
# under tests/ and examples/ through each pass alone, each preset and a few
# policy / repetition variants. Reports any exit status other than 0 (ok),
# 1 (check failed) or 2 (user error) -- i.e. internal errors (3) and signals
# -- and any output that does not parse and verify again.
#   bash scripts/pass_sweep.sh [path/to/hloverlap]   (default build/hloverlap)
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build/hloverlap}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
variants=(
  "--passes=inline" "--passes=dce" "--passes=tuple-simplify"
  "--passes=collective-hoist" "--passes=collective-pipeliner"
  "--passes=double-buffer" "--passes=async-collectives"
  "--passes=latency-hiding-scheduler" "--preset=xla-gpu"
  "--preset=hoist-pipeline"
  "--preset=xla-gpu --loop=innermost:pipeline=depth=2"
  "--preset=xla-gpu --loop=outermost:double-buffer=on"
  "--passes=collective-pipeliner,collective-pipeliner,double-buffer,double-buffer"
  "--preset=pipeline --memory-budget=1"
  "--passes=async-collectives,latency-hiding-scheduler,collective-pipeliner")
runs=0
bad=0
while IFS= read -r -d '' f; do
  for args in "${variants[@]}"; do
    runs=$((runs + 1))
    # shellcheck disable=SC2086
    timeout 60 "$B" opt $args "$f" -o "$tmp/out.hlo" >"$tmp/log" 2>&1
    rc=$?
    if [[ $rc -ne 0 && $rc -ne 1 && $rc -ne 2 ]]; then
      bad=$((bad + 1))
      echo "exit $rc: $args $f: $(grep -v '^ *$' "$tmp/log" | tail -1 | cut -c1-200)"
    elif [[ $rc -eq 0 ]] && ! timeout 60 "$B" opt "$tmp/out.hlo" -o /dev/null >"$tmp/log2" 2>&1; then
      bad=$((bad + 1))
      echo "output does not re-parse: $args $f: $(tail -1 "$tmp/log2" | cut -c1-200)"
    fi
  done
done < <(find tests examples -name '*.hlo' -not -path '*/wide/*' -size -400k -print0)
echo "$runs runs, $bad bad"
[[ $bad -eq 0 ]]

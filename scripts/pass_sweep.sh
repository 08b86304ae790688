#!/usr/bin/env bash
# Robustness sweep (never-crash check): every .hlo under tests/ and examples/
# through each pass alone, each preset and a few policy / repetition
# variants. Reports any exit status other than 0 (ok), 1 (check failed) or
# 2 (user error) -- i.e. internal errors (3) and signals -- and any output
# that does not parse and verify again.
#   bash scripts/pass_sweep.sh [--time-budget=SECONDS] [--every=N[:K]]
#                              [path/to/hloverlap]   (default build/hloverlap)
# --time-budget stops starting new files after SECONDS (the files are taken
# in a fixed order, so a bounded run checks a prefix of the full sweep);
# --every=N:K takes only the files whose position in that order is K mod N
# (K default 0). CI runs a bounded form (scripts/test.sh); the full sweep
# takes a few minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
budget=0
every=1
offset=0
B=build/hloverlap
for arg in "$@"; do
  case "$arg" in
    --time-budget=*) budget=${arg#*=} ;;
    --every=*)
      every=${arg#*=}
      if [[ "$every" == *:* ]]; then offset=${every#*:}; every=${every%%:*}; fi
      ;;
    -*) echo "pass_sweep.sh: unknown option $arg" >&2; exit 2 ;;
    *) B=$arg ;;
  esac
done
if ! [[ "$budget" =~ ^[0-9]+$ && "$every" =~ ^[1-9][0-9]*$ && "$offset" =~ ^[0-9]+$ ]]; then
  echo "pass_sweep.sh: --time-budget and --every take numbers" >&2
  exit 2
fi
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
  "--passes=async-collectives,latency-hiding-scheduler,collective-pipeliner"
  "--passes=defer-reduction --loop=all:defer-reduce=on"
  "--preset=xla-gpu --loop=all:defer-reduce=on")
start=$SECONDS
runs=0
bad=0
files=0
index=0
total=0
stopped=""
mapfile -d '' all < <(find tests examples -name '*.hlo' -not -path '*/wide/*' \
                        -size -400k -print0 | sort -z)
for f in "${all[@]}"; do
  index=$((index + 1))
  (( (index - 1) % every == offset )) || continue
  total=$((total + 1))
  if [[ "$budget" -gt 0 && $((SECONDS - start)) -ge "$budget" ]]; then
    stopped=" (time budget ${budget}s reached)"
    continue
  fi
  files=$((files + 1))
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
done
echo "$runs runs on $files of $total files in $((SECONDS - start))s$stopped, $bad bad"
[[ $bad -eq 0 ]]

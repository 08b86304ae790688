#!/usr/bin/env bash
# Regression record: the output of every preset and of `explain --json` on
# every .hlo under ../shared/corpus, tests/ and examples/, one file per
# (input, command) under OUTDIR, each holding the exit status, the printed
# module (or explain's JSON) and the remarks as JSON lines.
#
#   bash scripts/record_outputs.sh OUTDIR [path/to/hloverlap]
#   diff -r OLD NEW        # byte-identical, except bugs fixed on purpose
#
# Used before and after a refactoring that must not change behaviour
# (issue 15's regression proof). Paths inside OUTDIR are the input's path
# relative to the checkout's parent with '/' turned into '__'.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: record_outputs.sh OUTDIR [hloverlap]}
B=${2:-build/hloverlap}
mkdir -p "$OUT"
presets=(cleanup pipeline hoist-pipeline xla-gpu)
n=0
while IFS= read -r -d '' f; do
  key=$(realpath --relative-to=.. "$f" | tr '/' '_')
  for p in "${presets[@]}"; do
    o="$OUT/$key.$p"
    timeout 300 "$B" opt --no-xla-flags-env --preset="$p" "$f" -o "$o.hlo" \
      --remarks="$o.remarks" --remarks-format=json >/dev/null 2>"$o.err"
    echo "rc=$?" >"$o.rc"
    n=$((n + 1))
  done
  o="$OUT/$key.explain"
  timeout 300 "$B" explain --json "$f" >"$o.json" 2>"$o.err"
  echo "rc=$?" >"$o.rc"
  n=$((n + 1))
done < <(find ../shared/corpus tests examples -name '*.hlo' -type f -print0 |
         sort -z)
echo "$n runs recorded in $OUT"

#!/usr/bin/env bash
# Re-checks every reproducer in this folder: runs the `hloverlap opt ...`
# line of its header comment and `hloverlap verify --devices=2` under a
# timeout, and says whether the finding still reproduces.
#   bash fuzz/findings/check.sh [path/to/hloverlap]   (default build/hloverlap)
# Exit status: the number of findings that still reproduce (0: all fixed).
set -uo pipefail
H=$(realpath "${1:-$(dirname "$0")/../../build/hloverlap}")
cd "$(dirname "$0")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
open=0
for f in *.hlo; do
  args=$(sed -n 's|^//   hloverlap opt \(.*\) '"$f"' -o .*|\1|p' "$f" | head -1)
  if [[ -z "$args" ]]; then
    echo "$f: no 'hloverlap opt ... $f -o' line in the header"
    open=$((open + 1))
    continue
  fi
  # shellcheck disable=SC2086
  timeout 60 "$H" opt $args "$f" -o "$tmp/out.hlo" >"$tmp/log" 2>&1
  rc=$?
  if [[ $rc -ne 0 ]]; then
    echo "$f: REPRODUCES: opt $args exits $rc: $(tail -1 "$tmp/log" | cut -c1-160)"
    open=$((open + 1))
    continue
  fi
  # Each reproducer runs at most a few hundred iterations; an output that
  # runs a million does not terminate.
  timeout 60 "$H" verify "$f" "$tmp/out.hlo" --devices=2 \
    --max-iterations=1000000 >"$tmp/log" 2>&1
  rc=$?
  case $rc in
    0) echo "$f: fixed ($args: bit-identical)" ;;
    124) echo "$f: REPRODUCES: the output of opt $args does not terminate (60 s)"
         open=$((open + 1)) ;;
    *) echo "$f: REPRODUCES: opt $args, verify exits $rc: $(tail -1 "$tmp/log" | cut -c1-160)"
       open=$((open + 1)) ;;
  esac
done
exit "$open"

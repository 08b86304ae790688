#!/usr/bin/env bash
# Installs the dependencies, then builds and runs every test of hloverlap:
#   1. Release build, ctest (GoogleTest units + lit text tests);
#   2. ASan+UBSan build with clang-14 (-DHLOVERLAP_SANITIZE=ON), ctest
#      without tests labelled `slow`; the same build has libFuzzer's
#      coverage instrumentation in the parser's library (-DHLOVERLAP_FUZZ=ON;
#      only there, so the other layers' sanitized tests run at plain ASan
#      speed), so it also makes
#   3. the libFuzzer parser target, run for FUZZ_SECONDS (default 30)
#      seeded with the corpus and tests/ files;
#   1b. on the Release build of 1: a bounded never-crash sweep of every
#      pass and preset over the test inputs (scripts/pass_sweep.sh,
#      SWEEP_SECONDS, default 60) and a bounded run of the semantic fuzzer
#      (fuzz/semantic_fuzzer.cc, SEMFUZZ_SECONDS, default 60, seed
#      SEMFUZZ_SEED, default 1): mutated small modules through every preset,
#      checked bit-identical on the reference interpreter
#      (docs/RELIABILITY.md).
#   One clang build for 2 and 3 instead of a g++ sanitizer build plus a
#   clang fuzz build: 303 s instead of 479 + 68 s on the 2-core machine
#   (docs/BENCHMARKS.md, "Build and CI time").
# Ends with one summary line `N passed, M failed` (ctest totals of both
# builds, plus the sweep, the semantic fuzzer and the fuzz run counted as
# one test each). Exit status 0 iff M is 0.
#
# Environment: JOBS (default 2), BUILD_ROOT (default ./build-ci),
# FUZZ_SECONDS (default 30; 0 skips the fuzz run), SWEEP_SECONDS and
# SEMFUZZ_SECONDS (0 skips them), SEMFUZZ_SEED, SAN_CXX (compiler for the
# sanitizer build, default clang++-14; with a compiler that is not clang the
# fuzz target gets its own clang build), SKIP_DEPS=1 (do not run
# install-deps.sh).
set -uo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)
JOBS=${JOBS:-2}
BUILD_ROOT=${BUILD_ROOT:-$ROOT/build-ci}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
SWEEP_SECONDS=${SWEEP_SECONDS:-60}
SEMFUZZ_SECONDS=${SEMFUZZ_SECONDS:-60}
SEMFUZZ_SEED=${SEMFUZZ_SEED:-1}
SAN_CXX=${SAN_CXX:-clang++-14}
START=$(date +%s)

if [[ "${SKIP_DEPS:-0}" != 1 ]]; then
  bash scripts/install-deps.sh || { echo "install-deps.sh failed"; exit 1; }
fi

total_passed=0
total_failed=0
stage_lines=()

elapsed() { echo $(( $(date +%s) - START ))s; }

# ctest_stage NAME BUILD_DIR [ctest args...]: runs ctest, adds its totals.
ctest_stage() {
  local name=$1 dir=$2
  shift 2
  local log="$dir/ctest.log"
  echo "=== [$name] ctest ($(elapsed))"
  (cd "$dir" && ctest --output-on-failure -j"$JOBS" "$@") 2>&1 | tee "$log"
  local line total failed
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' \
         "$log" | tail -1)
  if [[ -z "$line" ]]; then
    if grep -q 'No tests were found' "$log"; then
      stage_lines+=("$name: no tests")
      return
    fi
    echo "[$name] ctest did not report totals"
    total_failed=$((total_failed + 1))
    stage_lines+=("$name: ctest failed to run")
    return
  fi
  failed=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.* failed out of ([0-9]+).*/\1/' <<<"$line")
  total_passed=$((total_passed + total - failed))
  total_failed=$((total_failed + failed))
  stage_lines+=("$name: $((total - failed)) passed, $failed failed (at $(elapsed))")
}

# check_stage NAME LOG COMMAND...: runs a check counted as one test; its
# last output line goes to the summary.
check_stage() {
  local name=$1 log=$2
  shift 2
  echo "=== [$name] $* ($(elapsed))"
  if "$@" >"$log" 2>&1; then
    tail -n 5 "$log"
    total_passed=$((total_passed + 1))
    stage_lines+=("$name: passed, $(tail -n 1 "$log" | cut -c1-160) (at $(elapsed))")
  else
    tail -n 40 "$log"
    echo "[$name] FAILED (log: $log)"
    total_failed=$((total_failed + 1))
    stage_lines+=("$name: FAILED, $(tail -n 1 "$log" | cut -c1-160)")
  fi
}

# build_stage NAME BUILD_DIR TARGETS -- CMAKE ARGS...: configure and build.
build_stage() {
  local name=$1 dir=$2 targets=$3
  shift 4
  echo "=== [$name] configure + build ($(elapsed))"
  if ! cmake -S "$ROOT" -B "$dir" -G Ninja "$@" >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"
    echo "[$name] configure FAILED"
    total_failed=$((total_failed + 1))
    stage_lines+=("$name: configure failed")
    return 1
  fi
  # shellcheck disable=SC2086
  local t0=$(date +%s)
  if ! ninja -C "$dir" -j"$JOBS" $targets; then
    echo "[$name] build FAILED"
    total_failed=$((total_failed + 1))
    stage_lines+=("$name: build failed")
    return 1
  fi
  stage_lines+=("$name: built in $(( $(date +%s) - t0 ))s")
  return 0
}

mkdir -p "$BUILD_ROOT"

# 1. Release (-O1: the CI has 2 cores and three builds to do; -O1 compiles
#    faster than -O3, and the tests need no more speed).
if build_stage release "$BUILD_ROOT/release" "" -- \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" \
    -DCMAKE_CXX_COMPILER=g++; then
  ctest_stage release "$BUILD_ROOT/release"
  # 1b. Bounded sweep and semantic fuzzer on the Release binaries.
  if [[ "$SWEEP_SECONDS" -gt 0 ]]; then
    check_stage sweep "$BUILD_ROOT/pass_sweep.log" \
      bash scripts/pass_sweep.sh --time-budget="$SWEEP_SECONDS" \
      "$BUILD_ROOT/release/hloverlap"
  fi
  if [[ "$SEMFUZZ_SECONDS" -gt 0 ]]; then
    rm -rf "$BUILD_ROOT/semantic-fuzz"
    check_stage semantic-fuzz "$BUILD_ROOT/semantic-fuzz.log" \
      "$BUILD_ROOT/release/fuzz/semantic_fuzzer" --seed="$SEMFUZZ_SEED" \
      --time-budget="$SEMFUZZ_SECONDS" --jobs="$JOBS" \
      --out="$BUILD_ROOT/semantic-fuzz"
  fi
fi

# 2. ASan + UBSan (benchmarks off; tests labelled `slow` skipped), with
#    libFuzzer coverage when the compiler is clang (then 3 needs no build).
san_fuzz=OFF
if [[ "$SAN_CXX" == *clang* ]]; then san_fuzz=ON; fi
FUZZ_BIN=""
if build_stage sanitize "$BUILD_ROOT/sanitize" "" -- \
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
    -DCMAKE_CXX_COMPILER="$SAN_CXX" -DHLOVERLAP_SANITIZE=ON \
    -DHLOVERLAP_FUZZ="$san_fuzz" -DHLOVERLAP_BENCH=OFF; then
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest_stage sanitize "$BUILD_ROOT/sanitize" -LE slow
  if [[ $san_fuzz == ON ]]; then FUZZ_BIN="$BUILD_ROOT/sanitize/fuzz/parser_fuzzer"; fi
fi

# 3. libFuzzer on the parser.
if [[ "$FUZZ_SECONDS" -gt 0 ]]; then
  FUZZ_DIR="$BUILD_ROOT/fuzz"
  mkdir -p "$FUZZ_DIR"
  if [[ -z "$FUZZ_BIN" && $san_fuzz == OFF ]]; then
    # A g++ sanitizer build: the fuzz target needs its own clang build.
    if build_stage fuzz "$FUZZ_DIR" parser_fuzzer -- \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE="-O1" \
        -DCMAKE_CXX_COMPILER=clang++-14 -DHLOVERLAP_FUZZ=ON \
        -DHLOVERLAP_BENCH=OFF; then
      FUZZ_BIN="$FUZZ_DIR/fuzz/parser_fuzzer"
    fi
  fi
  if [[ -n "$FUZZ_BIN" && -x "$FUZZ_BIN" ]]; then
    echo "=== [fuzz] parser_fuzzer for ${FUZZ_SECONDS}s ($(elapsed))"
    seeds=$(mktemp -d)
    n=0
    while IFS= read -r -d '' f; do
      n=$((n + 1))
      cp "$f" "$seeds/seed_$n.hlo"
    done < <(find "$ROOT/../shared/corpus" "$ROOT/tests" "$ROOT/examples" \
               -name '*.hlo' -type f -print0 2>/dev/null)
    echo "[fuzz] $n seed files"
    mkdir -p "$FUZZ_DIR/artifacts"
    if ASAN_OPTIONS=detect_leaks=1 "$FUZZ_BIN" \
        -max_total_time="$FUZZ_SECONDS" -max_len=1048576 -timeout=60 \
        -rss_limit_mb=4096 -print_final_stats=1 \
        -artifact_prefix="$FUZZ_DIR/artifacts/" "$seeds" \
        >"$FUZZ_DIR/fuzz.log" 2>&1; then
      tail -n 15 "$FUZZ_DIR/fuzz.log"
      total_passed=$((total_passed + 1))
      stage_lines+=("fuzz: passed (${FUZZ_SECONDS}s)")
    else
      tail -n 80 "$FUZZ_DIR/fuzz.log"
      echo "[fuzz] FAILED; artifacts in $FUZZ_DIR/artifacts"
      total_failed=$((total_failed + 1))
      stage_lines+=("fuzz: FAILED")
    fi
    rm -rf "$seeds"
  elif [[ -z "$FUZZ_BIN" ]]; then
    echo "[fuzz] no fuzz target was built (see the build stages above)"
  fi
fi

echo "=== summary ($(elapsed))"
for l in "${stage_lines[@]}"; do echo "  $l"; done
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]

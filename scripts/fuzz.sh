#!/usr/bin/env bash
# Build the libFuzzer targets of fuzz/ with clang in build-fuzz (ASan + UBSan, halt on the first
# error) and run each in turn on a working copy of its seed corpus. Exits non-zero, naming the input
# that crashed, on any finding. See fuzz/README.md.
#
#   scripts/fuzz.sh [--ci] [--seconds S] [--runs R] [--corpus DIR] [TARGET...]
#     --ci          what CI runs: 30 s per target (the default is 60)
#     --seconds S   run each target for S seconds
#     --runs R      run each target for R executions instead of a time (with --seconds: whichever
#                   comes first)
#     --corpus DIR  keep each target's working corpus in DIR/TARGET (created, reused by later runs;
#                   scripts/fuzz_coverage.sh replays it) instead of a temporary copy
#     TARGET        urdf, values, ... (default: every fuzz/fuzz_*.c and fuzz_*.cc)
#   A long campaign, one target after another (docs/robustness.md):
#     nice -n 10 scripts/fuzz.sh --seconds 3600
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

seconds=60
seconds_given=""
runs=""
keep=""
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) seconds=30; seconds_given=""; runs="" ;;
    --seconds) seconds=${2:?--seconds needs a number}; seconds_given=1; shift ;;
    --runs) runs=${2:?--runs needs a number}; shift ;;
    --corpus) keep=${2:?--corpus needs a folder}; shift ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 1 ;;
    *) targets+=("$1") ;;
  esac
  shift
done
case "$seconds$runs" in *[!0-9]*) echo "fuzz.sh: --seconds and --runs take whole numbers" >&2; exit 1 ;; esac
if [ ${#targets[@]} -eq 0 ]; then
  for f in fuzz/fuzz_*.c fuzz/fuzz_*.cc; do t=${f#fuzz/fuzz_}; targets+=("${t%.c*}"); done
fi

# Seeds of each target beyond its own fuzz/corpus/TARGET: the models the project ships and the
# broken models the reader's tests refuse.
seeds_of() {
  case "$1" in
    urdf) echo models/*.urdf tests/io/broken/*.urdf ;;
    flex) echo tests/io/broken/*.json ;;
    sdf) echo tests/io/broken_sdf/*.sdf ;;
    mjcf) echo tests/io/broken_mjcf/*.xml ;;
    sdf_model|sdf_dom|loops) ;; # built from the input's bytes: no text seeds
    files|cli) ;;       # their own corpus/TARGET only
  esac
}

# ---------------------------------------------------------------- clang and libFuzzer
scripts/install-deps.sh
cc=${CC:-}
if [ -z "$cc" ]; then
  for c in clang clang-14; do command -v "$c" >/dev/null && { cc=$c; break; }; done
fi
if [ -z "$cc" ] || ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { (void)d; return (int)n * 0; }' |
    "$cc" -x c -fsanitize=fuzzer,address,undefined -o /dev/null - 2>/dev/null; then
  echo "fuzz.sh: no clang with libFuzzer (Debian: clang-14 libclang-rt-14-dev; scripts/install-deps.sh installs them)" >&2
  exit 2
fi
# The SDF reader is C++: its clang++ beside the clang (CXX overrides).
cxx=${CXX:-$(dirname "$(command -v "$cc")")/$(basename "$cc" | sed 's/^clang/clang++/')}

# ---------------------------------------------------------------- build
build=$root/build-fuzz
echo "== fuzz: build ($cc, libFuzzer + ASan + UBSan) in build-fuzz =="
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSOADYN_BUILD_FUZZ=ON \
      -DSOADYN_WERROR=ON -DSOADYN_LTO=OFF -DSOADYN_NATIVE=OFF -DSOADYN_BUILD_TESTS=OFF -DSOADYN_BUILD_BENCH=OFF \
      -DSOADYN_WITH_CVODE=OFF -DSOADYN_WITH_PLOT=OFF >/dev/null
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}"

# ---------------------------------------------------------------- run
work=$(mktemp -d "${TMPDIR:-/tmp}/soadyn-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
export ASAN_OPTIONS=halt_on_error=1:abort_on_error=1:detect_leaks=1:allocator_may_return_null=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:print_stacktrace=1
stamp=$(date +%Y%m%d-%H%M%S)
failed=()
for t in "${targets[@]}"; do
  corpus=$work/$t
  [ -n "$keep" ] && corpus=$keep/$t
  crashes=$build/crashes/$t-$stamp # this run's findings and log; kept
  mkdir -p "$corpus" "$crashes"
  # shellcheck disable=SC2046
  for seed in $(seeds_of "$t") fuzz/corpus/"$t"/*; do
    [ -f "$seed" ] && cp "$seed" "$corpus/$(echo "$seed" | tr / _)"
  done
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  if [ -n "$runs" ] && [ -n "$seconds_given" ]; then
    limit=(-runs="$runs" -max_total_time="$seconds"); what="$runs runs or ${seconds} s"
  elif [ -n "$runs" ]; then limit=(-runs="$runs"); what="$runs runs"
  else limit=(-max_total_time="$seconds"); what="${seconds} s"; fi
  echo "== fuzz: $t for $what ($(ls "$corpus" | wc -l) seeds) =="
  log=$crashes/fuzz.log
  set +e
  # -max_len: the largest shipped model is under 10 kB; -timeout: a hang is a finding too.
  "$build/fuzz/fuzz_$t" "${limit[@]}" "${dict[@]}" -max_len=16384 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$crashes/input-" "$corpus" >"$log" 2>&1
  rc=$?
  set -e
  grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec|stat::peak_rss_mb)' "$log" |
    sed 's/^/  /' || true
  inputs=$(find "$crashes" -name 'input-*' | sort)
  if [ $rc -ne 0 ] || [ -n "$inputs" ]; then
    echo "fuzz.sh: FINDING in fuzz_$t (exit $rc); the report from its log ($log):" >&2
    # From the first error line (a broken contract, ASan, UBSan or libFuzzer), or the log's end.
    if grep -q -E 'contract broken|ERROR: |runtime error: ' "$log"; then
      awk '/contract broken|ERROR: |runtime error: /{p = 1} p && n < 60 {print; n++}' "$log" >&2
    else
      grep -v -E '^#[0-9]+' "$log" | tail -n 40 >&2
    fi
    echo "fuzz.sh: the input(s) that failed:" >&2
    echo "${inputs:-  (none written: see the log)}" | sed 's/^/  /' >&2
    echo "fuzz.sh: replay one with: $build/fuzz/fuzz_$t INPUT" >&2
    failed+=("$t")
  else
    rm -rf "$crashes"
  fi
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "== fuzz: no findings =="

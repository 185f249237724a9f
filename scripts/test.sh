#!/usr/bin/env bash
# The whole test suite: installs dependencies if missing, builds with warnings as errors, runs every
# test (the shared-model tests skip with a message when ../shared/models is absent; the packaging
# tests install to a temporary prefix, link through pkg-config and build once with every component
# off), then builds and runs it again tuned for this processor (-march=native: where it has FMA, the
# fused multiply-adds the README's figures are measured with), then under AddressSanitizer +
# UndefinedBehaviorSanitizer, then fuzzes the parsers.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)

echo "== build (Release, -Werror) =="
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSOADYN_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
echo "== tests =="
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== build (Release, -march=native) =="
cmake -S . -B build-native -DCMAKE_BUILD_TYPE=Release -DSOADYN_NATIVE=ON -DSOADYN_WERROR=ON \
      -DSOADYN_BUILD_BENCH=OFF >/dev/null
cmake --build build-native -j"$jobs"
echo "== tests (-march=native) =="
# embed_long (Cassie's 10 s simulation, the deployment example's 20 s) ran above; its code paths run
# here in test_embed_simulation's four-bar and test_embed_flexible. codegen_long (the generated code
# of the shared robot models, minutes of the C compiler's time) ran above too: the generator's paths
# run here in test_codegen, test_codegen_flexible and test_codegen_lanes on random trees.
ctest --test-dir build-native --output-on-failure -j"$jobs" -LE "embed_long|codegen_long"

echo "== build (ASan + UBSan) =="
cmake -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DSOADYN_SANITIZE=ON -DSOADYN_WERROR=ON \
      -DSOADYN_BUILD_BENCH=OFF >/dev/null
cmake --build build-sanitize -j"$jobs"
echo "== tests under the sanitizers =="
# embed_long (the 10 s simulation of Cassie's legs at dt 3e-5, ~90 s in Release; the deployment
# example's 20 s, 5 min here) ran above; its code paths run here in test_embed_simulation's
# four-bar, test_embed_flexible and test_cli_embed; codegen_long as in the native pass.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
LSAN_OPTIONS=suppressions="$PWD/tests/sim/lsan.supp" \
  ctest --test-dir build-sanitize --output-on-failure -j"$jobs" -LE "embed_long|codegen_long"

# The model readers and the command's value parser under libFuzzer (scripts/fuzz.sh, 30 s per
# target with --ci); a finding fails the run.
if [ -x scripts/fuzz.sh ]; then
  echo "== fuzzing =="
  scripts/fuzz.sh --ci
elif [ -e scripts/fuzz.sh ]; then
  echo "test.sh: scripts/fuzz.sh is not executable" >&2
  exit 1
fi

#!/usr/bin/env bash
# Line coverage of the model readers and the layers the fuzz targets reach, from the corpora a
# campaign kept (scripts/fuzz.sh --corpus DIR): the targets are built once more in build-fuzz-cov
# with clang's source coverage (-DSOADYN_FUZZ_COVERAGE=ON), each corpus DIR/TARGET is replayed once
# (-runs=0: every input run one time), and llvm-cov reports the lines run per file. See
# docs/robustness.md.
#
#   scripts/fuzz_coverage.sh DIR [TARGET...]     (default: every target with a folder in DIR)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
corpus=${1:?usage: scripts/fuzz_coverage.sh CORPUS_DIR [TARGET...]}
shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for d in "$corpus"/*/; do t=$(basename "$d"); { [ -f "fuzz/fuzz_$t.c" ] || [ -f "fuzz/fuzz_$t.cc" ]; } && targets+=("$t"); done
fi
cc=${CC:-clang}
cxx=${CXX:-$(dirname "$(command -v "$cc")")/$(basename "$cc" | sed 's/^clang/clang++/')}
ver=$("$cc" --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p')
profdata=$(command -v "llvm-profdata-$ver" || command -v llvm-profdata)
cov=$(command -v "llvm-cov-$ver" || command -v llvm-cov)
build=$root/build-fuzz-cov
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSOADYN_BUILD_FUZZ=ON -DSOADYN_FUZZ_COVERAGE=ON -DSOADYN_WERROR=ON -DSOADYN_LTO=OFF -DSOADYN_NATIVE=OFF \
      -DSOADYN_BUILD_TESTS=OFF -DSOADYN_BUILD_BENCH=OFF -DSOADYN_WITH_CVODE=OFF -DSOADYN_WITH_PLOT=OFF \
      -DSOADYN_WITH_VIEWER=OFF >/dev/null
cmake --build "$build" -j2 --target "${targets[@]/#/fuzz_}" >/dev/null
profiles=$(mktemp -d "${TMPDIR:-/tmp}/soadyn-fuzz-cov.XXXXXX")
trap 'rm -rf "$profiles"' EXIT
export ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=0
objects=()
for t in "${targets[@]}"; do
  echo "== coverage: replaying $(ls "$corpus/$t" | wc -l) inputs of $t ==" >&2
  LLVM_PROFILE_FILE="$profiles/$t-%p.profraw" "$build/fuzz/fuzz_$t" -runs=0 "$corpus/$t" >/dev/null 2>&1 || true
  objects+=(-object "$build/fuzz/fuzz_$t")
done
"$profdata" merge -sparse "$profiles"/*.profraw -o "$profiles/all.profdata"
# The first object is the positional one llvm-cov wants; the others follow with -object.
first=${objects[1]}
# The readers, the loop layers and the command; paths may be absolute or relative to the build
# folder (a ccache base directory makes them relative), so rows are picked by their path's end.
"$cov" report "$first" "${objects[@]:2}" -instr-profile="$profiles/all.profdata" |
    sed -e "s|$root/||" -e 's|^\.\./||' | grep -E '^(Filename|src/io/|src/loops/|src/embed/|cli/)'

#!/usr/bin/env bash
# tests/packaging/components_off.sh CMAKE SOURCE_DIR WORK_DIR CC GENERATOR WERROR "COMPONENT_HEADERS"
#
# soadyn configured with every component off (SOADYN_WITH_IO, _CVODE, _PLOT = OFF) looks for none of
# libxml2, SUNDIALS, PLplot and builds; only the libraries, the command and test_components are built
# (a Debug build: quick). Then: test_components passes (each component says "not offered", RK4 and
# CSV work); the core needs nothing but libm and libc, the full library none of libxml2, SUNDIALS,
# PLplot (core_dependencies.sh); the command says which option is missing: for a model file (exit 2),
# --integrator cvode-bdf and --plot (exit 1).
set -euo pipefail
cmake=$1 source=$2 work=$3 cc=$4 generator=$5 werror=$6 component_headers=$7
here=$(cd "$(dirname "$0")" && pwd)
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

"$cmake" -S "$source" -B "$work" -G "$generator" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=Debug \
  -DSOADYN_WITH_IO=OFF -DSOADYN_WITH_CVODE=OFF -DSOADYN_WITH_PLOT=OFF -DSOADYN_WITH_VIEWER=OFF -DSOADYN_WERROR="$werror" \
  -DSOADYN_BUILD_BENCH=OFF >"$work.configure.log" 2>&1 || { cat "$work.configure.log" >&2; exit 1; }
searched=$(grep -E '^(LIBXML2_|PLPLOT_|SUNDIALS_DIR|__pkg_config_checked_(LIBXML2|PLPLOT))' "$work/CMakeCache.txt" || true)
[ -z "$searched" ] || fail "configured without components, CMake still looked for them: $(echo $searched)"
"$cmake" --build "$work" -j2 --target soadyn_core soadyn soadyn_cli test_components >"$work.build.log" 2>&1 ||
  { tail -n 40 "$work.build.log" >&2; echo "FAIL: build with every component off" >&2; exit 1; }

(cd "$work/tests" && ./test_components) || fail "test_components with every component off"
bash "$here/core_dependencies.sh" "$work/src/libsoadyn_core.so" "$work/src/libsoadyn.so" "$source/include" \
  "$component_headers" 0 0 0 || fail "dependencies of the libraries with every component off"

cli=$work/cli/soadyn
expect() { # exit status, text the message must hold, arguments...
  local status=$1 text=$2 rc=0; shift 2
  "$cli" "$@" >"$work.cli.out" 2>"$work.cli.err" || rc=$?
  if [ "$rc" != "$status" ] || ! grep -qF -- "$text" "$work.cli.err"; then
    fail "soadyn $*: exit $rc (expected $status), stderr: $(cat "$work.cli.err") (expected to hold '$text')"
  elif ! grep -qF "not offered" "$work.cli.err"; then
    fail "soadyn $*: the message does not say 'not offered': $(cat "$work.cli.err")"
  fi
}
model=$source/models/double_pendulum.urdf
expect 2 "SOADYN_WITH_IO=OFF" info "$model"
expect 2 "SOADYN_WITH_IO=OFF" eval "$model"
expect 1 "SOADYN_WITH_CVODE=OFF" simulate "$model" --integrator cvode-bdf
expect 1 "SOADYN_WITH_PLOT=OFF" simulate "$model" --plot "$work/plot.png"
[ ! -e "$work/plot.png" ] || fail "a refused --plot left $work/plot.png"
expect 1 "SOADYN_WITH_VIEWER=OFF" view "$model" -o "$work/view.html"

[ $failures = 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok: every component off builds, says what it lacks, and needs none of libxml2, SUNDIALS, PLplot"

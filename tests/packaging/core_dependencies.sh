#!/usr/bin/env bash
# tests/packaging/core_dependencies.sh CORE_SO FULL_SO INCLUDE_DIR "COMPONENT_HEADERS" IO CVODE PLOT
#
# The core shared library (libsoadyn_core.so) depends on nothing but libm and libc: no NEEDED entry
# and no undefined symbol of libxml2, SUNDIALS or PLplot. It exports the core's API, every SD_API
# function of the headers soadyn.h includes except the components' (urdf.h, sim.h, ...), and nothing
# that no header declares (a component's header may also declare core functions, as loops.h does).
# The full library (libsoadyn.so) exports every function soadyn.h declares, and needs libxml2,
# SUNDIALS and PLplot exactly when those components are built (which also shows that the checks can
# see such a dependency). IO, CVODE, PLOT are 1 or 0.
set -euo pipefail
core=$1 full=$2 include=$3 component_headers=$4 with_io=$5 with_cvode=$6 with_plot=$7
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
for tool in readelf nm; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (Debian: binutils)" >&2; exit 1; }
done

needed() { readelf -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p'; }
exported() { nm -D --defined-only "$1" | awk '$2 ~ /^[TWDBRV]$/ && $3 !~ /^_/ {print $3}' | sort -u; }
undefined() { nm -D --undefined-only "$1" | awk '{print $2}' | sed 's/@.*//' | sort -u; }
# SD_API functions declared in the given headers (one declaration per line starts with SD_API).
declared() {
  for h in "$@"; do sed -nE 's/^SD_API [^(]*[^A-Za-z0-9_(]([A-Za-z_][A-Za-z0-9_]*)\(.*/\1/p' "$include/soadyn/$h"; done | sort -u
}

# 1. Dependencies of the core: libm and libc only.
core_needed=$(needed "$core")
echo "libsoadyn_core NEEDED: $(echo $core_needed)"
for lib in $core_needed; do
  case $lib in
    libm.so.*|libc.so.*) ;;
    *) fail "the core library needs $lib" ;;
  esac
done
dependency_symbols='^(xml|html|CVode|CVDls|CVSpils|N_V|SUN|c_pl|plsetopt|plP_)'
leaked=$(undefined "$core" | grep -E "$dependency_symbols" || true)
[ -z "$leaked" ] || fail "the core library refers to symbols of libxml2/SUNDIALS/PLplot: $(echo $leaked)"

# 2. The full library needs each dependency exactly when its component is built.
full_needed=$(needed "$full")
full_undefined=$(undefined "$full")
echo "libsoadyn NEEDED: $(echo $full_needed)"
expect_dependency() { # component flag, NEEDED pattern, symbol pattern, name
  local on=$1 lib_pattern=$2 symbol_pattern=$3 name=$4 has_lib=0 has_symbols=0
  echo "$full_needed" | grep -qE "$lib_pattern" && has_lib=1
  echo "$full_undefined" | grep -qE "$symbol_pattern" && has_symbols=1
  if [ "$on" = 1 ] && { [ $has_lib = 0 ] || [ $has_symbols = 0 ]; }; then
    fail "the full library should need $name (NEEDED: $has_lib, symbols: $has_symbols)"
  elif [ "$on" = 0 ] && { [ $has_lib = 1 ] || [ $has_symbols = 1 ]; }; then
    fail "the full library needs $name although its component is off"
  fi
}
expect_dependency "$with_io" '^libxml2\.' '^xml' libxml2
expect_dependency "$with_cvode" '^libsundials_cvode\.' '^CVode' "SUNDIALS CVODE"
expect_dependency "$with_plot" '^libplplot\.' '^c_pl' PLplot

# 3. Exported symbols: the core's API in the core, everything in the full library.
umbrella=$(sed -nE 's/^#include "([a-z_]+\.h)".*/\1/p' "$include/soadyn/soadyn.h")
core_headers=() all_headers=()
for h in $umbrella; do
  all_headers+=("$h")
  case " $component_headers " in *" $h "*) ;; *) core_headers+=("$h") ;; esac
done
every_header=$(cd "$include/soadyn" && ls *.h)
declared_core=$(declared "${core_headers[@]}")
declared_all=$(declared "${all_headers[@]}")
declared_anywhere=$(declared $every_header)
exported_core=$(exported "$core")
exported_full=$(exported "$full")
[ -n "$declared_core" ] || fail "no SD_API declaration found in ${core_headers[*]}"
missing=$(comm -23 <(echo "$declared_core") <(echo "$exported_core"))
[ -z "$missing" ] || fail "declared in the core headers (${core_headers[*]}) but not exported by the core library: $(echo $missing)"
missing=$(comm -23 <(echo "$declared_all") <(echo "$exported_full"))
[ -z "$missing" ] || fail "declared in the headers soadyn.h includes but not exported by the full library: $(echo $missing)"
extra=$(comm -13 <(echo "$declared_anywhere") <(echo "$exported_core"))
[ -z "$extra" ] || fail "the core library exports symbols no header declares: $(echo $extra)"
extra=$(comm -13 <(echo "$declared_anywhere") <(echo "$exported_full"))
[ -z "$extra" ] || fail "the full library exports symbols no header declares: $(echo $extra)"

echo "core exports $(echo "$exported_core" | wc -l) functions, the full library $(echo "$exported_full" | wc -l)"
[ $failures = 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "ok"

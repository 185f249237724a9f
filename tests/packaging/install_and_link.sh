#!/usr/bin/env bash
# tests/packaging/install_and_link.sh CMAKE BUILD_DIR SOURCE_DIR CC WORK_DIR WITH_IO
#
# What a user does with an installed soadyn: `cmake --install` into a fresh prefix, then programs
# compiled outside the build with the flags pkg-config gives (PKG_CONFIG_PATH=PREFIX/lib/pkgconfig):
#   - the core alone, fully static: cc -static app.c $(pkg-config --static --cflags --libs soadyn-core)
#     (no dynamic section at all);
#   - examples/arm_pd_control.c (URDF in, RK4 under a control law; with WITH_IO=0 the core program)
#     with soadyn's archive and the system's shared libraries: the flags of
#     `pkg-config --static --cflags --libs soadyn`, -lsoadyn taken from libsoadyn.a
#     (-Wl,-Bstatic), linked with -fno-lto -fno-use-linker-plugin so that the archive must hold
#     machine code and not only link-time-optimisation bytecode: no NEEDED libsoadyn;
#   - the same two programs linked to the shared libraries through `pkg-config --cflags --libs`.
# Each program must run and succeed.
set -euo pipefail
cmake=$1 build=$2 source=$3 cc=$4 work=$5 with_io=$6
command -v pkg-config >/dev/null || { echo "FAIL: pkg-config not found (Debian: apt-get install pkg-config)" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log"
pc=$(find "$prefix" -name soadyn.pc -path '*/pkgconfig/*')
[ -n "$pc" ] || { echo "FAIL: no soadyn.pc installed under $prefix" >&2; exit 1; }
export PKG_CONFIG_PATH
PKG_CONFIG_PATH=$(dirname "$pc")
libdir=$(dirname "$PKG_CONFIG_PATH")
for f in "$libdir"/libsoadyn.a "$libdir"/libsoadyn_core.a "$libdir"/libsoadyn.so "$libdir"/libsoadyn_core.so \
         "$prefix"/include/soadyn/soadyn.h "$prefix"/include/soadyn/config.h "$libdir"/pkgconfig/soadyn-core.pc; do
  [ -e "$f" ] || { echo "FAIL: $f not installed" >&2; exit 1; }
done

needed() { readelf -d "$1" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]/\1/p' | tr '\n' ' '; }
run() { # name, command...
  local name=$1; shift
  echo "+ $*"
  if ! "$@" >"$work/$name.out" 2>&1; then
    cat "$work/$name.out" >&2
    echo "FAIL: $name" >&2
    exit 1
  fi
}

echo "soadyn.pc --static: $(pkg-config --static --cflags --libs soadyn)"
echo "soadyn-core.pc --static: $(pkg-config --static --cflags --libs soadyn-core)"
case " $(pkg-config --static --cflags soadyn) " in *" -DSOADYN_STATIC "*) ;;
  *) echo "FAIL: pkg-config --static --cflags soadyn lacks -DSOADYN_STATIC" >&2; exit 1 ;; esac

# The core alone, fully static.
read -r -a flags <<<"$(pkg-config --static --cflags --libs soadyn-core)"
run compile_core_static "$cc" -std=c11 -static -o "$work/core_static" "$source/tests/packaging/core_program.c" "${flags[@]}"
if readelf -d "$work/core_static" | grep -q NEEDED; then
  echo "FAIL: the -static core program still needs $(needed "$work/core_static")" >&2; exit 1
fi
run core_static "$work/core_static"

# The full library's archive, the system's libraries shared.
if [ "$with_io" = 1 ]; then
  program=$source/examples/arm_pd_control.c args=("$source/models/iiwa14.urdf")
else
  program=$source/tests/packaging/core_program.c args=()
fi
read -r -a cflags <<<"$(pkg-config --static --cflags soadyn)"
libs=()
for flag in $(pkg-config --static --libs soadyn); do
  if [ "$flag" = -lsoadyn ]; then libs+=(-Wl,-Bstatic -lsoadyn -Wl,-Bdynamic); else libs+=("$flag"); fi
done
run compile_static_soadyn "$cc" -std=c11 -fno-lto -fno-use-linker-plugin -o "$work/app_static" "$program" \
  "${cflags[@]}" "${libs[@]}"
case " $(needed "$work/app_static")" in *" libsoadyn"*)
  echo "FAIL: linked with libsoadyn.a, the program still needs: $(needed "$work/app_static")" >&2; exit 1 ;; esac
run app_static "$work/app_static" "${args[@]}"

# Shared libraries.
read -r -a flags <<<"$(pkg-config --cflags --libs soadyn)"
run compile_shared "$cc" -std=c11 -o "$work/app_shared" "$program" "${flags[@]}" -Wl,-rpath,"$libdir"
case " $(needed "$work/app_shared")" in *" libsoadyn.so."*) ;;
  *) echo "FAIL: the shared program does not need libsoadyn.so: $(needed "$work/app_shared")" >&2; exit 1 ;; esac
run app_shared "$work/app_shared" "${args[@]}"
read -r -a flags <<<"$(pkg-config --cflags --libs soadyn-core)"
run compile_core_shared "$cc" -std=c11 -o "$work/core_shared" "$source/tests/packaging/core_program.c" "${flags[@]}" \
  -Wl,-rpath,"$libdir"
case " $(needed "$work/core_shared")" in *" libsoadyn_core.so."*) ;;
  *) echo "FAIL: the core program does not need libsoadyn_core.so: $(needed "$work/core_shared")" >&2; exit 1 ;; esac
run core_shared "$work/core_shared"
echo "ok: static core program, $(basename "$program") with libsoadyn.a and with libsoadyn.so, core program with libsoadyn_core.so"

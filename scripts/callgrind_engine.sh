#!/bin/sh
# scripts/callgrind_engine.sh BUILD_DIR [BEFORE.md] — instructions per call (callgrind) of ID, M,
# FD, M^-1 and det M on the iiwa, HyQ, Talos (reduced) and a 30-body random tree of every hinge type,
# as a markdown table (bench/bench_count.c says what is counted). With BEFORE.md (this script's
# output of another build), each cell also gives after/before. Needs valgrind; the shared models
# (../shared/models) for HyQ and Talos, whose rows are left out without them.
# Count instructions of a build without -march=native (valgrind does not run AVX-512). Such a build
# dispatches its hot paths at run time (docs/dispatch.md): the counts are of the baseline code (any
# x86-64, SSE2: SOADYN_CPU=baseline, unless SOADYN_CPU is set otherwise), as before the dispatch;
# under valgrind the processor's own choice would be AVX2 (valgrind reports no AVX-512).
set -eu
build=${1:?usage: callgrind_engine.sh BUILD_DIR [BEFORE.md]}
before=${2:-}
bench="$build/bench/soadyn_bench"
calls=${CALLS:-200}
[ -x "$bench" ] || { echo "callgrind_engine.sh: $bench not built (cmake --build $build --target soadyn_bench)" >&2; exit 1; }
command -v valgrind >/dev/null || { echo "callgrind_engine.sh: valgrind not installed" >&2; exit 1; }
export SOADYN_CPU="${SOADYN_CPU:-baseline}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| model | ID | M | FD | M^-1 | det M |"
echo "|---|---:|---:|---:|---:|---:|"
for model in iiwa hyq talos tree30; do
    if ! valgrind --tool=callgrind --callgrind-out-file="$tmp/out" --toggle-collect='count_*' \
            "$bench" --count "$calls" --model "$model" >"$tmp/log" 2>&1; then
        echo "| $model | left out: $(grep -v '^==' "$tmp/log" | tail -1) |||||"
        continue
    fi
    row="| $model"
    for fn in count_id count_mass_matrix count_fd count_minv count_det; do
        ir=$(callgrind_annotate --inclusive=yes "$tmp/out" 2>/dev/null | awk -v fn="$fn" '
            index($0, ":" fn " ") || index($0, ":" fn "[") || $NF ~ (":" fn "$") { gsub(",", "", $1); print $1; exit }')
        per=$(( ${ir:-0} / calls ))
        cell=$per
        if [ -n "$before" ]; then
            col=$(echo "$fn" | sed 's/count_id/2/;s/count_mass_matrix/3/;s/count_fd/4/;s/count_minv/5/;s/count_det/6/')
            old=$(awk -F'|' -v m="$model" -v c="$col" '{ f = $2; gsub(/^ +| +$/, "", f) } f == m { split($(c+1), a, " "); print a[1]; exit }' "$before")
            [ -n "$old" ] && cell="$per ($(awk -v a="$per" -v b="$old" 'BEGIN { printf "%+.1f%%", 100 * (a - b) / b }'))"
        fi
        row="$row | $cell"
    done
    echo "$row |"
done

#!/usr/bin/env bash
# Issue 12's table for the README: builds soadyn_bench (Release, -DSOADYN_NATIVE=ON as the README's
# figures are; MuJoCo is Debian's generic build), runs `soadyn_bench --peers` RUNS times (default 3)
# with BATCHES interleaved batches each (default 31) and prints the model checks of the first run and
# the table with, per cell, the median of the runs' medians and how far the runs spread
# ((max - min) / median, soadyn and MuJoCo), then the largest spread: how noisy the machine was.
#
#   scripts/bench_table.sh [BUILD_DIR]      (default build-bench-table beside the sources)
#   RUNS=3 BATCHES=31 NATIVE=ON JOBS=2 SHARED=../shared/models scripts/bench_table.sh
set -euo pipefail
src="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$src/build-bench-table}"
runs="${RUNS:-3}"
batches="${BATCHES:-31}"
mkdir -p "$build" # the logs go inside it, not beside it in the sources
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSOADYN_NATIVE="${NATIVE:-ON}" -DSOADYN_BUILD_TESTS=OFF \
      > "$build/bench_table.cmake.log" 2>&1 || { cat "$build/bench_table.cmake.log" >&2; exit 1; }
cmake --build "$build" -j"${JOBS:-2}" --target soadyn_bench > "$build/bench_table.build.log" 2>&1 ||
  { tail -30 "$build/bench_table.build.log" >&2; exit 1; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
args=(--peers --batches "$batches")
[ -n "${SHARED:-}" ] && args+=(--shared "$SHARED")
for i in $(seq 1 "$runs"); do
  echo "bench_table: run $i of $runs ($(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg))" >&2
  "$build/bench/soadyn_bench" "${args[@]}" > "$out/run$i.md" 2> "$out/run$i.err"
done
/usr/bin/python3 - "$out" "$runs" <<'EOF'
import statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
texts = [open(f"{out}/run{i}.md").read().splitlines() for i in range(1, runs + 1)]
first = texts[0]
table_at = next(i for i, l in enumerate(first) if l.startswith("| model |"))
print("\n".join(first[:table_at]).rstrip())
print(f"\nMedian of {runs} runs (each cell of each run: the median of its batches); spread = (max - min) / median over the runs.\n")
print("| model | | soadyn (ns) | MuJoCo (ns) | soadyn / MuJoCo | target (ns) | spread soadyn | spread MuJoCo |")
print("|---|---|--:|--:|--:|--:|--:|--:|")
cells = {}
order = []
for t in texts:
    for l in t:
        if not l.startswith("| ") or l.startswith("| model |"):
            continue
        f = [x.strip() for x in l.strip("|").split("|")]
        key = (f[0], f[1])
        if key not in cells:
            cells[key] = {"sd": [], "mj": [], "target": f[5]}
            order.append(key)
        cells[key]["sd"].append(float(f[2].split()[0]))
        if f[3].split()[0].replace(".", "").isdigit():
            cells[key]["mj"].append(float(f[3].split()[0]))
        if "batches" in f[2] + f[3]:
            cells[key]["few"] = True
def spread(v):
    return (max(v) - min(v)) / statistics.median(v) if len(v) > 1 else 0.0
worst = 0.0
for key in order:
    c = cells[key]
    sd = statistics.median(c["sd"])
    s_sd = spread(c["sd"])
    worst = max(worst, s_sd)
    if c["mj"]:
        mj = statistics.median(c["mj"])
        s_mj = spread(c["mj"])
        worst = max(worst, s_mj)
        mj_t, ratio, s_mj_t = f"{mj:.0f}", f"{sd / mj:.3g}", f"{100 * s_mj:.0f}%"
    else:
        mj_t, ratio, s_mj_t = "not built", "-", "-"
    few = " (fewer batches: slow calls)" if c.get("few") else ""
    print(f"| {key[0]} | {key[1]} | {sd:.0f} | {mj_t}{few} | {ratio} | {c['target']} | {100 * s_sd:.0f}% | {s_mj_t} |")
print(f"\nLargest spread between the {runs} runs: {100 * worst:.0f}%")
EOF

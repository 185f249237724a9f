#!/usr/bin/env bash
# Quick start: installs dependencies if missing, builds soadyn, and simulates the bundled double
# pendulum for 10 s, writing the trajectory (double_pendulum.csv), a plot (double_pendulum.png) and
# the page that plays it in a browser (double_pendulum.html, when the viewer is built).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target soadyn_cli
build/cli/soadyn info models/double_pendulum.urdf
build/cli/soadyn simulate models/double_pendulum.urdf --duration 10 --dt 1e-3 --q0 1.2,-0.4 \
  --output double_pendulum.csv --every 10 --plot double_pendulum.png
if grep -q '^#define SOADYN_HAS_VIEWER 1' build/include/soadyn/config.h 2>/dev/null; then
  build/cli/soadyn view models/double_pendulum.urdf --trajectory double_pendulum.csv --forces \
    -o double_pendulum.html
  echo "open double_pendulum.html in a browser to watch the motion"
fi

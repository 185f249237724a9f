#!/usr/bin/env bash
# Quick start: installs dependencies if missing, builds soadyn, and simulates the bundled double
# pendulum for 10 s, writing the trajectory (double_pendulum.csv) and a plot (double_pendulum.png).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target soadyn_cli
build/cli/soadyn info models/double_pendulum.urdf
build/cli/soadyn simulate models/double_pendulum.urdf --duration 10 --dt 1e-3 --q0 1.2,-0.4 \
  --output double_pendulum.csv --every 10 --plot double_pendulum.png

#!/usr/bin/env bash
# Install what soadyn needs from Debian's packages, only if something is missing.
# Runs as root (as CI does) or through sudo.
set -euo pipefail
packages=(build-essential cmake pkg-config libxml2-dev libsundials-dev libplplot-dev plplot-driver-cairo python3 clang-14 libclang-rt-14-dev
          libmujoco-dev liblapacke-dev libjansson-dev libsdformat-dev libconsole-bridge-dev zlib1g-dev
          python3-dev python3-cffi python3-numpy python3-pytest python3-setuptools python3-pip)
# Monte Carlo campaigns (python/soadyn/campaign): specs in YAML, runs on Dask, results in Zarr, the
# summary through pandas, a progress bar, the metrics' histograms.
packages+=(python3-yaml python3-dask python3-distributed python3-pandas python3-zarr python3-numcodecs
           python3-tqdm python3-matplotlib)
# The viewer: its build needs node and npm (Debian's nodejs and npm unless some npm is there), its
# browser test Debian's chromium.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"

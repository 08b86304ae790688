#!/usr/bin/env bash
# Installs every build and test dependency of hloverlap on Debian 12
# (bookworm). Run as root (or with sudo available). Idempotent: when every
# package is already installed it returns at once without touching apt.
set -euo pipefail

PACKAGES=(
  cmake ninja-build g++ make pkg-config git ca-certificates
  clang-14 libclang-rt-14-dev llvm-14-tools lld-14 clang-format-14
  libabsl-dev libgtest-dev libgmock-dev libbenchmark-dev libcli11-dev
  nlohmann-json3-dev libeigen3-dev zlib1g-dev
  python3 python3-pip python3-venv gzip
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  if [[ "$status" != "install ok installed" ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all ${#PACKAGES[@]} packages already installed"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "install-deps: not root and no sudo; install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update
"${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"

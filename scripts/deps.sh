#!/usr/bin/env bash
# Installs what building and testing tunetab needs (Debian bookworm packages), only if something is missing.
set -euo pipefail
pkgs=(cmake make g++ libboost-program-options-dev libsqlite3-dev libeigen3-dev nlohmann-json3-dev libgtest-dev
      libamdhip64-dev clang-19 clang-22 python3)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# NVRTC and cuda.h come with the CUDA toolkit (13.x on these machines), not from Debian.
if ! ls /usr/local/cuda/include/nvrtc.h >/dev/null 2>&1 && ! command -v nvcc >/dev/null 2>&1; then
  echo "warning: no CUDA toolkit found (/usr/local/cuda): the NVIDIA-platform build needs cuda.h and NVRTC" >&2
fi

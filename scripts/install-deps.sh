#!/usr/bin/env bash
# Installs everything courier needs to build and test on Debian 12, from Debian's packages.
# CUDA (optional) is expected at /usr/local/cuda; without nvcc the CUDA backend is not built.
#
#   scripts/install-deps.sh           to build and run every test (scripts/test.sh)
#   scripts/install-deps.sh --serve   to build and serve only (README's first command)
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; fi
packages=(
  build-essential cmake ninja-build git pkg-config
  libcaf-dev libyaml-cpp-dev libconcurrentqueue-dev catch2 libboost-dev nlohmann-json3-dev
  libfmt-dev libspdlog-dev libutf8proc-dev libpcre2-dev curl prometheus-cpp-dev
  zlib1g-dev libzmq3-dev libmsgpack-cxx-dev
)
if [ "${1:-}" != --serve ]; then
  packages+=(
    libbenchmark-dev  # bench/
    clang libclang-rt-14-dev  # libFuzzer and the sanitizer runtimes for scripts/fuzz.sh
    chromium  # the web page's browser tests (tests/node/web-ui.test.mjs, with playwright-core)
  )
  # Node.js runs the end-to-end tests with the official openai client (npm). Keep a newer Node
  # the machine already has; otherwise take Debian's.
  command -v node >/dev/null 2>&1 || packages+=(nodejs)
  command -v npm >/dev/null 2>&1 || packages+=(npm)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "install-deps: all ${#packages[@]} packages present"

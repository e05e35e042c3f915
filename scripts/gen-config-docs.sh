#!/usr/bin/env bash
# Writes what the config schema (actors/config/config_schema.cpp) generates: docs/config-keys.md
# and configs/default.yaml. The config test fails while either differs from it.
# Usage: scripts/gen-config-docs.sh [BUILD_DIR]   (default: build; courier must be built there)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
courier="$build/courier"
[ -x "$courier" ] || { echo "no $courier: build it first (cmake --build $build --target courier)" >&2; exit 1; }
"$courier" config-reference > "$root/docs/config-keys.md"
"$courier" config-reference --yaml > "$root/configs/default.yaml"
echo "wrote docs/config-keys.md and configs/default.yaml"

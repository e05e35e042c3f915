#!/usr/bin/env bash
# A partition between a front end and a replica, on separate network hosts: runs
# partition.mjs inside a user and network namespace of its own (unshare -rn), where it makes
# two replica hosts (ip netns, veth) and cuts one's link mid-run.
#   usage: tests/netns/run.sh path/to/courier
# Exits 77 (ctest: skipped) where user namespaces are not allowed.
set -uo pipefail
courier=$(realpath "${1:?usage: run.sh path/to/courier}")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if ! unshare -rnm true 2>/dev/null; then
  echo "skipped: this machine allows no user namespaces (unshare -rnm)"
  exit 77
fi
if ! command -v ip >/dev/null; then
  echo "skipped: no ip(8) (iproute2)"
  exit 77
fi
cd "$root"
# /run private to the namespace (a tmpfs), so `ip netns` leaves no file on the machine.
exec timeout 300 unshare -rnm sh -c 'mount -t tmpfs tmpfs /run && mkdir /run/netns &&
  exec node "$0" "$1" "$2"' "$here/partition.mjs" "$courier" "$root/tests/data/models/tiny-qwen3"

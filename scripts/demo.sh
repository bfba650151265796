#!/usr/bin/env bash
# The README's main job: the embedded test guest on an emulated big.LITTLE host.
set -euo pipefail
BIN=${1:-build/capvisor}
exec "$BIN" run --vcpus 4 --cmdline "test=spin secs=5"

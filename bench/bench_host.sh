#!/usr/bin/env bash
# capvisor host against one process: scheduling cost, switch gap, join latency, RSS (see bench_host.py).
set -euo pipefail
exec python3 "$(dirname "$0")/bench_host.py"

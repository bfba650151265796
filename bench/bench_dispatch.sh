#!/usr/bin/env bash
# Dispatcher, fairness, latency and counter figures (see bench_dispatch.py).
set -euo pipefail
exec python3 "$(dirname "$0")/bench_dispatch.py"

#!/usr/bin/env bash
# bench/run.sh - both benches, one after the other (see bench/README.md).
#   bash bench/run.sh          # RUNS=2 of each
set -uo pipefail
dir=$(dirname "$0")
status=0
bash "$dir/hold.sh" || status=1
echo
bash "$dir/delay.sh" || status=1
exit $status

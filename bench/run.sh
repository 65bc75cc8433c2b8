#!/usr/bin/env bash
# bench/run.sh - every bench, one after the other (see bench/README.md).
#   bash bench/run.sh          # RUNS=2 of each
#   ONLY="hold delay" bash bench/run.sh   # the issue-2 pair only
set -uo pipefail
dir=$(dirname "$0")
status=0
for b in ${ONLY:-throughput hold delay ci_cost cost}; do
  bash "$dir/$b.sh" || status=1
  echo
done
exit $status

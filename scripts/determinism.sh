#!/usr/bin/env bash
# Plays the whole standard library N times (default 20) with each built-in
# client and reports any scenario whose verdicts changed between runs.
#   bash scripts/determinism.sh [N] [CLIENT...]
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-20}
shift || true
clients=${*:-guard naive sdk-default}
bin=${FUSEBOX_BIN:-build/fusebox}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
changed=0
for client in $clients; do
  for i in $(seq "$n"); do
    "$bin" run --client "$client" --quiet --json "$tmp/r.json" --seed "$i" >/dev/null 2>&1 || true
    python3 tests/cli/verdicts.py "$tmp/r.json" > "$tmp/$client.$i.txt"
  done
  for i in $(seq 2 "$n"); do
    if ! diff -q "$tmp/$client.1.txt" "$tmp/$client.$i.txt" >/dev/null; then
      echo "== $client: run $i differs from run 1"
      diff "$tmp/$client.1.txt" "$tmp/$client.$i.txt" || true
      changed=1
    fi
  done
  echo "$client: $n runs, $(wc -l < "$tmp/$client.1.txt") scenarios, $([ $changed = 0 ] && echo 'no verdict changed' || echo 'verdicts changed')"
done
exit $changed

#!/usr/bin/env bash
# bench/report_identical.sh BASE_BIN [NEW_BIN] - every report byte-identical
# between two fusebox builds (issue 29: the verdicts computed as the trace
# streams past must not change a byte). For every trace under tests/ (those
# that are traces: a first line with "ev":"session"), a fresh `fusebox run`
# trace dir (--trace-dir, default scenarios) and a generated bench trace
# (bench/gen_trace.py, 30 MB: past the reader's kept prefix, so the folded
# verdicts and the re-read JSON attempts are what is compared), runs
# `fusebox report T` (terminal), --json, --junit and --html with each binary
# and diffs them. The one difference allowed: the generated trace's HTML
# timeline draws the arrivals kept (the first 5,000), so there it must say
# "more attempts not drawn" instead of matching. NEW_BIN defaults to
# build-bench/fusebox. Exit 1 on any other difference (the diff is shown).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
base=${1:?usage: report_identical.sh BASE_BIN [NEW_BIN]}
new=${2:-$here/build-bench/fusebox}
base=$(realpath "$base") new=$(realpath "$new")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
traces=()
while IFS= read -r t; do
  head -c 200 "$t" | head -1 | grep -q '"ev" *: *"session"' && traces+=("$t")
done < <(find "$here/tests" -name '*.jsonl' | sort)
# A fresh run's traces (a few standard scenarios, the built-in clients).
"$new" run --trace-dir "$work/run" --client guard "$here/scenarios/transient" >/dev/null 2>&1
"$new" run --trace-dir "$work/run2" --client naive "$here/scenarios/stream" >/dev/null 2>&1
for t in "$work"/run/*.jsonl "$work"/run2/*.jsonl; do [ -f "$t" ] && traces+=("$t"); done
python3 "$here/bench/gen_trace.py" "$work/big.jsonl" 30 >/dev/null && traces+=("$work/big.jsonl")
n=0 bad=0
one() { # bin out-prefix trace
  (cd "$work" && "$1" report "$3" >"$2.term" 2>&1; echo "rc $?" >>"$2.term")
  "$1" report "$3" --json "$2.json" --junit "$2.xml" --html "$2.html" >/dev/null 2>&1
}
for t in "${traces[@]}"; do
  one "$base" "$work/a" "$t"; one "$new" "$work/b" "$t"
  for k in term json xml html; do
    touch "$work/a.$k" "$work/b.$k"
    if [ "$k" = html ] && [ "$t" = "$work/big.jsonl" ]; then
      grep -q "more attempts not drawn: the timeline shows the first" "$work/b.html" \
        || { bad=$((bad + 1)); echo "the folded trace's timeline does not say what it left out"; }
      rm -f "$work/a.$k" "$work/b.$k"; continue
    fi
    if ! cmp -s "$work/a.$k" "$work/b.$k"; then
      bad=$((bad + 1))
      echo "DIFFERS ($k): $t"; diff "$work/a.$k" "$work/b.$k" | head -5
    fi
    rm -f "$work/a.$k" "$work/b.$k"
  done
  n=$((n + 1))
done
echo "$n traces x 4 reports: $bad differ"
[ "$bad" = 0 ]

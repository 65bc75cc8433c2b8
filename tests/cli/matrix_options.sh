#!/usr/bin/env bash
# fusebox matrix takes -j N, --without, --tags and --skip-tags with exec's
# meaning (issue 22, item 8; one parser in cli/options.c, one selection in
# cli/select.c, one cell pool in cli/cmd_exec.c's exec_suites):
#  - -j 2 gives the same table as -j 1, and really plays cells at once
#    (command runs overlap in time, across clients too); -j 1 never does;
#  - --tags / --skip-tags pick the same scenarios as exec with the same lists;
#  - --without stream reports the streaming scenarios skipped for a command
#    client, with the reason, as exec does; a built-in client still plays them;
#  - bad values are exit 2 with a message; --help lists the options.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json
cd "$src" || exit 1
I=examples/interop
scen="$I/drop_then_ok.lua $I/stream_drop.lua $I/fail_401.lua $I/effect_response_lost.lua"
toy="python3 tests/cli/clients/toy_client.py"

# A client that notes when each of its runs starts and ends (ns), then exits
# as the toy client did.
spans() {  # $1 = label, $2 = toy mode, $3 = span file
  printf '%s' "$1=s=\$(date +%s%N); $toy $2; rc=\$?; echo \"\$s \$(date +%s%N)\" >> $3; exit \$rc"
}
# How many pairs of runs overlapped in time, over the span files given.
overlaps() {
  cat "$@" | python3 -c '
import sys
s = [tuple(map(int, l.split())) for l in sys.stdin if l.strip()]
print(sum(1 for i in range(len(s)) for j in range(i + 1, len(s))
          if s[i][0] < s[j][1] and s[j][0] < s[i][1]))'
}

for j in 1 2; do
  "$bin" matrix -j $j --timeout 20 --json "$tmp/m$j.json" \
    --client "$(spans good good "$tmp/good$j.spans")" \
    --client "$(spans no-retry no-retry "$tmp/nr$j.spans")" \
    --client naive $scen > "$tmp/m$j.txt" 2> "$tmp/m$j.err"
  echo $? > "$tmp/m$j.rc"
done
if diff "$tmp/m1.txt" "$tmp/m2.txt" > "$tmp/m.diff" && [ -s "$tmp/m1.txt" ]; then ok
else bad "-j 2 gives another table than -j 1:"; cat "$tmp/m.diff" "$tmp/m1.err"; fi
[ "$(cat "$tmp/m1.rc")" = 1 ] && [ "$(cat "$tmp/m2.rc")" = 1 ] && ok \
  || bad "exit status: -j 1 $(cat "$tmp/m1.rc"), -j 2 $(cat "$tmp/m2.rc"), want 1 (no-retry fails)"
grep -q "PASS 2 att exit 0" "$tmp/m1.txt" && grep -q "FAIL 1 att exit 1 outcome" "$tmp/m1.txt" && ok \
  || bad "the table lacks the cells it should have: $(cat "$tmp/m1.txt")"
n1=$(overlaps "$tmp/good1.spans" "$tmp/nr1.spans") n2=$(overlaps "$tmp/good2.spans" "$tmp/nr2.spans")
[ "$(cat "$tmp/good1.spans" "$tmp/nr1.spans" | wc -l)" = 8 ] && [ "$n1" = 0 ] && ok \
  || bad "-j 1: $n1 overlapping runs of $(cat "$tmp/good1.spans" "$tmp/nr1.spans" | wc -l), want 0 of 8"
[ "$(cat "$tmp/good2.spans" "$tmp/nr2.spans" | wc -l)" = 8 ] && [ "$n2" -ge 1 ] && ok \
  || bad "-j 2: $n2 overlapping runs, want at least 1"

# Scenario files a report holds: exec's results, matrix's scenarios.
files_of() {  # $1 = exec|matrix, $2 = JSON report
  python3 -c '
import json, sys
d = json.load(open(sys.argv[2]))
rows = d["results"] if sys.argv[1] == "exec" else d["scenarios"]
print(" ".join(sorted(r["file"].split("/")[-1] for r in rows)))' "$1" "$2"
}
sel=0
for opts in "--tags stream,effects" "--skip-tags stream,ratelimit" "--tags interop --skip-tags stream,transient"; do
  sel=$((sel + 1))
  # shellcheck disable=SC2086
  "$bin" exec --quiet $opts --json "$tmp/e$sel.json" "$I" -- $toy good > /dev/null 2>&1
  # shellcheck disable=SC2086
  "$bin" matrix --quiet -j 4 $opts --json "$tmp/s$sel.json" --client good="$toy good" "$I" \
    > /dev/null 2>&1
  e=$(files_of exec "$tmp/e$sel.json") m=$(files_of matrix "$tmp/s$sel.json")
  [ -n "$e" ] && [ "$e" = "$m" ] && ok || bad "$opts: exec plays '$e', matrix '$m'"
done
[ "$(files_of matrix "$tmp/s1.json")" != "$(files_of matrix "$tmp/s2.json")" ] && ok \
  || bad "--tags and --skip-tags chose the same scenarios: the test proves nothing"

# --without stream: skipped for the command, with exec's reason; played by naive.
"$bin" matrix --quiet --without stream --json "$tmp/w.json" --client good="$toy good" \
  --client naive $I/stream_drop.lua $I/drop_then_ok.lua > /dev/null 2>&1
"$bin" exec --quiet --without stream --json "$tmp/we.json" $I/stream_drop.lua -- $toy good \
  > /dev/null 2>&1
python3 - "$tmp/w.json" "$tmp/we.json" > "$tmp/w.out" 2>&1 <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
e = json.load(open(sys.argv[2]))
cells = {(s["file"].split("/")[-1], c["client"]): c for s in m["scenarios"] for c in s["cells"]}
g = cells[("stream_drop.lua", "good")]
assert g["status"] not in ("pass", "fail"), g
why = [v["evidence"] for v in g["verdicts"] if v["name"] == "capability"]
ewhy = [v["evidence"] for v in e["results"][0]["verdicts"] if v["name"] == "capability"]
assert why and why == ewhy and "--without stream" in why[0], (why, ewhy)
assert cells[("drop_then_ok.lua", "good")]["status"] == "pass", cells[("drop_then_ok.lua", "good")]
assert cells[("stream_drop.lua", "naive")]["attempts"] >= 1, cells[("stream_drop.lua", "naive")]
PY
[ $? = 0 ] && ok || bad "--without stream: $(cat "$tmp/w.out")"

# Bad values: exit 2, with a message.
"$bin" matrix --without teleport --client naive $I/fail_401.lua > /dev/null 2> "$tmp/b1.err"
[ $? = 2 ] && grep -q "without takes stream and effects" "$tmp/b1.err" && ok \
  || bad "--without teleport: $(cat "$tmp/b1.err")"
"$bin" matrix -j 0 --client naive $I/fail_401.lua > /dev/null 2>&1
[ $? = 2 ] && ok || bad "-j 0 is not a usage error"
"$bin" matrix --tags no-such-tag --client naive $I > /dev/null 2> "$tmp/b3.err"
[ $? = 2 ] && grep -q "no scenario left" "$tmp/b3.err" && ok || bad "--tags that match nothing: $(cat "$tmp/b3.err")"
"$bin" matrix --tags , --client naive $I > /dev/null 2>&1
[ $? = 2 ] && ok || bad "--tags , (an empty list) is not a usage error"

# --help tells of each option, from the one table exec's help comes from too.
"$bin" matrix --help > "$tmp/help" 2>&1
for o in "-j N" "--tags T,..." "--skip-tags T,..." "--without W,..." "(client, scenario) cells"; do
  grep -qF -- "$o" "$tmp/help" && ok || bad "matrix --help lacks '$o'"
done
diff <("$bin" exec --help | grep -A1 -E '^  (--tags|--skip-tags|--without)') \
     <(grep -A1 -E '^  (--tags|--skip-tags|--without)' "$tmp/help") > /dev/null && ok \
  || bad "exec and matrix describe --tags/--skip-tags/--without differently"
finish

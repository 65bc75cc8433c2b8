#!/usr/bin/env bash
# `fusebox run --shard K/N` and `fusebox report --merge` (issue 14 item 6):
# bad shard specs are usage errors (exit 2); shards 1/2 and 2/2 together play
# every scenario exactly once; the split stays the same when the folders are
# given in another order or by another path; the merged JUnit has the
# unsharded run's verdicts (names and statuses, not timings) and its exit
# status; merge refuses a shard twice, a missing shard, a scenario twice,
# mixed inputs and text that is not JSON (file:line:column).
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json xml.etree.ElementTree

# Two folders of small scenarios; one fails a verdict (attempts = 2, but the
# first answer is a success), so the comparison covers failures too.
mkdir -p "$tmp/lib/a" "$tmp/lib/b"
n=0
for d in a b; do
  for s in one two three four; do
    n=$((n + 1))
    if [ "$d$s" = btwo ]; then
      cat >"$tmp/lib/$d/$s.lua" <<LUA
return scenario { name = "$d $s fails", provider = { chat {} },
  client = { attempts = 2 }, expect = { attempts = 2, outcome = "ok" } }
LUA
    elif [ "$s" = four ]; then
      cat >"$tmp/lib/$d/$s.lua" <<LUA
return scenario { name = "$d $s retried", provider = { fail { status = 503 }, chat {} },
  client = { attempts = 3, backoff = { base = 0.5, jitter = 0 } },
  expect = { attempts = 2, outcome = "ok" } }
LUA
    else
      cat >"$tmp/lib/$d/$s.lua" <<LUA
return scenario { name = "$d $s", provider = { chat {} },
  client = { attempts = 1 }, expect = { attempts = 1, outcome = "ok" } }
LUA
    fi
  done
done
run() { "$bin" run --time-scale 0.05 --quiet "$@"; }

# Bad specs: usage errors, nothing played.
for spec in 0/2 3/2 x 1/ /2 1/0; do
  "$bin" run --shard "$spec" "$tmp/lib/a" >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -eq 2 ] && grep -q "K/N\|K must" "$tmp/out"; then ok; else bad "--shard $spec: exit $rc: $(cat "$tmp/out")"; fi
done

run --json "$tmp/all.json" --junit "$tmp/all.xml" --html "$tmp/all.html" "$tmp/lib/a" "$tmp/lib/b" 2>"$tmp/err"
rc_all=$?
[ $rc_all -eq 1 ] && ok || bad "unsharded run: exit $rc_all (1 expected: one verdict fails): $(cat "$tmp/err")"
# A report joined from itself is the same report, byte for byte: nothing of
# what the writers show (timelines included) is lost on the way.
"$bin" report --merge --quiet "$tmp/all.json" --json "$tmp/re.json" --html "$tmp/re.html" \
  --junit "$tmp/re.xml" 2>"$tmp/err"
rc=$?
[ $rc -eq 1 ] && ok || bad "merge of one whole run: exit $rc: $(cat "$tmp/err")"
for f in json html xml; do
  cmp -s "$tmp/all.$f" "$tmp/re.$f" && ok || bad "report --merge all.json: $f differs: $(diff "$tmp/all.$f" "$tmp/re.$f" | head -5)"
done
for k in 1 2; do
  run --shard $k/2 --json "$tmp/s$k.json" "$tmp/lib/a" "$tmp/lib/b" 2>>"$tmp/err"
  rc=$?
  [ $rc -le 1 ] && ok || bad "shard $k/2: exit $rc: $(cat "$tmp/err")"
done
# The same shard from the folders in the other order, by absolute paths.
(cd "$tmp" && "$bin" run --time-scale 0.05 --quiet --shard 1/2 --json "$tmp/s1r.json" \
  "$tmp/lib/b/" "./lib/a") 2>>"$tmp/err"

"$bin" report --merge "$tmp/s2.json" "$tmp/s1.json" --junit "$tmp/m.xml" --json "$tmp/m.json" \
  --html "$tmp/m.html" >"$tmp/merge.out" 2>&1
rc_m=$?
[ $rc_m -eq $rc_all ] && ok || bad "merge exit $rc_m, unsharded $rc_all: $(cat "$tmp/merge.out")"
[ -s "$tmp/m.html" ] && ok || bad "merge wrote no HTML"

python3 - "$tmp" <<'PY' >"$tmp/check" 2>&1
import json, os, sys
import xml.etree.ElementTree as ET
t = sys.argv[1]
def files(name):
    return [os.path.basename(os.path.dirname(r["file"])) + "/" + os.path.basename(r["file"])
            for r in json.load(open(os.path.join(t, name)))["results"]]
all_, s1, s2, s1r = files("all.json"), files("s1.json"), files("s2.json"), files("s1r.json")
assert len(all_) == 8 and len(set(all_)) == 8, all_
assert s1 and s2, (s1, s2)                      # both shards play something
assert not set(s1) & set(s2), (s1, s2)          # nobody twice
assert sorted(s1 + s2) == sorted(all_), (s1, s2) # everybody once
assert sorted(s1r) == sorted(s1), (s1r, s1)     # the same split, another order
sh = [json.load(open(os.path.join(t, f)))["shard"] for f in ("s1.json", "s2.json", "s1r.json")]
assert sh[0]["set"] == sh[1]["set"] == sh[2]["set"] and sh[0]["total"] == 8, sh
def verdicts(name):
    out = {}
    for tc in ET.parse(os.path.join(t, name)).getroot().iter("testcase"):
        f = tc.find("failure"); e = tc.find("error"); s = tc.find("skipped")
        out[tc.get("name")] = ("failure " + f.get("message")) if f is not None else \
            "error" if e is not None else "skipped" if s is not None else "pass"
    return out
a, m = verdicts("all.xml"), verdicts("m.xml")
assert len(a) == 8, a
assert a == m, (a, m)
assert sum(v.startswith("failure") for v in a.values()) == 1, a
ja, jm = json.load(open(os.path.join(t, "all.json"))), json.load(open(os.path.join(t, "m.json")))
key = lambda r: (r["name"], r["status"], [(v["name"], v["status"], v["evidence"]) for v in r["verdicts"]])
assert sorted(map(key, ja["results"])) == sorted(map(key, jm["results"]))
assert [r["name"] for r in jm["results"]] == [r["name"] for r in ja["results"]]  # suite order
for k in ("scenarios", "passed", "failed", "verdicts", "verdicts_failed"):
    assert ja[k] == jm[k], (k, ja[k], jm[k])
print("ok")
PY
if tail -1 "$tmp/check" | grep -qx ok; then ok; else bad "split or merge: $(cat "$tmp/check")"; fi

# Refusals: exit 2, a clear reason, no report written.
refuse() { # WHAT PATTERN FILES...
  local what=$1 pat=$2
  shift 2
  rm -f "$tmp/r.xml"
  "$bin" report --merge "$@" --junit "$tmp/r.xml" >"$tmp/out" 2>&1
  local rc=$?
  if [ $rc -eq 2 ] && grep -q -- "$pat" "$tmp/out" && [ ! -e "$tmp/r.xml" ]; then ok
  else bad "merge $what: exit $rc, wrote $(ls "$tmp/r.xml" 2>/dev/null): $(cat "$tmp/out")"; fi
}
refuse "a shard twice" "both shard 1/2" "$tmp/s1.json" "$tmp/s1.json" "$tmp/s2.json"
refuse "the same shard from two runs" "both shard 1/2" "$tmp/s1.json" "$tmp/s1r.json"
refuse "a missing shard" "shard 2/2 is missing" "$tmp/s1.json"
refuse "a scenario twice" "given twice" "$tmp/all.json" "$tmp/all.json"
refuse "a shard and a whole run" "is not a shard" "$tmp/s1.json" "$tmp/all.json"
printf '{"fusebox_report": 1,\n  "results": [\n    {"name": oops}\n]}\n' >"$tmp/bad.json"
refuse "text that is not JSON" "bad.json:3:14: not JSON" "$tmp/bad.json"
echo '{"results": []}' >"$tmp/other.json"
refuse "JSON that is no report" "not a fusebox JSON report" "$tmp/other.json"
python3 -c "
import json,sys; d=json.load(open('$tmp/s2.json')); d['shard']['set']='0000000000000000'
json.dump(d, open('$tmp/s2x.json','w'))"
refuse "shards of different suites" "different suites" "$tmp/s1.json" "$tmp/s2x.json"
"$bin" report --merge >"$tmp/out" 2>&1
[ $? -eq 2 ] && ok || bad "merge of nothing: $(cat "$tmp/out")"
finish

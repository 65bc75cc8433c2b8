#!/usr/bin/env bash
# `fusebox run` starts the scenarios expected to take longest first (issue 13
# item 7), so a run ends when its longest scenario does. With -j 1 the start
# order is visible in the traces: z_long.lua (two backoff waits, 2 + 4 s,
# 1.2 s at the default time scale 0.2) comes last in path order, yet its
# session starts in an earlier second than the two short ones, which wait for
# it. Path order would start it last. Reports still list file order.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json

d="$tmp/lib"
mkdir -p "$d"
for s in a_short b_short; do
  cat >"$d/$s.lua" <<LUA
return scenario { name = "$s", provider = { chat {} },
  client = { attempts = 1 }, expect = { attempts = 1, outcome = "ok" } }
LUA
done
cat >"$d/z_long.lua" <<'LUA'
return scenario { name = "z_long",
  provider = { fail { status = 503 }, fail { status = 503 }, chat {} },
  client = { attempts = 3, deadline = 20, backoff = { base = 2, cap = 8, jitter = 0 } },
  expect = { attempts = 3, outcome = "ok" } }
LUA

"$bin" run -j 1 --quiet --trace-dir "$tmp/traces" --json "$tmp/run.json" "$d" >"$tmp/out" 2>&1
rc=$?
[ $rc -eq 0 ] && ok || { bad "fusebox run exit $rc"; cat "$tmp/out"; }

python3 - "$tmp/traces" "$tmp/run.json" >"$tmp/check" 2>&1 <<'PY'
import glob, json, os, sys, datetime
starts = {}
for f in glob.glob(os.path.join(sys.argv[1], "*.jsonl")):
    with open(f) as fh:
        ev = json.loads(fh.readline())
    t = datetime.datetime.strptime(ev["start"], "%Y-%m-%dT%H:%M:%SZ")
    starts[ev["scenario"]] = t
print("starts", {k: v.isoformat() for k, v in starts.items()})
assert set(starts) == {"a_short", "b_short", "z_long"}, starts
assert starts["z_long"] < starts["a_short"], "z_long did not start first"
assert starts["z_long"] < starts["b_short"], "z_long did not start first"
names = [r["name"] for r in json.load(open(sys.argv[2]))["results"]]
assert names == ["a_short", "b_short", "z_long"], names  # reports: file order
print("ok")
PY
if tail -1 "$tmp/check" | grep -qx ok; then ok; else bad "start order: $(cat "$tmp/check")"; fi
finish

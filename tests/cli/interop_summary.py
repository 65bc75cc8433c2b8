#!/usr/bin/env python3
"""One line per scenario of a `fusebox exec --json` report:
   SCENARIO<TAB>status<TAB>requests=N<TAB>exit=E<TAB>failed verdicts (comma-separated)
   <TAB>n/a verdicts (comma-separated).
   requests=? when the command was killed (the count, and max_requests, then
   depend on timing);
   SCENARIO<TAB>skipped<TAB>reason for a scenario the client cannot play."""
import json
import sys

for r in json.load(open(sys.argv[1]))["results"]:
    failed = [v["name"] for v in r.get("verdicts", []) if v["status"] == "fail"]
    if any(v["name"] == "capability" and v["status"] in ("skip", "n/a")
           for v in r.get("verdicts", [])):
        print("%s\tskipped\t%s" % (r["file"].split("/")[-1],
                                   [v["evidence"] for v in r["verdicts"]
                                    if v["name"] == "capability"][0]))
        continue
    na = [v["name"] for v in r.get("verdicts", []) if v["status"] == "n/a"]
    killed = bool(r.get("killed_by_timeout"))
    exit_code = "killed" if killed else r.get("exit_code", "?")
    if r.get("error"):
        failed.append("error")
    # Killed by --timeout while backing off: how many requests went out
    # before the kill depends on the client's random jitter, not pinned.
    # The same goes for max_requests, which counts them.
    arrivals = "?" if killed else r.get("arrivals")
    if killed:
        failed = [f for f in failed if f != "max_requests"]
    print("%s\t%s\trequests=%s\texit=%s\t%s\tn/a:%s" % (
        r["file"].split("/")[-1], r.get("status"), arrivals, exit_code,
        ",".join(failed) or "-", ",".join(na) or "-"))

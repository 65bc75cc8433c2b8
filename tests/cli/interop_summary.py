#!/usr/bin/env python3
"""One line per scenario of a `fusebox exec --json` report:
   SCENARIO<TAB>status<TAB>requests=N<TAB>exit=E<TAB>failed verdicts (comma-separated)
   <TAB>n/a verdicts (comma-separated)."""
import json
import sys

for r in json.load(open(sys.argv[1]))["results"]:
    failed = [v["name"] for v in r.get("verdicts", []) if v["status"] == "fail"]
    na = [v["name"] for v in r.get("verdicts", []) if v["status"] == "n/a"]
    exit_code = "killed" if r.get("killed_by_timeout") else r.get("exit_code", "?")
    if r.get("error"):
        failed.append("error")
    print("%s\t%s\trequests=%s\texit=%s\t%s\tn/a:%s" % (
        r["file"].split("/")[-1], r.get("status"), r.get("arrivals"), exit_code,
        ",".join(failed) or "-", ",".join(na) or "-"))

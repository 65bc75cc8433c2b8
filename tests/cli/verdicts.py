#!/usr/bin/env python3
"""Prints one line per scenario of a `fusebox run --json` report:
   FILE<TAB>pass|fail|n/a|error<TAB>failed verdict names (comma-separated)."""
import json
import sys

report = json.load(open(sys.argv[1]))
for r in report["results"]:
    failed = [v["name"] for v in r.get("verdicts", []) if v["status"] == "fail"]
    if r.get("error"):
        failed.append("error")
    status = r.get("status") or ("fail" if failed else "pass")
    if status == "error":
        status = "fail"
    print("%s\t%s\t%s" % (r["file"], status, ",".join(failed)))

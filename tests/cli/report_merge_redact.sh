#!/usr/bin/env bash
# report --merge reads every string of a shard through the secret rule
# (issue 29): a report made elsewhere (or by hand) whose evidence, attempts
# or scenario name carries "Bearer sk-proj-..." must not reach the merged
# JSON, JUnit, HTML or the terminal.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json

"$bin" report --quiet --json "$tmp/r.json" "$src/tests/data/traces/attempts_boundary_exact_pass.jsonl" > /dev/null 2>&1
[ -s "$tmp/r.json" ] && ok || { bad "no JSON report to start from"; finish; }
python3 - "$tmp/r.json" <<'PY' || bad "planting the secret"
import json, sys
secret = "Bearer sk-proj-PLANTEDsecretAAAAbbbbCCCC0123456789"
r = json.load(open(sys.argv[1]))
res = r["results"][0]
res["name"] = res.get("name", "x") + " " + secret
for v in res["verdicts"]:
    v["evidence"] = "client sent Authorization: " + secret
def plant(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if isinstance(v, str) and k in ("path", "text", "message", "key"):
                o[k] = v + " " + secret
            else:
                plant(v)
    elif isinstance(o, list):
        for x in o: plant(x)
plant(res)
json.dump(r, open(sys.argv[1], "w"))
PY
grep -q PLANTED "$tmp/r.json" && ok || bad "the shard holds no secret to redact"
"$bin" report --merge --json "$tmp/m.json" --junit "$tmp/m.xml" --html "$tmp/m.html" "$tmp/r.json" > "$tmp/term" 2>&1
rc=$?
[ $rc = 0 ] || [ $rc = 1 ] && ok || { bad "report --merge: exit $rc"; cat "$tmp/term"; }
for f in m.json m.xml m.html term; do
  grep -q PLANTED "$tmp/$f" && bad "the secret reached $f: $(grep -o '.\{30\}PLANTED.\{10\}' "$tmp/$f" | head -1)" || ok
done
grep -q 'redacted' "$tmp/m.json" && ok || bad "the merged JSON shows no [redacted]"

finish

#!/bin/sh
# warp_agreement.sh - does `fusebox exec --warp F` judge the bundled clients
# as real time does? Plays examples/interop with every bundled client twice,
# in real time and with --warp F (default 10), and prints one row per client
# and scenario: requests, exit status and failed verdicts in each, and
# whether they agree. Needs libfaketime, node 20 with the pinned packages
# (examples/clients/install.sh), /usr/bin/python3 with httpx and tenacity.
#
#   sh examples/interop/warp_agreement.sh [-f FUSEBOX] [-w F] [-o OUTDIR] [CLIENT...]
set -u
here=$(cd "$(dirname "$0")" && pwd)
src=$here/../..
fusebox=${FUSEBOX:-$src/build/fusebox}
warp=10 out=
while [ $# -gt 0 ]; do
  case $1 in
    -f) fusebox=$2; shift 2 ;;
    -w) warp=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    -*) echo "warp_agreement.sh: unknown option $1" >&2; exit 2 ;;
    *) clients="${clients:-} $1"; shift ;;
  esac
done
clients=${clients:-openai-node anthropic-sdk python-tenacity curl-retry ai-sdk langchain-js}
out=${out:-$(mktemp -d /tmp/fusebox-warp.XXXXXX)}
mkdir -p "$out"
for c in $clients; do
  without=
  case $c in ai-sdk|langchain-js) without="--without effects" ;; esac
  for mode in real warp; do
    w=; [ $mode = warp ] && w="--warp $warp"
    # shellcheck disable=SC2086
    "$fusebox" exec --quiet --timeout 30 $without $w --json "$out/$c.$mode.json" \
      "$here" -- sh "$here/client.sh" "$c" >"$out/$c.$mode.log" 2>&1
  done
done
python3 - "$out" $clients <<'PY'
import json, re, sys
out, clients = sys.argv[1], sys.argv[2:]
def rows(path):
    res = {}
    try:
        data = json.load(open(path))
    except Exception as e:
        return {"(no report)": ("-", "-", str(e)[:40])}
    for r in data["results"]:
        failed = [v["name"] for v in r.get("verdicts", []) if v["status"] == "fail"]
        skipped = any(v["status"] == "skip" and v["name"] == "capability" for v in r.get("verdicts", []))
        ex = "?"
        for v in r.get("verdicts", []):
            m = re.search(r"exited (\d+)|still running", v.get("evidence") or "")
            if v["name"] == "command_finished" and m:
                ex = m.group(1) or "killed"
        if r.get("error"): failed.append("error")
        res[r["file"].split("/")[-1]] = ("skipped" if skipped else str(r.get("arrivals")), ex,
                                         ",".join(failed) or "-")
    return res
agree = total = 0
print("| client | scenario | real: requests / exit / failed | warp: requests / exit / failed | same |")
print("|---|---|---|---|---|")
for c in clients:
    a, b = rows(f"{out}/{c}.real.json"), rows(f"{out}/{c}.warp.json")
    for s in sorted(set(a) | set(b)):
        x, y = a.get(s, ("-",) * 3), b.get(s, ("-",) * 3)
        same = x[0] == y[0] and x[2] == y[2]
        total += 1; agree += same
        print(f"| {c} | {s[:-4]} | {' / '.join(x)} | {' / '.join(y)} | {'yes' if same else '**no**'} |")
print(f"\n{agree} of {total} client x scenario pairs agree (requests and failed verdicts).")
PY
echo "reports and logs: $out"

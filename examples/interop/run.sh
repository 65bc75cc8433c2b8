#!/bin/sh
# run.sh - play every interop scenario against every bundled client with
# `fusebox serve`, and print what each client did on the wire: arrivals,
# gaps between attempts, the Retry-After asked for, whether it was waited
# out, the client's exit status and its first line of output or error.
#
#   sh examples/interop/run.sh [-f FUSEBOX] [-o OUTDIR] [CLIENT...] [-- SCENARIO...]
#
# CLIENT defaults to all six (openai-node anthropic-sdk python-tenacity
# curl-retry ai-sdk langchain-js); SCENARIO to examples/interop/*.lua. Traces, stdout and stderr
# are kept in OUTDIR (default: a new temp dir). Needs jq. Real time: about
# 40 s for the whole set (the slowest client of each scenario).
set -u
here=$(cd "$(dirname "$0")" && pwd)
fusebox=${FUSEBOX:-$here/../../build/fusebox}
out=
while [ $# -gt 0 ]; do
  case $1 in
    -f) fusebox=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --) shift; break ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) clients="${clients:-} $1"; shift ;;
  esac
done
clients=${clients:-openai-node anthropic-sdk python-tenacity curl-retry ai-sdk langchain-js}
[ $# -gt 0 ] || set -- "$here"/*.lua
[ -x "$fusebox" ] || { echo "run.sh: no fusebox at $fusebox (use -f)" >&2; exit 2; }
out=${out:-$(mktemp -d /tmp/fusebox-interop.XXXXXX)}
mkdir -p "$out"

# One line of summary from a trace: arrivals, gaps (s), Retry-After asked (s),
# honoured?, effects applied.
summarize() {
  jq -rs '
    def r2: (. * 100 | round) / 100;
    [ .[] | select(.ev == "arrive" and .method != "GET") ] as $arr
    | (INDEX(.[] | select(.ev == "end"); .id)) as $ends
    | [ .[] | select(.ev == "effect" and .action == "applied") ] | length as $eff
    | [ range(1; $arr | length) as $i
        | $arr[$i] as $a | ($arr[0:$i] | map(select(.key == $a.key)) | last) as $p
        | select($p != null)
        | $ends[$p.id | tostring] as $e
        | { gap: (($a.t - ($e.t // $p.t)) / 1000),
            ra: (if $e.retry_after_ms then $e.retry_after_ms / 1000 else null end) } ] as $gaps
    | [ $arr[] | $ends[.id | tostring] | if . == null then "open"
        elif .how == "complete" then (.status | tostring) else "\(.status)/\(.how)" end ] as $hows
    | "arrivals=\($arr | length) ends=\($hows | join(","))"
      + " gaps=\(if ($gaps | length) == 0 then "-" else ($gaps | map(.gap | r2 | tostring) | join(",")) end)"
      + (if any($gaps[]; .ra != null) then
           " ra=\($gaps | map(.ra // "-" | tostring) | join(","))"
           + " honoured=\(all($gaps[] | select(.ra != null); .gap >= .ra - 0.05))"
         else "" end)
      + (if $eff > 0 then " effects_applied=\($eff)" else "" end)
  ' "$1"
}

# One client against one scenario; the summary line goes to $base.line.
run_one() {  # $1 = scenario file, $2 = client, $3 = base path
  scen=$1 client=$2 base=$3 name=$(basename "$1" .lua)
  "$fusebox" serve "$scen" --port 0 --trace "$base.jsonl" >"$base.serve" 2>&1 &
  spid=$!
  port=
  for _ in $(seq 50); do
    port=$(awk '/^port /{print $2; exit}' "$base.serve")
    [ -n "$port" ] && break
    sleep 0.1
  done
  if [ -z "$port" ]; then
    echo "$client $name: server did not start: $(cat "$base.serve")" >"$base.line"
    kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
    return
  fi
  start=$(date +%s.%N)
  # What fusebox exec would export from the scenario's client table.
  stream=0 call=chat at=
  grep -q 'call *= *"stream"' "$scen" && stream=1
  grep -q 'call *= *"effect"' "$scen" && call=effect
  at=$(sed -n 's/.*attempt_timeout *= *\([0-9.]*\).*/\1/p' "$scen" | head -n 1)
  FUSEBOX_STREAM=$stream FUSEBOX_CALL=$call FUSEBOX_ATTEMPT_TIMEOUT=$at \
  FUSEBOX_EFFECT_URL=http://127.0.0.1:$port/v1/effects/send_email \
  OPENAI_BASE_URL=http://127.0.0.1:$port/v1 ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
  FUSEBOX_URL=http://127.0.0.1:$port FUSEBOX_SCENARIO=$scen \
  OPENAI_API_KEY=${OPENAI_API_KEY:-sk-fusebox-placeholder} \
  ANTHROPIC_API_KEY=${ANTHROPIC_API_KEY:-sk-ant-fusebox-placeholder} \
    timeout 60 sh "$here/client.sh" "$client" >"$base.out" 2>"$base.err" </dev/null
  rc=$?
  secs=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }')
  kill -TERM "$spid"; wait "$spid" 2>/dev/null
  printf '%-16s %-22s rc=%-3s %5ss %s | out=%s | err=%s\n' "$client" "$name" "$rc" "$secs" \
    "$(summarize "$base.jsonl")" "$(head -c 60 "$base.out" | head -n 1)" \
    "$(grep -v '^ *at \|^$' "$base.err" | head -n 1 | cut -c1-90)" >"$base.line"
}

# Scenario by scenario; the clients of one scenario run side by side, each
# against its own server (gaps are measured by the server, so a busy machine
# can only lengthen them).
for scen in "$@"; do
  name=$(basename "$scen" .lua)
  for client in $clients; do
    run_one "$scen" "$client" "$out/$client-$name" &
  done
  wait
  for client in $clients; do cat "$out/$client-$name.line"; done
done
echo "traces and output in $out" >&2

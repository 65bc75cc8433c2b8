#!/usr/bin/env bash
# fusebox import round-trips a trace: serve a scenario with many fault kinds
# (tests/data/import/roundtrip.lua) and drive it with curl; import the trace;
# serve the import and drive it the same way. curl must see the same thing
# both times (statuses, curl errors, Retry-After and other headers, bodies'
# sizes and texts, latencies within tolerance), the two traces must record
# the same attempts, and importing the second trace gives the same steps.
. "$(dirname "$0")/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill -9 "$pid"'
need_fusebox
need_cmd curl awk
need_python json

# serve SCENARIO TRACE: starts fusebox serve, sets $pid and $port.
serve() {
  : > "$tmp/out"
  "$bin" serve "$1" --port 0 --trace "$2" > "$tmp/out" 2> "$tmp/err" &
  pid=$!
  port=
  for _ in $(seq 250); do
    port=$(awk '/^port /{print $2}' "$tmp/out" 2>/dev/null)
    [ -n "$port" ] && return 0
    sleep 0.02
  done
  bad "serve $1 printed no port: $(cat "$tmp/err")"
  return 1
}

# stop: SIGINT, wait at most 10 s, then kill.
stop() {
  kill -INT "$pid" 2>/dev/null
  for _ in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  pid=
}

# req LABEL PATH BODY [MAXTIME] [HEADER]: one request; appends what curl saw
# to $tmp/seen and the latency to $tmp/times.
req() {
  local label=$1 path=$2 body=$3 max=${4:-3} hdr=${5:-X-Test: 1}
  : > "$tmp/hdr"; : > "$tmp/body"
  local w
  w=$(curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code} %{size_download} %{time_total}' \
        --max-time "$max" -H 'Authorization: Bearer sk-ROUNDTRIPSECRET1234' \
        -H 'Content-Type: application/json' -H "$hdr" -d "$body" "http://127.0.0.1:$port$path")
  local rc=$?
  local code size t
  read -r code size t <<< "$w"
  local ra= ram= xrl= date= line
  while IFS= read -r line; do
    line=${line%$'\r'}
    case "${line,,}" in
      retry-after:*) ra=${line#*: } ;;
      retry-after-ms:*) ram=${line#*: } ;;
      x-ratelimit-remaining-requests:*) xrl=${line#*: } ;;
      date:*) date=${line#*: } ;;
    esac
  done < "$tmp/hdr"
  local ra_s
  if [ -n "$ra" ] && ! [[ $ra =~ ^[0-9.]+$ ]] && [ -n "$date" ] && ra_s=$(date -d "$ra" +%s 2> /dev/null); then
    echo "$label $(( ra_s - $(date -d "$date" +%s) ))" >> "$tmp/dates"
    ra=DATE
  fi
  local body text=
  body=$(< "$tmp/body")
  while [[ $body =~ \"(content|text)\":\"([^\"]*)\"(.*) ]]; do
    [ -n "${BASH_REMATCH[2]}" ] && text+="\"${BASH_REMATCH[1]}\":\"${BASH_REMATCH[2]}\"|"
    body=${BASH_REMATCH[3]}
  done
  echo "$label code=$code curl=$rc size=$size ra=$ra ram=$ram xrl=$xrl text=$text" >> "$tmp/seen"
  echo "$label $t" >> "$tmp/times"
}

drive() {
  : > "$tmp/seen"; : > "$tmp/times"; : > "$tmp/dates"
  local c=/v1/chat/completions
  for _ in 1 2 3; do req A $c '{"model":"m","k":"A"}'; done
  for _ in 1 2 3 4 5; do req B $c '{"model":"m","k":"B"}'; done
  for _ in 1 2; do req C $c '{"model":"m","k":"C","stream":true}'; done
  req D $c '{"model":"m","k":"D"}' 0.8
  req D $c '{"model":"m","k":"D"}'
  for _ in 1 2; do req E /v1/messages '{"model":"claude","k":"E","max_tokens":5}'; done
  for _ in 1 2; do req F $c '{"model":"m","k":"F"}'; done
  for _ in 1 2; do req G /v1/effects/send_email '{"to":"x@example.com"}' 3 'Idempotency-Key: op-1'; done
}

# The attempts a trace records, without what differs from run to run.
summary() {
  python3 - "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e["ev"] == "arrive":
        print("arrive", e["attempt"], e["path"], e["dialect"])
    elif e["ev"] == "end":
        h = {k: ("DATE" if k == "retry-after" and not v.replace(".", "").isdigit() and v != "soon" else v)
             for k, v in e.get("headers", {}).items() if k not in ("x-request-id", "request-id")}
        print("end", e["step"], e["status"], e["how"], e["bytes"], e.get("retry_after_ms"),
              e.get("chunks"), e.get("delay_ms"), e.get("text"), sorted(h.items()))
    elif e["ev"] == "effect":
        print("effect", e["action"], e.get("key"))
PY
}

# 1. the original
serve "$src/tests/data/import/roundtrip.lua" "$tmp/t1.jsonl" || exit 1
drive
stop
cp "$tmp/seen" "$tmp/seen1"; cp "$tmp/times" "$tmp/times1"; cp "$tmp/dates" "$tmp/dates1"
[ "$(wc -l < "$tmp/seen1")" = 18 ] && ok || bad "first run: $(wc -l < "$tmp/seen1") requests"
grep -q "^A code=429 curl=0 .* ra=1 ram= xrl=0" "$tmp/seen1" && ok || bad "first run: no 429 Retry-After: 1"
grep -q "^B code=000 curl=56" "$tmp/seen1" && ok || bad "first run: no reset"

# 2. import
"$bin" import "$tmp/t1.jsonl" -o "$tmp/imp.lua" 2> "$tmp/ierr"; rc=$?
[ $rc = 0 ] && ok || { bad "import exit $rc: $(cat "$tmp/ierr")"; exit 1; }
grep -q "18 attempts of 7 logical requests" "$tmp/ierr" && ok || bad "import summary: $(cat "$tmp/ierr")"
"$bin" check "$tmp/imp.lua" > /dev/null 2>&1 && ok || bad "the import does not pass fusebox check"
grep -q ROUNDTRIPSECRET "$tmp/imp.lua" && bad "the API key reached the import" || ok
# (with retry-after-ms beside it, a date's delta is estimated from the trace's
# start, which has whole seconds only: 2 +- 1)
grep -q 'retry_after = 1, ' "$tmp/imp.lua" && grep -q 'retry_after_ms = 200, retry_after_date = [123] ' "$tmp/imp.lua" \
  && grep -q 'retry_after = "soon"' "$tmp/imp.lua" && ok || bad "Retry-After forms not kept: $(grep -n retry_after "$tmp/imp.lua")"

# 3. the import, served and driven the same way
serve "$tmp/imp.lua" "$tmp/t2.jsonl" || exit 1
drive
stop
cp "$tmp/seen" "$tmp/seen2"; cp "$tmp/times" "$tmp/times2"; cp "$tmp/dates" "$tmp/dates2"
if diff -u "$tmp/seen1" "$tmp/seen2" > "$tmp/diff"; then ok; else bad "curl saw something else:"; cat "$tmp/diff"; fi
paste "$tmp/times1" "$tmp/times2" | awk '{ d = $2 - $4; if (d < 0) d = -d; if (d > 0.25) { print "FAIL: " $1 " took " $2 " s, then " $4 " s"; bad = 1 } } END { exit bad }' \
  && ok || bad "latencies differ by more than 0.25 s"
paste "$tmp/dates1" "$tmp/dates2" | awk '{ d = $2 - $4; if (d < 0) d = -d; if (d > 2 || $2 < 1) { print "FAIL: " $1 " Retry-After date +" $2 " s, then +" $4 " s"; bad = 1 } } END { exit bad }' \
  && [ -s "$tmp/dates1" ] && ok || bad "Retry-After dates differ"
summary "$tmp/t1.jsonl" > "$tmp/sum1"; summary "$tmp/t2.jsonl" > "$tmp/sum2"
if diff -u "$tmp/sum1" "$tmp/sum2" > "$tmp/diff"; then ok; else bad "the traces differ:"; cat "$tmp/diff"; fi

# 4. importing the second trace gives the same steps (a fixed point)
"$bin" import "$tmp/t2.jsonl" -o "$tmp/imp2.lua" 2> /dev/null && ok || bad "import of the second trace"
steps() { grep -v -e '^ *--' -e '^ *name = ' -e '^ *doc = ' -e '^Each logical' -e '^headers (Retry' "$1" \
            | sed -e 's/interval = [0-9.]*/interval = I/' -e 's/retry_after_date = [0-9]* /retry_after_date = D /'; }
if diff -u <(steps "$tmp/imp.lua") <(steps "$tmp/imp2.lua") > "$tmp/diff"; then ok; else bad "re-import differs:"; cat "$tmp/diff"; fi

finish

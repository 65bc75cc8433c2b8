#!/usr/bin/env bash
# fusebox record in front of fusebox serve: the client gets the upstream's
# answers unchanged (a 429 with Retry-After, a 200 after a delay, a stream
# passed through as it arrives, a dropped connection, a raw Retry-After
# date); on SIGINT the recorder writes a scenario, and serving that scenario
# gives the client the same statuses, headers and texts again. API keys
# reach neither the scenario nor the raw log.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p"; done'
need_fusebox
need_cmd curl awk

# start NAME CMD...: runs CMD in the background, waits for its "port N"
# line; sets $pid and $port.
start() {
  local name=$1; shift
  "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
  pid=$!
  pids+=("$pid")
  port=
  for _ in $(seq 250); do
    port=$(awk '/^port /{print $2}' "$tmp/$name.out" 2>/dev/null)
    [ -n "$port" ] && return 0
    sleep 0.02
  done
  bad "$name printed no port: $(cat "$tmp/$name.err")"
  return 1
}

# stop PID: SIGINT, wait at most 10 s; sets $rc to its exit status.
stop() {
  kill -INT "$1" 2>/dev/null
  for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  rc=$?
}

# drive PORT: the same requests every time; what curl saw goes to $tmp/seen.
drive() {
  local p=$1
  : > "$tmp/seen"
  one() {
    local label=$1 body=$2
    local w rc
    : > "$tmp/hdr"; : > "$tmp/body"
    w=$(curl -s -o "$tmp/body" -D "$tmp/hdr" -w '%{http_code} %{time_starttransfer} %{time_total}' \
          --max-time 3 -H 'Authorization: Bearer sk-RECORDSECRET123456' \
          -H 'x-api-key: sk-ant-RECORDSECRET2' -H 'Content-Type: application/json' \
          -d "$body" "http://127.0.0.1:$p/v1/chat/completions")
    rc=$?
    local code first total
    read -r code first total <<< "$w"
    h() { grep -i "^$1:" "$tmp/hdr" | head -1 | cut -d' ' -f2- | tr -d '\r'; }
    local text
    text=$(grep -o '"content":"[^"]*"' "$tmp/body" | grep -v '":""' | tr '\n' '|')
    echo "$label code=$code curl=$rc ra=$(h retry-after) xrl=$(h x-ratelimit-remaining-requests) text=$text" >> "$tmp/seen"
    echo "$label $first $total" >> "$tmp/times"
  }
  one A '{"model":"m","k":"A"}'
  one A '{"model":"m","k":"A"}'
  one S '{"model":"m","k":"S","stream":true}'
  one R '{"model":"m","k":"R"}'
  one R '{"model":"m","k":"R"}'
  one R '{"model":"m","k":"R"}'
}

start upstream "$bin" serve "$src/tests/data/import/record_upstream.lua" --port 0 || exit 1
up=$pid uport=$port
start record "$bin" record --upstream "http://127.0.0.1:$uport/" "$tmp/rec.lua" --port 0 --log "$tmp/rec.jsonl" || exit 1
recpid=$pid rport=$port
: > "$tmp/times"
drive "$rport"
cp "$tmp/seen" "$tmp/seen1"; cp "$tmp/times" "$tmp/times1"
stop "$recpid"
[ $rc = 0 ] && ok || bad "record exit $rc: $(cat "$tmp/record.err")"
stop "$up"

# What the client saw through the proxy: the upstream's answers.
grep -q '^A code=429 curl=0 ra=1 xrl=0 text=$' "$tmp/seen1" && ok || bad "no 429 with Retry-After: 1 through the proxy"
grep -q '^A code=200 curl=0 ra= xrl= text="content":"hello A"|$' "$tmp/seen1" && ok || bad "no 200 after the 429"
grep -q '^S code=200 curl=0 .*text="content":"streamed "|"content":"through "|"content":"the proxy"|$' "$tmp/seen1" \
  && ok || bad "the stream did not come through"
grep -q '^R code=000 curl=52 ' "$tmp/seen1" && ok || bad "the dropped connection was not mirrored"
grep -q '^R code=503 curl=0 ra=Fri, 01 Jan 2100 00:00:00 GMT ' "$tmp/seen1" && ok || bad "a raw Retry-After date was changed"
# Streamed as it arrived: the first byte well before the last (3 chunks, 0.15 s apart).
awk '$1 == "S" { exit !($3 - $2 > 0.2) }' "$tmp/times1" && ok || bad "the stream was buffered: $(grep '^S' "$tmp/times1")"
grep -q "6 attempts of 3 logical requests" "$tmp/record.err" && ok || bad "record summary: $(cat "$tmp/record.err")"
[ -s "$tmp/rec.lua" ] && "$bin" check "$tmp/rec.lua" > /dev/null 2>&1 && ok || bad "the recorded scenario does not load"
"$bin" import "$tmp/rec.jsonl" > /dev/null 2>&1 && ok || bad "the raw log does not import"
grep -q RECORDSECRET "$tmp/rec.lua" "$tmp/rec.jsonl" && bad "an API key was written" || ok

# The recorded scenario, served, answers the same.
start replay "$bin" serve "$tmp/rec.lua" --port 0 || exit 1
: > "$tmp/times"
drive "$port"
stop "$pid"
if diff -u "$tmp/seen1" "$tmp/seen" > "$tmp/diff"; then ok; else bad "the replay differs:"; cat "$tmp/diff"; fi
paste "$tmp/times1" "$tmp/times" | awk '{ d = $3 - $6; if (d < 0) d = -d; if (d > 0.25) { print "FAIL: " $1 " took " $3 " s, then " $6 " s"; bad = 1 } } END { exit bad }' \
  && ok || bad "latencies differ by more than 0.25 s"

# Bad use: exit 2 with a message.
"$bin" record "$tmp/x.lua" 2> /dev/null; [ $? = 2 ] && ok || bad "record without --upstream should exit 2"
"$bin" record --upstream ftp://x "$tmp/x.lua" 2> /dev/null; [ $? = 2 ] && ok || bad "record with a bad URL should exit 2"

finish

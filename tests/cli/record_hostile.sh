#!/usr/bin/env bash
# fusebox record against hostile and broken traffic (issue 11, items 1, 2
# and 10): request targets that are not a path are answered 400 and never
# reach any host (a raw request line over a socket; a canary upstream
# records whether it was hit); keys in response headers, bodies and query
# strings reach neither the scenario nor the --log; a status outside
# 200-599 and a garbage reply are recorded, not lost; idle clients are
# closed and connections capped; SIGTERM writes what was recorded; an
# import failure does not name the upstream URL as a file.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]+"${pids[@]}"}"; do kill -9 "$p"; done; wait'
need_fusebox
need_cmd python3 awk

# start NAME CMD...: runs CMD in the background, waits for its "port N" line.
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
# stop PID [SIG]: the signal (default INT), wait at most 10 s; sets $rc.
stop() {
  kill -"${2:-INT}" "$1" 2>/dev/null
  for _ in $(seq 200); do kill -0 "$1" 2>/dev/null || break; sleep 0.05; done
  kill -9 "$1" 2>/dev/null
  wait "$1" 2>/dev/null
  rc=$?
}
# raw PORT REQUEST: sends the bytes (printf escapes) over a socket and prints
# the answer's status (0: none).
raw() {
  local line st=0
  exec 3<> "/dev/tcp/127.0.0.1/$1" || { echo 0; return; }
  printf "$2" >&3
  if IFS= read -r -t 5 line <&3; then
    case "$line" in HTTP/1.*) st=$(echo "$line" | cut -d' ' -f2) ;; esac
  fi
  exec 3<&- 3>&-
  echo "$st"
}

start upstream python3 "$src/tests/data/record_upstream_raw.py" "$tmp/hits" || exit 1
uport=$port
start canary python3 "$src/tests/data/record_upstream_raw.py" "$tmp/canary" || exit 1
cport=$port
: > "$tmp/hits"; : > "$tmp/canary"

# --- item 1: only origin-form targets are forwarded -------------------------
start rec "$bin" record --upstream "http://127.0.0.1:$uport" "$tmp/rec.lua" --port 0 \
  --log "$tmp/rec.jsonl" || exit 1
recpid=$pid rport=$port
A='Authorization: Bearer sk-CLIENTSECRET0123456789\r\n'
B='Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'
for target in "@127.0.0.1:$cport/v1/chat/completions" ":$cport/v1/chat/completions" \
              ".evil.example/v1/chat/completions" "http://127.0.0.1:$cport/v1/chat/completions" \
              "127.0.0.1:$cport" "*"; do
  st=$(raw "$rport" "POST $target HTTP/1.1\r\nHost: x\r\n$A$B")
  [ "$st" = 400 ] && ok || bad "target '$target' answered $st, not 400"
done
st=$(raw "$rport" "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
[ "$st" = 400 ] && ok || bad "OPTIONS * answered $st, not 400"
[ ! -s "$tmp/canary" ] && ok || bad "the canary host was hit: $(cat "$tmp/canary")"
[ ! -s "$tmp/hits" ] && ok || bad "a refused target reached the upstream: $(cat "$tmp/hits")"

# --- item 2: every form of key, through record ------------------------------
st=$(raw "$rport" "POST /v1/chat/completions?key=AIzaQUERYSECRET0123456789abcdef&api_key=QSECRET2 HTTP/1.1\r\nHost: x\r\n${A}x-goog-api-key: GOOGSECRET3\r\nIdempotency-Key: op-1\r\n$B")
[ "$st" = 200 ] && ok || bad "an origin-form target answered $st, not 200"
grep -q "POST /v1/chat/completions?key=AIza" "$tmp/hits" && ok || bad "the upstream did not get the path: $(cat "$tmp/hits")"

# --- item 10: odd statuses and garbage are recorded -------------------------
st=$(raw "$rport" "POST /weird HTTP/1.1\r\nHost: x\r\n$B")
[ "$st" = 700 ] && ok || bad "a 700 was passed on as $st"
st=$(raw "$rport" "POST /garbage HTTP/1.1\r\nHost: x\r\n$B")
[ "$st" != 200 ] && ok || bad "a garbage reply became 200"
stop "$recpid" TERM
[ $rc = 0 ] && ok || bad "record exit $rc after SIGTERM: $(cat "$tmp/rec.err")"
[ -s "$tmp/rec.lua" ] && "$bin" check "$tmp/rec.lua" > /dev/null 2>&1 && ok || bad "no loadable scenario after SIGTERM"
grep -q "127.0.0.1:$uport:" "$tmp/rec.err" && bad "the message names the upstream as a file: $(cat "$tmp/rec.err")" || ok
[ "$(grep -c '"method"' "$tmp/rec.jsonl")" = 3 ] && ok || bad "the log holds $(grep -c '"method"' "$tmp/rec.jsonl") exchanges, not 3: $(cat "$tmp/rec.jsonl")"
grep -q '"upstream_status":700' "$tmp/rec.jsonl" && ok || bad "the 700 is not in the log"
grep -q '"path":"/garbage"' "$tmp/rec.jsonl" && ok || bad "the garbage reply is not in the log"
for s in CLIENTSECRET QUERYSECRET QSECRET2 GOOGSECRET3 RESPHDRSECRET RESPECHOSECRET RESPBODYSECRET; do
  grep -q "$s" "$tmp/rec.lua" "$tmp/rec.jsonl" "$tmp/rec.err" "$tmp/rec.out" && bad "$s was written: $(grep -h "$s" "$tmp/rec.lua" "$tmp/rec.jsonl")" || ok
done

# --- item 10: idle clients are closed, connections capped -------------------
start rec2 "$bin" record --upstream "http://127.0.0.1:$uport" "$tmp/rec2.lua" --port 0 \
  --max-connections 4 --idle-timeout 1 || exit 1
rec2=$pid r2port=$port
python3 - "$r2port" <<'PY' &
import socket, sys, time
socks = []
for _ in range(8):
    try:
        socks.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=2))
    except OSError:
        pass
time.sleep(4)
PY
idlers=$!
sleep 2.5 # past the idle timeout: the idle sockets were closed
st=$(raw "$r2port" "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n$B")
[ "$st" = 200 ] && ok || bad "with 8 idle sockets open, a request answered $st"
kill "$idlers" 2>/dev/null; wait "$idlers" 2>/dev/null
# --- every exit path: the upstream goes away; what was recorded is written ---
kill -9 "${pids[0]}" 2>/dev/null; wait "${pids[0]}" 2>/dev/null
st=$(raw "$r2port" "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n$B")
[ "$st" = 502 ] && ok || bad "an unreachable upstream answered $st, not 502"
stop "$rec2" INT
[ $rc = 0 ] && ok || bad "record exit $rc after the upstream went away: $(cat "$tmp/rec2.err")"
[ -s "$tmp/rec2.lua" ] && ok || bad "nothing written after the upstream went away"
grep -q "could not reach the upstream" "$tmp/rec2.err" && ok || bad "the 502 is not reported: $(cat "$tmp/rec2.err")"

finish

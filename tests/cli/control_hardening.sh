#!/usr/bin/env bash
# The control API's limits (issue 29): a token that could never match is
# refused at start; the runs a PUT replaced but that requests still use
# are bounded per session.
. "$(dirname "$0")/lib.sh"
pids=()
at_exit 'for p in "${pids[@]}"; do kill "$p"; done'
need_fusebox
need_cmd curl awk timeout

cat > "$tmp/ok.lua" <<'LUA'
return scenario { name = "ok", provider = { chat { content = "hi" } } }
LUA

# --- item 7: a token of blanks, or with a leading or trailing blank or a
# control character, can never match a header (HTTP trims them): exit 2.
for tok in '   ' ' lead' 'trail ' $'new\nline' $'tab\tin' $'\033[31m'; do
  timeout 5 "$bin" serve "$tmp/ok.lua" --port 0 --control --control-token "$tok" > /dev/null 2> "$tmp/e7"
  rc=$?
  [ $rc = 2 ] && grep -q 'control-token' "$tmp/e7" && grep -q 'visible' "$tmp/e7" && ok \
    || bad "--control-token $(printf '%q' "$tok"): exit $rc, $(head -c 200 "$tmp/e7")"
done
grep -q $'\033' "$tmp/e7" && bad "the refused token was echoed to the terminal" || ok

# --- item 13: an IPv6 literal is bracketed in the URLs serve prints; the
# password of a redis:// URL is never echoed.
timeout 3 "$bin" serve "$tmp/ok.lua" --bind ::1 --port 0 > "$tmp/o13" 2> "$tmp/e13"
if grep -q '^port ' "$tmp/o13"; then
  grep -q 'http://\[::1\]:[0-9]*/v1' "$tmp/o13" && ! grep -q 'http://::1' "$tmp/o13" && ok \
    || bad "IPv6 URLs: $(cat "$tmp/o13")"
else
  echo "note: no IPv6 loopback here ($(head -c 100 "$tmp/e13")): the bracket check is skipped"
fi
timeout 5 "$bin" serve "$tmp/ok.lua" --port 0 --state 'redis://alice:hunter2@127.0.0.1:1' > /dev/null 2> "$tmp/e13"
rc=$?
[ $rc = 2 ] && grep -q 'redacted' "$tmp/e13" && ok || bad "a redis URL with credentials: exit $rc, $(cat "$tmp/e13")"
grep -q hunter2 "$tmp/e13" && bad "the Redis password was echoed: $(cat "$tmp/e13")" || ok

finish

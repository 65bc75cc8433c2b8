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

finish

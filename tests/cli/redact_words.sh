#!/usr/bin/env bash
# Secrets, not words (issue 22, item 7): the error line and the answer text
# that fusebox exec puts into its trace and its JSON report lose only what
# the redaction rule (docs/trace.md) calls a secret. A client's last stderr
# line is each of: a Python KeyError, a loopback URL, OpenAI's 401 message
# with a real-looking key and with the masked form, an Authorization header
# line, a Gemini URL with ?key=. The words stay; the keys never reach a file.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json
scen="$src/scenarios/transient/http_503.lua"
KEY=sk-proj-AbCdEfGhIjKlMnOpQrSt GKEY=AIzaSyA1234567890abcdefghijk

# line (what the client prints last on stderr) and what the report must show
cases=(
  "KeyError: 'choices'|KeyError: 'choices'"
  "http://127.0.0.1:40123/v1/chat/completions|http://127.0.0.1:40123/v1/chat/completions"
  "AuthenticationError: 401 Incorrect API key provided: $KEY. You can find your API key at https://platform.openai.com/account/api-keys.|AuthenticationError: 401 Incorrect API key provided: sk-[redacted]. You can find your API key at https://platform.openai.com/account/api-keys."
  "401 Incorrect API key provided: sk-...abcd|401 Incorrect API key provided: sk-...abcd"
  "Authorization: Bearer $KEY|Authorization: [redacted]"
  "https://x/v1beta/models/m:generateContent?key=$GKEY|https://x/v1beta/models/m:generateContent?key=[redacted]"
)
i=0
for c in "${cases[@]}"; do
  line=${c%%|*} want=${c#*|}
  i=$((i + 1))
  printf '%s\n' "$line" > "$tmp/line$i"
  "$bin" exec --quiet --timeout 20 --trace-dir "$tmp/t$i" --json "$tmp/r$i.json" "$scen" \
    -- sh -c "cat '$tmp/line$i'; cat '$tmp/line$i' >&2; exit 1" > /dev/null 2>&1
  got=$(python3 - "$tmp/t$i" <<'PY'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/*.jsonl"):
    for l in open(p):
        e = json.loads(l)
        if e.get("ev") == "client":
            print(e.get("error_line", "(none)"))
            print(e.get("text", "(none)"))
PY
)
  [ "$got" = "$want"$'\n'"$want" ] && ok || bad "case $i: trace has '$got', want '$want' twice"
  grep -qF -- "$(printf '%s' "$want" | python3 -c 'import json,sys; print(json.dumps(sys.stdin.read())[1:-1])')" "$tmp/r$i.json" \
    && ok || bad "case $i: the JSON report lacks '$want'"
  if grep -rqF -e "$KEY" -e "$GKEY" -e "${KEY#sk-}" "$tmp/t$i"/*.jsonl "$tmp/r$i.json"; then
    bad "case $i: a key reached the trace or the report"
  else
    ok
  fi
done
finish

#!/usr/bin/env bash
# What the trace's arrive line carries (issue 29): one JSON key per header
# name (duplicates joined with ", " as HTTP does); a secret in the URL path
# or in an Idempotency-Key redacted, in `path` and `key` (and the effect
# line's `key`), while two logical requests stay two.
. "$(dirname "$0")/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill "$pid"'
need_fusebox
need_cmd curl awk
need_python json

cat > "$tmp/s.lua" <<'LUA'
return scenario {
  name = "trace hardening",
  provider = function(req)
    if req.attempt == 1 then return fail { status = 503 } end
    return chat { content = "seen " .. tostring(req.headers["x-dup"]) }
  end,
}
LUA
"$bin" serve "$tmp/s.lua" --port 0 --trace "$tmp/t.jsonl" > "$tmp/out" 2> "$tmp/err" &
pid=$!
wait_port_line "$tmp/out"
port=$(awk '/^port /{print $2}' "$tmp/out")
[ -n "$port" ] && ok || { bad "serve printed no port"; cat "$tmp/err"; exit 1; }
base="http://127.0.0.1:$port"

# --- item 11: duplicate request headers are one key, joined.
curl -s -o /dev/null --max-time 5 "$base/v1/chat/completions" -H 'X-Dup: a' -H 'X-Dup: b' -d '{"q":"dup"}'
curl -s -o "$tmp/b11" --max-time 5 "$base/v1/chat/completions" -H 'X-Dup: a' -H 'X-Dup: b' -d '{"q":"dup"}'
grep -q 'seen a, b' "$tmp/b11" && ok || bad "req.headers of duplicate headers: $(cat "$tmp/b11")"

# --- item 8: a key in the URL path, an sk- Idempotency-Key: redacted in
# the trace's path and key, two such keys still two logical requests.
k1=sk-proj-AAAAbbbbCCCCddddEEEEffff0123456789ab
k2=sk-proj-ZZZZyyyyXXXXwwwwVVVVuuuu9876543210zz
curl -s -o /dev/null --max-time 5 "$base/v1/$k1/chat/completions" -d '{"q":"path"}'
for k in $k1 $k2 $k1; do
  curl -s -o /dev/null --max-time 5 "$base/v1/chat/completions" -H "Idempotency-Key: $k" -d '{"q":"idem"}'
done
# ... and in the effect line, when the key goes to the effect endpoint.
curl -s -o /dev/null --max-time 5 "$base/v1/effects/send_email" -H "Idempotency-Key: $k1" -d '{"to":"a@b"}'

kill -INT "$pid"; wait "$pid"; pid=
grep -q 'AAAAbbbb\|ZZZZyyyy' "$tmp/t.jsonl" && bad "a secret reached the trace: $(grep -o '.\{40\}AAAAbbbb.\{20\}' "$tmp/t.jsonl" | head -2)" || ok
python3 - "$tmp/t.jsonl" <<'PY' && ok || bad "redacted keys: the logical requests"
import json, sys
arr = [json.loads(l) for l in open(sys.argv[1])]
arr = [e for e in arr if e["ev"] == "arrive"]
p = [e for e in arr if "chat/completions" in e["path"] and e["path"] != "/v1/chat/completions"]
assert len(p) == 1 and "[redacted]" in p[0]["path"], [e["path"] for e in p]
i = [e for e in arr if e["key"].startswith("idem:") and "effects" not in e["path"]]
assert len(i) == 3, [e["key"] for e in i]
assert all("[redacted]" in e["key"] and "#" in e["key"] for e in i), [e["key"] for e in i]
assert i[0]["key"] == i[2]["key"] != i[1]["key"], [e["key"] for e in i]
assert [e["attempt"] for e in i] == [1, 1, 2], [e["attempt"] for e in i]
fx = [json.loads(l) for l in open(sys.argv[1])]
fx = [e for e in fx if e["ev"] == "effect"]
assert len(fx) == 1 and fx[0]["key"] == i[0]["key"][len("idem:"):], (fx, i[0]["key"])
PY
python3 - "$tmp/t.jsonl" <<'PY' && ok || bad "duplicate headers in arrive.headers"
import json, sys
def no_dups(pairs):
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate JSON keys: %s" % keys
    return dict(pairs)
arr = [json.loads(l, object_pairs_hook=no_dups) for l in open(sys.argv[1])]
arr = [e for e in arr if e["ev"] == "arrive" and "x-dup" in e["headers"]]
assert len(arr) == 2, len(arr)
assert all(e["headers"]["x-dup"] == "a, b" for e in arr), [e["headers"] for e in arr]
PY

finish

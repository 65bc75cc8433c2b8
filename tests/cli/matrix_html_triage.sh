#!/usr/bin/env bash
# matrix --html for triage (issue 24): rows whose worst cell failed come
# first (a passing row given first moves below), each row carries its
# filter word for the offline filter (#failed, #na, #passed), the failed
# verdicts are counted across cells with links to their rows, and the
# filter's script is the one the page's Content-Security-Policy allows and
# works in headless Chromium with no server.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python hashlib base64 re
need_cmd timeout
need_chromium
cd "$src"
"$bin" matrix --client guard --client naive --quiet --html "$tmp/m.html" \
  scenarios/http2/goaway.lua scenarios/transient/http_503.lua > "$tmp/out" 2>&1
rows=$(grep -o '<tr id="r[0-9]*" data-st="[a-z]*"><td>[^<]*' "$tmp/m.html" | sed 's/<tr id="\(r[0-9]*\)" data-st="\([a-z]*\)"><td>/\1 \2 /')
want='r1 failed 503 twice, then answered: exponential backoff
r2 passed HTTP/2 GOAWAY before the stream, then answered'
[ "$rows" = "$want" ] && ok || bad "rows, failed first: got
$rows"
grep -q '<a class="flt" href="#failed">failed (1)</a>' "$tmp/m.html" && grep -q 'passed (1)' "$tmp/m.html" && ok \
  || bad "the filter bar: $(grep -o '<p class="filters">.*</p>' "$tmp/m.html")"
grep -q '<li><b>backoff</b> failed in 1 cell: <a href="#r1" title="naive">#1</a>' "$tmp/m.html" && ok \
  || bad "the failed verdict's tally: $(grep -o '<li>.*</li>' "$tmp/m.html" | head -3)"
python3 - "$tmp/m.html" <<'PY' && ok || bad "the script and its CSP hash disagree"
import base64, hashlib, re, sys
page = open(sys.argv[1]).read()
js = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
want = "sha256-" + base64.b64encode(hashlib.sha256(js.encode()).digest()).decode()
sys.exit(0 if f"script-src '{want}'" in page else 1)
PY
flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir=$tmp/profile"
timeout 60 "$chrome" $flags --dump-dom "file://$tmp/m.html#failed" > "$tmp/dom.html" 2> "$tmp/chrome.err"
grep -Eq '<tr id="r2" data-st="passed" hidden' "$tmp/dom.html" && grep -Eq '<tr id="r1" data-st="failed">' "$tmp/dom.html" \
  && ok || bad "filter #failed in Chromium: $(grep -o '<tr id="r[0-9]"[^>]*>' "$tmp/dom.html" | tr '\n' ' ')"
finish

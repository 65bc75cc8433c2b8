#!/usr/bin/env bash
# The HTML report opens in headless Chromium and shows the timelines; the
# JUnit file is well-formed XML. (Chromium comes from scripts/setup.sh.)
# For triage (issue 24): the summary lists failed scenarios first, then n/a,
# then passed, with a column of the failed verdicts; the filter (#failed)
# works in the page with no server, under the page's own
# Content-Security-Policy (its one inline script is allowed by hash); an
# effect's timeline row is named by the effect, a tool call's by the tool,
# and a repeated side effect is drawn as "applied twice".
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd timeout
need_python xml.dom.minidom
need_chromium
cd "$src"

"$bin" run scenarios/examples --client naive --quiet --html "$tmp/r.html" --junit "$tmp/r.xml"
[ -s "$tmp/r.html" ] && ok || bad "no HTML report"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/r.xml" && ok || bad "JUnit is not well-formed XML"
sed 's|xmlns="http://www.w3.org/2000/svg"||g' "$tmp/r.html" | grep -Eq '<link|src=|https?://' && bad "the page makes external requests" || ok
[ "$(grep -o '<script' "$tmp/r.html" | wc -l)" = 1 ] && grep -q "script-src 'sha256-" "$tmp/r.html" && ok ||
  bad "the page has other script than its one filter, or no CSP hash for it"

flags="--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --user-data-dir=$tmp/profile"
timeout 60 "$chrome" $flags --dump-dom "file://$tmp/r.html" > "$tmp/dom.html" 2> "$tmp/chrome.err"
rc=$?
[ $rc = 0 ] && ok || { bad "chromium exit $rc"; tail -5 "$tmp/chrome.err"; }
svgs=$(grep -o '<svg' "$tmp/dom.html" | wc -l)
scen=$(ls scenarios/examples/*.lua | wc -l)
[ "$svgs" -ge "$scen" ] && ok || bad "the page shows $svgs SVG timelines for $scen scenarios"
grep -q "retry_after_honoured" "$tmp/dom.html" && ok || bad "verdict evidence missing from the page"
timeout 60 "$chrome" $flags --window-size=1200,2000 --screenshot="$tmp/shot.png" "file://$tmp/r.html" \
  > /dev/null 2>&1 && [ -s "$tmp/shot.png" ] && ok || bad "chromium could not render a screenshot"
[ -n "${KEEP_SCREENSHOT:-}" ] && cp "$tmp/shot.png" "$KEEP_SCREENSHOT"

# --- triage: order, failed verdicts, filter, effect rows ---------------------
# examples with naive: some pass, some fail; effect_commit_then_drop applies
# its effect twice.
rows=$(grep -o '<tr data-st="[a-z]*"' "$tmp/dom.html" | sed 's/.*="\(.*\)"/\1/' | uniq | tr '\n' ' ')
case "$rows" in
  "failed na passed "|"failed passed ") ok ;;
  *) bad "summary order is '$rows', want failed first, then n/a, then passed" ;;
esac
grep -q '<th>Failed verdicts</th>' "$tmp/dom.html" && ok || bad "no failed-verdicts column"
grep -Eq '<td class="fv">[^<]*retry_after_honoured' "$tmp/dom.html" && ok ||
  bad "the failed-verdicts column does not name retry_after_honoured"
grep -Eq 'retry_after_honoured</b> failed in [0-9]+ scenarios?:' "$tmp/dom.html" && ok ||
  bad "no per-verdict count across the run"
npassed=$(grep -c '<tr data-st="passed"' "$tmp/dom.html")
[ "$npassed" -ge 1 ] && ok || bad "no passed scenario to filter out"
timeout 60 "$chrome" $flags --dump-dom "file://$tmp/r.html#failed" > "$tmp/dom_failed.html" 2>/dev/null
hidden=$(grep -Eo '<(tr|section)[^>]*data-st="passed"[^>]*hidden' "$tmp/dom_failed.html" | wc -l)
shown=$(grep -Eo '<(tr|section)[^>]*data-st="failed"[^>]*>' "$tmp/dom_failed.html" | grep -vc hidden)
[ "$hidden" = $((2 * npassed)) ] && [ "$shown" -ge 2 ] && ok ||
  bad "filter #failed: $hidden of $((2 * npassed)) passed rows and cards hidden, $shown failed shown (did the CSP block the script?)"
grep -q 'data-show="failed"' "$tmp/dom_failed.html" && ok || bad "filter #failed not applied"
grep -q '>call 0 · effect send_email' "$tmp/dom.html" && ok || bad "no timeline row named by its effect"
grep -q '>applied twice</text>' "$tmp/dom.html" && ok || bad "a repeated side effect is not drawn as such"
# a tool call's row is named by its tool
"$bin" run scenarios/tools/cut_mid_arguments.lua --client guard --quiet --html "$tmp/tool.html"
timeout 60 "$chrome" $flags --dump-dom "file://$tmp/tool.html" > "$tmp/dom_tool.html" 2>/dev/null
grep -q '>call 0 · tool get_weather' "$tmp/dom_tool.html" && ok || bad "no timeline row named by its tool"
if [ -n "${KEEP_SCREENSHOT:-}" ]; then
  "$bin" run scenarios/examples/effect_commit_then_drop.lua --client naive --quiet --html "$tmp/fx.html"
  timeout 60 "$chrome" $flags --window-size=1200,800 --screenshot="${KEEP_SCREENSHOT%.png}_effect.png" \
    "file://$tmp/fx.html" > /dev/null 2>&1
fi
finish

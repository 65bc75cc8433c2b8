#!/usr/bin/env bash
# The HTML report opens in headless Chromium and shows the timelines; the
# JUnit file is well-formed XML. (Chromium comes from scripts/setup.sh.)
. "$(dirname "$0")/lib.sh"
need_fusebox
need_cmd timeout
need_python xml.dom.minidom
need_chromium
cd "$src"

"$bin" run scenarios/examples --client naive --quiet --html "$tmp/r.html" --junit "$tmp/r.xml"
[ -s "$tmp/r.html" ] && ok || bad "no HTML report"
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/r.xml" && ok || bad "JUnit is not well-formed XML"
sed 's|xmlns="http://www.w3.org/2000/svg"||g' "$tmp/r.html" | grep -Eq '<(script|link)|src=|https?://' && bad "the page makes external requests or runs script" || ok

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
finish

#!/usr/bin/env bash
# The main job: `fusebox run` plays the standard scenario library against the
# built-in guarded client and judges it, leaving a JUnit file, an HTML report,
# a JSON report and every trace under out/.
set -euo pipefail
cd "$(dirname "$0")/.."
FUSEBOX=${FUSEBOX_BIN:-build/fusebox}
mkdir -p out
"$FUSEBOX" run --trace-dir out/traces --junit out/junit.xml --html out/report.html --json out/report.json
echo "reports: out/junit.xml out/report.html out/report.json; traces: out/traces/"
echo "compare: $FUSEBOX run --client naive   (the try/except-retry-3-times wrapper fails with evidence)"

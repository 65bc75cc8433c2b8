#!/usr/bin/env bash
# The gate works: the standard library passes with the guarded client, and the
# naive and sdk-default reference clients fail exactly the scenarios (and
# verdicts) pinned in tests/cli/gate/<client>.txt. A verdict that silently
# stops failing, or a new failure, changes the list and fails this test.
#   UPDATE=1 bash tests/cli/run_gate.sh   rewrites the pinned lists.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_python json xml.dom.minidom
set -e
cd "$src"
status=0

set +e
"$bin" run --client guard --quiet --json "$tmp/guard.json" --junit "$tmp/guard.xml" --html "$tmp/guard.html"
rc=$?
set -e
if [ $rc -ne 0 ]; then
  echo "FAIL: the guarded client does not pass the standard library (exit $rc):"
  python3 tests/cli/verdicts.py "$tmp/guard.json" | grep -P '\tfail\t' || true
  status=1
fi
python3 -c 'import sys, xml.dom.minidom; xml.dom.minidom.parse(sys.argv[1])' "$tmp/guard.xml"
# Green means evidence: every scenario of the library is exercised by the
# guarded client and judged by at least one verdict (none is n/a).
na=$(python3 tests/cli/verdicts.py "$tmp/guard.json" | awk -F'\t' '$2 == "n/a" { print $1 }')
if [ -n "$na" ]; then
  echo "FAIL: the guarded client leaves scenarios without evidence (n/a):"; echo "$na"
  status=1
fi

for client in naive sdk-default; do
  set +e
  "$bin" run --client "$client" --quiet --json "$tmp/$client.json"
  rc=$?
  set -e
  if [ $rc -ne 1 ]; then
    echo "FAIL: --client $client should fail the gate with exit 1, got $rc"
    status=1
  fi
  python3 tests/cli/verdicts.py "$tmp/$client.json" | awk -F'\t' '$2 == "fail" { print $1 "\t" $3 }' \
    | sort > "$tmp/$client.txt"
  pinned=tests/cli/gate/$client.txt
  mkdir -p tests/cli/gate
  if [ "${UPDATE:-0}" = 1 ]; then
    cp "$tmp/$client.txt" "$pinned"
    echo "updated $pinned ($(wc -l < "$pinned") failing scenarios)"
  elif ! diff -u "$pinned" "$tmp/$client.txt"; then
    echo "FAIL: --client $client failed a different set of scenarios/verdicts than $pinned (diff above)"
    status=1
  else
    echo "ok: --client $client fails the $(wc -l < "$pinned") pinned scenarios"
  fi
done
[ $status -eq 0 ] && echo "1 passed, 0 failed" || echo "0 passed, 1 failed"
exit $status

#!/usr/bin/env bash
# The Node helper (integrations/node/fusebox.mjs), for real: a node:test
# suite of an openai-node client (tests/integrations/node/) judged on
# scenarios of the library through one `fusebox serve --control` and a
# session per test, plus the helper's own unit tests and a child node --test
# of tests that are meant to fail, checked to fail with the right message.
. "$(dirname "$0")/lib.sh"
need_fusebox
need_node_pkg openai

export FUSEBOX_BIN=$bin FUSEBOX_SRC=$src FUSEBOX_KEEP=$tmp/kept
d=$src/tests/integrations/node
node --test --test-reporter=spec "$d"/*.test.mjs 2>&1 | tee "$tmp/out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && ok || bad "node --test exit $rc"
[ ! -e "$tmp/kept" ] && ok || bad "traces kept for a passing suite: $(ls "$tmp/kept")"
finish

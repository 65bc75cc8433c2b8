#!/usr/bin/env bash
# The pytest plugin (integrations/pytest/fusebox_pytest.py), for real: a
# pytest suite of a small httpx client (tests/integrations/pytest/) judged
# on scenarios of the library through one `fusebox serve --control` and a
# session per test, plus the plugin's own unit tests and a child pytest of
# tests that are meant to fail, checked to fail with the right message.
. "$(dirname "$0")/lib.sh"
need_fusebox
# Debian's python3-pytest and python3-httpx live in /usr/bin/python3, which
# another python3 first on PATH (pyenv, a venv) does not see: take the first
# interpreter that has both ($FUSEBOX_PYTHON first).
py=
for c in ${FUSEBOX_PYTHON:-} python3 /usr/bin/python3; do
  command -v "$c" > /dev/null 2>&1 && "$c" -c 'import pytest, httpx' > /dev/null 2>&1 && { py=$c; break; }
done
[ -n "$py" ] || missing "needs python3 with pytest and httpx (Debian: python3-pytest python3-httpx; scripts/setup.sh installs them)"

export FUSEBOX_BIN=$bin FUSEBOX_SRC=$src
export PYTHONPATH="$src/integrations/pytest:$src/tests/integrations/pytest${PYTHONPATH:+:$PYTHONPATH}"
cd "$src/tests/integrations/pytest" || exit 1
"$py" -m pytest -p fusebox_pytest -p no:cacheprovider --fusebox-keep "$tmp/kept" \
  -o console_output_style=classic -v . 2>&1 | tee "$tmp/out"
rc=${PIPESTATUS[0]}
[ "$rc" = 0 ] && ok || bad "pytest exit $rc"
# The server stopped cleanly (under the sanitizers: no report at exit).
grep -q "the fusebox server: it exited" "$tmp/out" && bad "$(grep "the fusebox server: it exited" "$tmp/out")" || ok
# The suite's own sessions all passed: no trace was kept.
[ ! -e "$tmp/kept" ] && ok || bad "traces kept for a passing suite: $(ls "$tmp/kept")"
finish

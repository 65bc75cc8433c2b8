"""Runs meant_to_fail.py in a child pytest (the plugin as a user loads it,
-p fusebox_pytest) and checks that its tests fail, with the failed verdicts
and their evidence in the message, and that each failed test's trace is kept
where the run says.
"""
import json
import os
import re
import subprocess
import sys

import fusebox_pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(os.path.abspath(fusebox_pytest.__file__))


def test_meant_to_fail_fails_with_the_evidence(tmp_path):
    keep = tmp_path / "kept"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PLUGIN, HERE, env.get("PYTHONPATH")) if p)
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "fusebox_pytest", "-p", "no:cacheprovider",
         "--fusebox-keep", str(keep), "-o", "console_output_style=classic",
         "--rootdir", HERE, os.path.join(HERE, "meant_to_fail.py")],
        cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, timeout=120,
    )
    out = p.stdout
    assert p.returncode == 1, out
    assert "4 failed" in out, out

    # The bad client: the verdict, with its evidence, is the failure message.
    assert "FuseboxVerdictError: fusebox session test_bad_client_ignores_retry_after-" in out, out
    assert re.search(r"1 of \d+ verdicts failed", out), out
    assert re.search(r"fail retry_after_honoured: attempt 2 of request \S+ arrived \d+ ms after a 429 "
                     r"asking for 2000 ms", out), out
    assert "pass attempts" not in out, out  # only the failed verdicts are listed

    # Nothing judged: said so, not a silent pass.
    assert "no verdict applied (every verdict n/a): the situation the scenario sets up never arose" in out, out
    assert "n/a retry_after_honoured: 1 response asked for Retry-After, but no retry followed one" in out, out

    # Both traces kept, and the run says where.
    kept = sorted(keep.iterdir())
    assert [k.name.split("-")[0] for k in kept] == ["test_bad_client_ignores_retry_after",
                                                    "test_client_fails_before_any_verdict",
                                                    "test_client_passes_but_nothing_was_judged"], kept
    assert "ChatError: HTTP 503" in out, out
    assert re.search(r"trace of meant_to_fail.py::test_fails_before_using_its_session not kept: the test used no "
                     r"scenario and sent no request in session test_fails_before_using_its_session-[0-9a-f]{8}", out), out
    for k in kept:
        assert re.search(r"trace of meant_to_fail.py::%s kept in %s" % (k.name.split("-")[0], re.escape(str(k))), out), out
        lines = [json.loads(line) for line in k.read_text().splitlines() if line.strip()]
        assert any(x.get("ev") == "arrive" for x in lines), lines[:3]

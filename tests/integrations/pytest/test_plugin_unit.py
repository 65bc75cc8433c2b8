"""The plugin's own logic without a server: session names, the judgement of
a report, scenario arguments, start-up failures, the control error format.
"""
import os
import re
import stat
import subprocess
import sys

import pytest

import fusebox_pytest as fp

NAME = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@pytest.mark.parametrize("test_id", [
    "tests/test_a.py::test_one",
    "tests/test_a.py::TestK::test_two[param-1/ü é]",
    "x.py::" + "very_long_" * 20,
    "x.py::[]",
    "",
])
def test_session_names_are_valid(test_id):
    n = fp.session_name(test_id)
    assert NAME.match(n), n
    assert n != "default"


def test_session_names_are_readable_and_distinct():
    a = fp.session_name("tests/test_a.py::test_one")
    b = fp.session_name("tests/test_b.py::test_one")
    assert a.startswith("test_one-") and b.startswith("test_one-")
    assert a != b
    long1 = fp.session_name("x.py::" + "a" * 100 + "1")
    long2 = fp.session_name("x.py::" + "a" * 100 + "2")
    assert len(long1) == 64 and long1 != long2
    assert fp.session_name("t.py::test_x[a b]").startswith("test_x_a_b-")


def result(status, verdicts, **kw):
    r = {"name": "S", "status": status, "verdicts": verdicts}
    r.update(kw)
    return {"fusebox_report": 1, "results": [r]}


V_PASS = {"name": "attempts", "status": "pass", "evidence": "1 request, 2 attempts (expected 2)"}
V_FAIL = {"name": "retry_after_honoured", "status": "fail",
          "evidence": "attempt 2 of request hash:1 arrived 503 ms after a 429 asking for 2000 ms"}
V_NA = {"name": "outcome", "status": "n/a", "evidence": "no client account in the trace"}


def test_a_passing_report_passes():
    assert fp.check_verdicts(result("pass", [V_PASS, V_NA]), "s") is None


def test_failed_verdicts_with_their_evidence():
    msg = fp.check_verdicts(result("fail", [V_PASS, V_FAIL, V_NA]), "s1")
    assert msg.startswith("fusebox session s1:\n")
    assert "scenario 'S': 1 of 3 verdicts failed" in msg
    assert "  fail retry_after_honoured: attempt 2 of request hash:1 arrived 503 ms after a 429 asking for 2000 ms" in msg
    assert "attempts" not in msg and "outcome" not in msg


def test_only_not_applicable_is_not_a_pass():
    msg = fp.check_verdicts(result("n/a", [V_NA], arrivals=0), "s")
    assert "never arose" in msg and "no request reached this session" in msg
    assert "n/a outcome: no client account in the trace" in msg
    msg = fp.check_verdicts(result("n/a", [], arrivals=3), "s")
    assert "never arose" in msg and "(no verdicts)" in msg and "no request reached" not in msg


def test_error_and_empty_reports_fail():
    assert "could not be judged: boom" in fp.check_verdicts(result("error", [], error="boom"))
    assert "no result" in fp.check_verdicts({"results": []})
    assert "no result" in fp.check_verdicts(None)


def test_long_evidence_is_clipped():
    v = dict(V_FAIL, evidence="x" * 5000)
    msg = fp.check_verdicts(result("fail", [v]))
    assert "(3000 more characters)" in msg and len(msg) < 2300


def test_scenario_argument_path_or_text(tmp_path):
    f = tmp_path / "mine.lua"
    f.write_text("return scenario { name = 'm' }")
    assert fp._read_scenario(f) == (b"return scenario { name = 'm' }", "mine.lua")
    assert fp._read_scenario(str(f)) == (b"return scenario { name = 'm' }", "mine.lua")
    assert fp._read_scenario("return scenario {}\n") == (b"return scenario {}\n", "scenario.lua")
    with pytest.raises(fp.FuseboxError, match="cannot read the scenario .*nope.lua"):
        fp._read_scenario(str(tmp_path / "nope.lua"))


def test_control_errors_carry_type_and_message():
    e = fp._error_from(400, "PUT", "/__fusebox/scenario",
                       b'{"error":{"type":"fusebox_bad_scenario","message":"s.lua:3: unknown key"}}')
    assert isinstance(e, fp.FuseboxScenarioError)
    assert str(e) == "fusebox control PUT /__fusebox/scenario: 400 fusebox_bad_scenario: s.lua:3: unknown key"
    e = fp._error_from(502, "GET", "/x", b"<html>bad gateway</html>")
    assert type(e) is fp.FuseboxError and e.status == 502 and "bad gateway" in str(e)


def test_bad_session_name_is_refused():
    s = fp.Server(bin="unused")
    s.url = "http://127.0.0.1:1"
    with pytest.raises(fp.FuseboxError, match="bad session name"):
        s.session("a/b")
    with pytest.raises(fp.FuseboxError, match="bad session name"):
        s.session("x" * 65)
    assert s.session("ok-1.2_3").url == "http://127.0.0.1:1/__session/ok-1.2_3"


def test_missing_binary_says_what_to_do(tmp_path):
    with pytest.raises(fp.FuseboxError, match="cannot start .*nothere.*FUSEBOX_BIN"):
        fp.Server(bin=str(tmp_path / "nothere")).start()


def test_a_server_that_prints_no_port_is_reported(tmp_path):
    fake = tmp_path / "fakebox"
    fake.write_text("#!/bin/sh\necho 'fusebox serve: --control is not an option' >&2\nexit 2\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    with pytest.raises(fp.FuseboxError, match=r"printed no 'port N' line \(exit status 2\).*--control is not an option"):
        fp.Server(bin=str(fake)).start()


def test_a_server_that_exits_badly_is_named_at_the_end(tmp_path):
    # A fake server: prints its port, and exits 3 with a last word on SIGINT.
    fake = tmp_path / "fakebox"
    fake.write_text("#!/bin/sh\ntrap 'echo bye >&2; exit 3' INT\necho 'port 9'\n"
                    "while :; do sleep 0.05; done\n")
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "test_uses_server.py").write_text("def test_it(fusebox_server):\n    assert fusebox_server.port == 9\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.dirname(fp.__file__), env.get("PYTHONPATH")) if p)
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "fusebox_pytest", "-p", "no:cacheprovider",
                        "--fusebox-bin", str(fake), str(tmp_path)], cwd=str(tmp_path), env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert p.returncode == 0, p.stdout
    assert "the fusebox server: it exited with status 3: bye" in p.stdout, p.stdout

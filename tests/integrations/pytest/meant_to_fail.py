"""Tests that are MEANT TO FAIL: run only by test_meant_to_fail.py, in a
child pytest, which checks that they fail and with which message. Not
collected by the normal run (the file name does not start with test_).
"""
import os

from chat_client import ChatClient

SRC = os.environ.get("FUSEBOX_SRC") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))


def test_bad_client_ignores_retry_after(fusebox):
    # The badly behaved client: retries 0.2 s after a 429 that asked for 2 s.
    fusebox.use(os.path.join(SRC, "scenarios/ratelimit/retry_after_seconds.lua"))
    c = ChatClient(honour_retry_after=False)
    try:
        assert c.chat("hello") == "hello"  # it even gets its answer...
    finally:
        c.close()
    fusebox.assert_verdicts()  # ...but fusebox saw it come back too early


def test_client_passes_but_nothing_was_judged(fusebox):
    fusebox.use('return scenario { name = "only a Retry-After", '
                'provider = { fail { status = 429, retry_after = 1 }, chat {} }, '
                'expect = { retry_after_honoured = true } }')
    c = ChatClient(attempts=1)
    try:
        c.chat("hello")
    except Exception:
        pass  # giving up is this test's business; fusebox judges the rest
    finally:
        c.close()
    fusebox.assert_verdicts()


def test_client_fails_before_any_verdict(fusebox):
    # The test fails on the client's own error: the trace is kept all the same.
    fusebox.use(os.path.join(SRC, "scenarios/transient/http_503.lua"))
    c = ChatClient(attempts=1)
    try:
        assert c.chat("hello") == "back again"
    finally:
        c.close()


def test_fails_before_using_its_session(fusebox):
    # Nothing reached the session: there is no trace to keep, and the run says so.
    assert fusebox.name == "no such name"

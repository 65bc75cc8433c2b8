"""The httpx client of chat_client.py judged by fusebox through the pytest
plugin, on scenarios of the standard library: every test has its own session
of one shared server (the `fusebox` fixture) and ends with assert_verdicts().
"""
import os

import httpx
import pytest

from chat_client import ChatClient, ChatError
from fusebox_pytest import FuseboxError, FuseboxScenarioError, FuseboxVerdictError

SRC = os.environ.get("FUSEBOX_SRC") or os.path.abspath(os.path.join(os.path.dirname(__file__), "../../.."))


def scenario(rel):
    return os.path.join(SRC, "scenarios", rel)


@pytest.fixture
def client():
    c = ChatClient()
    yield c
    c.close()


def test_429_retry_after_is_honoured(fusebox, client):
    assert fusebox.use(scenario("ratelimit/retry_after_seconds.lua")) == "429 with Retry-After: 2 (seconds) is honoured"
    assert client.chat("hello") == "hello"
    report = fusebox.assert_verdicts()
    verdicts = {v["name"]: v["status"] for v in report["results"][0]["verdicts"]}
    assert verdicts["retry_after_honoured"] == "pass"
    assert verdicts["attempts"] == "pass"
    journal = fusebox.requests()
    assert [r["status"] for r in journal] == [429, 200]
    assert [r["attempt"] for r in journal] == [1, 2]
    assert journal[1]["t_arrive"] - journal[0]["t_end"] >= 1900


def test_503_backoff_grows(fusebox, client):
    fusebox.use(scenario("transient/http_503.lua"))
    assert client.chat("hello") == "back again"
    fusebox.assert_verdicts()


def test_401_is_not_retried(fusebox, client):
    fusebox.use(scenario("permanent/auth_401.lua"))
    with pytest.raises(ChatError) as e:
        client.chat("hello")
    assert e.value.status == 401
    fusebox.assert_verdicts()
    assert len(fusebox.requests()) == 1


def test_dropped_connections_are_retried(fusebox, client):
    fusebox.use(scenario("transient/drop_then_ok.lua"))
    assert client.chat("hello") == "third time lucky"
    fusebox.assert_verdicts()


def test_anthropic_529_through_anthropic_base_url(fusebox):
    assert os.environ["ANTHROPIC_BASE_URL"] == fusebox.anthropic_base_url
    fusebox.use(scenario("transient/anthropic_529_overloaded.lua"))
    c = ChatClient(dialect="anthropic")
    try:
        assert c.chat("hello") == "hello from Claude"
    finally:
        c.close()
    fusebox.assert_verdicts()
    assert {r["dialect"] for r in fusebox.requests()} == {"anthropic"}


INLINE = """
return scenario {
  name = "inline: one 500 then ok",
  provider = { fail { status = 500 }, chat { content = "fine" } },
  expect = { attempts = 2 },
}
"""


def test_inline_scenario_and_reset(fusebox, client):
    assert fusebox.use(INLINE) == "inline: one 500 then ok"
    assert client.chat("a") == "fine"
    fusebox.assert_verdicts()
    fusebox.reset()
    assert fusebox.requests() == []
    assert client.chat("a") == "fine"  # a fresh session: the 500 again first
    assert [r["status"] for r in fusebox.requests()] == [500, 200]


def test_bad_scenario_names_file_and_line(fusebox):
    bad = 'return scenario {\n  name = "x",\n  provider = { chat { colour = 1 } },\n}\n'
    with pytest.raises(FuseboxScenarioError, match=r"scenario\.lua:3:"):
        fusebox.use(bad)
    with pytest.raises(FuseboxScenarioError, match=r"400 fusebox_bad_scenario: mine\.lua:3:"):
        fusebox.use(bad, name="mine.lua")
    with pytest.raises(FuseboxError) as e:  # nothing changed: the session was never made
        fusebox.requests()
    assert e.value.type == "fusebox_unknown_session"


ONLY_RETRY_AFTER = """
return scenario {
  name = "inline: a 429 asking for 1 s",
  provider = { fail { status = 429, retry_after = 1 }, chat { content = "ok" } },
  expect = { retry_after_honoured = true },
}
"""


def test_nothing_judged_is_not_a_pass(fusebox):
    fusebox.use(ONLY_RETRY_AFTER)
    c = ChatClient(attempts=1)  # gives up after the 429: no retry to judge
    try:
        with pytest.raises(ChatError):
            c.chat("hello")
    finally:
        c.close()
    with pytest.raises(FuseboxVerdictError, match="never arose") as e:
        fusebox.assert_verdicts()
    assert "n/a retry_after_honoured: 1 response asked for Retry-After, but no retry followed one" in str(e.value)


def test_no_request_fails_exercised(fusebox):
    fusebox.use(scenario("ratelimit/retry_after_seconds.lua"))
    with pytest.raises(FuseboxVerdictError, match="fail exercised: no request reached the scenario"):
        fusebox.assert_verdicts()


def test_sessions_do_not_see_each_other(fusebox, fusebox_server, client):
    fusebox.use(INLINE)
    other = fusebox_server.session(fusebox.name + "-other")
    other.use(INLINE)
    assert client.chat("a") == "fine"
    assert len(fusebox.requests()) == 2
    assert other.requests() == []


def test_the_session_header_joins_from_the_server_root(fusebox, fusebox_server):
    fusebox.use(INLINE)
    with httpx.Client(trust_env=False, headers=fusebox.headers) as h:
        r = h.post(fusebox_server.url + "/v1/chat/completions", json={"m": 1})
    assert r.status_code == 500  # the session's scenario: its first step
    assert [x["status"] for x in fusebox.requests()] == [500]

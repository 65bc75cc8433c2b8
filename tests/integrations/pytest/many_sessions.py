"""300 tests, each with its own session, in one child pytest run by
test_many_sessions.py: more than one server holds (256), so the fixture has
to start a fresh server on the way. Not collected by the normal run.
"""
import json
import os
import urllib.request

import pytest

LUA = 'return scenario { name = "one answer", provider = { chat { content = "ok" } }, expect = { attempts = 1 } }'
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.mark.parametrize("i", range(300))
def test_one_session_each(fusebox, fusebox_server, i):
    fusebox.use(LUA)
    req = urllib.request.Request(os.environ["OPENAI_BASE_URL"] + "/chat/completions",
                                 data=json.dumps({"i": i}).encode(), headers={"Content-Type": "application/json"})
    with OPENER.open(req, timeout=10) as res:
        assert json.load(res)["choices"][0]["message"]["content"] == "ok"
    fusebox.assert_verdicts()
    print("PORT", fusebox_server.port)

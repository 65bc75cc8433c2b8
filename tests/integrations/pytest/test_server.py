"""The Server class against a real fusebox serve --control: a control token,
a restart, a clean stop, and a dead server named in the error."""
import pytest

import fusebox_pytest as fp


def test_token_is_sent_and_needed():
    with fp.Server(token="s3cret-token") as srv:
        assert srv.health()["ok"] is True
        bare = fp._Http(srv.url)  # no token
        with pytest.raises(fp.FuseboxError) as e:
            bare.call("GET", "/__fusebox/health")
        assert e.value.status == 401 and e.value.type == "fusebox_unauthorized"
        assert "s3cret-token" not in srv.stderr()


def test_restart_gives_a_fresh_server():
    srv = fp.Server().start()
    try:
        s = srv.session("before")
        s.use('return scenario { name = "x", provider = { chat {} } }')
        assert "before" in srv.health()["sessions"]
        old = srv.port
        srv.restart()
        assert srv.port != old and srv.names == set()
        assert srv.health()["sessions"] == ["default"]
    finally:
        assert srv.stop() == 0


def test_a_dead_server_is_named_in_the_error():
    srv = fp.Server().start()
    s = srv.session("gone")
    srv.proc.kill()
    srv.proc.wait()
    with pytest.raises(fp.FuseboxError, match=r"the server exited with status -9"):
        s.requests()

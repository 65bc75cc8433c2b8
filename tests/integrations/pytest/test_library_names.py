"""Library names in use(): resolved by the server's binary (fusebox which),
an existing path winning, an unknown name refused with the library named
and a near one suggested, a folder refused."""
import os

import pytest

import fusebox_pytest as fp

GOOD = "429 with Retry-After: 2 (seconds) is honoured"


def test_a_name_resolves_to_the_library_file():
    path = fp.resolve_scenario("ratelimit/retry_after_seconds")
    assert path.endswith("/scenarios/ratelimit/retry_after_seconds.lua") and os.path.isfile(path)
    # NAME.lua and the old path below the library resolve alike.
    assert fp.resolve_scenario("ratelimit/retry_after_seconds.lua") == path
    assert fp.resolve_scenario("scenarios/ratelimit/retry_after_seconds.lua").endswith(
        "/scenarios/ratelimit/retry_after_seconds.lua")


def test_use_takes_a_name(fusebox):
    assert fusebox.use("ratelimit/retry_after_seconds") == GOOD


def test_an_existing_path_wins(fusebox, tmp_path, monkeypatch):
    (tmp_path / "ratelimit").mkdir()
    (tmp_path / "ratelimit" / "retry_after_seconds").write_text(
        'return scenario { name = "the local one", provider = { chat {} } }')
    monkeypatch.chdir(tmp_path)
    assert fusebox.use("ratelimit/retry_after_seconds") == "the local one"


def test_an_unknown_name_is_refused_with_a_guess(fusebox):
    with pytest.raises(fp.FuseboxScenarioError) as e:
        fusebox.use("ratelimit/retry_after_secnds")
    msg = str(e.value)
    assert "no scenario or file named ratelimit/retry_after_secnds (library: " in msg
    assert "did you mean ratelimit/retry_after_seconds?" in msg


def test_a_folder_is_refused(fusebox):
    with pytest.raises(fp.FuseboxScenarioError, match=r"ratelimit is a folder of \d+ scenarios"):
        fusebox.use("ratelimit")

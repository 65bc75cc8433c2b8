"""More tests than one server holds sessions: many_sessions.py's 300 tests
all pass in a child pytest, on more than one server in turn."""
import os
import re
import subprocess
import sys

import fusebox_pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PLUGIN = os.path.dirname(os.path.abspath(fusebox_pytest.__file__))


def test_three_hundred_sessions(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (PLUGIN, HERE, env.get("PYTHONPATH")) if p)
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "fusebox_pytest", "-p", "no:cacheprovider", "-s", "-q",
         "--fusebox-keep", str(tmp_path / "kept"), "--rootdir", HERE, os.path.join(HERE, "many_sessions.py")],
        cwd=str(tmp_path), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300,
    )
    assert p.returncode == 0, p.stdout[-3000:]
    assert "300 passed" in p.stdout, p.stdout[-3000:]
    ports = re.findall(r"PORT (\d+)", p.stdout)
    assert len(ports) == 300
    runs = [ports[0]] + [b for a, b in zip(ports, ports[1:]) if a != b]
    assert len(runs) == 2, runs  # 200 sessions on the first server, 100 on the next
    assert ports.count(runs[0]) == fusebox_pytest.SESSIONS_PER_SERVER

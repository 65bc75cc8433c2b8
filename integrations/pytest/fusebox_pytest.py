"""fusebox_pytest - a pytest plugin: one fusebox server per pytest session,
one fusebox session per test.

Load it with ``-p fusebox_pytest`` (its folder on PYTHONPATH) or with
``pytest_plugins = ["fusebox_pytest"]`` in a conftest.py. The plugin starts
``fusebox serve --control --port 0`` once (the binary from ``--fusebox-bin``,
else ``$FUSEBOX_BIN``, else the one the wheel installed next to this module,
else ``fusebox`` on PATH) when a test first asks for it, and stops it at the
end of the pytest session. Installed from the wheel, the plugin is loaded by
its ``pytest11`` entry point, with no ``-p``.

The ``fusebox`` fixture gives each test its own session on that server (named
after the test), points the usual base-URL variables at it for the test's
duration, and offers ``use()``, ``requests()``, ``report()``,
``assert_verdicts()``, ``reset()`` and ``trace()``. When a test fails, its
session's trace is kept in ``--fusebox-keep DIR`` (default ``.fusebox/failed``
under the rootdir) and the path is printed at the end of the run.

The full API is in docs/integrations.md. Only the standard library is used.
"""

import hashlib
import json
import os
import re
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest

__all__ = [
    "resolve_scenario",
    "FuseboxError",
    "FuseboxScenarioError",
    "FuseboxVerdictError",
    "Server",
    "Session",
    "session_name",
    "format_verdicts",
    "check_verdicts",
]

NAME_RE = re.compile(r"^[A-Za-z0-9._-]{1,64}$")
START_TIMEOUT = 15.0  # seconds to wait for the "port N" line
HTTP_TIMEOUT = 30.0  # seconds for one control request
STOP_TIMEOUT = 10.0  # seconds between SIGINT and SIGKILL
MAX_EVIDENCE = 2000  # characters of one verdict's evidence in a message
# A server holds a bounded number of sessions (256, `default` included) and
# none is ever deleted: after this many the fixture starts a fresh server.
SESSIONS_PER_SERVER = 200


class FuseboxError(Exception):
    """The server could not be started or a control request failed."""


class FuseboxScenarioError(FuseboxError):
    """The server refused a scenario (the message has file:line)."""


class FuseboxVerdictError(AssertionError):
    """A session's verdicts did not hold (or none applied)."""


def session_name(test_id, default="test"):
    """A valid session name (1..64 of [A-Za-z0-9._-]) for a test id.

    The readable part is the test's own name (what follows the last ``::``)
    with other characters turned into ``_``; a hash of the whole id is
    appended so that two tests never share a session.
    """
    tail = test_id.rsplit("::", 1)[-1]
    readable = re.sub(r"[^A-Za-z0-9._-]+", "_", tail).strip("_.-") or default
    digest = hashlib.sha1(test_id.encode("utf-8")).hexdigest()[:8]
    return readable[: 64 - 1 - len(digest)] + "-" + digest


def _clip(text, limit=MAX_EVIDENCE):
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[:limit] + " ... (%d more characters)" % (len(text) - limit)


def format_verdicts(verdicts, indent="  "):
    """One line per verdict: ``status name: evidence``."""
    lines = []
    for v in verdicts:
        lines.append("%s%s %s: %s" % (indent, v.get("status", "?"), v.get("name", "?"), _clip(v.get("evidence"))))
    return "\n".join(lines)


def check_verdicts(report, session="default"):
    """Judges a report as assert_verdicts does.

    Returns None when every result passed with at least one verdict that
    applied, else the message of the failure: the failed verdicts with their
    evidence, an error, or the news that nothing applied (every verdict n/a:
    the scenario's situation never arose).
    """
    results = report.get("results") if isinstance(report, dict) else None
    if not results:
        return "fusebox session %s: the report has no result (was a scenario used?)" % session
    problems = []
    for r in results:
        name = r.get("name") or r.get("file") or "?"
        verdicts = r.get("verdicts") or []
        status = r.get("status")
        if status == "error" or r.get("error"):
            problems.append("scenario %r could not be judged: %s" % (name, r.get("error") or "error"))
            continue
        failed = [v for v in verdicts if v.get("status") == "fail"]
        if failed or status == "fail":
            problems.append(
                "scenario %r: %d of %d verdicts failed\n%s"
                % (name, len(failed), len(verdicts), format_verdicts(failed))
            )
            continue
        if status != "pass":
            why = (
                "no verdict applied (every verdict n/a): the situation the scenario "
                "sets up never arose, so nothing was judged"
            )
            if r.get("arrivals") == 0:
                why += " - no request reached this session"
            problems.append(
                "scenario %r: %s\n%s" % (name, why, format_verdicts(verdicts) or "  (no verdicts)")
            )
    if not problems:
        return None
    return "fusebox session %s:\n%s" % (session, "\n".join(problems))


class _Http:
    """Control requests to one server, ignoring any proxy settings."""

    def __init__(self, url, token=None, why_down=lambda: ""):
        self.url = url.rstrip("/")
        self.token = token
        self.why_down = why_down  # says so when the server has exited
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def call(self, method, path, query=None, body=None, headers=None, raw=False):
        url = self.url + path
        if query:
            url += "?" + urllib.parse.urlencode(query)
        req = urllib.request.Request(url, data=body, method=method)
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        for k, v in (headers or {}).items():
            req.add_header(k, v)
        try:
            with self.opener.open(req, timeout=HTTP_TIMEOUT) as res:
                data = res.read()
        except urllib.error.HTTPError as e:
            data = e.read()
            raise _error_from(e.code, method, path, data) from None
        except (urllib.error.URLError, OSError) as e:
            raise FuseboxError("fusebox control %s %s: %s%s" % (method, path, e, self.why_down())) from None
        if raw:
            return data.decode("utf-8", "replace")
        try:
            return json.loads(data.decode("utf-8"))
        except ValueError:
            raise FuseboxError("fusebox control %s %s: the answer is not JSON: %r" % (method, path, data[:200])) from None


def _error_from(code, method, path, data):
    kind, message = "", data.decode("utf-8", "replace").strip()
    try:
        err = json.loads(data.decode("utf-8"))["error"]
        kind, message = err.get("type", ""), err.get("message", message)
    except (ValueError, KeyError, TypeError, AttributeError):
        pass
    cls = FuseboxScenarioError if kind == "fusebox_bad_scenario" else FuseboxError
    e = cls("fusebox control %s %s: %d %s: %s" % (method, path, code, kind or "error", message))
    e.status, e.type, e.detail = code, kind, message
    return e


# A library name, as `fusebox which` takes it: "ratelimit/retry_after_seconds".
LIBRARY_NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._/-]{0,255}$")


def packaged_bin():
    """The binary shipped next to this module (the wheel's
    ``fusebox_dist/bin/fusebox``), or None."""
    p = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fusebox_dist", "bin", "fusebox")
    return p if os.access(p, os.X_OK) else None


def default_bin():
    """``$FUSEBOX_BIN``, else the packaged binary, else ``fusebox`` on PATH."""
    return os.environ.get("FUSEBOX_BIN") or packaged_bin() or "fusebox"


def resolve_scenario(name, bin=None):
    """The file a library name stands for, as the program resolves it
    (``fusebox which NAME``): ``ratelimit/retry_after_seconds`` is
    ``scenarios/ratelimit/retry_after_seconds.lua`` of the library the
    binary found. Raises FuseboxScenarioError when it names nothing or a
    folder of several scenarios."""
    exe = bin or default_bin()
    try:
        r = subprocess.run([exe, "which", name], stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=HTTP_TIMEOUT)
    except OSError as e:
        raise FuseboxError(
            "fusebox: cannot start %s: %s (set FUSEBOX_BIN or put fusebox on PATH)" % (exe, e.strerror)
        ) from None
    files = [l for l in r.stdout.splitlines() if l]
    if r.returncode != 0:
        raise FuseboxScenarioError(r.stderr.strip() or "fusebox which %s: exit %d" % (name, r.returncode))
    if len(files) != 1:
        raise FuseboxScenarioError(
            "fusebox: %s is a folder of %d scenarios; use() plays one (e.g. %s)"
            % (name, len(files), files[0] if files else name)
        )
    return files[0]


def _read_scenario(scenario, bin=None):
    """(text, file name) of a path, a library name or Lua text."""
    if isinstance(scenario, str) and "\n" not in scenario and not os.path.exists(scenario) \
            and LIBRARY_NAME_RE.match(scenario.strip()) and ".." not in scenario:
        scenario = resolve_scenario(scenario.strip(), bin)
    if isinstance(scenario, os.PathLike) or (
        isinstance(scenario, str) and "\n" not in scenario
        and (scenario.strip().endswith(".lua") or os.path.isfile(scenario))
    ):
        path = os.fspath(scenario)
        try:
            with open(path, "rb") as f:
                return f.read(), os.path.basename(path)
        except OSError as e:
            raise FuseboxError("fusebox: cannot read the scenario %s: %s" % (path, e.strerror)) from None
    if isinstance(scenario, bytes):
        return scenario, "scenario.lua"
    return str(scenario).encode("utf-8"), "scenario.lua"


class Session:
    """One session of a server: its own scenario, counters, journal, report."""

    def __init__(self, server, name):
        if not NAME_RE.match(name):
            raise FuseboxError("fusebox: bad session name %r (1..64 of A-Za-z0-9._-)" % name)
        self.server = server
        self.name = name
        self.url = "%s/__session/%s" % (server.url, name)  # the session's root
        self.openai_base_url = self.url + "/v1"
        self.anthropic_base_url = self.url
        self.env = {
            "OPENAI_BASE_URL": self.openai_base_url,
            "ANTHROPIC_BASE_URL": self.anthropic_base_url,
            "GROQ_BASE_URL": self.url,
            "GOOGLE_GEMINI_BASE_URL": self.url,
            "FUSEBOX_URL": self.url,
            "FUSEBOX_EFFECT_URL": self.url + "/v1/effects/send_email",
            "FUSEBOX_SESSION": name,
        }
        # For a client that keeps the server's own base URL: this header on
        # a provider request puts it in the session all the same.
        self.headers = {"X-Fusebox-Session": name}
        self.placeholder_keys = {
            "OPENAI_API_KEY": "sk-fusebox-placeholder",
            "ANTHROPIC_API_KEY": "sk-ant-fusebox-placeholder",
            "GROQ_API_KEY": "gsk_fusebox_placeholder",
            "GEMINI_API_KEY": "fusebox-placeholder",
        }

    def _q(self, **extra):
        q = {"session": self.name}
        q.update(extra)
        return q

    def use(self, scenario, name=None):
        """Plays a scenario (a path, a library name, or Lua text) in this
        session from now on.

        A path is a Path, or a one-line str that names a file (relative to
        the current directory) or ends in .lua. A one-line str that names no
        file and looks like a name (``ratelimit/retry_after_seconds``) is a
        scenario of the standard library, resolved by the server's binary as
        ``fusebox which`` does (an existing path wins); anything else is Lua
        text.

        The session starts afresh. Returns the scenario's name. A scenario
        the server refuses raises FuseboxScenarioError with its file:line.
        """
        text, fname = _read_scenario(scenario, self.server.bin)
        res = self.server.http.call(
            "PUT", "/__fusebox/scenario", self._q(name=name or fname), body=text,
            headers={"Content-Type": "text/x-lua"},
        )
        return res.get("scenario")

    def reset(self):
        """Starts the session afresh with the same scenario."""
        self.server.http.call("POST", "/__fusebox/reset", self._q(), body=b"")

    def _journal(self):
        return self.server.http.call("GET", "/__fusebox/requests", self._q()).get("requests", [])

    def requests(self):
        """The session's journal: a list of dicts, one per arrival, once no
        request is in flight (see settle)."""
        self.settle()
        return self._journal()

    def settle(self, timeout=2.0):
        """Waits (at most timeout seconds) until no request of the session is
        in flight. A client can read the last byte of an answer a moment
        before the server records that request's end, so a report taken
        right after the client returns could miss its last answer."""
        deadline = time.monotonic() + timeout
        while any(r.get("t_end") is None for r in self._journal()):
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True

    def report(self):
        """The session's report, as ``fusebox report --json`` writes it,
        once no request is in flight (see settle)."""
        self.settle()
        return self.server.http.call("GET", "/__fusebox/report", self._q())

    def verdicts(self):
        """Every verdict of the report, flattened: dicts with name, status, evidence."""
        return [v for r in self.report().get("results", []) for v in r.get("verdicts", [])]

    def trace(self):
        """The session's trace lines (NDJSON text)."""
        return self.server.http.call("GET", "/__fusebox/trace", self._q(), raw=True)

    def assert_verdicts(self):
        """Raises FuseboxVerdictError unless every verdict held and one applied.

        The message names each failed verdict with its evidence; a session
        whose verdicts are all n/a (the scenario's situation never arose)
        fails too and says so.
        """
        __tracebackhide__ = True
        report = self.report()
        msg = check_verdicts(report, self.name)
        if msg is not None:
            raise FuseboxVerdictError(msg)
        return report


class Server:
    """A ``fusebox serve --control`` process on a free loopback port."""

    def __init__(self, bin=None, args=(), token=None):
        self.bin = bin or default_bin()
        self.args = list(args)
        self.token = token
        self.proc = None
        self.port = None
        self.url = None
        self.http = None
        self._out = []
        self._err = []
        self._head = []  # the first lines of stderr: an error before a usage text
        self.names = set()  # sessions handed out by this server process

    def start(self):
        """Starts the server and waits for its port; raises FuseboxError."""
        cmd = [self.bin, "serve", "--control", "--port", "0"] + self.args
        if self.token:
            cmd += ["--control-token", self.token]
        try:
            self.proc = subprocess.Popen(
                cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE
            )
        except OSError as e:
            raise FuseboxError(
                "fusebox: cannot start %s: %s (set FUSEBOX_BIN or put fusebox on PATH)" % (self.bin, e.strerror)
            ) from None
        got_port = threading.Event()

        def drain_out():
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self._out.append(line)
                m = re.match(r"^port (\d+)$", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    got_port.set()
            got_port.set()

        def drain_err():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                if len(self._head) < 10:
                    self._head.append(line)
                self._err.append(line)
                del self._err[:-50]

        threading.Thread(target=drain_out, daemon=True).start()
        err_reader = threading.Thread(target=drain_err, daemon=True)
        err_reader.start()
        got_port.wait(START_TIMEOUT)
        if self.port is None:
            self.stop()
            err_reader.join(5)  # its last words, read to the end
            raise FuseboxError(
                "fusebox: %s printed no 'port N' line (exit status %s): %s"
                % (" ".join(cmd), self.proc.returncode, self._error_line())
            )
        self.url = "http://127.0.0.1:%d" % self.port
        self.http = _Http(self.url, self.token, self._why_down)
        return self

    def _error_line(self):
        """What the server said was wrong: the lines before its usage text
        when it printed one (a bad option or scenario), else its last lines."""
        for i, line in enumerate(self._head):
            if line.startswith("usage: "):
                said = [l for l in self._head[:i] if l.strip()]
                if said:
                    return " | ".join(said)
        return " | ".join(self._err[-5:]) or "no message"

    def _why_down(self):
        if self.proc is None or self.proc.poll() is None:
            return ""
        return " (the server exited with status %s: %s)" % (
            self.proc.returncode, self._error_line())

    def health(self):
        return self.http.call("GET", "/__fusebox/health")

    def session(self, name):
        """A Session object for NAME (the server creates it on first use)."""
        s = Session(self, name)
        self.names.add(name)
        return s

    def restart(self):
        """Stops the server and starts a fresh one (a new port, no sessions)."""
        self.stop()
        self.proc = self.port = self.url = self.http = None
        self._out, self._err, self._head, self.names = [], [], [], set()
        return self.start()

    def stderr(self):
        """The last lines the server wrote to stderr."""
        return "\n".join(self._err)

    def stop(self):
        """Stops the server (SIGINT, then SIGKILL); returns its exit status."""
        p = self.proc
        if p is None or p.poll() is not None:
            return None if p is None else p.returncode
        p.send_signal(2)
        try:
            return p.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
            return p.wait()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()


# ---- pytest wiring ----------------------------------------------------------

def pytest_addoption(parser):
    g = parser.getgroup("fusebox")
    g.addoption("--fusebox-bin", default=None, help="the fusebox binary (default: $FUSEBOX_BIN, else the one installed with this plugin, else fusebox on PATH)")
    g.addoption(
        "--fusebox-keep", default=None, metavar="DIR",
        help="keep the trace of each failed test's session in DIR (default: $FUSEBOX_KEEP, else .fusebox/failed under the rootdir)",
    )
    g.addoption(
        "--fusebox-arg", action="append", default=[], metavar="ARG",
        help="one more argument for fusebox serve (repeat), e.g. --fusebox-arg=--seed=7",
    )


def pytest_configure(config):
    config._fusebox_kept = []


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, "_fusebox_rep_" + rep.when, rep)


def pytest_terminal_summary(terminalreporter, config):
    kept = getattr(config, "_fusebox_kept", [])
    if not kept:
        return
    terminalreporter.section("fusebox")
    for what, path, why in kept:
        if path:
            terminalreporter.write_line("trace of %s kept in %s" % (what, path))
        elif what == "the fusebox server":
            terminalreporter.write_line("%s: %s" % (what, why), red=True)
        else:
            terminalreporter.write_line("trace of %s not kept: %s" % (what, why))


@pytest.fixture(scope="session")
def fusebox_server(request):
    """The pytest session's fusebox server (started on first use)."""
    cfg = request.config
    server = Server(bin=cfg.getoption("--fusebox-bin"), args=cfg.getoption("--fusebox-arg"))
    server.start()
    yield server
    rc = server.stop()
    if rc not in (0, None):  # a crash or a sanitizer report: say so at the end
        cfg._fusebox_kept.append(("the fusebox server", None, "it exited with status %s: %s" % (
            rc, " | ".join(server.stderr().splitlines()[-5:]) or "no message")))


def _keep_dir(config):
    d = config.getoption("--fusebox-keep") or os.environ.get("FUSEBOX_KEEP")
    if d:
        return os.path.abspath(d)
    return os.path.join(str(config.rootpath), ".fusebox", "failed")


@pytest.fixture
def fusebox(request, fusebox_server, monkeypatch):
    """This test's own session, with the base-URL variables pointing at it."""
    if len(fusebox_server.names) >= SESSIONS_PER_SERVER:
        fusebox_server.restart()
    s = fusebox_server.session(session_name(request.node.nodeid))
    for k, v in s.env.items():
        monkeypatch.setenv(k, v)
    for k, v in s.placeholder_keys.items():
        if k not in os.environ:
            monkeypatch.setenv(k, v)
    yield s
    item = request.node
    failed = any(
        getattr(getattr(item, "_fusebox_rep_" + w, None), "failed", False) for w in ("setup", "call")
    )
    if not failed:
        return
    d = _keep_dir(request.config)
    path = os.path.join(d, s.name + ".jsonl")
    try:
        text = s.trace()
        os.makedirs(d, exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except (FuseboxError, OSError) as e:
        why = str(e)
        if getattr(e, "type", None) == "fusebox_unknown_session":
            why = "the test used no scenario and sent no request in session %s" % s.name
        request.config._fusebox_kept.append((item.nodeid, None, why))
        return
    item.user_properties.append(("fusebox_trace", path))
    request.config._fusebox_kept.append((item.nodeid, path, None))

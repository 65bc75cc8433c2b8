// fusebox.mjs - drive a `fusebox serve --control` server from a Node test
// suite (node:test, vitest, Jest): one server per suite, one session per test.
//
//   import { startFusebox } from './fusebox.mjs';
//   const fb = await startFusebox();                 // FUSEBOX_BIN, the npm package's binary, or PATH
//   const s = fb.session('my-test');                 // 1..64 of [A-Za-z0-9._-]
//   await s.use('ratelimit/retry_after_seconds');    // a library name, a path or Lua text
//   const client = new OpenAI({ baseURL: s.env.OPENAI_BASE_URL, apiKey: 'x' });
//   ... make calls ...
//   await s.assertVerdicts();                        // throws AssertionError
//   await fb.stop();
//
// No dependency beyond Node 20 (child_process, fetch, assert). The full API
// is in docs/integrations.md.

import { execFile, spawn } from 'node:child_process';
import { AssertionError } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';

const NAME_RE = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_EVIDENCE = 2000; // characters of one verdict's evidence in a message

/** The server could not start, or a control request failed. */
export class FuseboxError extends Error {
  constructor(message, { status, type, detail } = {}) {
    super(message);
    this.name = 'FuseboxError';
    this.status = status;
    this.type = type;
    this.detail = detail;
  }
}

/**
 * A valid session name for a test name: the name with other characters
 * turned into `_`, cut to fit, plus a hash of the whole name so two tests
 * never share a session.
 */
export function sessionName(testName, fallback = 'test') {
  const s = String(testName ?? '');
  const readable = s.replace(/[^A-Za-z0-9._-]+/g, '_').replace(/^[_.-]+|[_.-]+$/g, '') || fallback;
  const digest = createHash('sha1').update(s).digest('hex').slice(0, 8);
  return `${readable.slice(0, 64 - 1 - digest.length)}-${digest}`;
}

function clip(text, limit = MAX_EVIDENCE) {
  const t = text == null ? '' : String(text);
  return t.length <= limit ? t : `${t.slice(0, limit)} ... (${t.length - limit} more characters)`;
}

/** One line per verdict: `status name: evidence`. */
export function formatVerdicts(verdicts, indent = '  ') {
  return verdicts.map((v) => `${indent}${v.status ?? '?'} ${v.name ?? '?'}: ${clip(v.evidence)}`).join('\n');
}

/**
 * Judges a report as assertVerdicts does: null when every result passed with
 * at least one verdict that applied, else the failure's message (the failed
 * verdicts with their evidence, an error, or the news that nothing applied).
 */
export function checkVerdicts(report, session = 'default') {
  const results = report && Array.isArray(report.results) ? report.results : [];
  if (results.length === 0) return `fusebox session ${session}: the report has no result (was a scenario used?)`;
  const problems = [];
  for (const r of results) {
    const name = r.name || r.file || '?';
    const verdicts = r.verdicts || [];
    if (r.status === 'error' || r.error) {
      problems.push(`scenario '${name}' could not be judged: ${r.error || 'error'}`);
      continue;
    }
    const failed = verdicts.filter((v) => v.status === 'fail');
    if (failed.length > 0 || r.status === 'fail') {
      problems.push(`scenario '${name}': ${failed.length} of ${verdicts.length} verdicts failed\n${formatVerdicts(failed)}`);
      continue;
    }
    if (r.status !== 'pass') {
      let why = 'no verdict applied (every verdict n/a): the situation the scenario sets up never arose, so nothing was judged';
      if (r.arrivals === 0) why += ' - no request reached this session';
      problems.push(`scenario '${name}': ${why}\n${formatVerdicts(verdicts) || '  (no verdicts)'}`);
    }
  }
  return problems.length ? `fusebox session ${session}:\n${problems.join('\n')}` : null;
}

// A library name, as `fusebox which` takes it: 'ratelimit/retry_after_seconds'.
const LIBRARY_NAME_RE = /^[A-Za-z0-9_][A-Za-z0-9._/-]{0,255}$/;

/**
 * The fusebox binary: $FUSEBOX_BIN, else $FUSEBOX_BINARY, else the one of
 * the platform package (fusebox-linux-x64, an optional dependency of the
 * npm package), else `fusebox` on PATH.
 */
export function defaultBin() {
  if (process.env.FUSEBOX_BIN) return process.env.FUSEBOX_BIN;
  if (process.env.FUSEBOX_BINARY) return process.env.FUSEBOX_BINARY;
  try {
    const p = createRequire(import.meta.url).resolve(`fusebox-${process.platform}-${process.arch}/bin/fusebox`);
    if (existsSync(p)) return p;
  } catch { /* not installed: PATH */ }
  return 'fusebox';
}

/**
 * The file a library name stands for, as the program resolves it
 * (`fusebox which NAME`): 'ratelimit/retry_after_seconds' is
 * scenarios/ratelimit/retry_after_seconds.lua of the library the binary
 * found. Rejects when it names nothing or a folder of several scenarios.
 */
export function resolveScenario(name, bin = defaultBin()) {
  return new Promise((resolve, reject) => {
    execFile(bin, ['which', name], { timeout: 30000 }, (err, stdout, stderr) => {
      if (err && err.code === 'ENOENT') {
        reject(new FuseboxError(`fusebox: cannot start ${bin}: ${err.message} (set FUSEBOX_BIN or put fusebox on PATH)`));
        return;
      }
      const files = String(stdout).split('\n').filter(Boolean);
      if (err) reject(new FuseboxError(String(stderr).trim() || `fusebox which ${name}: ${err.message}`, { type: 'fusebox_bad_scenario' }));
      else if (files.length !== 1) reject(new FuseboxError(`fusebox: ${name} is a folder of ${files.length} scenarios; use() plays one (e.g. ${files[0] || name})`, { type: 'fusebox_bad_scenario' }));
      else resolve(files[0]);
    });
  });
}

async function readScenario(scenario, bin) {
  // A one-line string that names no file and looks like a name: the library's.
  if (typeof scenario === 'string' && !scenario.includes('\n') && !existsSync(scenario)
      && LIBRARY_NAME_RE.test(scenario.trim()) && !scenario.includes('..')) {
    scenario = await resolveScenario(scenario.trim(), bin);
  }
  // A path: a URL, or a one-line string that ends in .lua or names a file.
  if (scenario instanceof URL || (typeof scenario === 'string' && !scenario.includes('\n')
      && (scenario.trim().endsWith('.lua') || existsSync(scenario)))) {
    try {
      return { text: await readFile(scenario), file: path.basename(scenario instanceof URL ? scenario.pathname : scenario) };
    } catch (e) {
      throw new FuseboxError(`fusebox: cannot read the scenario ${scenario}: ${e.message}`);
    }
  }
  return { text: String(scenario), file: 'scenario.lua' };
}

class Session {
  constructor(server, name) {
    if (!NAME_RE.test(name)) throw new FuseboxError(`fusebox: bad session name '${name}' (1..64 of A-Za-z0-9._-)`);
    this.server = server;
    this.name = name;
    this.url = `${server.url}/__session/${name}`; // the session's root
    this.openaiBaseURL = `${this.url}/v1`;
    this.anthropicBaseURL = this.url;
    this.env = {
      OPENAI_BASE_URL: this.openaiBaseURL,
      ANTHROPIC_BASE_URL: this.anthropicBaseURL,
      GROQ_BASE_URL: this.url,
      GOOGLE_GEMINI_BASE_URL: this.url,
      FUSEBOX_URL: this.url,
      FUSEBOX_EFFECT_URL: `${this.url}/v1/effects/send_email`,
      FUSEBOX_SESSION: name,
    };
    // For a client that keeps the server's own base URL: this header on a
    // provider request puts it in the session all the same.
    this.headers = { 'X-Fusebox-Session': name };
  }

  #call(method, what, opts = {}) {
    return this.server.control(method, what, { ...opts, query: { session: this.name, ...(opts.query || {}) } });
  }

  /**
   * Plays a scenario in this session from now on; returns its name. A path
   * (a URL, or a one-line string naming a file or ending in .lua), a
   * library name ('ratelimit/retry_after_seconds', resolved by the server's
   * binary as `fusebox which` does; an existing path wins), or Lua text.
   */
  async use(scenario, { name } = {}) {
    const { text, file } = await readScenario(scenario, this.server.bin);
    const res = await this.#call('PUT', 'scenario', {
      query: { name: name || file }, body: text, headers: { 'content-type': 'text/x-lua' },
    });
    return res.scenario;
  }

  /** Starts the session afresh with the same scenario. */
  async reset() {
    await this.#call('POST', 'reset', { body: '' });
  }

  async #journal() {
    return (await this.#call('GET', 'requests')).requests || [];
  }

  /** The session's journal: one object per arrival, once no request is in
      flight (see settle). */
  async requests() {
    await this.settle();
    return this.#journal();
  }

  /**
   * Waits (at most timeoutMs) until no request of the session is in flight;
   * resolves to false on timeout. A client can read the last byte of an
   * answer a moment before the server records that request's end, so a
   * report taken right after the client returns could miss its last answer.
   */
  async settle(timeoutMs = 2000) {
    const deadline = Date.now() + timeoutMs;
    while ((await this.#journal()).some((r) => r.t_end === null || r.t_end === undefined)) {
      if (Date.now() >= deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return true;
  }

  /** The session's report, as `fusebox report --json` writes it, once no
      request is in flight (see settle). */
  async report() {
    await this.settle();
    return this.#call('GET', 'report');
  }

  /** Every verdict of the report, flattened. */
  async verdicts() {
    return ((await this.report()).results || []).flatMap((r) => r.verdicts || []);
  }

  /** The session's trace lines (NDJSON text). */
  trace() {
    return this.#call('GET', 'trace', { raw: true });
  }

  /** Writes the session's trace to FILE (folders created); returns FILE. */
  async saveTrace(file) {
    const text = await this.trace();
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, text);
    return file;
  }

  /**
   * Keeps the session's trace in the server's `keep` folder as NAME.jsonl
   * (for a test that failed); resolves to its path, or null when `keep` is
   * null or the session was never used (no scenario, no request).
   */
  async keepTrace() {
    if (!this.server.keep) return null;
    try {
      return await this.saveTrace(path.resolve(this.server.keep, `${this.name}.jsonl`));
    } catch (e) {
      if (e instanceof FuseboxError && e.type === 'fusebox_unknown_session') return null; // never used
      throw e;
    }
  }

  /**
   * Throws an AssertionError unless every verdict held and one applied. The
   * message names each failed verdict with its evidence; a session whose
   * verdicts are all n/a fails too and says so. Before throwing, the trace
   * is kept (keepTrace) and the message says where. Resolves to the report.
   */
  async assertVerdicts() {
    const report = await this.report();
    let msg = checkVerdicts(report, this.name);
    if (msg === null) return report;
    try {
      const file = await this.keepTrace();
      if (file) msg += `\ntrace kept in ${file}`;
    } catch (e) {
      msg += `\ntrace not kept: ${e.message}`;
    }
    throw new AssertionError({ message: msg, operator: 'fail' }); // as assert.fail: Jest prints just the message
  }
}

function errorFrom(status, method, what, text) {
  let type = '';
  let message = text.trim();
  try {
    const e = JSON.parse(text).error;
    type = e.type || '';
    message = e.message ?? message;
  } catch { /* not JSON: keep the text */ }
  return new FuseboxError(`fusebox control ${method} /__fusebox/${what}: ${status} ${type || 'error'}: ${message}`,
    { status, type, detail: message });
}

/**
 * Starts `fusebox serve --control --port 0 ARGS...` and resolves when it
 * printed its port. Options: bin (default: defaultBin()),
 * args (more serve arguments), token (a control token), keep (where
 * assertVerdicts keeps failed sessions' traces; default $FUSEBOX_KEEP, else
 * .fusebox/failed; null: nowhere), startTimeoutMs (default 15000).
 */
export async function startFusebox({ bin, args = [], token, keep, startTimeoutMs = 15000 } = {}) {
  const exe = bin || defaultBin();
  const argv = ['serve', '--control', '--port', '0', ...args];
  if (token) argv.push('--control-token', token);
  const child = spawn(exe, argv, { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr = [];
  const head = []; // the first lines: an error printed before a usage text
  let partial = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d) => {
    const lines = (partial + d).split('\n');
    partial = lines.pop();
    for (const l of lines) if (head.length < 10) head.push(l);
    stderr.push(...lines.filter(Boolean));
    stderr.splice(0, Math.max(0, stderr.length - 50));
  });
  // What the server said was wrong: the lines before its usage text when it
  // printed one (a bad option or scenario), else its last lines.
  const errorLine = () => {
    const u = head.findIndex((l) => l.startsWith('usage: '));
    const said = u > 0 ? head.slice(0, u).filter((l) => l.trim()) : [];
    if (said.length) return said.join(' | ');
    const last = partial ? [...stderr, partial] : stderr;
    return last.slice(-5).join(' | ') || 'no message';
  };
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const port = await new Promise((resolve, reject) => {
    let buf = '';
    let done = false;
    const finish = (err, p) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err); else resolve(p);
    };
    const why = errorLine;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      finish(new FuseboxError(`fusebox: ${exe} printed no 'port N' line in ${startTimeoutMs} ms: ${why()}`));
    }, startTimeoutMs);
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      buf += d;
      const m = /^port (\d+)$/m.exec(buf);
      if (m) finish(null, Number(m[1]));
      if (buf.length > 65536) buf = buf.slice(-4096);
    });
    child.on('error', (e) => finish(new FuseboxError(`fusebox: cannot start ${exe}: ${e.message} (set FUSEBOX_BIN or put fusebox on PATH)`)));
    // 'close': exited and its stderr read to the end.
    child.on('close', (code, sig) => finish(new FuseboxError(`fusebox: ${exe} ${argv.join(' ')} exited (${sig || code}) before printing its port: ${why()}`)));
  }).catch((e) => {
    process.removeListener('exit', killOnExit);
    throw e;
  });

  const exited = new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode ?? child.signalCode);
    else child.once('exit', (code, sig) => resolve(code ?? sig));
  });
  const url = `http://127.0.0.1:${port}`;
  const server = {
    url,
    port,
    bin: exe,
    process: child,
    keep: keep === undefined ? (process.env.FUSEBOX_KEEP || '.fusebox/failed') : keep,
    stderr: () => stderr.join('\n'),

    /** One control request; resolves to parsed JSON (or text with raw). */
    async control(method, what, { query, body, headers = {}, raw = false } = {}) {
      const q = query ? `?${new URLSearchParams(query)}` : '';
      const h = { ...headers };
      if (token) h.authorization = `Bearer ${token}`;
      let res;
      try {
        res = await fetch(`${url}/__fusebox/${what}${q}`, { method, headers: h, body });
      } catch (e) {
        const down = child.exitCode !== null || child.signalCode !== null
          ? ` (the server exited (${child.exitCode ?? child.signalCode}): ${errorLine()})` : '';
        throw new FuseboxError(`fusebox control ${method} /__fusebox/${what}: ${e.cause?.message || e.message}${down}`);
      }
      const text = await res.text();
      if (!res.ok) throw errorFrom(res.status, method, what, text);
      if (raw) return text;
      try {
        return JSON.parse(text);
      } catch {
        throw new FuseboxError(`fusebox control ${method} /__fusebox/${what}: the answer is not JSON: ${text.slice(0, 200)}`);
      }
    },

    health() {
      return server.control('GET', 'health');
    },

    /** A session object for NAME (the server creates it on first use). */
    session(name) {
      return new Session(server, name);
    },

    /** Stops the server (SIGINT, then SIGKILL after 10 s); resolves to its exit status. */
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGINT');
        const t = setTimeout(() => child.kill('SIGKILL'), 10000);
        const r = await exited;
        clearTimeout(t);
        return r;
      }
      return exited;
    },
  };
  return server;
}

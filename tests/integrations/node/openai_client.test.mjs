// The openai-node client of assistant.mjs judged by fusebox through
// integrations/node/fusebox.mjs, on scenarios of the standard library: one
// server for the file, one session per test, assertVerdicts() at the end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFusebox, sessionName, FuseboxError } from '../../../integrations/node/fusebox.mjs';
import { makeClient, ask } from './assistant.mjs';

const src = process.env.FUSEBOX_SRC || path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const scenario = (rel) => path.join(src, 'scenarios', rel);
let fb;
before(async () => { fb = await startFusebox(); });
after(async () => { if (fb) assert.equal(await fb.stop(), 0); });

test('429 with Retry-After: 2 is honoured', async (t) => {
  const s = fb.session(sessionName(t.name));
  assert.equal(await s.use(scenario('ratelimit/retry_after_seconds.lua')), '429 with Retry-After: 2 (seconds) is honoured');
  assert.equal(await ask(makeClient({ baseURL: s.env.OPENAI_BASE_URL }), 'hi'), 'hello');
  const report = await s.assertVerdicts();
  const v = Object.fromEntries(report.results[0].verdicts.map((x) => [x.name, x.status]));
  assert.equal(v.retry_after_honoured, 'pass');
  const journal = await s.requests();
  assert.deepEqual(journal.map((r) => r.status), [429, 200]);
  assert.ok(journal[1].t_arrive - journal[0].t_end >= 1900, JSON.stringify(journal));
});

test('503 twice: the SDK backs off and gets the third answer', async (t) => {
  const s = fb.session(sessionName(t.name));
  await s.use(scenario('transient/http_503.lua'));
  assert.equal(await ask(makeClient({ baseURL: s.env.OPENAI_BASE_URL }), 'hi'), 'back again');
  await s.assertVerdicts();
});

test('401 is not retried', async (t) => {
  const s = fb.session(sessionName(t.name));
  await s.use(scenario('permanent/auth_401.lua'));
  await assert.rejects(ask(makeClient({ baseURL: s.env.OPENAI_BASE_URL }), 'hi'), { status: 401 });
  await s.assertVerdicts();
  assert.equal((await s.requests()).length, 1);
});

test('a reset session plays the scenario from its first step', async (t) => {
  const s = fb.session(sessionName(t.name));
  await s.use('return scenario { name = "one 500", provider = { fail { status = 500 }, chat { content = "fine" } },'
    + ' expect = { attempts = 2 } }');
  const client = makeClient({ baseURL: s.env.OPENAI_BASE_URL });
  assert.equal(await ask(client, 'a'), 'fine');
  await s.assertVerdicts();
  await s.reset();
  assert.deepEqual(await s.requests(), []);
  assert.equal(await ask(client, 'a'), 'fine');
  assert.deepEqual((await s.requests()).map((r) => r.status), [500, 200]);
});

test('a bad scenario is refused with file:line', async (t) => {
  const s = fb.session(sessionName(t.name));
  await assert.rejects(s.use('return scenario {\n  name = "x",\n  provider = { chat { colour = 1 } },\n}\n'),
    (e) => e instanceof FuseboxError && e.type === 'fusebox_bad_scenario' && /scenario\.lua:3:/.test(e.message));
});

test('nothing judged is not a pass', async (t) => {
  const s = fb.session(sessionName(t.name));
  await s.use(scenario('ratelimit/retry_after_seconds.lua'));
  const keep = fb.keep;
  fb.keep = null; // this failure is expected: keep no trace
  try {
    await assert.rejects(s.assertVerdicts(), (e) => e instanceof assert.AssertionError
      && /fail exercised: no request reached the scenario/.test(e.message));
  } finally {
    fb.keep = keep;
  }
});

test('two sessions do not see each other', async (t) => {
  const a = fb.session(sessionName(t.name));
  const b = fb.session(`${a.name}-other`);
  const lua = 'return scenario { name = "ok", provider = { chat { content = "hi" } }, expect = { attempts = 1 } }';
  await a.use(lua);
  await b.use(lua);
  await Promise.all([ask(makeClient({ baseURL: a.env.OPENAI_BASE_URL }), 'x'), ask(makeClient({ baseURL: a.env.OPENAI_BASE_URL }), 'y')]);
  assert.equal((await a.requests()).length, 2);
  assert.deepEqual(await b.requests(), []);
  const health = await fb.health();
  assert.ok(health.sessions.includes(a.name) && health.sessions.includes(b.name), JSON.stringify(health));
});

test('a side effect whose answer is lost is sent once: one Idempotency-Key across the SDK retries', async (t) => {
  const s = fb.session(sessionName(t.name));
  await s.use(scenario('effects/commit_then_drop_honoured.lua'));
  const client = makeClient({ baseURL: s.env.OPENAI_BASE_URL });
  // openai-node sends no key of its own (without one this scenario fails
  // side_effects: the email goes out twice); the app gives one per operation.
  await client.post(s.env.FUSEBOX_EFFECT_URL, {
    body: { to: 'user@example.com', subject: 'hello' }, headers: { 'Idempotency-Key': randomUUID() },
  });
  await s.assertVerdicts();
  const journal = await s.requests();
  assert.ok(journal.length >= 2 && journal.every((r) => r.path.startsWith('/v1/effects/')), JSON.stringify(journal));
});

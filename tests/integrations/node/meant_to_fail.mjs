// Tests that are MEANT TO FAIL: run only by meant_to_fail.test.mjs, in a
// child `node --test`, which checks that they fail and with which message.
// One session per test, made in beforeEach; afterEach keeps the trace of a
// test that failed (as docs/integrations.md shows).
import { test, before, after, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFusebox, sessionName } from '../../../integrations/node/fusebox.mjs';
import { askWithOwnLoop, makeClient, ask } from './assistant.mjs';

const src = process.env.FUSEBOX_SRC || path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
let fb;
let s;
before(async () => { fb = await startFusebox(); });
after(() => fb?.stop());
beforeEach((t) => { s = fb.session(sessionName(t.name)); });
afterEach(async (t) => {
  const f = !t.passed && await s.keepTrace();
  if (f) console.log(`fusebox: trace of '${t.name}' kept in ${f}`);
});

test('bad client ignores Retry-After', async () => {
  await s.use(path.join(src, 'scenarios/ratelimit/retry_after_seconds.lua'));
  await askWithOwnLoop(s.env.OPENAI_BASE_URL, 'hi'); // it even gets its answer...
  await s.assertVerdicts(); // ...but fusebox saw it come back after 100 ms
});

test('client gives up, nothing judged', async () => {
  await s.use('return scenario { name = "only a Retry-After", provider = { fail { status = 429, retry_after = 1 }, chat {} },'
    + ' expect = { retry_after_honoured = true } }');
  await ask(makeClient({ baseURL: s.env.OPENAI_BASE_URL, maxRetries: 0 }), 'hi').catch(() => {});
  await s.assertVerdicts();
});

test('client fails before any verdict', async () => {
  await s.use(path.join(src, 'scenarios/transient/http_503.lua'));
  assert.equal(await ask(makeClient({ baseURL: s.env.OPENAI_BASE_URL, maxRetries: 0 }), 'hi'), 'back again');
});

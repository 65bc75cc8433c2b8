// startFusebox against a real fusebox serve --control: a control token, a
// clean stop, and a dead server named in the error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startFusebox, FuseboxError } from '../../../integrations/node/fusebox.mjs';

test('the token is sent, and needed', async () => {
  const fb = await startFusebox({ token: 's3cret-token' });
  try {
    assert.equal((await fb.health()).ok, true);
    const res = await fetch(`${fb.url}/__fusebox/health`);
    assert.equal(res.status, 401);
    assert.equal((await res.json()).error.type, 'fusebox_unauthorized');
  } finally {
    assert.equal(await fb.stop(), 0);
  }
});

test('a dead server is named in the error', async () => {
  const fb = await startFusebox();
  const s = fb.session('gone');
  fb.process.kill('SIGKILL');
  await new Promise((r) => fb.process.once('exit', r));
  await assert.rejects(s.requests(), (e) => e instanceof FuseboxError && /the server exited \(SIGKILL\)/.test(e.message));
  assert.equal(await fb.stop(), 'SIGKILL');
});

test('keepTrace of a session never used keeps nothing', async () => {
  const fb = await startFusebox({ keep: '/nonexistent-dir-never-made' });
  try {
    assert.equal(await fb.session('never-used').keepTrace(), null);
    fb.keep = null;
    assert.equal(await fb.session('never-used').keepTrace(), null);
  } finally {
    await fb.stop();
  }
});

test('the session header joins from the server root', async () => {
  const fb = await startFusebox();
  try {
    const s = fb.session('by-header');
    await s.use('return scenario { name = "500", provider = { fail { status = 500 } } }');
    const res = await fetch(`${fb.url}/v1/chat/completions`, { method: 'POST', headers: s.headers, body: '{"m":1}' });
    assert.equal(res.status, 500);
    assert.deepEqual((await s.requests()).map((r) => r.status), [500]);
  } finally {
    await fb.stop();
  }
});

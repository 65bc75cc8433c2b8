// Library names in use(): resolved by the server's binary (fusebox which),
// an existing path winning, an unknown name refused with the library named
// and a near one suggested, a folder refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startFusebox, resolveScenario, FuseboxError } from '../../../integrations/node/fusebox.mjs';

const GOOD = '429 with Retry-After: 2 (seconds) is honoured';

test('a name resolves to the library file', async () => {
  const p = await resolveScenario('ratelimit/retry_after_seconds');
  assert.match(p, /\/scenarios\/ratelimit\/retry_after_seconds\.lua$/);
  assert.equal(await resolveScenario('ratelimit/retry_after_seconds.lua'), p);
});

test('use() takes a name; an existing path wins; unknown names and folders are refused', async () => {
  const fb = await startFusebox({ keep: null });
  const cwd = process.cwd();
  const dir = mkdtempSync(path.join(tmpdir(), 'fusebox-names-'));
  try {
    const s = fb.session('names');
    assert.equal(await s.use('ratelimit/retry_after_seconds'), GOOD);
    await assert.rejects(s.use('ratelimit/retry_after_secnds'), (e) => e instanceof FuseboxError
      && /no scenario or file named ratelimit\/retry_after_secnds \(library: /.test(e.message)
      && /did you mean ratelimit\/retry_after_seconds\?/.test(e.message));
    await assert.rejects(s.use('ratelimit'), /ratelimit is a folder of \d+ scenarios/);
    mkdirSync(path.join(dir, 'ratelimit'));
    writeFileSync(path.join(dir, 'ratelimit', 'retry_after_seconds'),
      'return scenario { name = "the local one", provider = { chat {} } }');
    process.chdir(dir);
    assert.equal(await s.use('ratelimit/retry_after_seconds'), 'the local one');
  } finally {
    process.chdir(cwd);
    rmSync(dir, { recursive: true, force: true });
    assert.equal(await fb.stop(), 0);
  }
});

// Runs meant_to_fail.mjs in a child `node --test` and checks that its three
// tests fail with the failed verdicts and their evidence (or the news that
// nothing was judged) as the AssertionError message, and that each trace is
// kept where the message says.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

test('the meant-to-fail tests fail with the evidence', () => {
  const keep = mkdtempSync(path.join(os.tmpdir(), 'fusebox-keep-'));
  try {
    // A child of a test runner inherits NODE_TEST_CONTEXT and would report to
    // this runner instead of running: drop it.
    const env = { ...process.env, FUSEBOX_KEEP: keep };
    delete env.NODE_TEST_CONTEXT;
    const p = spawnSync(process.execPath, ['--test', '--test-reporter=spec', path.join(here, 'meant_to_fail.mjs')],
      { env, encoding: 'utf8', timeout: 120000 });
    const out = p.stdout + p.stderr;
    assert.equal(p.status, 1, out);
    assert.match(out, /fail 3/, out);
    assert.match(out, /AssertionError.*fusebox session bad_client_ignores_Retry-After-[0-9a-f]{8}:/, out);
    assert.match(out, /1 of \d+ verdicts failed/, out);
    assert.match(out, /fail retry_after_honoured: attempt 2 of request \S+ arrived \d+ ms after a 429 asking for 2000 ms/, out);
    assert.doesNotMatch(out, /pass attempts/, out);
    assert.match(out, /no verdict applied \(every verdict n\/a\): the situation the scenario sets up never arose/, out);
    assert.match(out, /n\/a retry_after_honoured: 1 response asked for Retry-After, but no retry followed one/, out);
    const kept = readdirSync(keep).sort();
    assert.deepEqual(kept.map((k) => k.replace(/-[0-9a-f]{8}\.jsonl$/, '')),
      ['bad_client_ignores_Retry-After', 'client_fails_before_any_verdict', 'client_gives_up_nothing_judged'], out);
    // The third failed on its own assertion (the SDK's 503): kept by afterEach.
    assert.match(out, /✖ client fails before any verdict[^]*Error: 503 The service is temporarily unavailable/, out);
    for (const k of kept) {
      if (!k.startsWith('client_fails')) assert.ok(out.includes(`trace kept in ${path.join(keep, k)}`), out);
      assert.ok(out.includes(` kept in ${path.join(keep, k)}`), out);
      const lines = readFileSync(path.join(keep, k), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
      assert.ok(lines.some((l) => l.ev === 'arrive'), k);
    }
  } finally {
    rmSync(keep, { recursive: true, force: true });
  }
});

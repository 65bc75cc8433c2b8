// The Node helper's own logic without a server: session names, the
// judgement of a report, start-up failures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFusebox, sessionName, checkVerdicts, formatVerdicts, FuseboxError } from '../../../integrations/node/fusebox.mjs';

const NAME = /^[A-Za-z0-9._-]{1,64}$/;

test('session names are valid, readable and distinct', () => {
  for (const n of ['a test', 'ü é / [x]', 'x'.repeat(200), '', '...', undefined]) {
    const s = sessionName(n);
    assert.match(s, NAME, s);
    assert.notEqual(s, 'default');
  }
  assert.match(sessionName('429 is honoured'), /^429_is_honoured-[0-9a-f]{8}$/);
  assert.notEqual(sessionName('a b'), sessionName('a_b'));
  assert.notEqual(sessionName(`${'a'.repeat(100)}1`), sessionName(`${'a'.repeat(100)}2`));
  assert.equal(sessionName('a'.repeat(100)).length, 64);
});

const result = (status, verdicts, extra = {}) => ({ fusebox_report: 1, results: [{ name: 'S', status, verdicts, ...extra }] });
const PASS = { name: 'attempts', status: 'pass', evidence: '1 request, 2 attempts (expected 2)' };
const FAIL = { name: 'retry_after_honoured', status: 'fail', evidence: 'attempt 2 arrived 103 ms after a 429 asking for 2000 ms' };
const NA = { name: 'outcome', status: 'n/a', evidence: 'no client account in the trace' };

test('a passing report passes', () => {
  assert.equal(checkVerdicts(result('pass', [PASS, NA]), 's'), null);
});

test('failed verdicts are listed with their evidence, and only they', () => {
  const m = checkVerdicts(result('fail', [PASS, FAIL, NA]), 's1');
  assert.equal(m, "fusebox session s1:\nscenario 'S': 1 of 3 verdicts failed\n"
    + '  fail retry_after_honoured: attempt 2 arrived 103 ms after a 429 asking for 2000 ms');
});

test('only n/a is not a pass, and says why', () => {
  const m = checkVerdicts(result('n/a', [NA], { arrivals: 0 }), 's');
  assert.match(m, /never arose.*no request reached this session/);
  assert.match(m, /n\/a outcome: no client account in the trace/);
  assert.match(checkVerdicts(result('n/a', [], { arrivals: 2 })), /nothing was judged\n {2}\(no verdicts\)$/);
});

test('errors and empty reports fail; long evidence is clipped', () => {
  assert.match(checkVerdicts(result('error', [], { error: 'boom' })), /could not be judged: boom/);
  assert.match(checkVerdicts({ results: [] }), /no result/);
  assert.match(checkVerdicts(null), /no result/);
  assert.match(formatVerdicts([{ ...FAIL, evidence: 'x'.repeat(5000) }]), /\(3000 more characters\)$/);
});

test('a missing binary says what to do', async () => {
  await assert.rejects(startFusebox({ bin: '/nonexistent/fusebox' }),
    (e) => e instanceof FuseboxError && /cannot start \/nonexistent\/fusebox: .*FUSEBOX_BIN/.test(e.message));
});

test('a server that prints no port is reported with its stderr', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fusebox-unit-'));
  try {
    const fake = path.join(dir, 'fakebox');
    writeFileSync(fake, "#!/bin/sh\necho 'fusebox serve: --control is not an option' >&2\nexit 2\n");
    chmodSync(fake, 0o755);
    await assert.rejects(startFusebox({ bin: fake }),
      (e) => e instanceof FuseboxError && /exited \(2\) before printing its port: fusebox serve: --control is not an option/.test(e.message));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

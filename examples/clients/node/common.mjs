// common.mjs - argument and environment handling shared by the Node clients.
//
// Each client makes exactly one SDK call and leaves retries and timeouts to
// the SDK's defaults, so fusebox judges the SDK's real policy. The only knob
// is the per-attempt timeout (the SDK's `timeout` option), for hang
// scenarios: CLIENT_TIMEOUT_MS, else FUSEBOX_ATTEMPT_TIMEOUT (seconds).
//
// What call to make: --stream / --effect when given, else what `fusebox exec`
// says the scenario needs (FUSEBOX_STREAM=1, FUSEBOX_CALL=effect;
// docs/exec.md).

export function parseArgs(argv) {
  const mode = { stream: false, effect: false };
  for (const a of argv) {
    if (a === '--stream') mode.stream = true;
    else if (a === '--effect') mode.effect = true;
    else if (a === '-h' || a === '--help') {
      process.stdout.write('usage: node CLIENT.mjs [--stream | --effect]\n');
      process.exit(0);
    } else {
      process.stderr.write(`unknown argument: ${a}\n`);
      process.exit(2);
    }
  }
  if (argv.length === 0) {
    mode.stream = process.env.FUSEBOX_STREAM === '1';
    mode.effect = process.env.FUSEBOX_CALL === 'effect';
  }
  if (mode.stream && mode.effect) {
    process.stderr.write('--stream and --effect exclude each other\n');
    process.exit(2);
  }
  return mode;
}

// SDK options from the environment: the timeout only when asked for.
export function sdkOptions() {
  const opts = {};
  let t = process.env.CLIENT_TIMEOUT_MS;
  const fb = process.env.FUSEBOX_ATTEMPT_TIMEOUT;
  if ((t === undefined || t === '') && fb) t = String(Math.round(Number(fb) * 1000));
  if (t !== undefined && t !== '') {
    const ms = Number(t);
    if (!Number.isInteger(ms) || ms <= 0) {
      process.stderr.write(`CLIENT_TIMEOUT_MS must be a positive integer, got ${t}\n`);
      process.exit(2);
    }
    opts.timeout = ms;
  }
  return opts;
}

// The effect endpoint: $FUSEBOX_EFFECT_URL, else
// $FUSEBOX_URL/v1/effects/send_email. Without either, derive it from the
// SDK's base URL (same server).
export function effectURL(baseURL) {
  if (process.env.FUSEBOX_EFFECT_URL) return process.env.FUSEBOX_EFFECT_URL;
  const root = process.env.FUSEBOX_URL || (baseURL || '').replace(/\/v1\/?$/, '');
  if (!root) {
    process.stderr.write('FUSEBOX_URL (or the base URL) is not set\n');
    process.exit(2);
  }
  return root.replace(/\/$/, '') + '/v1/effects/send_email';
}

export const PROMPT = process.env.PROMPT || 'Say hello.';

// The effect's JSON body: $FUSEBOX_EFFECT_PAYLOAD, else a default email.
export function effectBody() {
  const p = process.env.FUSEBOX_EFFECT_PAYLOAD;
  return p ? JSON.parse(p) : { to: 'user@example.com', subject: 'hello' };
}

// The model: the SDK family's own variable, else FUSEBOX_MODEL, else dflt.
export function modelName(envName, dflt) {
  return process.env[envName] || process.env.FUSEBOX_MODEL || dflt;
}

// Print an error as "Class: message" on stderr and exit 1.
export function fail(err) {
  const cls = err?.constructor?.name || 'Error';
  const status = err?.status !== undefined ? ` (status ${err.status})` : '';
  process.stderr.write(`${cls}${status}: ${err?.message ?? String(err)}\n`);
  process.exit(1);
}

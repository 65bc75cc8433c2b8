// common.mjs - argument and environment handling shared by the Node clients.
//
// Each client makes exactly one SDK call and leaves retries and timeouts to
// the SDK's defaults, so fusebox judges the SDK's real policy. The only knob
// is CLIENT_TIMEOUT_MS (the SDK's `timeout` option), for hang scenarios.

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
  if (mode.stream && mode.effect) {
    process.stderr.write('--stream and --effect exclude each other\n');
    process.exit(2);
  }
  return mode;
}

// SDK options from the environment: the timeout only when asked for.
export function sdkOptions() {
  const opts = {};
  const t = process.env.CLIENT_TIMEOUT_MS;
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

// The effect endpoint: $FUSEBOX_URL/v1/effects/send_email. Without
// FUSEBOX_URL, derive it from the SDK's base URL (same server).
export function effectURL(baseURL) {
  const root = process.env.FUSEBOX_URL || (baseURL || '').replace(/\/v1\/?$/, '');
  if (!root) {
    process.stderr.write('FUSEBOX_URL (or the base URL) is not set\n');
    process.exit(2);
  }
  return root.replace(/\/$/, '') + '/v1/effects/send_email';
}

export const PROMPT = process.env.PROMPT || 'Say hello.';

// Print an error as "Class: message" on stderr and exit 1.
export function fail(err) {
  const cls = err?.constructor?.name || 'Error';
  const status = err?.status !== undefined ? ` (status ${err.status})` : '';
  process.stderr.write(`${cls}${status}: ${err?.message ?? String(err)}\n`);
  process.exit(1);
}

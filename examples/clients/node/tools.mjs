// tools.mjs - the tool executor the example clients share: each call runs at
// $FUSEBOX_URL/v1/effects/{name} (POST, arguments as the body) only when its
// tool was offered and its arguments are one JSON object, with its call id
// as Idempotency-Key, so a call a retried turn repeats is not run twice.

export async function runTools(calls, offered) {
  // FUSEBOX_URL is the server's root; its effect endpoint is /v1/effects/{name}.
  const base = process.env.FUSEBOX_URL ? process.env.FUSEBOX_URL.replace(/\/$/, '') + '/v1/effects' : '';
  if (!base) throw new Error('FUSEBOX_URL is not set');
  let ran = 0;
  for (const c of calls) {
    if (!offered.includes(c.name)) { process.stderr.write(`refused ${c.name}: not offered\n`); continue; }
    let args;
    try { args = typeof c.arguments === 'string' ? JSON.parse(c.arguments) : c.arguments; } catch { args = undefined; }
    if (args === null || typeof args !== 'object' || Array.isArray(args)) {
      process.stderr.write(`refused ${c.name}: arguments are not a JSON object\n`);
      continue;
    }
    const res = await fetch(`${base}/${encodeURIComponent(c.name)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': c.id },
      body: JSON.stringify(args),
    });
    if (!res.ok && res.status !== 409) throw new Error(`tool ${c.name}: HTTP ${res.status}`);
    ran++;
  }
  return ran;
}

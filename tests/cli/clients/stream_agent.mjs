// stream_agent.mjs - an agent turn through the real `openai` SDK (from
// examples/clients/node/node_modules), streamed, offering get_weather:
//
//   node stream_agent.mjs --api chat|responses --out FILE
//
// Up to 3 turns: a turn whose stream breaks is asked again (its partial
// tool calls are never run); the calls of the first turn that completes
// are run once each at $FUSEBOX_URL/v1/effects/{name}, keyed by call id.
// FILE gets everything the client received, one line per stream event
// (JSON with sorted keys; ids the server makes fresh, `req_fbx...`, and
// timestamps `created`/`created_at` masked, as an API may renew them),
// the errors it saw and the effect answers: two runs can be compared
// byte for byte. Exit 0 when a tool call ran, 1 otherwise.
import { writeFileSync } from 'node:fs';

const sdk = new URL('../../../examples/clients/node/node_modules/openai/index.mjs', import.meta.url);
const { default: OpenAI } = await import(sdk.href);

const argv = process.argv.slice(2);
const opt = (name) => { const i = argv.indexOf(name); return i >= 0 ? argv[i + 1] : undefined; };
const api = opt('--api') || 'chat';
const outFile = opt('--out');
if (!outFile || !['chat', 'responses'].includes(api)) {
  process.stderr.write('usage: node stream_agent.mjs --api chat|responses --out FILE\n');
  process.exit(2);
}

const seen = [];
const canon = (v) => {
  if (Array.isArray(v)) return v.map(canon);
  if (v && typeof v === 'object') {
    const o = {};
    for (const k of Object.keys(v).sort()) o[k] = k === 'created' || k === 'created_at' ? 'T' : canon(v[k]);
    return o;
  }
  return typeof v === 'string' ? v.replace(/req_fbx[0-9a-f]+/g, 'req_ID') : v;
};
const note = (what, v) => seen.push(`${what} ${JSON.stringify(canon(v))}`);

const client = new OpenAI({ maxRetries: 2 });
const model = 'gpt-4o-mini';
const input = 'What is the weather in Paris?';
const fn = { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

async function chatTurn() {
  const calls = [];
  const s = await client.chat.completions.create({
    model, stream: true, messages: [{ role: 'user', content: input }],
    tools: [{ type: 'function', function: fn }],
  });
  let finished = false;
  for await (const ch of s) {
    note('chunk', ch);
    for (const d of ch.choices?.[0]?.delta?.tool_calls ?? []) {
      const c = (calls[d.index] ??= { id: '', name: '', arguments: '' });
      if (d.id) c.id = d.id;
      if (d.function?.name) c.name = d.function.name;
      c.arguments += d.function?.arguments ?? '';
    }
    if (ch.choices?.[0]?.finish_reason) finished = true;
  }
  if (!finished) throw new Error('the stream ended without a finish_reason');
  return calls;
}

async function responsesTurn() {
  const s = await client.responses.create({ model, input, stream: true, tools: [{ type: 'function', ...fn }] });
  let done;
  for await (const ev of s) {
    note('event', ev);
    if (ev.type === 'error' || ev.type === 'response.failed') throw new Error(`stream ${ev.type}`);
    if (ev.type === 'response.completed') done = ev.response;
  }
  if (!done) throw new Error('the stream ended without response.completed');
  return (done.output ?? []).filter((o) => o.type === 'function_call')
    .map((o) => ({ id: o.call_id, name: o.name, arguments: o.arguments }));
}

let ran = 0;
for (let turn = 1; turn <= 3 && ran === 0; turn++) {
  let calls;
  try {
    calls = api === 'chat' ? await chatTurn() : await responsesTurn();
  } catch (err) {
    seen.push(`turn ${turn} failed: ${err?.constructor?.name ?? 'Error'}`);
    continue;
  }
  for (const c of calls) {
    const res = await fetch(`${process.env.FUSEBOX_URL.replace(/\/$/, '')}/v1/effects/${c.name}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': c.id },
      body: c.arguments,
    });
    seen.push(`ran ${c.name} ${c.id} ${c.arguments}: HTTP ${res.status}`);
    await res.text();
    ran++;
  }
  if (calls.length === 0) break;
}
writeFileSync(outFile, seen.join('\n') + '\n');
process.exit(ran > 0 ? 0 : 1);

// responses_chat.mjs - one call through openai-node's Responses API
// (`client.responses.create`), with the SDK's default retry policy
// (maxRetries 2, backoff 0.5 s x 2^n capped at 8 s, Retry-After honoured).
//
//   node responses_chat.mjs            one response, prints output_text
//   node responses_chat.mjs --stream   one streamed response
//   node responses_chat.mjs --tools    offers get_weather and runs its calls
//
// A streamed response counts only when it ends with response.completed: an
// `error` event, response.failed, response.incomplete or a stream that just
// stops is a failure (exit 1), never half an answer printed as success.
// --tools runs each function call at $FUSEBOX_URL/v1/effects/{name} only when
// the tool was offered and its arguments parse, keyed by its call_id.
// Reads OPENAI_BASE_URL and OPENAI_API_KEY (the SDK does).
import OpenAI from 'openai';
import { sdkOptions, PROMPT, fail } from './common.mjs';
import { runTools } from './tools.mjs';

const args = process.argv.slice(2);
const stream = args.includes('--stream');
const tools = args.includes('--tools');
const client = new OpenAI(sdkOptions());
const model = process.env.OPENAI_MODEL || 'gpt-4o-mini';
const offered = tools ? [{ type: 'function', name: 'get_weather',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }] : undefined;

try {
  let res;
  if (stream) {
    const s = await client.responses.create({ model, input: PROMPT, stream: true, tools: offered });
    for await (const ev of s) {
      if (ev.type === 'error') throw new Error(`stream error event: ${ev.code ?? ''} ${ev.message ?? ''}`);
      if (ev.type === 'response.failed') throw new Error(`response.failed: ${ev.response?.error?.message ?? ''}`);
      if (ev.type === 'response.incomplete') {
        throw new Error(`response.incomplete: ${ev.response?.incomplete_details?.reason ?? ''}`);
      }
      if (ev.type === 'response.completed') res = ev.response;
    }
    if (!res) throw new Error('the stream ended without response.completed');
  } else {
    res = await client.responses.create({ model, input: PROMPT, tools: offered });
    if (res.status !== 'completed') throw new Error(`response ${res.status}`);
  }
  const calls = (res.output ?? []).filter((o) => o.type === 'function_call')
    .map((o) => ({ id: o.call_id, name: o.name, arguments: o.arguments }));
  if (tools) await runTools(calls, ['get_weather']);
  const text = (res.output ?? []).filter((o) => o.type === 'message')
    .flatMap((o) => o.content ?? []).map((p) => p.text ?? '').join('');
  process.stdout.write(text + '\n');
} catch (err) {
  fail(err);
}

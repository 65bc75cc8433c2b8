// cohere_chat.mjs - one call through the `cohere-ai` npm package
// (CohereClientV2) with its defaults (2 retries on 408, 429 and 5xx,
// Retry-After honoured, else 1 s x 2^n with jitter; 300 s timeout) at
// {base}/v2/chat.
//
//   node cohere_chat.mjs            the call `fusebox exec` asks for
//   node cohere_chat.mjs --stream   chatStream (typed SSE; needs message-end)
//
// Reads CO_API_URL (passed as the client's baseUrl; the package reads no
// URL variable itself), else FUSEBOX_URL; CO_API_KEY (the package reads
// it; any placeholder); COHERE_MODEL, else FUSEBOX_MODEL. Streams when
// FUSEBOX_STREAM=1.
import { CohereClientV2 } from 'cohere-ai';
import { PROMPT, fail, modelName } from './common.mjs';

const args = process.argv.slice(2);
for (const a of args)
  if (a !== '--stream') {
    process.stderr.write(`unknown argument: ${a}\nusage: node cohere_chat.mjs [--stream]\n`);
    process.exit(2);
  }
const stream = args.includes('--stream') || process.env.FUSEBOX_STREAM === '1';
const baseUrl = process.env.CO_API_URL || process.env.FUSEBOX_URL;
const client = new CohereClientV2({ token: process.env.CO_API_KEY || 'fusebox', ...(baseUrl ? { baseUrl } : {}) });
const model = modelName('COHERE_MODEL', 'command-r-plus');
const messages = [{ role: 'user', content: PROMPT }];

try {
  let text = '';
  if (stream) {
    let finished = false;
    for await (const ev of await client.chatStream({ model, messages })) {
      if (ev.type === 'content-delta') text += ev.delta?.message?.content?.text ?? '';
      if (ev.type === 'message-end') {
        const reason = ev.delta?.finishReason;
        if (reason === 'ERROR') throw new Error(`stream ended with ERROR: ${ev.delta?.error ?? ''}`);
        finished = true;
      }
    }
    if (!finished) throw new Error('the stream ended without message-end');
  } else {
    const res = await client.chat({ model, messages });
    text = (res.message?.content ?? []).map((c) => c.text ?? '').join('');
  }
  process.stdout.write(text + '\n');
} catch (err) {
  if (err?.statusCode !== undefined) err.status = err.statusCode;
  fail(err);
}

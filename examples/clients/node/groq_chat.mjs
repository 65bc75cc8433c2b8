// groq_chat.mjs - one chat completion through groq-sdk with its defaults
// (openai-node's retry code: maxRetries 2, backoff 0.5 s x 2^n capped at
// 8 s, Retry-After honoured; timeout 60 s) at {GROQ_BASE_URL}/openai/v1.
//
//   node groq_chat.mjs            one chat completion, prints the answer
//   node groq_chat.mjs --stream   one streamed chat completion
//
// Reads GROQ_BASE_URL and GROQ_API_KEY (the SDK does).
import Groq from 'groq-sdk';
import { sdkOptions, PROMPT, fail } from './common.mjs';

const stream = process.argv.slice(2).includes('--stream');
const client = new Groq(sdkOptions());
const model = process.env.GROQ_MODEL || 'llama-3.3-70b-versatile';
const messages = [{ role: 'user', content: PROMPT }];

try {
  if (stream) {
    const s = await client.chat.completions.create({ model, messages, stream: true });
    let text = '';
    for await (const chunk of s) text += chunk.choices?.[0]?.delta?.content ?? '';
    process.stdout.write(text + '\n');
  } else {
    const res = await client.chat.completions.create({ model, messages });
    process.stdout.write((res.choices?.[0]?.message?.content ?? '') + '\n');
  }
} catch (err) {
  fail(err);
}

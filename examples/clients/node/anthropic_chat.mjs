// anthropic_chat.mjs - one call through the official `@anthropic-ai/sdk`,
// with its default retry policy (maxRetries 2, backoff 0.5 s x 2^n capped at
// 8 s, Retry-After honoured) and default timeout (10 min) unless
// CLIENT_TIMEOUT_MS.
//
//   node anthropic_chat.mjs            one message, prints the answer text
//   node anthropic_chat.mjs --stream   one streamed message
//   node anthropic_chat.mjs --effect   POST $FUSEBOX_URL/v1/effects/send_email
//
// Reads ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY (the SDK does). Exit 0 on
// success, 1 on failure with the error class on stderr, 2 on usage errors.
import Anthropic from '@anthropic-ai/sdk';
import { parseArgs, sdkOptions, effectURL, effectBody, modelName, PROMPT, fail } from './common.mjs';

const mode = parseArgs(process.argv.slice(2));
const client = new Anthropic(sdkOptions());
const model = modelName('ANTHROPIC_MODEL', 'claude-haiku-4-5');
const messages = [{ role: 'user', content: PROMPT }];

try {
  if (mode.effect) {
    const res = await client.post(effectURL(client.baseURL), {
      body: effectBody(),
    });
    process.stdout.write(JSON.stringify(res) + '\n');
  } else if (mode.stream) {
    const stream = await client.messages.create({
      model, messages, max_tokens: 64, stream: true,
    });
    let text = '';
    for await (const ev of stream) {
      if (ev.type === 'content_block_delta' && ev.delta?.type === 'text_delta') text += ev.delta.text;
    }
    process.stdout.write(text + '\n');
  } else {
    const res = await client.messages.create({ model, messages, max_tokens: 64 });
    const text = (res.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('');
    process.stdout.write(text + '\n');
  }
} catch (err) {
  fail(err);
}

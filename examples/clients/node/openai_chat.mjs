// openai_chat.mjs - one call through the official `openai` SDK, with its
// default retry policy (maxRetries 2, backoff 0.5 s x 2^n capped at 8 s,
// Retry-After honoured) and default timeout (10 min) unless CLIENT_TIMEOUT_MS.
//
//   node openai_chat.mjs            one chat completion, prints the answer
//   node openai_chat.mjs --stream   one streamed chat completion
//   node openai_chat.mjs --effect   POST $FUSEBOX_URL/v1/effects/send_email
//
// Reads OPENAI_BASE_URL and OPENAI_API_KEY (the SDK does). OPENAI_PACKAGE=openai7
// runs the same call through openai 7.59.0 (pinned beside 6.49.0, for the
// dependency-bump gate of docs/ci.md). Exit 0 on success, 1 on failure with
// the error class on stderr, 2 on usage errors.
import { parseArgs, sdkOptions, effectURL, effectBody, modelName, PROMPT, fail } from './common.mjs';

const pkg = process.env.OPENAI_PACKAGE || 'openai';
if (pkg !== 'openai' && pkg !== 'openai7') {
  process.stderr.write(`OPENAI_PACKAGE is openai or openai7, not ${pkg}\n`);
  process.exit(2);
}
const { default: OpenAI } = await import(pkg);
const mode = parseArgs(process.argv.slice(2));
const client = new OpenAI(sdkOptions());
const model = modelName('OPENAI_MODEL', 'gpt-4o-mini');
const messages = [{ role: 'user', content: PROMPT }];

try {
  if (mode.effect) {
    // A generic POST through the SDK, so the SDK's retry policy applies to
    // the side effect as it would to any endpoint the SDK calls.
    const res = await client.post(effectURL(client.baseURL), {
      body: effectBody(),
    });
    process.stdout.write(JSON.stringify(res) + '\n');
  } else if (mode.stream) {
    const stream = await client.chat.completions.create({
      model, messages, max_tokens: 64, stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices?.[0]?.delta?.content ?? '';
    process.stdout.write(text + '\n');
  } else {
    const res = await client.chat.completions.create({ model, messages, max_tokens: 64 });
    process.stdout.write((res.choices?.[0]?.message?.content ?? '') + '\n');
  }
} catch (err) {
  fail(err);
}

// ai_sdk_chat.mjs - one call through the Vercel AI SDK (`ai` 6 with
// `@ai-sdk/openai`), with its default retry policy (maxRetries 2) and no
// timeout unless FUSEBOX_ATTEMPT_TIMEOUT / CLIENT_TIMEOUT_MS asks for one
// (then each HTTP attempt is aborted after that long, through the
// provider's `fetch` option).
//
//   node ai_sdk_chat.mjs            one chat call (generateText), or what
//                                   FUSEBOX_STREAM / FUSEBOX_CALL ask for
//   node ai_sdk_chat.mjs --stream   one streamed call (streamText)
//
// The provider is created with createOpenAI({ baseURL: OPENAI_BASE_URL }) and
// the model as provider.chat(model): POST {base}/chat/completions. (The
// provider's default model, provider(model), posts to {base}/responses,
// which fusebox does not serve: it would get fusebox's unknown-endpoint 404.)
// The AI SDK has no generic request method, so it has no effect call: run
// it with `fusebox exec --without effects`; asked for one it exits 2.
// Exit 0 on success, 1 on failure with the error class on stderr.
import { generateText, streamText } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { parseArgs, sdkOptions, modelName, PROMPT, fail } from './common.mjs';

const mode = parseArgs(process.argv.slice(2));
if (mode.effect) {
  process.stderr.write('ai_sdk_chat: the AI SDK has no effect call (use --without effects)\n');
  process.exit(2);
}
const { timeout } = sdkOptions();
const perAttempt = timeout
  ? (url, init = {}) => {
      const t = AbortSignal.timeout(timeout);
      const signal = init.signal ? AbortSignal.any([init.signal, t]) : t;
      return fetch(url, { ...init, signal });
    }
  : undefined;
const provider = createOpenAI({
  baseURL: process.env.OPENAI_BASE_URL,
  apiKey: process.env.OPENAI_API_KEY,
  fetch: perAttempt,
});
const model = provider.chat(modelName('OPENAI_MODEL', 'gpt-4o-mini'));

try {
  if (mode.stream) {
    const result = streamText({ model, prompt: PROMPT, maxOutputTokens: 64 });
    let text = '';
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') text += part.text;
      else if (part.type === 'error') throw part.error;
    }
    process.stdout.write(text + '\n');
  } else {
    const res = await generateText({ model, prompt: PROMPT, maxOutputTokens: 64 });
    process.stdout.write(res.text + '\n');
  }
} catch (err) {
  fail(err);
}

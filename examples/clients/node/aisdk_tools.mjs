// aisdk_tools.mjs - one tool-using turn through the Vercel AI SDK (`ai`)
// with its defaults (maxRetries 2), the tool's execute() running at
// $FUSEBOX_URL/v1/effects/get_weather as an agent's tool does.
//
//   node aisdk_tools.mjs PROVIDER [--stream]
//     PROVIDER: responses   the default OpenAI provider, openai(model): /v1/responses
//               chat        openai.chat(model): /v1/chat/completions
//               anthropic   @ai-sdk/anthropic: {ANTHROPIC_BASE_URL}/v1/messages
//
// The SDK validates tool arguments against the tool's schema before it calls
// execute(); the execution carries the tool-call id as Idempotency-Key.
import { generateText, streamText, tool } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { createAnthropic } from '@ai-sdk/anthropic';
import { z } from 'zod';
import { PROMPT, fail } from './common.mjs';

const [which, flag] = process.argv.slice(2);
const stream = flag === '--stream';
const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL });
const anthropic = createAnthropic({
  baseURL: (process.env.ANTHROPIC_BASE_URL || '').replace(/\/$/, '').replace(/(\/v1)?$/, '/v1') });
const model = which === 'chat' ? openai.chat('gpt-4o-mini')
  : which === 'anthropic' ? anthropic('claude-sonnet-4-5')
  : which === 'responses' ? openai('gpt-4o-mini') : null;
if (!model) {
  process.stderr.write('usage: node aisdk_tools.mjs responses|chat|anthropic [--stream]\n');
  process.exit(2);
}
const base = (process.env.FUSEBOX_URL || '').replace(/\/$/, '') + '/v1/effects';
const tools = {
  get_weather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async (input, { toolCallId }) => {
      const r = await fetch(`${base}/get_weather`, { method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': toolCallId },
        body: JSON.stringify(input) });
      return r.ok ? await r.json() : { error: r.status };
    },
  }),
};

try {
  let text;
  if (stream) {
    let error;
    const r = streamText({ model, prompt: PROMPT, tools, maxOutputTokens: 256, onError: (e) => { error = e.error; } });
    text = '';
    for await (const t of r.textStream) text += t;
    await r.finishReason;
    if (error) throw error;
  } else {
    const r = await generateText({ model, prompt: PROMPT, tools, maxOutputTokens: 256 });
    text = r.text;
  }
  process.stdout.write(text + '\n');
} catch (err) {
  fail(err);
}

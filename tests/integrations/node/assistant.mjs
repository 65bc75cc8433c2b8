// assistant.mjs - a small app module on the official openai-node SDK, the
// kind of code a team tests with integrations/node/fusebox.mjs.
//
// ask() leaves retries to the SDK (maxRetries 2, exponential backoff with
// jitter, Retry-After honoured). askWithOwnLoop() is the badly behaved
// variant the suite is meant to catch: SDK retries off, its own loop retries
// 100 ms later whatever the provider asked for.
import { createRequire } from 'node:module';

// openai is installed (pinned) in examples/clients/node: sh examples/clients/install.sh
const require = createRequire(new URL('../../../examples/clients/node/package.json', import.meta.url));
const OpenAI = require('openai').OpenAI;

export function makeClient({ baseURL = process.env.OPENAI_BASE_URL, maxRetries } = {}) {
  const opts = { baseURL, apiKey: 'sk-fusebox-placeholder', timeout: 10000 };
  if (maxRetries !== undefined) opts.maxRetries = maxRetries;
  return new OpenAI(opts);
}

export async function ask(client, prompt) {
  const res = await client.chat.completions.create({
    model: 'gpt-fusebox', messages: [{ role: 'user', content: prompt }], max_tokens: 64,
  });
  return res.choices[0].message.content;
}

export async function askWithOwnLoop(baseURL, prompt, tries = 3) {
  const client = makeClient({ baseURL, maxRetries: 0 });
  for (let i = 1; ; i++) {
    try {
      return await ask(client, prompt);
    } catch (e) {
      if (i >= tries) throw e;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

// langchain_chat.mjs - one call through LangChain JS (`@langchain/openai`
// ChatOpenAI), with its default retry policy (LangChain's AsyncCaller: up
// to 6 retries with exponential backoff; the OpenAI SDK's own retries are
// turned off by LangChain) and no timeout unless FUSEBOX_ATTEMPT_TIMEOUT /
// CLIENT_TIMEOUT_MS asks for one (ChatOpenAI's `timeout`).
//
//   node langchain_chat.mjs            one chat call (invoke), or what
//                                      FUSEBOX_STREAM / FUSEBOX_CALL ask for
//   node langchain_chat.mjs --stream   one streamed call (stream)
//
// Base URL from OPENAI_BASE_URL (passed as configuration.baseURL). ChatOpenAI
// has no generic request method, so it has no effect call: run it with
// `fusebox exec --without effects`; asked for one it exits 2.
// Exit 0 on success, 1 on failure with the error class on stderr.
import { ChatOpenAI } from '@langchain/openai';
import { parseArgs, sdkOptions, modelName, PROMPT, fail } from './common.mjs';

const mode = parseArgs(process.argv.slice(2));
if (mode.effect) {
  process.stderr.write('langchain_chat: ChatOpenAI has no effect call (use --without effects)\n');
  process.exit(2);
}
const { timeout } = sdkOptions();
const chat = new ChatOpenAI({
  model: modelName('OPENAI_MODEL', 'gpt-4o-mini'),
  apiKey: process.env.OPENAI_API_KEY,
  maxTokens: 64,
  streaming: mode.stream,
  ...(timeout ? { timeout } : {}),
  configuration: { baseURL: process.env.OPENAI_BASE_URL },
});

try {
  if (mode.stream) {
    let text = '';
    for await (const chunk of await chat.stream(PROMPT)) text += chunk.content ?? '';
    process.stdout.write(text + '\n');
  } else {
    const res = await chat.invoke(PROMPT);
    process.stdout.write(String(res.content ?? '') + '\n');
  }
} catch (err) {
  fail(err);
}

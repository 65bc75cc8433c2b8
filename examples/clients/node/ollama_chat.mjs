// ollama_chat.mjs - one call through the `ollama` npm package with its
// defaults (no retry: the package has none; no client timeout) at
// {OLLAMA_HOST}/api/chat.
//
//   node ollama_chat.mjs              the call `fusebox exec` asks for
//   node ollama_chat.mjs --stream     chat, streamed (NDJSON; needs done:true)
//   node ollama_chat.mjs --generate   /api/generate instead of /api/chat
//
// Reads OLLAMA_HOST (the package itself reads no variable: its default is
// http://127.0.0.1:11434), else FUSEBOX_URL; OLLAMA_MODEL, else
// FUSEBOX_MODEL. Streams when FUSEBOX_STREAM=1.
import { Ollama } from 'ollama';
import { PROMPT, fail, modelName } from './common.mjs';

const args = process.argv.slice(2);
for (const a of args)
  if (!['--stream', '--generate'].includes(a)) {
    process.stderr.write(`unknown argument: ${a}\nusage: node ollama_chat.mjs [--stream] [--generate]\n`);
    process.exit(2);
  }
const stream = args.includes('--stream') || process.env.FUSEBOX_STREAM === '1';
const generate = args.includes('--generate');
const host = process.env.OLLAMA_HOST || process.env.FUSEBOX_URL;
const client = new Ollama(host ? { host } : {});
const model = modelName('OLLAMA_MODEL', 'llama3.2');

try {
  let text = '';
  if (generate) {
    const res = await client.generate({ model, prompt: PROMPT, stream });
    if (stream) for await (const part of res) text += part.response ?? '';
    else text = res.response ?? '';
  } else {
    const messages = [{ role: 'user', content: PROMPT }];
    const res = await client.chat({ model, messages, stream });
    // The package throws when a stream ends without a done:true line.
    if (stream) for await (const part of res) text += part.message?.content ?? '';
    else text = res.message?.content ?? '';
  }
  process.stdout.write(text + '\n');
} catch (err) {
  if (err?.status_code !== undefined) err.status = err.status_code;
  fail(err);
}

// genai_chat.mjs - one call through Google's @google/genai with its
// defaults (no retry, no client timeout) at
// {GOOGLE_GEMINI_BASE_URL}/v1beta/models/{model}:generateContent.
//
//   node genai_chat.mjs            generateContent, prints the text
//   node genai_chat.mjs --stream   generateContentStream (alt=sse)
//   node genai_chat.mjs --tools    offers get_weather and runs its calls
//
// Reads GOOGLE_GEMINI_BASE_URL and GEMINI_API_KEY (the SDK does).
import { GoogleGenAI } from '@google/genai';
import { PROMPT, fail } from './common.mjs';
import { runTools } from './tools.mjs';

const args = process.argv.slice(2);
const stream = args.includes('--stream');
const tools = args.includes('--tools');
const client = new GoogleGenAI({});
const model = process.env.GEMINI_MODEL || 'gemini-2.0-flash';
const config = tools ? { tools: [{ functionDeclarations: [{ name: 'get_weather',
  parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }] } : undefined;

try {
  let text = '';
  let calls = [];
  if (stream) {
    const s = await client.models.generateContentStream({ model, contents: PROMPT, config });
    let finished = false;
    for await (const chunk of s) {
      text += chunk.text ?? '';
      calls.push(...(chunk.functionCalls ?? []));
      if (chunk.candidates?.[0]?.finishReason) finished = true;
    }
    if (!finished) throw new Error('the stream ended without a finishReason');
  } else {
    const res = await client.models.generateContent({ model, contents: PROMPT, config });
    text = res.text ?? '';
    calls = res.functionCalls ?? [];
  }
  if (tools) await runTools(calls.map((c) => ({ id: c.id ?? c.name, name: c.name, arguments: c.args })), ['get_weather']);
  process.stdout.write(text + '\n');
} catch (err) {
  fail(err);
}

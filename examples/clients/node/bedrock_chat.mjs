// bedrock_chat.mjs - one call through Amazon's Bedrock Runtime SDK
// (npm @aws-sdk/client-bedrock-runtime) with its defaults (standard retry
// mode, 3 attempts, throttling and transient errors retried with
// exponential backoff and full jitter) but for its HTTP handler: this
// passes @smithy/node-http-handler's NodeHttpHandler (HTTP/1.1) unless
// --h2 is given, which keeps the SDK's default, NodeHttp2Handler (HTTP/2
// with prior knowledge for an http:// endpoint; fusebox serves both).
//
//   node bedrock_chat.mjs            Converse (the call `fusebox exec` asks for)
//   node bedrock_chat.mjs --stream   ConverseStream (the binary event stream)
//   node bedrock_chat.mjs --invoke   InvokeModel with an Anthropic Messages body
//                                    (with --stream: InvokeModelWithResponseStream)
//   node bedrock_chat.mjs --h2       any of the above with the default handler
//
// Reads BEDROCK_ENDPOINT (the client's `endpoint` option), else
// FUSEBOX_URL; AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION (the
// SDK does: placeholders are set when absent; fusebox never checks the
// signature); BEDROCK_MODEL (not FUSEBOX_MODEL: it names an OpenAI-family
// model). Streams when FUSEBOX_STREAM=1.
import {
  BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, InvokeModelCommand,
  InvokeModelWithResponseStreamCommand,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { PROMPT, fail } from './common.mjs';

const args = process.argv.slice(2);
for (const a of args)
  if (a !== '--stream' && a !== '--invoke' && a !== '--h2') {
    process.stderr.write(`unknown argument: ${a}\nusage: node bedrock_chat.mjs [--stream] [--invoke] [--h2]\n`);
    process.exit(2);
  }
const invoke = args.includes('--invoke');
const stream = args.includes('--stream') || process.env.FUSEBOX_STREAM === '1';
process.env.AWS_ACCESS_KEY_ID ||= 'AKIAFUSEBOXEXAMPLE';
process.env.AWS_SECRET_ACCESS_KEY ||= 'fusebox-placeholder-secret';
process.env.AWS_REGION ||= 'us-east-1';
const endpoint = process.env.BEDROCK_ENDPOINT || process.env.FUSEBOX_URL;
const client = new BedrockRuntimeClient({
  ...(endpoint ? { endpoint } : {}),
  ...(args.includes('--h2') ? {} : { requestHandler: new NodeHttpHandler() }),
});
const modelId = process.env.BEDROCK_MODEL || 'anthropic.claude-3-haiku-20240307-v1:0';
const input = { modelId, messages: [{ role: 'user', content: [{ text: PROMPT }] }] };

const utf8 = new TextDecoder();
// InvokeModel's body: the model's own request (Anthropic's Messages API).
const invokeBody = JSON.stringify({
  anthropic_version: 'bedrock-2023-05-31', max_tokens: 256,
  messages: [{ role: 'user', content: PROMPT }],
});

try {
  let text = '';
  if (invoke && stream) {
    const res = await client.send(new InvokeModelWithResponseStreamCommand({
      modelId, contentType: 'application/json', accept: 'application/json', body: invokeBody }));
    let stopped = false;
    for await (const ev of res.body) {
      if (!ev.chunk?.bytes) continue;
      const e = JSON.parse(utf8.decode(ev.chunk.bytes));
      if (e.type === 'content_block_delta') text += e.delta?.text ?? '';
      if (e.type === 'message_stop') stopped = true;
    }
    if (!stopped) throw new Error('the stream ended without message_stop');
  } else if (invoke) {
    const res = await client.send(new InvokeModelCommand({
      modelId, contentType: 'application/json', accept: 'application/json', body: invokeBody }));
    const msg = JSON.parse(utf8.decode(res.body));
    text = (msg.content ?? []).map((c) => c.text ?? '').join('');
  } else if (stream) {
    const res = await client.send(new ConverseStreamCommand(input));
    let stopped = false;
    // An exception message in the stream throws here (ThrottlingException, ...).
    for await (const ev of res.stream) {
      if (ev.contentBlockDelta?.delta?.text) text += ev.contentBlockDelta.delta.text;
      if (ev.messageStop) stopped = true;
    }
    if (!stopped) throw new Error('the stream ended without messageStop');
  } else {
    const res = await client.send(new ConverseCommand(input));
    text = (res.output?.message?.content ?? []).map((c) => c.text ?? '').join('');
  }
  process.stdout.write(text + '\n');
} catch (err) {
  if (err?.$metadata?.httpStatusCode !== undefined) err.status = err.$metadata.httpStatusCode;
  fail(err);
}

// bedrock_chat.mjs - one call through Amazon's Bedrock Runtime SDK
// (npm @aws-sdk/client-bedrock-runtime) with its defaults (standard retry
// mode, 3 attempts, throttling and transient errors retried with
// exponential backoff and full jitter) but for its HTTP handler: the SDK's
// default speaks HTTP/2 (NodeHttp2Handler), which fusebox does not yet, so
// this passes @smithy/node-http-handler's NodeHttpHandler (HTTP/1.1).
//
//   node bedrock_chat.mjs            Converse (the call `fusebox exec` asks for)
//   node bedrock_chat.mjs --stream   ConverseStream (the binary event stream)
//
// Reads BEDROCK_ENDPOINT (the client's `endpoint` option), else
// FUSEBOX_URL; AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_REGION (the
// SDK does: placeholders are set when absent; fusebox never checks the
// signature); BEDROCK_MODEL, else FUSEBOX_MODEL. Streams when FUSEBOX_STREAM=1.
import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { PROMPT, fail, modelName } from './common.mjs';

const args = process.argv.slice(2);
for (const a of args)
  if (a !== '--stream') {
    process.stderr.write(`unknown argument: ${a}\nusage: node bedrock_chat.mjs [--stream]\n`);
    process.exit(2);
  }
const stream = args.includes('--stream') || process.env.FUSEBOX_STREAM === '1';
process.env.AWS_ACCESS_KEY_ID ||= 'AKIAFUSEBOXEXAMPLE';
process.env.AWS_SECRET_ACCESS_KEY ||= 'fusebox-placeholder-secret';
process.env.AWS_REGION ||= 'us-east-1';
const endpoint = process.env.BEDROCK_ENDPOINT || process.env.FUSEBOX_URL;
const client = new BedrockRuntimeClient({
  ...(endpoint ? { endpoint } : {}),
  requestHandler: new NodeHttpHandler(),
});
const modelId = modelName('BEDROCK_MODEL', 'anthropic.claude-3-haiku-20240307-v1:0');
const input = { modelId, messages: [{ role: 'user', content: [{ text: PROMPT }] }] };

try {
  let text = '';
  if (stream) {
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

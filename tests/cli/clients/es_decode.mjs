// es_decode.mjs FILE... - decodes AWS event stream messages with the AWS
// SDK's own codec (@smithy/eventstream-codec, from examples/clients/node),
// which checks both CRCs and every length; prints one line per message:
// ":event-type or :exception-type value, :message-type value, payload".
// Exits 1 when a file does not decode whole.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';

const dir = process.env.NODE_CLIENTS_DIR;
const require = createRequire(dir + '/package.json');
const { EventStreamCodec } = require('@smithy/eventstream-codec');
const dec = new TextDecoder('utf-8', { fatal: true });
const codec = new EventStreamCodec((b) => dec.decode(b), (s) => new TextEncoder().encode(s));

for (const f of process.argv.slice(2)) {
  let buf = readFileSync(f);
  while (buf.length) {
    if (buf.length < 4) throw new Error(`${f}: ${buf.length} bytes left over`);
    const total = buf.readUInt32BE(0);
    const m = codec.decode(buf.subarray(0, total)); // throws on a bad CRC or length
    const h = (k) => m.headers[k]?.value;
    console.log(`${h(':event-type') ?? h(':exception-type')} ${h(':message-type')} ${dec.decode(m.body)}`);
    buf = buf.subarray(total);
  }
}

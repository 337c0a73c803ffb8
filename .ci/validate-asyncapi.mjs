// Validates an AsyncAPI document with the official parser (@asyncapi/parser), $refs to local files
// resolved, then checks that every message payload was resolved into the topic's own schema.
// Usage: node .ci/validate-asyncapi.mjs NODE_PREFIX DOCUMENT   (NODE_PREFIX: where npm installed it)
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const [prefix, documentPath] = process.argv.slice(2);
if (!prefix || !documentPath) {
  console.error('usage: node .ci/validate-asyncapi.mjs NODE_PREFIX DOCUMENT');
  process.exit(2);
}
const require = createRequire(resolve(prefix, 'package.json'));
const { Parser, fromFile } = require('@asyncapi/parser');

const SCHEMA_ID_PREFIX = 'urn:evidence-chain:schema:'; // models/schemas.py ID_PREFIX
const SEVERITY = ['error', 'warning', 'info', 'hint'];

const { document, diagnostics } = await fromFile(new Parser(), resolve(documentPath)).parse();
let failed = false;
for (const d of diagnostics) {
  failed ||= d.severity <= 1;
  const where = d.path.length ? d.path.join('.') : '(document)';
  console.log(`${documentPath}: ${SEVERITY[d.severity] ?? d.severity}: ${d.code}: ${where}: ${d.message}`);
}

function unresolved(value, path, out) {
  if (Array.isArray(value)) value.forEach((v, i) => unresolved(v, `${path}[${i}]`, out));
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref') out.push(`${path}.$ref = ${v}`);
      else unresolved(v, `${path}.${k}`, out);
    }
  }
  return out;
}

let channels = 0;
if (document) {
  for (const channel of document.channels()) {
    channels += 1;
    const address = channel.address();
    for (const message of channel.messages()) {
      const payload = message.payload()?.json();
      const where = `channel ${address}, message ${message.id()}`;
      if (!payload) {
        console.log(`${documentPath}: error: ${where}: no payload`);
        failed = true;
        continue;
      }
      if (payload.$id !== `${SCHEMA_ID_PREFIX}${address}`) {
        console.log(`${documentPath}: error: ${where}: payload $id is ${payload.$id}, not the topic's schema`);
        failed = true;
      }
      for (const ref of unresolved(payload, 'payload', [])) {
        console.log(`${documentPath}: error: ${where}: unresolved ${ref}`);
        failed = true;
      }
    }
  }
} else {
  failed = true;
}
if (failed) {
  console.error(`${documentPath}: not a valid AsyncAPI document (see above)`);
  process.exit(1);
}
console.log(`${documentPath}: valid AsyncAPI ${document.version()}, ${channels} channels, payloads resolved`);

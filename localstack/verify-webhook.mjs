#!/usr/bin/env node
// Verifies a Standard Webhooks signature with the reference library
// (standardwebhooks, pinned in package.json), so tests can check that herald's
// own signer is interoperable.
//
// stdin: {"secret":"whsec_...",
//         "headers":{"webhook-id":"msg_...","webhook-timestamp":"1614265330","webhook-signature":"v1,..."},
//         "body":"<raw request body, exactly as sent>",
//         "json": true}            // optional; false = don't require the body to be JSON
// exit 0 and prints "ok" when the signature is valid; exit 1 and prints the
// error on stderr otherwise (bad signature, timestamp outside the library's
// 5-minute tolerance, missing headers, malformed input). Exit 2 = usage error.
//
// Usage: node localstack/verify-webhook.mjs < input.json   (works from any cwd)
import { Webhook } from "standardwebhooks";

function fail(msg, code = 1) {
  process.stderr.write(`${msg}\n`);
  process.exit(code);
}

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString("utf8");
}

let input;
try {
  input = JSON.parse(await readStdin());
} catch (e) {
  fail(`invalid input: stdin is not JSON: ${e.message}`, 2);
}
if (input === null || typeof input !== "object") fail("invalid input: expected a JSON object", 2);
const { secret, headers, body } = input;
if (typeof secret !== "string" || secret === "") fail("invalid input: \"secret\" must be a non-empty string", 2);
if (headers === null || typeof headers !== "object") fail("invalid input: \"headers\" must be an object", 2);
if (typeof body !== "string") fail("invalid input: \"body\" must be the raw body as a string", 2);

// Header values must be strings for the library (a JSON number timestamp is tolerated).
const hdrs = {};
for (const [k, v] of Object.entries(headers)) {
  if (v !== undefined && v !== null) hdrs[k] = String(v);
}

let wh;
try {
  wh = new Webhook(secret);
} catch (e) {
  fail(`invalid secret: ${e.message}`);
}

try {
  if (input.json === false) {
    wh.verify(body, hdrs, { jsonParse: false });
  } else {
    wh.verify(body, hdrs);
  }
} catch (e) {
  // verify() parses the body as JSON after the signature matched; a SyntaxError
  // therefore means "signature fine, body is not JSON".
  if (e instanceof SyntaxError) fail(`signature valid but body is not JSON: ${e.message}`);
  fail(e && e.message ? e.message : String(e));
}
process.stdout.write("ok\n");

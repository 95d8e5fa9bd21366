// The bench's TypeScript-runtime peer: herald's webhook path written the
// usual Node way.
//
// A Powertools for AWS Lambda (TypeScript) BatchProcessor handler for SQS,
// records handled in parallel (the library's default, processInParallel):
// each record's body is a herald notification (docs/contract.md); the
// handler validates the few fields it needs, signs the Standard Webhooks
// envelope (webhook-id, webhook-timestamp, webhook-signature) and POSTs it
// with fetch (undici: connections kept alive across records and
// invocations). A record whose POST fails or answers non-2xx throws, and
// Powertools reports it in batchItemFailures (partial batch response).
//
// Plain JavaScript (ES module) so that Node runs it without a build step;
// the library is the same package TypeScript users import.
import { createHmac } from 'node:crypto';
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
} from '@aws-lambda-powertools/batch';

const secret = process.env.PEER_WEBHOOK_SECRET;
const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
const timeoutMs = 15_000;

const processor = new BatchProcessor(EventType.SQS);

const recordHandler = async (record) => {
  const n = JSON.parse(record.body);
  if (n.version !== 1 || n.channel !== 'webhook' || !n.id) {
    throw new Error('invalid notification');
  }
  const { url, event_type: eventType, payload } = n.webhook;
  if (!url.startsWith('https://') || !eventType) {
    throw new Error('invalid webhook');
  }
  const ts = Math.floor(Date.now() / 1000);
  const body = JSON.stringify({
    type: eventType,
    timestamp: new Date(ts * 1000).toISOString().replace('.000Z', 'Z'),
    data: payload,
  });
  const sig = createHmac('sha256', key).update(`${n.id}.${ts}.${body}`).digest('base64');
  const resp = await fetch(url, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': n.id,
      'webhook-timestamp': String(ts),
      'webhook-signature': `v1,${sig}`,
    },
    signal: AbortSignal.timeout(timeoutMs),
  });
  await resp.arrayBuffer();
  if (resp.status < 200 || resp.status > 299) {
    throw new Error(`webhook answered ${resp.status}`);
  }
};

export const handler = async (event, context) =>
  processPartialResponse(event, recordHandler, processor, { context });

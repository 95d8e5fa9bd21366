// The bench's TypeScript-runtime peer: herald's webhook path written the
// usual Node way.
//
// A Powertools for AWS Lambda (TypeScript) BatchProcessor handler for SQS,
// records handled in parallel (the library's default, processInParallel):
// each record's body is a herald notification (docs/contract.md); the
// handler validates the few fields it needs, signs the Standard Webhooks
// envelope (webhook-id, webhook-timestamp, webhook-signature) and POSTs it
// with the client PEER_HTTP_CLIENT names: "fetch" (the default; undici,
// connections kept alive across records and invocations) or "https" (a
// node:https request through one keep-alive https.Agent, the strongest
// setup measured: fetch spends several times its CPU per request). A record
// whose POST fails or answers non-2xx throws, and Powertools reports it in
// batchItemFailures (partial batch response).
//
// With PEER_IDEMPOTENCY_TABLE set, each record's delivery is wrapped in
// the Powertools idempotency utility (makeIdempotent) with its DynamoDB
// persistence layer on that table (keys pk and sk, as herald's), keyed by
// the notification id, its payload validated against the stored one
// (payloadValidationJmesPath "webhook"), kept 24 hours, as herald's
// delivered-once window: the peer doing herald's job with its store. The
// DynamoDB client keeps its connections alive (one keep-alive agent).
//
// Plain JavaScript (ES module) so that Node runs it without a build step;
// the library is the same package TypeScript users import.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import {
  BatchProcessor,
  EventType,
  processPartialResponse,
} from '@aws-lambda-powertools/batch';

const secret = process.env.PEER_WEBHOOK_SECRET;
const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
const timeoutMs = 15_000;

const processor = new BatchProcessor(EventType.SQS);
const agent = new https.Agent({ keepAlive: true });

// postFetch and postHttps POST body with headers and resolve to the
// answer's status once its body is read.
const postFetch = async (url, body, headers) => {
  const resp = await fetch(url, {
    method: 'POST',
    body,
    headers,
    signal: AbortSignal.timeout(timeoutMs),
  });
  await resp.arrayBuffer();
  return resp.status;
};

const postHttps = (url, body, headers) =>
  new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { method: 'POST', agent, headers: { ...headers, 'content-length': Buffer.byteLength(body) }, timeout: timeoutMs },
      (res) => {
        res.on('data', () => {});
        res.on('end', () => resolve(res.statusCode));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });

const clients = { fetch: postFetch, https: postHttps };
const post = clients[process.env.PEER_HTTP_CLIENT || 'fetch'];
if (!post) {
  throw new Error(`PEER_HTTP_CLIENT=${process.env.PEER_HTTP_CLIENT}: want fetch or https`);
}

const deliver = async (n) => {
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
  const status = await post(url, body, {
    'content-type': 'application/json',
    'webhook-id': n.id,
    'webhook-timestamp': String(ts),
    'webhook-signature': `v1,${sig}`,
  });
  if (status < 200 || status > 299) {
    throw new Error(`webhook answered ${status}`);
  }
};

// The idempotency modules are imported only when used, so that the plain
// peers' cold start and memory are as before.
const table = process.env.PEER_IDEMPOTENCY_TABLE;
let idempotency;
let send = deliver;
if (table) {
  const { IdempotencyConfig, makeIdempotent } = await import('@aws-lambda-powertools/idempotency');
  const { DynamoDBPersistenceLayer } = await import('@aws-lambda-powertools/idempotency/dynamodb');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  idempotency = new IdempotencyConfig({ eventKeyJmesPath: 'id', payloadValidationJmesPath: 'webhook', expiresAfterSeconds: 86400 });
  send = makeIdempotent(deliver, {
    persistenceStore: new DynamoDBPersistenceLayer({
      tableName: table,
      keyAttr: 'pk',
      sortKeyAttr: 'sk',
      awsSdkV3Client: new DynamoDBClient({
        requestHandler: {
          httpAgent: new http.Agent({ keepAlive: true }),
          httpsAgent: new https.Agent({ keepAlive: true }),
        },
      }),
    }),
    config: idempotency,
  });
}

const recordHandler = async (record) => {
  const n = JSON.parse(record.body);
  if (n.version !== 1 || n.channel !== 'webhook' || !n.id) {
    throw new Error('invalid notification');
  }
  await send(n);
};

export const handler = async (event, context) => {
  idempotency?.registerLambdaContext(context);
  return processPartialResponse(event, recordHandler, processor, { context });
};

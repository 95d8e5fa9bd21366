"""The bench's async peer: herald's webhook path written the asyncio way.

A Powertools for AWS Lambda (Python) AsyncBatchProcessor handler for SQS:
every record of the batch is handled at once (asyncio.gather); each record's
body is a herald notification (docs/contract.md); the handler validates the
few fields it needs, signs the Standard Webhooks envelope (webhook-id,
webhook-timestamp, webhook-signature) and POSTs it with one aiohttp
ClientSession, kept across invocations so its connections are reused. A
record whose POST fails or answers non-2xx raises, and Powertools reports it
in batchItemFailures (partial batch response).
"""

import base64
import hashlib
import hmac
import json
import os
import time

import aiohttp
from aws_lambda_powertools.utilities.batch import (
    AsyncBatchProcessor,
    EventType,
    async_process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

_SECRET = os.environ["PEER_WEBHOOK_SECRET"]
_KEY = base64.b64decode(_SECRET.removeprefix("whsec_"))
_TIMEOUT = aiohttp.ClientTimeout(total=15)

processor = AsyncBatchProcessor(event_type=EventType.SQS)
_session: aiohttp.ClientSession | None = None


class DeliveryError(Exception):
    pass


def _get_session() -> aiohttp.ClientSession:
    # Created inside the event loop Powertools keeps across invocations. No
    # limit on connections per host (aiohttp's default is 100 in total).
    global _session
    if _session is None:
        _session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0), timeout=_TIMEOUT)
    return _session


async def record_handler(record: SQSRecord):
    n = json.loads(record.body)
    if n.get("version") != 1 or n.get("channel") != "webhook" or not n.get("id"):
        raise ValueError("invalid notification")
    hook = n["webhook"]
    url, event_type = hook["url"], hook["event_type"]
    if not url.startswith("https://") or not event_type:
        raise ValueError("invalid webhook")
    ts = int(time.time())
    body = json.dumps(
        {"type": event_type, "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)), "data": hook.get("payload")},
        separators=(",", ":"),
    )
    sig = base64.b64encode(hmac.new(_KEY, f"{n['id']}.{ts}.{body}".encode(), hashlib.sha256).digest()).decode()
    async with _get_session().post(
        url,
        data=body.encode(),
        headers={
            "content-type": "application/json",
            "webhook-id": n["id"],
            "webhook-timestamp": str(ts),
            "webhook-signature": "v1," + sig,
        },
    ) as resp:
        await resp.read()
        if not 200 <= resp.status < 300:
            raise DeliveryError(f"webhook answered {resp.status}")


def lambda_handler(event, context):
    return async_process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)

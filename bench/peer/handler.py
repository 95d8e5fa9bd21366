"""The bench's peer: herald's webhook path written the usual Python way.

A Powertools for AWS Lambda (Python) BatchProcessor handler for SQS: each
record's body is a herald notification (docs/contract.md); the handler
validates the few fields it needs, signs the Standard Webhooks envelope
(webhook-id, webhook-timestamp, webhook-signature) and POSTs it with
requests, one record after another as BatchProcessor runs them. A record
whose POST fails or answers non-2xx raises, and Powertools reports it in
batchItemFailures (partial batch response).
"""

import base64
import hashlib
import hmac
import json
import os
import time

import requests
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord

_SECRET = os.environ["PEER_WEBHOOK_SECRET"]
_KEY = base64.b64decode(_SECRET.removeprefix("whsec_"))
_TIMEOUT_S = 15

processor = BatchProcessor(event_type=EventType.SQS)
session = requests.Session()  # connections are reused across records and invocations


class DeliveryError(Exception):
    pass


def record_handler(record: SQSRecord):
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
    resp = session.post(
        url,
        data=body.encode(),
        headers={
            "content-type": "application/json",
            "webhook-id": n["id"],
            "webhook-timestamp": str(ts),
            "webhook-signature": "v1," + sig,
        },
        timeout=_TIMEOUT_S,
    )
    if not 200 <= resp.status_code < 300:
        raise DeliveryError(f"webhook answered {resp.status_code}")


def lambda_handler(event, context):
    return process_partial_response(event=event, record_handler=record_handler, processor=processor, context=context)

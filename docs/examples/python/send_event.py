"""Sends one event for a tenant to herald's event queue with boto3: any SQS
client in any language does the same. Environment: HERALD_EVENT_QUEUE_URL
(the stack's EventQueueUrl), your usual AWS credentials and Region
(AWS_DEFAULT_REGION or your AWS config)."""
import json
import os

import boto3

event = {
    "version": 1,
    "id": "evt_01jh7q3kz9",  # yours, unique per event: a second send of it delivers nothing twice
    "channel": "event",
    "event": {
        "tenant": "acme",
        "type": "invoice.paid",
        "payload": {"invoice_id": "INV-2026-0042", "amount": 4200, "currency": "EUR"},
    },
}
sqs = boto3.client("sqs")
sent = sqs.send_message(QueueUrl=os.environ["HERALD_EVENT_QUEUE_URL"], MessageBody=json.dumps(event))
print("sent", event["id"], sent["MessageId"])

from standardwebhooks.webhooks import Webhook, WebhookVerificationError


def receive(secret: str, headers: dict, body: bytes) -> dict:
    """Verifies a request of herald with the endpoint's secret (whsec_...)
    and returns its body: {"type": ..., "timestamp": ..., "data": ...}.
    headers: the request's headers (any case); body: the raw body, as received.
    Raises WebhookVerificationError when the request is not herald's."""
    event = Webhook(secret).verify(body, headers)
    # event["type"] == headers["herald-event-type"]; headers["webhook-id"] is the
    # same on every attempt of a delivery: deduplicate on it.
    return event

#!/usr/bin/env python3
"""Verifies a Standard Webhooks signature with the Python reference library
(standardwebhooks, pinned in localstack/requirements-verify.txt), as
verify-webhook.mjs does with the JavaScript one: tests check herald's signer
against both.

stdin: {"secret": "whsec_...", "headers": {"webhook-id": ..., "webhook-timestamp": ...,
        "webhook-signature": ...}, "body": "<raw body>", "json": true}
exit 0 printing "ok" when valid; exit 1 with the error on stderr otherwise;
exit 2 for malformed input.
"""
import json
import sys

from standardwebhooks.webhooks import Webhook


def main() -> int:
    try:
        data = json.load(sys.stdin)
        secret, headers, body = data["secret"], data["headers"], data["body"]
    except (ValueError, KeyError, TypeError) as e:
        print(f"invalid input: {e}", file=sys.stderr)
        return 2
    try:
        Webhook(secret).verify(body, {k: str(v) for k, v in headers.items()}, json_parse=data.get("json", True))
    except Exception as e:  # the library raises WebhookVerificationError and decoding errors
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Registers a webhook endpoint for a tenant through herald's endpoints API,
signing the request with Signature Version 4 (botocore) and sending it with
requests. Environment: HERALD_ENDPOINTS_API_URL (the stack's EndpointsApiUrl),
your usual AWS credentials and Region
(AWS_DEFAULT_REGION or your AWS config)."""
import json
import os

import botocore.session
import requests
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest


def call(method, path, body=None):
    url = os.environ["HERALD_ENDPOINTS_API_URL"].rstrip("/") + path
    data = json.dumps(body) if body is not None else None
    req = AWSRequest(method=method, url=url, data=data, headers={"Content-Type": "application/json"})
    session = botocore.session.get_session()
    SigV4Auth(session.get_credentials(), "execute-api", session.get_config_variable("region")).add_auth(req)
    resp = requests.request(method, url, data=data, headers=dict(req.headers), timeout=30)
    answer = resp.json() if resp.content else None
    if resp.status_code >= 400:
        # {"error": {"code": ..., "field": ..., "message": ...}}: nothing was written
        raise RuntimeError(f"{resp.status_code}: {answer['error']}")
    return answer


created = call("POST", "/v1/endpoints", {
    "tenant": "acme",
    "url": "https://hooks.acme.example/herald",
    "description": "Acme's billing system",
    "event_types": ["invoice.*", "customer.deleted"],
})
print(created["endpoint"]["id"], created["secret"])  # the secret is shown only now

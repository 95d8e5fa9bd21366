"""Provision herald's local AWS resources. Idempotent; safe to run any number of times.

Used in two ways:
  * host mode: scripts/local-up.sh runs it with .venv/localstack/bin/python (has boto3);
  * Docker:    mounted into /etc/localstack/init/ready.d/, where LocalStack exec()s it
               in-process once the gateway is ready (no __file__, __name__ == "builtins",
               and it must never call sys.exit there).

Creates:
  * SQS DLQ   $HERALD_DLQ_NAME   (default herald-notifications-dlq): 14 days retention, SSE-SQS
  * SQS queue $HERALD_QUEUE_NAME (default herald-notifications): visibility timeout
    $HERALD_VISIBILITY_TIMEOUT (30), 4 days retention, SSE-SQS, RedrivePolicy to the DLQ with
    maxReceiveCount $HERALD_MAX_RECEIVE_COUNT (13): the queue of every channel, as
    template.yaml keeps it (SharedQueue Keep).
  * for each channel (CHANNELS: email, webhook, chat, event, as notification.Channels) a queue
    herald-CHANNEL with its DLQ herald-CHANNEL-dlq, the same settings, as template.yaml's
    channel queues. Existing queues get their attributes re-applied, so changed settings
    converge without a restart.
  * SES v1 (LocalStack) identities noreply@example.com, billing@example.com, example.com
    (best effort: skipped if SES is not enabled).
  * SES v2 emulator (aws-ses-v2-local) template "password-reset" (created, or updated if it
    already exists).
  * DynamoDB table $HERALD_STORE_TABLE (default herald-store), herald's store (internal/store):
    string keys pk and sk, on-demand, encrypted, time to live on expires_at, as template.yaml's
    StoreTable, with its global secondary index tenant-index (registered endpoints by tenant).
    Served by moto (PROVIDER_OVERRIDE_DYNAMODB=moto, localstack/lambda-executor);
    skipped with a note when DynamoDB is not enabled (the Docker setup). Its name goes to the env
    file as HERALD_STORE_TABLE.
  * KMS key alias/herald-endpoints ($HERALD_ENDPOINT_KEY_ALIAS), template.yaml's EndpointKey:
    seals registered endpoints' secrets (package endpoint). Its alias goes to the env file as
    HERALD_ENDPOINT_KEY_ID.
  * Secrets Manager secret $HERALD_SECRET_NAME (default herald/webhook-signing) holding the demo
    webhook signing secret (created, or its value re-applied if it differs). Its ARN goes to the
    env file as HERALD_WEBHOOK_SECRET_ARN. The value is a published demo key, not a secret.

Env: HERALD_SQS_ENDPOINT (default http://127.0.0.1:4566), HERALD_SES_ENDPOINT (SES v1,
default = SQS endpoint), HERALD_SECRETSMANAGER_ENDPOINT (default = SQS endpoint),
HERALD_SESV2_ENDPOINT (default http://127.0.0.1:8005), HERALD_DYNAMODB_ENDPOINT (default = SQS endpoint),
HERALD_SESV2_WAIT (seconds to wait for the SES v2 emulator, default 30),
HERALD_PROVISION_ENV_FILE (optional: write KEY=value lines there, e.g. .local/herald.env:
AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_SESV2, AWS_REGION, AWS_DEFAULT_REGION, dummy credentials,
AWS_EC2_METADATA_DISABLED=true, every queue's URL (HERALD_QUEUE_URL, HERALD_DLQ_URL and
HERALD_<CHANNEL>_QUEUE_URL, HERALD_<CHANNEL>_DLQ_URL, as the functions read them) and the
signing secret's ARN and the table's name),
AWS_REGION (default us-east-1). Credentials are always the dummy test/test.
"""

import json
import os
import sys
import time

QUEUE_NAME = os.environ.get("HERALD_QUEUE_NAME") or "herald-notifications"
DLQ_NAME = os.environ.get("HERALD_DLQ_NAME") or "herald-notifications-dlq"
MAX_RECEIVE_COUNT = int(os.environ.get("HERALD_MAX_RECEIVE_COUNT") or 13)
VISIBILITY_TIMEOUT = int(os.environ.get("HERALD_VISIBILITY_TIMEOUT") or 30)
REGION = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or "us-east-1"
SQS_ENDPOINT = os.environ.get("HERALD_SQS_ENDPOINT") or "http://127.0.0.1:4566"
SES_ENDPOINT = os.environ.get("HERALD_SES_ENDPOINT") or SQS_ENDPOINT
SESV2_ENDPOINT = os.environ.get("HERALD_SESV2_ENDPOINT") or "http://127.0.0.1:8005"
SECRETSMANAGER_ENDPOINT = os.environ.get("HERALD_SECRETSMANAGER_ENDPOINT") or SQS_ENDPOINT
SECRET_NAME = os.environ.get("HERALD_SECRET_NAME") or "herald/webhook-signing"
DYNAMODB_ENDPOINT = os.environ.get("HERALD_DYNAMODB_ENDPOINT") or SQS_ENDPOINT
STORE_TABLE = os.environ.get("HERALD_STORE_TABLE") or "herald-store"
# The tenant index of registered endpoints, as template.yaml's StoreTable (package endpoint).
STORE_ATTRIBUTES = [
    {"AttributeName": k, "AttributeType": "S"} for k in ("pk", "sk", "gsi1pk", "gsi1sk")
]
TENANT_INDEX = {
    "IndexName": "tenant-index",
    "KeySchema": [
        {"AttributeName": "gsi1pk", "KeyType": "HASH"},
        {"AttributeName": "gsi1sk", "KeyType": "RANGE"},
    ],
    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["event_types", "disabled_at", "kind"]},
}
ENDPOINT_KEY_ALIAS = os.environ.get("HERALD_ENDPOINT_KEY_ALIAS") or "alias/herald-endpoints"
# The demo's signing key (cmd/herald-demo demoSecret): published, so not a secret anywhere.
DEMO_SIGNING_SECRET = "whsec_ZGVtby1zaWduaW5nLWtleS1mb3ItaGVyYWxkLWxvY2Fs"
SESV2_WAIT = float(os.environ.get("HERALD_SESV2_WAIT") or 30)
ENV_FILE = os.environ.get("HERALD_PROVISION_ENV_FILE") or ""

# The channels, as notification.Channels: each gets its own queue and DLQ.
CHANNELS = ["email", "webhook", "chat", "event"]
CHANNEL_QUEUE_PREFIX = os.environ.get("HERALD_CHANNEL_QUEUE_PREFIX") or "herald"

SES_EMAIL_IDENTITIES = ["noreply@example.com", "billing@example.com"]
SES_DOMAIN_IDENTITIES = ["example.com"]

PASSWORD_RESET_TEMPLATE = {
    "TemplateName": "password-reset",
    "TemplateContent": {
        "Subject": "Reset your password, {{name}}",
        "Text": (
            "Hi {{name}},\n\n"
            "We received a request to reset your password. Open this link to choose a new one:\n\n"
            "{{link}}\n\n"
            "The link expires in {{expires_minutes}} minutes. If you did not ask for this, "
            "you can ignore this email.\n"
        ),
        "Html": (
            "<!doctype html><html><body>"
            "<p>Hi {{name}},</p>"
            "<p>We received a request to reset your password. "
            '<a href="{{link}}">Choose a new password</a>.</p>'
            "<p>The link expires in {{expires_minutes}} minutes. If you did not ask for this, "
            "you can ignore this email.</p>"
            "</body></html>"
        ),
    },
}
TEMPLATES = [PASSWORD_RESET_TEMPLATE]


class ProvisionError(Exception):
    pass


def _log(msg):
    print(f"[provision] {msg}", flush=True)


def _client(service, endpoint):
    import boto3
    from botocore.config import Config

    return boto3.session.Session().client(
        service,
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id="test",
        aws_secret_access_key="test",
        config=Config(
            connect_timeout=3,
            read_timeout=15,
            retries={"max_attempts": 3, "mode": "standard"},
        ),
    )


def _error_code(exc):
    return (getattr(exc, "response", None) or {}).get("Error", {}).get("Code", "") or ""


def _error_message(exc):
    return (getattr(exc, "response", None) or {}).get("Error", {}).get("Message", "") or str(exc)


def _ensure_queue(sqs, name, attributes):
    """Create the queue, or re-apply the attributes if it exists. Returns (url, arn)."""
    from botocore.exceptions import ClientError

    try:
        url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
    except ClientError as e:
        if "NonExistentQueue" not in _error_code(e) and "QueueDoesNotExist" not in _error_code(e):
            raise
        url = None
    if url is None:
        url = sqs.create_queue(QueueName=name, Attributes=attributes)["QueueUrl"]
        _log(f"created queue {name}")
    else:
        sqs.set_queue_attributes(QueueUrl=url, Attributes=attributes)
        _log(f"queue {name} exists; attributes re-applied")
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def _ensure_pair(sqs, name, dlq_name):
    """A queue and its DLQ with herald's settings. Returns (url, arn, dlq_url, dlq_arn)."""
    dlq_url, dlq_arn = _ensure_queue(
        sqs,
        dlq_name,
        # MaximumMessageSize: 1 MiB, as template.yaml (notification.SQSMaxMessageBytes).
        {"MessageRetentionPeriod": "1209600", "SqsManagedSseEnabled": "true", "MaximumMessageSize": "1048576"},
    )
    queue_url, queue_arn = _ensure_queue(
        sqs,
        name,
        {
            "VisibilityTimeout": str(VISIBILITY_TIMEOUT),
            "MessageRetentionPeriod": "345600",
            "MaximumMessageSize": "1048576",
            "SqsManagedSseEnabled": "true",
            "RedrivePolicy": json.dumps(
                {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": MAX_RECEIVE_COUNT}
            ),
        },
    )
    return queue_url, queue_arn, dlq_url, dlq_arn


def provision_sqs():
    sqs = _client("sqs", SQS_ENDPOINT)
    queue_url, queue_arn, dlq_url, dlq_arn = _ensure_pair(sqs, QUEUE_NAME, DLQ_NAME)
    values = {
        "HERALD_QUEUE_NAME": QUEUE_NAME,
        "HERALD_QUEUE_URL": queue_url,
        "HERALD_QUEUE_ARN": queue_arn,
        "HERALD_DLQ_NAME": DLQ_NAME,
        "HERALD_DLQ_URL": dlq_url,
        "HERALD_DLQ_ARN": dlq_arn,
        "HERALD_MAX_RECEIVE_COUNT": str(MAX_RECEIVE_COUNT),
    }
    for channel in CHANNELS:
        name = f"{CHANNEL_QUEUE_PREFIX}-{channel}"
        url, _, dlq, _ = _ensure_pair(sqs, name, name + "-dlq")
        values[f"HERALD_{channel.upper()}_QUEUE_URL"] = url
        values[f"HERALD_{channel.upper()}_DLQ_URL"] = dlq
    return values


def provision_ses_v1():
    """Best effort: verify identities in LocalStack's SES v1 (skipped if SES isn't enabled)."""
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        ses = _client("ses", SES_ENDPOINT)
        for email in SES_EMAIL_IDENTITIES:
            ses.verify_email_identity(EmailAddress=email)
        for domain in SES_DOMAIN_IDENTITIES:
            ses.verify_domain_identity(Domain=domain)
    except (ClientError, BotoCoreError) as e:
        _log(f"SES v1 not available at {SES_ENDPOINT}, identities skipped ({_error_message(e)})")
        return
    _log("SES v1 identities verified: " + ", ".join(SES_EMAIL_IDENTITIES + SES_DOMAIN_IDENTITIES))


def _wait_for_sesv2():
    """The emulator may still be starting (Docker: npx installs it first)."""
    import urllib.error
    import urllib.request

    deadline = time.monotonic() + SESV2_WAIT
    url = SESV2_ENDPOINT.rstrip("/") + "/health-check"
    last = None
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if 200 <= resp.status < 300:
                    return
                last = f"HTTP {resp.status}"
        except (urllib.error.URLError, OSError) as e:
            last = e
        if time.monotonic() >= deadline:
            raise ProvisionError(
                f"SES v2 emulator not reachable at {url} after {SESV2_WAIT:.0f}s: {last}"
            )
        time.sleep(0.5)


def provision_sesv2():
    from botocore.exceptions import ClientError

    _wait_for_sesv2()
    sesv2 = _client("sesv2", SESV2_ENDPOINT)
    for tpl in TEMPLATES:
        name = tpl["TemplateName"]
        try:
            sesv2.create_email_template(**tpl)
            _log(f"SES v2 template {name} created")
        except ClientError as e:
            # aws-ses-v2-local answers 400 {"type":"AlreadyExistsException",...}, which botocore
            # does not map to an error code, so look at the message too.
            if "AlreadyExists" not in _error_code(e) and "already exists" not in _error_message(e):
                raise
            sesv2.update_email_template(**tpl)
            _log(f"SES v2 template {name} exists; content updated")
    return {"HERALD_SES_TEMPLATES": ",".join(t["TemplateName"] for t in TEMPLATES)}


def provision_secrets():
    """The webhook signing secret, as template.yaml stores it: whsec_ values, space-separated."""
    from botocore.exceptions import ClientError

    sm = _client("secretsmanager", SECRETSMANAGER_ENDPOINT)
    try:
        arn = sm.create_secret(
            Name=SECRET_NAME,
            Description="herald local demo webhook signing secrets (whsec_ values, space-separated)",
            SecretString=DEMO_SIGNING_SECRET,
        )["ARN"]
        _log(f"secret {SECRET_NAME} created")
    except ClientError as e:
        if _error_code(e) != "ResourceExistsException":
            raise
        arn = sm.describe_secret(SecretId=SECRET_NAME)["ARN"]
        if sm.get_secret_value(SecretId=arn).get("SecretString") != DEMO_SIGNING_SECRET:
            sm.put_secret_value(SecretId=arn, SecretString=DEMO_SIGNING_SECRET)
            _log(f"secret {SECRET_NAME} exists; value re-applied")
        else:
            _log(f"secret {SECRET_NAME} exists")
    return {"HERALD_WEBHOOK_SECRET_ARN": arn}


def provision_store():
    """herald's DynamoDB table, as template.yaml's StoreTable (internal/store/doc.go)."""
    from botocore.exceptions import BotoCoreError, ClientError

    ddb = _client("dynamodb", DYNAMODB_ENDPOINT)
    try:
        ddb.create_table(
            TableName=STORE_TABLE,
            AttributeDefinitions=STORE_ATTRIBUTES,
            KeySchema=[
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "sk", "KeyType": "RANGE"},
            ],
            GlobalSecondaryIndexes=[TENANT_INDEX],
            BillingMode="PAY_PER_REQUEST",
            SSESpecification={"Enabled": True},
        )
        _log(f"DynamoDB table {STORE_TABLE} created")
    except ClientError as e:
        if _error_code(e) != "ResourceInUseException":
            raise
        _log(f"DynamoDB table {STORE_TABLE} exists")
    except BotoCoreError as e:
        _log(f"DynamoDB not available at {DYNAMODB_ENDPOINT}, table skipped ({e})")
        return {}
    ddb.get_waiter("table_exists").wait(TableName=STORE_TABLE, WaiterConfig={"Delay": 0.2, "MaxAttempts": 50})
    indexes = ddb.describe_table(TableName=STORE_TABLE)["Table"].get("GlobalSecondaryIndexes") or []
    if not any(i["IndexName"] == TENANT_INDEX["IndexName"] for i in indexes):
        # A table made before the index existed gets it.
        ddb.update_table(
            TableName=STORE_TABLE,
            AttributeDefinitions=STORE_ATTRIBUTES,
            GlobalSecondaryIndexUpdates=[{"Create": TENANT_INDEX}],
        )
        _log(f"DynamoDB table {STORE_TABLE}: index {TENANT_INDEX['IndexName']} added")
    ttl = ddb.describe_time_to_live(TableName=STORE_TABLE)["TimeToLiveDescription"]
    if ttl.get("TimeToLiveStatus") not in ("ENABLED", "ENABLING"):
        ddb.update_time_to_live(
            TableName=STORE_TABLE,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires_at"},
        )
    return {"HERALD_STORE_TABLE": STORE_TABLE}


def provision_endpoint_key():
    """The KMS key that seals registered endpoints' secrets, as template.yaml's EndpointKey
    (package endpoint), found again by its alias; its alias goes to the env file as
    HERALD_ENDPOINT_KEY_ID."""
    from botocore.exceptions import ClientError

    kms = _client("kms", SQS_ENDPOINT)
    try:
        kms.describe_key(KeyId=ENDPOINT_KEY_ALIAS)
        _log(f"KMS key {ENDPOINT_KEY_ALIAS} exists")
    except ClientError as e:
        if _error_code(e) != "NotFoundException":
            raise
        key = kms.create_key(Description="Seals the registered endpoints' secrets of local herald.")
        kms.create_alias(AliasName=ENDPOINT_KEY_ALIAS, TargetKeyId=key["KeyMetadata"]["KeyId"])
        _log(f"KMS key {ENDPOINT_KEY_ALIAS} created")
    return {"HERALD_ENDPOINT_KEY_ID": ENDPOINT_KEY_ALIAS}


def _write_env_file(values):
    path = os.path.abspath(ENV_FILE)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("# written by localstack/init/ready.d/provision.py\n")
        for k, v in values.items():
            f.write(f"{k}={v}\n")
    os.replace(tmp, path)
    _log(f"wrote {path}")


def main():
    started = time.monotonic()
    # Sourced (set -a; . herald.env; set +a), these point the AWS CLI, the SDKs, herald's
    # functions and the herald command at the local stack: the SDKs' standard endpoint
    # variables, a Region for both the SDKs (AWS_REGION) and the CLI (AWS_DEFAULT_REGION),
    # dummy credentials, and no instance metadata service lookups.
    values = {
        "AWS_ENDPOINT_URL": SQS_ENDPOINT,
        "AWS_ENDPOINT_URL_SESV2": SESV2_ENDPOINT,
        "AWS_REGION": REGION,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_EC2_METADATA_DISABLED": "true",
        "HERALD_SQS_ENDPOINT": SQS_ENDPOINT,
        "HERALD_SESV2_ENDPOINT": SESV2_ENDPOINT,
    }
    values.update(provision_sqs())
    provision_ses_v1()
    values.update(provision_sesv2())
    values.update(provision_secrets())
    values.update(provision_store())
    values.update(provision_endpoint_key())
    _log(f"queue URL: {values['HERALD_QUEUE_URL']}")
    _log(f"DLQ URL:   {values['HERALD_DLQ_URL']}")
    for channel in CHANNELS:
        _log(f"{channel} queue URL: {values[f'HERALD_{channel.upper()}_QUEUE_URL']}")
    if ENV_FILE:
        _write_env_file(values)
    _log(f"done in {time.monotonic() - started:.1f}s")
    return values


def _cli():
    try:
        main()
    except Exception as e:  # noqa: BLE001 - report any failure as a non-zero exit
        print(f"[provision] FAILED: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(_cli())
elif __name__ == "builtins":
    # exec()'d by LocalStack's init hook runner with empty globals, so __name__ resolves to
    # the builtins module's name. Exceptions propagate to LocalStack, which logs the script
    # as failed (visible via /_localstack/init); SystemExit must not be raised here.
    main()

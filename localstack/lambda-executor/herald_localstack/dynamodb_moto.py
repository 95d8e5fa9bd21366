"""LocalStack's DynamoDB served by moto, for a host with only package registries.

LocalStack's own DynamoDB providers ("default", "v2") forward every request to
DynamoDB Local, which LocalStack downloads on first use from outside the package
registries and which is under Amazon's own licence, not an open-source one.
herald's local stack uses neither: PROVIDER_OVERRIDE_DYNAMODB=moto selects this
provider, which implements none of DynamoDB's operations itself. LocalStack's
moto fallback dispatcher answers each one from moto's DynamoDB backend (moto-ext,
Apache-2.0, already installed with LocalStack), in-process, so the gateway serves
DynamoDB on the same endpoint as everything else and CloudFormation creates
tables through it (`make deploy-local`).

What moto does not do, and herald allows for (internal/store, docs/deploy.md):
it never deletes items whose time to live has passed (herald ignores expired
items it reads), replays of ClientRequestToken are not idempotent, and a stack
update does not change an existing table.

Interface: localstack.services.plugins.aws_provider (LocalStack 2026.3); plugin
namespace "localstack.aws.provider", name "dynamodb:moto".
"""

from binascii import crc32

from localstack.services.plugins import Service, ServiceLifecycleHook, aws_provider


def _crc32_of_body(chain, context, response) -> None:
    """Sets x-amz-crc32 to the CRC32 of the body the client receives.

    moto computes the header over its own body, which LocalStack's gateway then
    serializes again; the AWS SDKs check the header against what they read
    (DynamoDB's response checksum) and log a warning on every mismatch.
    """
    response.headers["x-amz-crc32"] = str(crc32(response.data) & 0xFFFFFFFF)


@aws_provider(api="dynamodb", name="moto")
def dynamodb_moto() -> Service:
    from localstack.aws import handlers
    from localstack.aws.api.dynamodb import DynamodbApi
    from localstack.services.moto import MotoFallbackDispatcher

    class MotoDynamoDBProvider(DynamodbApi, ServiceLifecycleHook):
        """Every operation is the API's unimplemented stub: moto answers it."""

        def on_after_init(self):
            handlers.modify_service_response.append("dynamodb", _crc32_of_body)

    return Service.for_provider(MotoDynamoDBProvider(), dispatch_table_factory=MotoFallbackDispatcher)

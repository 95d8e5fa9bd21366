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

from localstack.services.plugins import Service, aws_provider


@aws_provider(api="dynamodb", name="moto")
def dynamodb_moto() -> Service:
    from localstack.aws.api.dynamodb import DynamodbApi
    from localstack.services.moto import MotoFallbackDispatcher

    class MotoDynamoDBProvider(DynamodbApi):
        """Every operation is the API's unimplemented stub: moto answers it."""

    return Service.for_provider(MotoDynamoDBProvider(), dispatch_table_factory=MotoFallbackDispatcher)

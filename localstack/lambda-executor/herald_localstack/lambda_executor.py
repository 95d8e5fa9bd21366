"""A LocalStack Lambda runtime executor for a host without a Docker engine.

LocalStack (open source) runs every Lambda function in a Docker container:
when a function is created its "docker" executor installs LocalStack's Lambda
runtime init (a binary downloaded from GitHub releases) and pulls the
runtime's image (public.ecr.aws/lambda/provided:al2023). Neither works on a
machine with no Docker engine and only package registries reachable, so the
function goes to State "Failed" and CloudFormation rolls the stack back.

This executor (LAMBDA_RUNTIME_EXECUTOR=herald-no-docker) prepares nothing, so
CreateFunction succeeds and the function, its event source mapping and its
schedule are created as AWS would create them, with the configuration the
template gives them. It runs nothing: every invocation fails with
NoDockerError, whose message says so. herald runs its functions locally under
the AWS Lambda Runtime Interface Emulator instead (scripts/install-rie.sh,
internal/integration/deploy_test.go).

Interface: localstack.services.lambda_.invocation.runtime_executor.RuntimeExecutor
(LocalStack 2026.3); plugin namespace "localstack.lambda.runtime_executor".
"""

from plux import Plugin

from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import (
    LambdaRuntimeException,
    RuntimeExecutor,
)

NO_DOCKER_MESSAGE = (
    "herald's Docker-free LocalStack deploys Lambda functions but runs none "
    "(LAMBDA_RUNTIME_EXECUTOR=herald-no-docker); run the function's bootstrap "
    "under the Lambda Runtime Interface Emulator instead (docs/deploy.md)"
)


class NoDockerError(LambdaRuntimeException):
    """Raised for every attempt to start an execution environment."""

    def __init__(self) -> None:
        super().__init__(NO_DOCKER_MESSAGE)


class NoDockerRuntimeExecutor(RuntimeExecutor):
    """Deploys functions without preparing an environment; starts none."""

    def start(self, env_vars: dict[str, str]) -> None:
        raise NoDockerError()

    def stop(self) -> None:
        pass

    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        return "http://127.0.0.1/_localstack_lambda/" + self.id

    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        raise NoDockerError()

    def get_logs(self) -> str:
        return NO_DOCKER_MESSAGE

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        pass

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        pass


class NoDockerRuntimeExecutorPlugin(Plugin):
    namespace = "localstack.lambda.runtime_executor"
    name = "herald-no-docker"

    def load(self, *args, **kwargs):
        return NoDockerRuntimeExecutor

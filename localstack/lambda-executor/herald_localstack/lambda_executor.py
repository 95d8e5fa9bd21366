"""A LocalStack Lambda runtime executor that runs functions as host processes.

LocalStack (open source) runs every Lambda function in a Docker container,
with its own runtime init (downloaded from GitHub releases) in the runtime's
image. A machine with no Docker engine and only package registries reachable
has neither. This executor (LAMBDA_RUNTIME_EXECUTOR=herald-host) runs each
execution environment of a provided.al2023 (or provided.al2) function as a
process on the host instead: the AWS Lambda Runtime Interface Emulator
(HERALD_LAMBDA_RIE, built by scripts/install-rie.sh) running the function's
bootstrap from the code LocalStack unpacked, bound to free 127.0.0.1 ports.

What an environment gets:
  * the environment LocalStack computes for the function (its own variables,
    AWS_LAMBDA_FUNCTION_TIMEOUT, AWS_LAMBDA_FUNCTION_MEMORY_SIZE, role
    credentials, AWS_ENDPOINT_URL of LocalStack), with LAMBDA_TASK_ROOT the
    unpacked code and PATH as in Lambda; plus every variable of LocalStack's
    own environment named HERALD_LAMBDA_ENV_<NAME>, as <NAME>, unless the
    function sets <NAME> itself (scripts/local-up.sh: the SES v2 emulator's
    AWS_ENDPOINT_URL_SESV2);
  * the timeout, which the emulator enforces ("Task timed out after N.00
    seconds"); the memory size is only reported, not enforced;
  * a TMPDIR of its own in LocalStack's tmp directory (under FILESYSTEM_ROOT),
    deleted when the environment stops.

LocalStack marks an environment ready when start() returns, so start() waits
until the emulator accepts connections. invoke() posts the payload as Lambda
does and returns LocalStack an InvocationResult whose logs (the lines between
the emulator's START and REPORT lines of the request) LocalStack writes to
the function's CloudWatch Logs group (/aws/lambda/<function>). The emulator
answers a function error with HTTP 200 and no X-Amz-Function-Error header:
the error is read from the body. Environments stop when LocalStack stops
them (idle, function updated or deleted, LocalStack shutting down).

Interface: localstack.services.lambda_.invocation.runtime_executor.RuntimeExecutor
(LocalStack 2026.3); plugin namespace "localstack.lambda.runtime_executor".
"""

import http.client
import json
import logging
import os
import platform
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections import deque

from plux import Plugin

from localstack import config
from localstack.services.lambda_.invocation.lambda_models import FunctionVersion, InvocationResult
from localstack.services.lambda_.invocation.runtime_executor import (
    LambdaRuntimeException,
    RuntimeExecutor,
)

LOG = logging.getLogger(__name__)

RIE_ENV = "HERALD_LAMBDA_RIE"
FORWARD_PREFIX = "HERALD_LAMBDA_ENV_"
# Runtimes whose bootstrap is an executable of the function's own code.
RUNTIMES = ("provided.al2023", "provided.al2")
# Lambda's architecture names for platform.machine() values.
HOST_ARCHITECTURES = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}
# PATH of the provided runtimes (Lambda, "Defined runtime environment variables").
LAMBDA_PATH = "/usr/local/bin:/usr/bin/:/bin:/opt/bin"
INVOKE_PATH = "/2015-03-31/functions/function/invocations"
# How long start() waits for the emulator's port, and how long invoke() waits
# for the emulator's REPORT line after the answer (it is written before it).
START_TIMEOUT_S = 10.0
LOG_WAIT_S = 2.0
# Lines kept for get_logs() (LocalStack prints them when a start fails).
LOG_TAIL_LINES = 200
# The emulator takes about 2 s to shut its runtime down on SIGTERM; LocalStack
# stops environments one after another when it shuts down.
STOP_GRACE_S = 0.5


class HostRuntimeError(LambdaRuntimeException):
    """An environment that cannot start here; the message says why."""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def host_architecture() -> str:
    machine = platform.machine().lower()
    return HOST_ARCHITECTURES.get(machine, machine)


def function_error(status: int, body: bytes) -> bytes | None:
    """The Lambda error document of an emulator answer, or None for a result.

    The emulator answers 200 with {"errorMessage", "errorType"} for an error
    the runtime reported, 200 with "Task timed out after N.00 seconds" for a
    timeout, and another status when the runtime could not start or died.
    """
    text = body.decode("utf-8", "replace")
    if status == 200:
        if text.startswith("Task timed out after "):
            return json.dumps({"errorType": "Sandbox.Timedout", "errorMessage": text}).encode()
        try:
            doc = json.loads(body)
        except ValueError:
            return None
        if isinstance(doc, dict) and "errorMessage" in doc and "errorType" in doc:
            return body
        return None
    try:
        doc = json.loads(body)
        if isinstance(doc, dict) and "errorMessage" in doc:
            return body
    except ValueError:
        pass
    return json.dumps(
        {"errorType": "Runtime.Unknown", "errorMessage": f"emulator answered HTTP {status}: {text[:1024]}"}
    ).encode()


class LineLog:
    """The emulator's output, one line at a time, read by a thread."""

    def __init__(self, stream) -> None:
        self._cond = threading.Condition()
        self._lines: list[str] = []
        self._tail: deque[str] = deque(maxlen=LOG_TAIL_LINES)
        self._closed = False
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True, name="herald-rie-log")
        self._thread.start()

    def _read(self, stream) -> None:
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._cond:
                self._lines.append(line)
                self._tail.append(line)
                self._cond.notify_all()
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def mark(self) -> int:
        with self._cond:
            return len(self._lines)

    def take(self, start: int, until_prefix: str, wait_s: float) -> str:
        """Lines from start up to the first one beginning with until_prefix
        (waiting up to wait_s for it), which are then dropped."""
        deadline = time.monotonic() + wait_s
        with self._cond:
            while True:
                end = next((i + 1 for i in range(start, len(self._lines)) if self._lines[i].startswith(until_prefix)), None)
                left = deadline - time.monotonic()
                if end is not None or self._closed or left <= 0:
                    break
                self._cond.wait(left)
            end = end if end is not None else len(self._lines)
            out = self._lines[start:end]
            del self._lines[:end]
            return "\n".join(out) + ("\n" if out else "")

    def tail(self) -> str:
        with self._cond:
            return "\n".join(self._tail)

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)


class HostRuntimeExecutor(RuntimeExecutor):
    """One execution environment: an emulator process running the bootstrap."""

    def __init__(self, id: str, function_version: FunctionVersion) -> None:
        super().__init__(id=id, function_version=function_version)
        self._process: subprocess.Popen | None = None
        self._log: LineLog | None = None
        self._port = 0
        self._tmpdir: str | None = None

    def _bootstrap(self) -> str:
        """The bootstrap's path, its code unpacked; raises HostRuntimeError
        when the function cannot run here."""
        cfg = self.function_version.config
        name = self.function_version.id.function_name
        if cfg.runtime not in RUNTIMES or cfg.code is None:
            raise HostRuntimeError(
                f"function {name}: runtime {cfg.runtime or 'container image'} cannot run here: "
                f"LAMBDA_RUNTIME_EXECUTOR=herald-host runs only {', '.join(RUNTIMES)} zip functions"
            )
        arch, host = (cfg.architectures or ["x86_64"])[0], host_architecture()
        if arch != host:
            raise HostRuntimeError(
                f"function {name} is built for {arch} and this host runs {host}: "
                f"deploy it for {host} (make deploy-local sets the LambdaArchitecture parameter)"
            )
        rie = os.environ.get(RIE_ENV, "")
        if not (rie and os.access(rie, os.X_OK)):
            raise HostRuntimeError(f"{RIE_ENV}={rie!r} is not the emulator's executable (scripts/install-rie.sh builds it)")
        cfg.code.prepare_for_execution()
        bootstrap = os.path.join(str(cfg.code.get_unzipped_code_location()), "bootstrap")
        if not os.access(bootstrap, os.X_OK):
            raise HostRuntimeError(f"function {name}: no executable bootstrap at the root of its code")
        return bootstrap

    def start(self, env_vars: dict[str, str]) -> None:
        bootstrap = self._bootstrap()
        task_root = os.path.dirname(bootstrap)
        os.makedirs(config.dirs.tmp, exist_ok=True)
        self._tmpdir = tempfile.mkdtemp(prefix=f"herald-lambda-{self.id[:8]}-", dir=config.dirs.tmp)
        env = {k[len(FORWARD_PREFIX) :]: v for k, v in os.environ.items() if k.startswith(FORWARD_PREFIX)}
        # LocalStack gives numbers as ints and LAMBDA_TASK_ROOT as /var/task.
        env.update({k: str(v) for k, v in env_vars.items()})
        env.update(LAMBDA_TASK_ROOT=task_root, TMPDIR=self._tmpdir)
        env.setdefault("PATH", LAMBDA_PATH)
        self._port = free_port()
        cmd = [
            os.environ[RIE_ENV],
            "--runtime-interface-emulator-address", f"127.0.0.1:{self._port}",
            "--runtime-api-address", f"127.0.0.1:{free_port()}",
            "--log-level", "warn",
            bootstrap,
        ]
        # Not a session of its own: scripts/local-down.sh stops LocalStack's
        # process group, and with it every emulator.
        self._process = subprocess.Popen(
            cmd, env=env, cwd=task_root, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )
        self._log = LineLog(self._process.stdout)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self._process.poll() is not None:
                raise HostRuntimeError(f"the emulator exited with {self._process.returncode}: {self._log.tail()[-2000:]}")
            try:
                socket.create_connection(("127.0.0.1", self._port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise HostRuntimeError(f"the emulator did not listen on 127.0.0.1:{self._port} within {START_TIMEOUT_S:.0f} s")
                time.sleep(0.02)
        LOG.debug("herald-host: %s runs in pid %d on 127.0.0.1:%d", self.function_version.qualified_arn, self._process.pid, self._port)

    def stop(self) -> None:
        p = self._process
        if p is not None and p.poll() is None:
            # The emulator starts the bootstrap in a process group of its own.
            groups = []
            try:
                with open(f"/proc/{p.pid}/task/{p.pid}/children") as f:
                    groups = [os.getpgid(int(c)) for c in f.read().split()]
            except OSError:
                pass
            p.terminate()
            try:
                p.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
            for g in groups:
                try:
                    os.killpg(g, signal.SIGKILL)
                except OSError:
                    pass
        if self._log is not None:
            self._log.join(STOP_GRACE_S)
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def get_address(self) -> str:
        return "127.0.0.1"

    def get_endpoint_from_executor(self) -> str:
        return "127.0.0.1"

    def get_runtime_endpoint(self) -> str:
        # LocalStack's own runtime init would call back here; the emulator does not.
        return "http://127.0.0.1/_localstack_lambda/" + self.id

    def invoke(self, payload: dict[str, str]) -> InvocationResult:
        request_id = payload["invoke-id"]
        timeout = int(self.function_version.config.timeout)
        start = self._log.mark()
        conn = http.client.HTTPConnection("127.0.0.1", self._port, timeout=timeout + 10)
        try:
            conn.request(
                "POST",
                INVOKE_PATH,
                body=payload["payload"].encode(),
                headers={"X-Amzn-RequestId": request_id, "X-Amzn-Trace-Id": payload.get("trace-id", ""), "Content-Type": "application/json"},
            )
            res = conn.getresponse()
            status, body = res.status, res.read()
        except OSError as e:
            status, body = 0, f"no answer from the emulator: {e}".encode()
        finally:
            conn.close()
        logs = self._log.take(start, f"REPORT RequestId: {request_id}", LOG_WAIT_S)
        error = function_error(status, body)
        return InvocationResult(
            request_id=request_id, payload=body if error is None else error, is_error=error is not None, logs=logs
        )

    def get_logs(self) -> str:
        return self._log.tail() if self._log else ""

    @classmethod
    def prepare_version(cls, function_version: FunctionVersion) -> None:
        if function_version.config.code:
            function_version.config.code.prepare_for_execution()

    @classmethod
    def cleanup_version(cls, function_version: FunctionVersion) -> None:
        pass


class HostRuntimeExecutorPlugin(Plugin):
    namespace = "localstack.lambda.runtime_executor"
    name = "herald-host"

    def load(self, *args, **kwargs):
        return HostRuntimeExecutor

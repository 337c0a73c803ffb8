"""A Kafka broker and Redis servers of the tests' own, which they may kill, stop and restart.

They run beside the local stack (whose services are never touched): a KRaft broker from the same
Maven Central jars (``make up`` fetched them into ``.local/kafka/libs``) on free ports with its data in a
temporary directory, with a PLAINTEXT listener and a SASL_PLAINTEXT (PLAIN) one; ``redis-server``s
with ``appendonly yes`` and ``appendfsync always``, optionally with ``requirepass``; and Debian's
``prometheus`` server scraping a worker with the project's alert rules. The fixtures in
``tests/conftest.py`` start them (the broker once per session) and remove them at the end.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LIBS = REPO / ".local" / "kafka" / "libs"
LOG4J = REPO / "deploy" / "local" / "kafka" / "log4j2.properties"
TOOLS_LOG4J = REPO / "deploy" / "local" / "kafka" / "tools-log4j2.properties"
LIGHT_JVM = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC")
"""The JVM options of the brokers and tools this suite starts (as deploy/local/kafka.sh's
KAFKA_LIGHT_JAVA_OPTS): C1 only and the serial collector take about half the CPU to start and idle."""
SASL_USER, SASL_PASSWORD = "evidence-chain", "s3cret-sasl-Pa55"
"""The one SASL/PLAIN user the broker knows (besides its own inter-broker admin)."""

SINGLE_NODE = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "num.partitions": "1",
    "default.replication.factor": "1",
    "offsets.topic.replication.factor": "1",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "min.insync.replicas": "1",
    "group.initial.rebalance.delay.ms": "0",
    "auto.create.topics.enable": "true",
    "message.max.bytes": "4194304",
    "replica.fetch.max.bytes": "5242880",
}
"""What every broker the tests start has in common (this suite's own, and the integration tier's
container): one KRaft node that is both broker and controller, replication 1 everywhere, no rebalance
delay, topics created on first use, and messages up to 4 MiB. Each adds its listeners and data."""


def docker_env(properties: dict[str, str]) -> dict[str, str]:
    """Broker properties as the ``apache/kafka`` image reads them from its environment
    (``num.partitions`` is ``KAFKA_NUM_PARTITIONS``)."""
    return {"KAFKA_" + name.upper().replace(".", "_"): value for name, value in properties.items()}


LISTEN_PORTS = range(20_000, 32_000)
"""Where :func:`free_port` looks: below Linux's ephemeral range (32768-60999). A port the kernel handed
out with ``bind(0)`` comes from that range, so between the probe and the server's own bind any
outgoing connection (a Kafka client of a test running beside it) could take it: a worker once
failed to bind its probes that way."""


def free_port() -> int:
    """A port on which a server started next (another process) can listen on every address."""
    for _ in range(200):
        port = random.choice(LISTEN_PORTS)
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind(("0.0.0.0", port))  # noqa: S104 - a probe: the worker binds all addresses
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {LISTEN_PORTS.start}-{LISTEN_PORTS.stop - 1}")


def wait_port(
    port: int, timeout_s: float, process: subprocess.Popen[bytes] | None = None, host: str = "127.0.0.1"
) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise RuntimeError(f"process exited with {process.returncode} before listening on {port}")
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((host, port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"nothing listens on {host}:{port} after {timeout_s}s")


class FaultKafka:
    """One KRaft broker + controller this suite may stop and restart at will; its clients' listeners on
    ``host`` (the wire's address when a worker runs in a network namespace of its own)."""

    def __init__(self, home: Path, host: str = "127.0.0.1") -> None:
        if not any(LIBS.glob("kafka_2.13-*.jar")):
            pytest.fail("the Kafka jars are missing: run `make up` (it fetches them from Maven Central)")
        self.home = home
        self.port, self.controller, self.sasl_port = free_port(), free_port(), free_port()
        self.host = host
        self.bootstrap = f"{host}:{self.port}"
        self.sasl_bootstrap = f"{host}:{self.sasl_port}"
        self.conf = home / "server.properties"
        self.process: subprocess.Popen[bytes] | None = None
        home.mkdir(parents=True, exist_ok=True)
        properties = {
            **SINGLE_NODE,
            "controller.quorum.voters": f"1@127.0.0.1:{self.controller}",
            "listeners": f"PLAINTEXT://{host}:{self.port},CONTROLLER://127.0.0.1:{self.controller},"
            f"SASL_PLAINTEXT://{host}:{self.sasl_port}",
            "advertised.listeners": f"PLAINTEXT://{host}:{self.port},SASL_PLAINTEXT://{host}:{self.sasl_port}",
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,"
            "SASL_PLAINTEXT:SASL_PLAINTEXT",
            "sasl.enabled.mechanisms": "PLAIN",
            "listener.name.sasl_plaintext.plain.sasl.jaas.config": (
                "org.apache.kafka.common.security.plain.PlainLoginModule required "
                f'user_{SASL_USER}="{SASL_PASSWORD}";'
            ),
            "log.dirs": str(home / "data"),
            "offsets.topic.num.partitions": "3",
        }
        self.conf.write_text("".join(f"{name}={value}\n" for name, value in properties.items()))
        log4j = f"-Dlog4j2.configurationFile={TOOLS_LOG4J}"
        java = ["java", "-Xmx256m", *LIGHT_JVM, log4j, "-cp", f"{LIBS}/*"]
        subprocess.run(
            [
                *java,
                "kafka.tools.StorageTool",
                "format",
                f"--cluster-id={uuid.uuid4().hex[:22]}",
                "-c",
                str(self.conf),
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )

    def start(self) -> None:
        log = (self.home / "stdout.log").open("ab")
        self.process = subprocess.Popen(  # noqa: S603 - java from PATH with the project's jars
            [
                "java",
                "-Xms384m",
                "-Xmx384m",
                *LIGHT_JVM,
                f"-Dlog4j2.configurationFile={LOG4J}",
                f"-Dkafka.logs.dir={self.home}",
                "-cp",
                f"{LIBS}/*",
                "kafka.Kafka",
                str(self.conf),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        wait_port(self.port, 90, self.process, self.host)

    def stop(self, *, kill: bool = False) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGKILL if kill else signal.SIGTERM)
        try:
            self.process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)


class FaultRedis:
    """A ``redis-server`` this suite may kill and restart; it fsyncs its AOF before every reply."""

    def __init__(self, home: Path, password: str | None = None, host: str = "127.0.0.1") -> None:
        self.home = home
        self.host = host
        self.port = free_port()
        self.password = password
        auth = f":{password}@" if password else ""
        self.url = f"redis://{auth}{host}:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None
        home.mkdir(parents=True, exist_ok=True)

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is missing: run `make up` (it installs Debian's redis-server)")
        log = (self.home / "redis.log").open("ab")
        self.process = subprocess.Popen(  # noqa: S603 - Debian's redis-server with fixed arguments
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                self.host,
                "--dir",
                str(self.home),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--save",
                "",
                *(["--requirepass", self.password] if self.password else []),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        wait_port(self.port, 30, self.process, self.host)
        time.sleep(0.2)  # let it finish loading the AOF before the first command

    def stop(self, *, kill: bool = True) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
        self.process.wait(30)


class Prometheus:
    """Debian's ``prometheus`` server (``make prometheus``) on a free port, its data in ``home``, scraping
    ``targets`` as one job every ``interval_seconds`` and evaluating ``rule_files`` as often."""

    def __init__(
        self, home: Path, targets: list[str], rule_files: list[Path], job: str, interval_seconds: float = 1.0
    ) -> None:
        self.home = home
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None
        home.mkdir(parents=True, exist_ok=True)
        interval = f"{int(interval_seconds * 1000)}ms"
        config = {
            "global": dict.fromkeys(("scrape_interval", "scrape_timeout", "evaluation_interval"), interval),
            "rule_files": [str(path) for path in rule_files],
            "scrape_configs": [{"job_name": job, "static_configs": [{"targets": targets}]}],
        }
        self.config = home / "prometheus.yml"
        self.config.write_text(json.dumps(config))  # YAML is a superset of JSON

    def start(self) -> None:
        binary = shutil.which("prometheus")
        if binary is None:
            pytest.fail("prometheus is missing: run `make prometheus` (it installs Debian's prometheus)")
        log = (self.home / "prometheus.log").open("ab")
        self.process = subprocess.Popen(  # noqa: S603 - Debian's prometheus with fixed arguments
            [
                binary,
                f"--config.file={self.config}",
                f"--storage.tsdb.path={self.home / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        wait_port(self.port, 30, self.process)
        self._wait_ready(60)

    def _wait_ready(self, seconds: float) -> None:
        """Until ``GET /-/ready`` answers 200: Prometheus listens before it has loaded its configuration
        and rules, and its API answers 503 until then (a slow machine's first queries met that)."""
        deadline = time.monotonic() + seconds
        while True:
            try:
                with urllib.request.urlopen(f"{self.url}/-/ready", timeout=5) as answer:  # noqa: S310 - local
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass  # 503 while starting (an HTTPError is a URLError), or not answering yet
            if self.process is not None and self.process.poll() is not None:
                pytest.fail(f"prometheus exited {self.process.returncode} while starting\n{self.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(f"prometheus not ready within {seconds:.0f}s\n{self.log_tail()}")
            time.sleep(0.2)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def log_tail(self, lines: int = 30) -> str:
        return "\n".join((self.home / "prometheus.log").read_text(errors="replace").splitlines()[-lines:])


class KafkaCluster:
    """``make up-cluster``'s three KRaft brokers (``deploy/local/cluster.sh``), which the cluster fault
    tests SIGKILL and bring back through the same script a person uses."""

    NODES = (1, 2, 3)
    STACK = REPO / "deploy" / "local" / "stack.sh"
    HOME = REPO / ".local" / "cluster"

    @staticmethod
    def port(node: int) -> int:
        return 19090 + 2 * node

    @property
    def bootstrap(self) -> str:
        return ",".join(f"127.0.0.1:{self.port(node)}" for node in self.NODES)

    def _stack(self, *args: str, timeout_s: float = 300) -> None:
        done = subprocess.run(  # noqa: S603 - the project's own script
            [str(self.STACK), *args], capture_output=True, text=True, timeout=timeout_s, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"stack.sh {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")

    def up(self) -> None:
        """Start every node that is down and wait until all three answer."""
        self._stack("up-cluster")

    def node_up(self, node: int) -> None:
        """Start one node that is down and wait until it answers."""
        self._stack("up-cluster-node", str(node))

    def down(self) -> None:
        self._stack("down-cluster")

    def pid(self, node: int) -> int | None:
        path = self.HOME / f"node-{node}" / "kafka.pid"
        try:
            pid = int(path.read_text().strip())
            os.kill(pid, 0)
        except (OSError, ValueError):
            return None
        return pid

    def running(self) -> list[int]:
        return [node for node in self.NODES if self.pid(node) is not None]

    def kill(self, node: int) -> None:
        """SIGKILL one broker (no controlled shutdown, no leader hand-over) and wait until it is gone."""
        pid = self.pid(node)
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.1)
        raise RuntimeError(f"broker node {node} (pid {pid}) outlived SIGKILL for 30 s")

    def active_controller(self) -> int:
        """The node id of the KRaft quorum's leader (the metadata answer names a random broker)."""
        done = subprocess.run(  # noqa: S603 - java from PATH with the project's jars
            [
                "java",
                "-Xmx128m",
                *LIGHT_JVM,
                f"-Dlog4j2.configurationFile={TOOLS_LOG4J}",
                "-cp",
                f"{LIBS}/*",
                "org.apache.kafka.tools.MetadataQuorumCommand",
                "--bootstrap-server",
                self.bootstrap,
                "describe",
                "--status",
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        for line in done.stdout.splitlines():
            name, _, value = line.partition(":")
            if name.strip() == "LeaderId":
                return int(value)
        raise RuntimeError(f"no LeaderId in the quorum's status:\n{done.stdout}")


class NetNamespace:
    """A network namespace joined to this one by a wire of our own (tests/faults/wire.py: two TUN
    devices and a process copying packets between them): ``host_ip`` on this side, ``inside_ip`` in
    the namespace, nothing else reachable from inside (not even this side's 127.0.0.1). The wire does
    what ``tc netem`` would on a kernel that has it (this machine's has no ``sch_netem``): ``delay``
    holds each packet leaving the namespace, ``lose`` drops a share each way, ``cut`` drops everything
    (connections are left hanging, as in a partition), ``restore`` stops cutting. Needs root (CI runs
    as root) and ``ip`` (iproute2)."""

    def __init__(self) -> None:
        tag = uuid.uuid4().hex[:6]
        self.name = f"ec-{tag}"
        self.outside, self.inside = f"ec{tag}h", f"ec{tag}n"
        subnet = int(tag, 16) % 250
        self.host_ip, self.inside_ip = f"10.251.{subnet}.1", f"10.251.{subnet}.2"
        self.wire: subprocess.Popen[str] | None = None

    @staticmethod
    def _ip(*args: str) -> None:
        done = subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30, check=False)  # noqa: S603, S607
        if done.returncode != 0:
            raise RuntimeError(
                f"ip {' '.join(args)}: {done.stderr.strip()} (the network tests need root and iproute2)"
            )

    def create(self) -> NetNamespace:
        self._ip("netns", "add", self.name)
        self.wire = subprocess.Popen(  # noqa: S603 - root in CI; the namespace is this test's own
            [sys.executable, "-m", "tests.faults.wire", self.name, self.outside, self.inside],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self._answer("ready")
        self._ip("addr", "add", self.host_ip, "peer", self.inside_ip, "dev", self.outside)
        self._ip("link", "set", self.outside, "up")
        inside = ("netns", "exec", self.name, "ip")
        self._ip(*inside, "addr", "add", self.inside_ip, "peer", self.host_ip, "dev", self.inside)
        self._ip(*inside, "link", "set", self.inside, "up")
        self._ip(*inside, "link", "set", "lo", "up")
        return self

    def _answer(self, want: str) -> None:
        assert self.wire is not None and self.wire.stdout is not None
        line = self.wire.stdout.readline().strip()
        if line != want:
            raise RuntimeError(f"the wire answered {line!r}, not {want!r} (exit {self.wire.poll()})")

    def _tell(self, command: str) -> None:
        assert self.wire is not None and self.wire.stdin is not None
        self.wire.stdin.write(command + "\n")
        self.wire.stdin.flush()
        self._answer("ok")

    def command(self, *argv: str) -> tuple[str, ...]:
        """``argv`` run inside the namespace."""
        return ("ip", "netns", "exec", self.name, *argv)

    def cut(self) -> None:
        self._tell("cut")

    def restore(self) -> None:
        self._tell("restore")

    def lose(self, percent: float) -> None:
        """Drop ``percent`` % of the packets into and out of the namespace, at random; 0 stops."""
        self._tell(f"loss {percent}")

    def delay(self, ms: float, jitter_ms: float = 0) -> None:
        """Hold each packet leaving the namespace ``ms`` ± ``jitter_ms`` (uniform); 0 stops."""
        self._tell(f"delay {ms} {jitter_ms}")

    def delete(self) -> None:
        """Stop the wire (its TUN devices go with it) and remove the namespace."""
        if self.wire is not None:
            if self.wire.stdin is not None:
                self.wire.stdin.close()
            try:
                self.wire.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.wire.kill()
                self.wire.wait()
            if self.wire.stdout is not None:
                self.wire.stdout.close()
        subprocess.run(["ip", "netns", "delete", self.name], capture_output=True, timeout=30, check=False)  # noqa: S603, S607

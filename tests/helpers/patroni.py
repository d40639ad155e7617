"""A three-node PostgreSQL cluster managed by Patroni (Debian's `patroni`, run by Debian's /usr/bin/python3:
it is not installed in the venv), with a one-member etcd (Debian's `etcd-server`, v3 API) as its DCS, all
on loopback. Patroni keeps one synchronous standby (`synchronous_mode`), so a commit returns only once a
node that may take over has it.

Timeouts are short so that a failover fits in a test: the leader key lives `TTL` seconds and Patroni looks
every `LOOP_WAIT` seconds (production defaults: 30 and 10)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests import servers

PATRONI = Path("/usr/bin/patroni")
PYTHON = Path("/usr/bin/python3")  # Debian's; its dist-packages hold patroni and python3-etcd
ETCD = Path("/usr/bin/etcd")
TTL, LOOP_WAIT, RETRY_TIMEOUT = 10, 1, 4
# Patroni arms the watchdog to fire this many seconds before the leader key runs out (its default).
SAFETY_MARGIN = 5


class Patroni:
    """Three Patroni nodes and their etcd; stop() removes everything."""

    def __init__(self, nodes: int = 3) -> None:
        servers._may_start("a Patroni cluster")
        bindir = servers.postgres_bindir()
        if bindir is None or not PATRONI.exists() or not ETCD.exists() or not PYTHON.exists():
            raise servers.ServerUnavailable(
                "a Patroni cluster needs PostgreSQL server binaries, patroni and etcd-server (Debian packages)"
            )
        self.work = servers._workdir("wb-patroni-")
        servers._chown(self.work, "postgres")
        self.names = [f"node{i}" for i in range(nodes)]
        self.pg_ports = {name: servers.free_port() for name in self.names}
        self.api_ports = {name: servers.free_port() for name in self.names}
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self._timers: list[threading.Timer] = []
        self.watchdog_fired = threading.Event()  # set once kill_patroni's stand-in watchdog has stopped PostgreSQL
        self._etcd: subprocess.Popen[bytes] | None = None
        try:
            client = self._start_etcd()
            for name in self.names:
                self._start_node(name, bindir, client)
                if name == self.names[0]:  # the others copy the leader's data once it runs
                    self.wait(lambda c: c.get("leader") == self.names[0], "the first node to lead", 60)
            self.wait(self.healthy, "three nodes with a synchronous standby", 90)
        except BaseException:
            self.stop()
            raise

    # -- starting -----------------------------------------------------------------------------------

    def _start_etcd(self) -> int:
        client, peer = servers.free_port(), servers.free_port()
        folder = self.work / "etcd"
        log = open(self.work / "etcd.log", "wb")  # noqa: SIM115 - the process keeps it
        self._etcd = subprocess.Popen(
            [
                str(ETCD),
                "--name=etcd0",
                f"--data-dir={folder}",
                f"--listen-client-urls=http://127.0.0.1:{client}",
                f"--advertise-client-urls=http://127.0.0.1:{client}",
                f"--listen-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-advertise-peer-urls=http://127.0.0.1:{peer}",
                f"--initial-cluster=etcd0=http://127.0.0.1:{peer}",
                "--unsafe-no-fsync",  # a throwaway store
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=self.work,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self._etcd.poll() is not None:
                raise servers.ServerUnavailable(f"etcd exited: {self._log('etcd.log')}")
            with (
                contextlib.suppress(OSError),
                urllib.request.urlopen(f"http://127.0.0.1:{client}/health", timeout=1) as answer,
            ):
                if json.loads(answer.read()).get("health") == "true":
                    return client
            time.sleep(0.1)
        raise servers.ServerUnavailable(f"etcd did not answer within 30 s: {self._log('etcd.log')}")

    def _start_node(self, name: str, bindir: Path, etcd_port: int) -> None:
        home = self.work / name
        home.mkdir()
        servers._chown(home, "postgres")
        config = {
            "scope": "wb",
            "name": name,
            "log": {"level": "INFO", "dir": str(home)},
            "restapi": {
                "listen": f"127.0.0.1:{self.api_ports[name]}",
                "connect_address": f"127.0.0.1:{self.api_ports[name]}",
            },
            "etcd3": {"hosts": f"127.0.0.1:{etcd_port}"},
            "bootstrap": {
                "dcs": {
                    "ttl": TTL,
                    "loop_wait": LOOP_WAIT,
                    "retry_timeout": RETRY_TIMEOUT,
                    "synchronous_mode": True,
                    "postgresql": {
                        "use_pg_rewind": False,
                        "parameters": {
                            "max_connections": 200,
                            "wal_keep_size": "256MB",
                            # A process crash keeps what the OS has; only a machine crash needs fsync.
                            "fsync": "off",
                            "full_page_writes": "off",
                        },
                    },
                },
                "initdb": [{"encoding": "UTF8"}, {"auth": "trust"}],
            },
            "postgresql": {
                "listen": f"127.0.0.1:{self.pg_ports[name]}",
                "connect_address": f"127.0.0.1:{self.pg_ports[name]}",
                "data_dir": str(home / "data"),
                "bin_dir": str(bindir),
                "pgpass": str(home / "pgpass"),
                "authentication": {"superuser": {"username": "postgres"}, "replication": {"username": "postgres"}},
                "pg_hba": [
                    "local all all trust",
                    "host all all 127.0.0.1/32 trust",
                    "local replication all trust",
                    "host replication all 127.0.0.1/32 trust",
                ],
                "parameters": {"unix_socket_directories": str(home)},
            },
        }
        path = home / "patroni.yml"
        path.write_text(json.dumps(config), encoding="utf-8")  # YAML reads JSON
        as_postgres: dict[str, Any] = (
            {"user": "postgres", "group": "postgres", "extra_groups": []} if os.geteuid() == 0 else {}
        )
        self.procs[name] = subprocess.Popen(
            [str(PYTHON), str(PATRONI), str(path)],
            stdout=subprocess.DEVNULL,
            stderr=open(home / "stderr.log", "wb"),  # noqa: SIM115 - the process keeps it
            cwd=home,
            env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "HOME": str(home)},
            **as_postgres,
        )

    # -- looking ------------------------------------------------------------------------------------

    def cluster(self) -> dict[str, Any]:
        """GET /cluster of the first node whose REST API answers: the members, their roles and states."""
        for name, proc in list(self.procs.items()):
            if proc.poll() is not None:
                continue
            with contextlib.suppress(OSError, ValueError):
                url = f"http://127.0.0.1:{self.api_ports[name]}/cluster"
                with urllib.request.urlopen(url, timeout=2) as answer:
                    found = json.loads(answer.read())
                members = found.get("members", [])
                leaders = [m["name"] for m in members if m.get("role") == "leader" and m.get("state") == "running"]
                return {**found, "leader": leaders[0] if leaders else None}
        return {"members": [], "leader": None}

    def healthy(self, cluster: dict[str, Any]) -> bool:
        """A running leader, a synchronous standby, every live node running or streaming."""
        members = cluster.get("members", [])
        live = [n for n, p in self.procs.items() if p.poll() is None]
        return (
            cluster.get("leader") is not None
            # Patroni 3.0 reports a replica "running"; later versions "streaming"
            and any(m.get("role") == "sync_standby" and m.get("state") in ("running", "streaming") for m in members)
            and len(members) >= len(live)
            and all(m.get("state") in ("running", "streaming") for m in members if m["name"] in live)
        )

    def wait(self, done: Any, what: str, seconds: float) -> dict[str, Any]:
        deadline = time.monotonic() + seconds
        while True:
            found = self.cluster()
            if done(found):
                return found
            dead = [n for n, p in self.procs.items() if p.poll() is not None and n not in self.killed]
            if dead or time.monotonic() > deadline:
                logs = "\n".join(f"--- {n}\n{self.log(n)}" for n in self.procs)
                raise servers.ServerUnavailable(f"waiting for {what}: {found}, exited: {dead}\n{logs}")
            time.sleep(0.2)

    def log(self, name: str) -> str:
        return self._log(f"{name}/patroni.log")[-3000:] + self._log(f"{name}/stderr.log")[-2000:]

    def _log(self, relative: str) -> str:
        path = self.work / relative
        return path.read_text(errors="replace") if path.exists() else ""

    @property
    def killed(self) -> set[str]:
        return {n for n, p in self.procs.items() if p.returncode is not None and p.returncode < 0}

    def leader(self) -> str:
        return str(self.wait(lambda c: c.get("leader"), "a leader", 60)["leader"])

    def url(self, database: str) -> str:
        """Every node in one URL: libpq keeps the one that accepts writes."""
        hosts = "&".join(f"host=127.0.0.1:{self.pg_ports[n]}" for n in self.names)
        return f"postgresql+psycopg://postgres@/{database}?{hosts}&target_session_attrs=read-write"

    def create_database(self, name: str) -> None:
        import sqlalchemy as sa

        engine = sa.create_engine(self.url("postgres"), isolation_level="AUTOCOMMIT")
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        finally:
            engine.dispose()

    # -- breaking -----------------------------------------------------------------------------------

    def postmaster(self, name: str) -> int:
        return int((self.work / name / "data" / "postmaster.pid").read_text().split()[0])

    def kill_postgres(self, name: str) -> None:
        """SIGKILL the node's postmaster (its backends exit when they notice); Patroni sees it gone."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.postmaster(name), signal.SIGKILL)

    def kill_patroni(self, name: str) -> None:
        """SIGKILL the node's Patroni. Its PostgreSQL runs on without it, still a primary that libpq connects
        to (seen here without the stand-in below: once a standby was promoted, its commits waited for ever on
        a synchronous standby that no longer followed it, and so did every client that reached it). In
        production the watchdog Patroni armed (/dev/watchdog, softdog) resets the machine `SAFETY_MARGIN`
        seconds before the leader key runs out, so the old primary is gone before a standby is promoted.
        There is no watchdog device here: a timer stands in for it and kills that PostgreSQL at about that
        moment (the last key refresh was at most LOOP_WAIT before the kill)."""
        postmaster = self.postmaster(name)
        self.procs[name].kill()
        self.procs[name].wait()

        def fire() -> None:
            _kill_tree(postmaster)
            self.watchdog_fired.set()

        timer = threading.Timer(TTL - SAFETY_MARGIN - LOOP_WAIT, fire)
        timer.start()
        self._timers.append(timer)

    def stop(self) -> None:
        """Kill everything (the data is thrown away: no orderly shutdown needed) and remove the folder."""
        for timer in self._timers:
            timer.cancel()
        for name, proc in self.procs.items():
            proc.kill()
            proc.wait()
            with contextlib.suppress(OSError, ValueError, IndexError):
                _kill_tree(self.postmaster(name))
        if self._etcd is not None:
            self._etcd.kill()
            self._etcd.wait()
        shutil.rmtree(self.work, ignore_errors=True)


def _kill_tree(postmaster: int) -> None:
    """SIGKILL a postmaster and its backends, if that pid is still a PostgreSQL (a stale postmaster.pid
    may name a pid reused by another process)."""
    try:
        if b"postgres" not in Path(f"/proc/{postmaster}/cmdline").read_bytes():
            return
    except OSError:
        return
    for pid in [postmaster, *servers._children(postmaster)]:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)

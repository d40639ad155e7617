"""Every SQL text the grants' renderings produce (db/rules/: PostgreSQL's checks, trusted functions and
guards, SQL Server's script; claims/pg_function.py's claim function), for a set of configs, written
offline (no server: the table's oid is a made-up one) into files under a directory.

A refactoring of the renderings that must not change the SQL: run it before and after, then compare,
e.g. `python -m tests.rules_dump /tmp/before` on the commit before, the same into /tmp/after, and
`diff -r /tmp/before /tmp/after` (empty). A rendering that refuses a config writes its error instead
(a `.err` file), which is compared as well. Run with PYTHONHASHSEED=0: a refusal may list a set."""

from __future__ import annotations

import sys
import tomllib
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql

from tests import support, test_mssql_sql
from tests.test_admission import TICKETS_ESCALATE, TICKETS_TWIN, TWIN
from tests.test_mssql_protocol import QUOTED
from tests.test_mssql_protocol import TWIN as MSSQL_TWIN
from tests.test_protocol import FOLLOWUPS, TICKETS_REVIEW
from tests.test_release_reasons import REASONS
from tests.test_review import LOCK_TABLE_REVIEW
from tests.test_rowrules import LOCK_TABLE
from workbench import demo
from workbench.config import loader
from workbench.core import models
from workbench.db import audit, backends, guarded, mapping, one_statement, tables
from workbench.db.claims import base, pg_function
from workbench.db.claims import pg_trusted as pg_trusted_claim
from workbench.db.claims import postgresql as pg_claims
from workbench.db.rules import (
    mssql_parts,
    mssql_script,
    pg_guards,
    pg_lock_check,
    pg_locks,
    pg_names,
    pg_row_check,
    pg_shared,
    pg_triggers,
    pg_trusted,
)
from workbench.demo import schema


class _Result:
    """What the renderings read from the server: a made-up oid, no other enforced queue."""

    def scalar_one(self) -> int:
        return 4242

    def scalar(self) -> int:
        return 4242

    def scalars(self) -> _Result:
        return self

    def all(self) -> list[Any]:
        return []

    def first(self) -> None:
        return None

    def __iter__(self) -> Iterator[Any]:
        return iter([])


class Conn:
    """Enough of a PostgreSQL 16 connection to render the checks' text."""

    dialect = postgresql.psycopg.dialect()
    dialect.server_version_info = (16, 0)

    def execute(self, *args: Any, **kwargs: Any) -> _Result:
        return _Result()


def _vendor_table(metadata: sa.MetaData) -> None:
    """The vendor's tickets table of tests/test_protocol.py (a lock-table queue's)."""
    sa.Table(
        "vendor_tickets",
        metadata,
        sa.Column("ticket_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("priority", sa.Integer),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("opened_at", sa.DateTime),
        sa.Column("solved_by", sa.String(50)),
        sa.Column("solved_at", sa.DateTime),
    )


def bound(text: str, name: str, dialect: str) -> tuple[mapping.BoundQueue, Any]:
    """Queue `name` of config `text` bound for `dialect` to tables built here, and the queue it reviews."""
    config = loader.parse(tomllib.loads(text), "x.toml")
    metadata = sa.MetaData()
    schema.build(metadata)
    _vendor_table(metadata)
    test_mssql_sql.legacy_table(metadata)
    tables.build_metadata()
    queue = config.queue(name)
    locks = tables.lock_table(metadata, queue.lock.table) if queue.lock is not None and queue.lock.table else None
    q = mapping.BoundQueue(
        queue,
        metadata.tables[queue.table],
        config_path="x.toml",
        backend=backends.for_dialect(dialect),
        local_clock=False,
        locks=locks,
    )
    return q, config.reviewed_by(name)


def configs() -> dict[str, str]:
    """The demo's, the test configs of the grants' tests (twins, follow-ups, a group, a lock table,
    reasons, four eyes, the admission test's families) and the samples in resources/configs/."""
    demo_text, vendor = demo.config_text(), support.sample_config("vendor-tickets")
    tickets = vendor.replace(
        "[queues.tickets]\n", '[queues.tickets]\nnotes_required = ["solved"]\nescalate_to = "level2"\n', 1
    )
    found = {
        "demo": demo_text,
        "demo_twin": demo_text + TWIN,
        "demo_followups": demo_text + FOLLOWUPS,
        "demo_level2": demo_text.replace("[queues.cases]\n", '[queues.cases]\nserves = "level2"\n', 1),
        "demo_locktable": demo_text + LOCK_TABLE,
        "demo_reasons": demo_text + REASONS if "[queues" in REASONS else demo_text,
        "vendor": vendor,
        "vendor_review": vendor + TICKETS_REVIEW,
        "vendor_admission": tickets + TICKETS_ESCALATE + TICKETS_TWIN,
        "status_driven": test_mssql_sql.STATUS_DRIVEN,
        "legacy": test_mssql_sql.LEGACY,
        "mssql_twin": demo_text + MSSQL_TWIN,
        "quoted": QUOTED,
        "locktable_review": vendor + LOCK_TABLE_REVIEW,
    }
    for sample in ("claim-ids", "helpdesk", "legacy-orders", "messages", "moderation"):
        found[f"sample_{sample}"] = support.sample_config(sample)
    return found


def _write(path: Path, parts: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    parts = [parts] if isinstance(parts, str) else parts
    path.write_text("\n-- ----\n".join(str(p) for p in parts) + "\n", encoding="utf-8")


def _attempt(path: Path, make: Callable[[], Any]) -> None:
    try:
        _write(path, make())
    except Exception as exc:  # noqa: BLE001  (a refusal is part of what is compared)
        _write(path.with_suffix(".err"), f"{type(exc).__name__}: {exc}")


def _trail(q: mapping.BoundQueue, reviewed: Any) -> audit.AuditTrail:
    metadata, audit_table, _ = tables.build_metadata("public")
    own = {
        n: metadata.tables[f"public.{n}"] for n in (tables.COOLDOWN_TABLE, tables.DEFERRALS_TABLE, tables.REVIEWS_TABLE)
    }
    return audit.trail_of(
        q.config,
        reviewed,
        audit_table,
        own[tables.COOLDOWN_TABLE],
        None,
        own[tables.DEFERRALS_TABLE],
        own[tables.REVIEWS_TABLE],
    )


def _completes(q: mapping.BoundQueue, trail: audit.AuditTrail) -> dict[str, Any]:
    writer = guarded.GuardedWriter(None, q, trail)  # type: ignore[arg-type]
    return {
        o.name: one_statement.statement(writer, guarded.Shape(models.EventKind.COMPLETE, outcome=o.name, unlock=True))
        for o in q.config.outcomes
    }


def _claim_functions(out: Path, conn: Any, q: mapping.BoundQueue, trail: audit.AuditTrail) -> None:
    """claims/pg_function.py's function: temporary or permanent, limit checked or not, filtered or not,
    and with a Complete before (then_next)."""
    method = pg_claims.SkipLockedClaim()
    for home in ("pg_temp", '"wb"'):
        for check_limit in (True, False):
            for where in ((), tuple((c, 1) for c in list(q.filter_columns)[:1])):
                request = base.ClaimRequest(user="", use_cooldown=True, where=where)
                made = pg_function._function(method, conn, q, trail, request, check_limit, None, home)
                _attempt(out / f"pg_function_{home.strip(chr(34))}_{check_limit}_{len(where)}.sql", lambda m=made: m)
            finish = next(iter(_completes(q, trail).values()))
            request = base.ClaimRequest(user="", use_cooldown=False)
            _attempt(
                out / f"pg_function_fin_{home.strip(chr(34))}_{check_limit}.sql",
                lambda h=home, c=check_limit, r=request, f=finish: pg_function._function(
                    method, conn, q, trail, r, c, f, h
                ),
            )


def postgresql_queue(out: Path, text: str, name: str) -> None:
    conn: Any = Conn()
    q, reviewed = bound(text, name, "postgresql")
    if q.shape.separate_locks:
        _attempt(out / "locks_queue_trigger.sql", lambda: pg_locks.queue_trigger(conn, q, "public", reviewed))
        _attempt(out / "lock_check.sql", lambda: pg_lock_check.lock_check(conn, q, "public", reviewed))
        _attempt(out / "item_check.sql", lambda: pg_locks.item_check(conn, q, "public"))
        _attempt(out / "locks_drop.sql", lambda: pg_locks.drop(conn, q, "public"))
    else:
        _attempt(out / "queue_trigger.sql", lambda: pg_row_check.queue_trigger(conn, q, "public", reviewed))
        _attempt(out / "queue_check.sql", lambda: pg_row_check.queue_check(conn, q, "public", reviewed))
        _attempt(out / "drop_queue_trigger.sql", lambda: pg_triggers.drop_queue_trigger(conn, q, "public", []))
        _attempt(
            out / "drop_queue_trigger_others.sql", lambda: pg_triggers.drop_queue_trigger(conn, q, "public", ["x"])
        )
    columns = (pg_names.written_columns, pg_names.moved_columns, pg_names.checked_columns)
    _attempt(out / "columns.txt", lambda: [[c.name for c in of(q)] for of in columns])
    trail = _trail(q, reviewed)
    if q.shape.all_in_row and not q.shape.separate_locks:
        claim = pg_trusted_claim.statement(pg_claims.SkipLockedClaim(), q, trail)
        _attempt(out / "trusted_next.sql", lambda: pg_trusted.trusted_next(conn, q, "public", claim))
        _claim_functions(out, conn, q, trail)
    if q.shape.single_write and not q.shape.separate_locks:
        _attempt(
            out / "trusted_complete.sql",
            lambda: pg_trusted.trusted_complete(conn, q, "public", _completes(q, trail)),
        )
    calls = (pg_names.next_call(conn.dialect, q, "public"), pg_names.complete_call(conn.dialect, q, None))
    _attempt(out / "calls.txt", lambda: calls)


def mssql_queue(out: Path, text: str, name: str) -> None:
    q, reviewed = bound(text, name, "mssql")
    dialect = test_mssql_sql.DIALECT
    _attempt(out / "script.sql", lambda: mssql_script.script(dialect, q, "dbo", reviewed))
    _attempt(out / "script_unreviewed.sql", lambda: mssql_script.script(dialect, q, "dbo", None))
    _attempt(out / "revoke.sql", lambda: mssql_script.revoke_script(dialect, q, "dbo"))
    _attempt(
        out / "procedures.txt", lambda: [f"{k}: {v}" for k, v in mssql_script.procedures(dialect, q, "dbo").items()]
    )
    _attempt(out / "filters.txt", lambda: [f"{k}: {v.name}" for k, v in mssql_parts.filter_parameters(q).items()])


def dump(out: Path) -> None:
    conn: Any = Conn()
    _attempt(out / "shared.sql", lambda: pg_shared.shared(conn, "public"))
    _attempt(out / "shared_wb.sql", lambda: pg_shared.shared(conn, "wb"))
    _attempt(out / "drop_shared.sql", lambda: pg_shared.drop_shared(conn, "public", ["REVOKE x"]))
    _attempt(out / "reasoned.txt", lambda: [pg_guards.reasoned(), pg_guards.reasoned_deferrals()])
    for name, text in configs().items():
        try:
            config = loader.parse(tomllib.loads(text), "x.toml")
        except Exception as exc:  # noqa: BLE001
            _write(out / name / "config.err", str(exc))
            continue
        for queue in config.queues:  # their names
            for render, kind in ((postgresql_queue, "pg"), (mssql_queue, "mssql")):
                try:
                    render(out / name / queue / kind, text, queue)
                except Exception:  # noqa: BLE001
                    _write(out / name / queue / f"{kind}.err", traceback.format_exc().splitlines()[-1])


if __name__ == "__main__":
    dump(Path(sys.argv[1]))

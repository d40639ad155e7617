"""The SQL Server statements of a separate-lock-table queue (shape 5), compiled offline as text."""

from __future__ import annotations

import contextlib
import datetime as dt
import tomllib
import types
from collections.abc import Mapping
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mssql

from tests import support
from tests.test_mssql_sql import compiled, one_line, trail
from workbench.config import loader
from workbench.core import models
from workbench.db import backends, guarded, mapping, tables
from workbench.db.claims import base
from workbench.db.claims.lock_table import LockTableClaim
from workbench.db.figures import queue_health

CONFIG = support.sample_config("vendor-tickets").replace("{url}", "mssql+pyodbc://u@h/db?driver=FreeTDS")


def _queue(key_type: Any = sa.Integer) -> mapping.BoundQueue:
    config = loader.parse(tomllib.loads(CONFIG), "x.toml")
    metadata = sa.MetaData()
    table = sa.Table(
        "vendor_tickets",
        metadata,
        sa.Column("ticket_id", key_type, primary_key=True),
        sa.Column("subject", sa.String(200)),
        sa.Column("priority", sa.Integer),
        sa.Column("state", sa.String(20)),
        sa.Column("opened_at", mssql.DATETIME2()),
        sa.Column("solved_by", sa.String(50)),
        sa.Column("solved_at", mssql.DATETIME2()),
        schema="vendor",
    )
    own, _, _ = tables.build_metadata()
    return mapping.BoundQueue(
        config.queue("tickets"),
        table,
        config_path="x.toml",
        backend=backends.for_dialect("mssql"),
        local_clock=False,
        locks=own.tables[tables.LOCKS_TABLE],
    )


class _Recorder:
    """A connection that keeps the statements it is given and answers as a claim expects."""

    def __init__(self, rows: list[Mapping[str, Any]] | None = None) -> None:
        self.sent: list[str] = []
        self.rows = rows or []

    def execute(self, stmt: Any, params: Any = None) -> Any:
        self.sent.append(one_line(compiled(stmt)))
        rows = self.rows

        def one() -> Any:
            raise _ReadBack  # the claimed row is read back: the statements of interest are sent

        class Mappings(list):  # type: ignore[type-arg]
            def all(self) -> list[Mapping[str, Any]]:
                return list(self)

            def one(self) -> Any:
                return one()

        return types.SimpleNamespace(rowcount=1, first=lambda: (1,), mappings=lambda: Mappings(rows))


class _ReadBack(Exception):
    pass


def _try(q: mapping.BoundQueue, cand: Mapping[str, Any]) -> list[str]:
    conn = _Recorder()
    with pytest.raises(_ReadBack):
        LockTableClaim()._take(conn, q, trail("tickets"), base.ClaimRequest(user="alice"), cand)
    return conn.sent


def test_the_join_casts_integer_keys_both_ways_and_try_casts_the_text() -> None:
    q = _queue()
    sql = one_line(compiled(sa.select(q.key).select_from(q.source)))
    assert sql == (
        "SELECT vendor.vendor_tickets.ticket_id FROM vendor.vendor_tickets LEFT OUTER JOIN workbench_locks "
        "ON workbench_locks.queue = 'tickets' AND workbench_locks.item_key = "
        "CAST(vendor.vendor_tickets.ticket_id AS VARCHAR(200)) AND vendor.vendor_tickets.ticket_id = "
        "TRY_CAST (workbench_locks.item_key AS INTEGER)"
    )
    text_key = one_line(compiled(sa.select(sa.literal(1)).select_from(_queue(sa.String(30)).source)))
    assert "workbench_locks.item_key = vendor.vendor_tickets.ticket_id" in text_key and "CAST" not in text_key


def test_the_claim_reads_expired_then_free_tickets_and_inserts_under_a_key_range_lock() -> None:
    q = _queue()
    conn = _Recorder()
    LockTableClaim()._candidates(conn, q, trail("tickets"), base.ClaimRequest(user="alice"))
    expired, free = conn.sent
    assert expired.startswith("SELECT TOP 16 vendor.vendor_tickets.ticket_id AS wb_ckey, workbench_locks.lock_user")
    assert (
        "workbench_locks.lock_user IS NOT NULL AND (workbench_locks.expires_at IS NULL OR "
        "workbench_locks.expires_at <= SYSUTCDATETIME())"
    ) in expired
    assert "WHERE vendor.vendor_tickets.state = 'open' AND workbench_locks.lock_user IS NULL" in free
    assert free.endswith(
        "ORDER BY vendor.vendor_tickets.priority DESC, vendor.vendor_tickets.opened_at ASC, "
        "vendor.vendor_tickets.ticket_id ASC"
    )
    cand = {"wb_ckey": 7, "wb_prev_owner": None, "wb_prev_token": None, "wb_prev_time": None}
    insert, recheck, read_back = _try(q, cand)
    assert insert.startswith(
        "INSERT INTO workbench_locks (queue, item_key, lock_user, locked_at, expires_at, token) "
        "SELECT :wb_queue AS anon_1, :wb_item AS anon_2, :wb_user AS anon_3, SYSUTCDATETIME()"
    )
    assert insert.endswith(
        "WHERE NOT (EXISTS (SELECT :param_2 AS anon_7 FROM workbench_locks WITH (UPDLOCK, HOLDLOCK) "
        "WHERE workbench_locks.queue = :wb_queue AND workbench_locks.item_key = :wb_item))"
    )  # built once per queue (BoundQueue.lock_insert): the lock row's values bound by name when it runs
    assert recheck == (
        "SELECT vendor.vendor_tickets.ticket_id FROM vendor.vendor_tickets WHERE "
        "vendor.vendor_tickets.ticket_id = :wb_key AND vendor.vendor_tickets.state = 'open'"
    )  # built once per queue (LockTableClaim._still_waits): the key bound by name when it runs
    assert read_back.endswith(
        "WHERE vendor.vendor_tickets.ticket_id = :wb_key AND workbench_locks.token = :wb_token"
    )  # built once per queue (LockTableClaim._after_lock): key and token bound by name when it runs


def test_an_expired_lock_is_taken_over_under_its_old_token() -> None:
    q = _queue()
    cand = {"wb_ckey": 7, "wb_prev_owner": "bob", "wb_prev_token": "a" * 32, "wb_prev_time": None}
    takeover = _try(q, cand)[0]
    assert takeover.startswith(
        "UPDATE workbench_locks SET lock_user=:wb_user, locked_at=SYSUTCDATETIME(), "
        "expires_at=DATEADD(second, 900, SYSUTCDATETIME()), token=:wb_token"
    )
    assert takeover.endswith(
        "WHERE workbench_locks.queue = 'tickets' AND workbench_locks.item_key = :wb_item "
        "AND workbench_locks.token = :wb_prev_token AND (workbench_locks.expires_at IS NULL OR "
        "workbench_locks.expires_at <= SYSUTCDATETIME())"
    )  # built once per queue (LockTableClaim._retake): item, holder and both tokens bound by name


LOCK_FENCE = (
    "WHERE workbench_locks.queue = 'tickets' AND workbench_locks.item_key = :wb_item "
    "AND workbench_locks.token = :wb_token AND coalesce(workbench_locks.lock_user, '') = :wb_user "
    "AND workbench_locks.expires_at > SYSUTCDATETIME()"
)
# The row rule (BoundQueue.in_work): the ticket is still the queue's work, asked by its key.
IN_WORK = (
    " AND (EXISTS (SELECT * FROM vendor.vendor_tickets WHERE vendor.vendor_tickets.ticket_id = :wb_key "
    "AND vendor.vendor_tickets.state = 'open'))"
)


def _writes(shape: guarded.Shape) -> list[str]:
    writer = guarded.GuardedWriter(types.SimpleNamespace(dialect="mssql"), _queue(), trail("tickets"))
    assert not writer.q.backend.one_statement_writes  # statements in a transaction, the audit row after
    return [one_line(compiled(s)) for s in writer._statement(shape)]


def test_complete_deletes_the_lock_row_under_the_fence_then_writes_the_outcome() -> None:
    fence, outcome = _writes(guarded.Shape(models.EventKind.COMPLETE, outcome="solved", unlock=True))
    assert fence == f"DELETE FROM workbench_locks {LOCK_FENCE}{IN_WORK}"
    assert outcome == (
        "UPDATE vendor.vendor_tickets SET state='solved', solved_by=:wb_user, "
        "solved_at=SYSUTCDATETIME() "
        "WHERE vendor.vendor_tickets.ticket_id = :wb_key AND vendor.vendor_tickets.state = 'open'"
    )


def test_save_holds_the_lock_row_then_writes_the_edits() -> None:
    fence, edits = _writes(guarded.Shape(models.EventKind.SAVE, edits=("subject",)))
    assert fence == f"SELECT workbench_locks.token FROM workbench_locks WITH (UPDLOCK, ROWLOCK) {LOCK_FENCE}{IN_WORK}"
    assert edits == (
        "UPDATE vendor.vendor_tickets SET subject=:wb_e0 WHERE vendor.vendor_tickets.ticket_id = :wb_key "
        "AND vendor.vendor_tickets.state = 'open'"
    )


def test_extend_and_release() -> None:
    (extend,) = _writes(guarded.Shape(models.EventKind.EXTEND, extend=True))
    assert extend.startswith("UPDATE workbench_locks SET expires_at=CASE WHEN")
    assert extend.endswith(f"> workbench_locks.expires_at{IN_WORK}")
    (release,) = _writes(guarded.Shape(models.EventKind.RELEASE, unlock=True, release_writes=True))
    assert release == f"DELETE FROM workbench_locks {LOCK_FENCE}{IN_WORK}"


def test_the_board_and_health_read_the_lock_table() -> None:
    q = _queue()
    health_sql: list[str] = []

    class Conn(_Recorder):
        def execute(self, stmt: Any, params: Any = None) -> Any:
            health_sql.append(one_line(compiled(stmt)))
            raise RuntimeError("stop")

    with contextlib.suppress(RuntimeError):
        queue_health.health(Conn(), q, trail("tickets"))
    (sql,) = health_sql
    # Free rows: the table outer-joined to the locks; locked rows: the locks joined to the table.
    assert sql.count("LEFT OUTER JOIN workbench_locks") == 2 and sql.count(" JOIN workbench_locks") == 6
    assert "wb_locked_by" not in sql


# -- shape 6: the table's own claim-id column --------------------------------------------------------

CLAIM_IDS = support.sample_config("claim-ids").replace("{url}", "mssql+pyodbc://u@h/db?driver=FreeTDS")


def _exports() -> mapping.BoundQueue:
    config = loader.parse(tomllib.loads(CLAIM_IDS), "x.toml")
    metadata = sa.MetaData()
    table = sa.Table(
        "export_rows",
        metadata,
        sa.Column("row_id", sa.Integer, primary_key=True),
        sa.Column("created_at", mssql.DATETIME2()),
        sa.Column("payload", sa.String(200)),
        sa.Column("processed", sa.Integer),
        sa.Column("Lock", mssql.UNIQUEIDENTIFIER()),
    )
    own, _, _ = tables.build_metadata()
    return mapping.BoundQueue(
        config.queue("exports"),
        table,
        config_path="x.toml",
        backend=backends.for_dialect("mssql"),
        local_clock=False,
        locks=own.tables[tables.LOCKS_TABLE],
    )


def test_claim_id_writes_check_the_rows_claim_id() -> None:
    q = _exports()
    writer = guarded.GuardedWriter(types.SimpleNamespace(dialect="mssql"), q, trail("exports"))
    fence, outcome = [
        one_line(compiled(s))
        for s in writer._statement(guarded.Shape(models.EventKind.COMPLETE, outcome="done", unlock=True))
    ]
    in_work = (
        " AND (EXISTS (SELECT * FROM export_rows WHERE export_rows.row_id = :wb_key AND export_rows.processed = 0))"
    )
    assert fence == f"DELETE FROM workbench_locks {LOCK_FENCE.replace('tickets', 'exports')}{in_work}"
    assert outcome == (
        "UPDATE export_rows SET processed=1, [Lock]=NULL WHERE export_rows.row_id = :wb_key "
        "AND export_rows.[Lock] = :wb_claim AND export_rows.processed = 0"
    )
    assert q.shape.token_params("0123456789abcdef0123456789abcdef")["wb_claim"].hex == "0123456789abcdef" * 2


def test_claim_id_claim_stamps_only_an_empty_row() -> None:
    q = _exports()
    insert, stamp, _recheck, _read_back = _try(
        q, {"wb_ckey": 3, "wb_prev_owner": None, "wb_prev_token": None, "wb_prev_time": None}
    )
    assert insert.startswith("INSERT INTO workbench_locks")
    assert stamp == (
        "UPDATE export_rows SET [Lock]=:wb_claim WHERE export_rows.row_id = :wb_key AND export_rows.[Lock] IS NULL"
    )  # built once per queue (LockTable.stamp_statement): key and claim id bound by name when it runs
    free = _Recorder()
    LockTableClaim()._candidates(free, q, trail("exports"), base.ClaimRequest(user="alice"))
    assert "workbench_locks.lock_user IS NULL AND export_rows.[Lock] IS NULL" in free.sent[1]


def test_the_sql_server_procedures_refuse_a_lock_table_queue() -> None:
    from workbench.core import errors
    from workbench.db.rules import mssql_script

    with pytest.raises(errors.UsageError, match="locks live in a separate table"):
        mssql_script.script(mssql.dialect(), _queue(), "dbo")


def test_a_run_out_lock_row_out_of_the_work_is_given_back_alone() -> None:
    """The table's expire_out_of_work as the engine runs it on SQL Server (whose procedures cover no lock-table
    queue: its not_in): one DELETE of the run-out lock row while the ticket is out of the queue's work (a
    NULL state too), no write of the ticket (no on_release)."""
    from workbench.db.supervision import Supervision

    q = _queue()
    sup = object.__new__(Supervision)
    sup.q, sup._owned = q, lambda conn: q.held_here()
    conn = _Recorder()
    at = dt.datetime(2026, 1, 1)
    lock = models.Lock(queue="tickets", key=7, owner="bob", token="a" * 32, locked_at=at, expires_at=at, db_now=at)
    assert sup._give_back(conn, lock, q.now())  # type: ignore[arg-type]
    (delete,) = conn.sent
    assert delete.startswith("DELETE FROM workbench_locks WHERE workbench_locks.queue = 'tickets'"), delete
    assert "workbench_locks.expires_at <= SYSUTCDATETIME()" in delete, delete
    assert delete.endswith(
        "workbench_locks.token = :token_1 AND workbench_locks.expires_at <= SYSUTCDATETIME() AND (EXISTS (SELECT * "
        "FROM vendor.vendor_tickets WHERE vendor.vendor_tickets.ticket_id = :ticket_id_1 AND CASE WHEN "
        "(vendor.vendor_tickets.state = 'open') THEN :param_3 ELSE :param_4 END = :param_5))"
    ), delete

"""PostgreSQL: the one-statement SKIP LOCKED claim, one-statement guarded writes, roles and row-level security."""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from workbench.core import models
from workbench.db import dberrors
from workbench.db.backends import indexes, pg_sessions
from workbench.db.backends.base import (
    LIKE_ESCAPE,
    OPERATION,
    Backend,
    ListenLost,
    ListenRefused,
    NewRow,
    like_pattern,
    search_index_name,
)

log = logging.getLogger("workbench.db")

# The change feed's notices (notify_changes, NoticeListener): one channel per database, the audit row's id
# and whom it concerns as JSON. A second workbench schema in the same database shares the channel: its
# notices wake a reader for a look that finds nothing (a notice is a hint, never the row).
CHANGES_CHANNEL = "workbench_changes"
NOTIFY_FUNCTION = "workbench_audit_notify"  # the trigger's function, beside the audit table
NOTIFY_TRIGGER = "workbench_audit_notify"
LISTEN_APPLICATION = "workbench listen"  # a listening session's application_name (the others': "workbench")
ECHO_SECONDS = 2.0  # a listener's own first notice comes back within this, or it is not a session of its own
ALIVE_SECONDS = 10.0  # a listener that heard nothing this long asks its server (SELECT 1) whether it is there

if TYPE_CHECKING:
    from workbench.config import model


class PostgresqlBackend(Backend):
    name = "postgresql"
    label = "PostgreSQL"
    logins_kind = "roles"
    default_port = 5432
    claim_methods = ("skip-locked", "select-skip-locked")
    board_activity = "lateral"
    hours_in_sql = True
    one_statement_writes = True
    reads_alone = True  # psycopg's autocommit is a flag on the client: switching it sends nothing
    update_returns_from = True  # UPDATE … FROM … RETURNING names the FROM's columns
    roles = True
    partial_index_keyword = "postgresql_where"
    stale_by_union = True  # see Backend.stale_by_union: 5 ms at 10,000 live locks without it
    create_grant = "GRANT CREATE ON SCHEMA {schema} TO {login}"

    def text_match(self, column: sa.ColumnElement[Any], text: str, how: str) -> sa.ColumnElement[bool]:
        if how != "prefix":
            # ILIKE: case-insensitive in every locale, and a trigram index (pg_trgm) serves it.
            return column.ilike(like_pattern(text, how), escape=LIKE_ESCAPE)
        # A prefix: the same match (PostgreSQL's ILIKE lowers both sides in a UTF-8 database), on
        # the lowered column in the "C" collation, whose b-tree a LIKE prefix reads as a range; in
        # search_order's order a search then reads its 50 rows off that index, where the trigram
        # index found the 6,000 rows one letter matches and sorted them (76-92 ms p99; "MÖ" 155 ms
        # p50). lower() of the pattern in the database: the planner folds it to the constant whose
        # range the index reads.
        pattern = sa.func.lower(sa.literal(like_pattern(text, how), sa.Text()))
        return _folded(column).like(pattern, escape=LIKE_ESCAPE)

    def search_order(self, column: sa.ColumnElement[Any], how: str) -> list[sa.ColumnElement[Any]]:
        # A prefix: the order of its index (text_match), which the planner walks for ORDER BY …
        # LIMIT 50 and stops at the 50th row. (In the column's own order it walked the primary key
        # filtering by ILIKE and read a third of the table for "ka", 97 ms.) Case-insensitive, in
        # code point order: "Müller" after "Mz". Text inside names: the same order, written so
        # that no index gives it (|| ''), which leaves the planner the trigram index and a sort of
        # what it finds. Walking the b-tree in order and filtering by ILIKE, its choice for 62 of
        # 200 three-digit searches, read a sixth of the table for 50 rows (up to 110 ms in EXPLAIN
        # ANALYZE, where the trigram index takes 1 ms).
        if how == "contains":
            return [sa.collate(sa.func.lower(column, type_=sa.Text()).concat(""), "C")]
        return [_folded(column)]

    def search_index(self, conn: sa.Connection, column: sa.Column[Any]) -> tuple[list[sa.Index], str | None]:
        # Two: a b-tree of lower(column) in the "C" collation for a prefix (text_match, search_order),
        # and a trigram index (pg_trgm's gin_trgm_ops) for text inside names, which no b-tree serves.
        # pg_trgm ships with PostgreSQL (contrib); a database has it once CREATE EXTENSION ran there.
        table = column.table
        qualified = conn.dialect.identifier_preparer.format_table(table)
        quoted = conn.dialect.identifier_preparer.quote(column.name)
        wanted: list[sa.Index] = []
        prefix = sa.text(
            "SELECT 1 FROM pg_catalog.pg_index i "
            "JOIN pg_catalog.pg_class c ON c.oid = i.indexrelid JOIN pg_catalog.pg_am am ON am.oid = c.relam "
            "JOIN pg_catalog.pg_collation co ON co.oid = i.indcollation[0] "
            "WHERE i.indrelid = to_regclass(:table) AND am.amname = 'btree' AND co.collname IN ('C', 'POSIX') "
            "AND i.indpred IS NULL AND pg_catalog.pg_get_indexdef(i.indexrelid, 1, false) IN (:plain, :cast)"
        )
        found = {"table": qualified, "plain": f"lower({quoted})", "cast": f"lower(({quoted})::text)"}
        if not conn.execute(prefix, found).first():
            wanted.append(sa.Index(search_index_name(column, "prefix"), _folded(column)))
        trigrams = sa.text(
            "SELECT 1 FROM pg_catalog.pg_index i "
            "JOIN pg_catalog.pg_opclass o ON o.oid = i.indclass[0] "
            "JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = i.indkey[0] "
            "WHERE i.indrelid = to_regclass(:table) AND a.attname = :column "
            "AND o.opcname IN ('gin_trgm_ops', 'gist_trgm_ops') AND i.indpred IS NULL"
        )
        if conn.execute(trigrams, {"table": qualified, "column": column.name}).first():
            return wanted, None
        installed, available = conn.execute(
            sa.text(
                "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension WHERE extname = 'pg_trgm'), "
                "EXISTS (SELECT 1 FROM pg_catalog.pg_available_extensions WHERE name = 'pg_trgm')"
            )
        ).one()
        if not available:
            return wanted, (
                f"this PostgreSQL has no pg_trgm extension: a search for text inside {table.name}.{column.name} "
                "reads the whole table; install PostgreSQL's contrib package to have a trigram index serve it"
            )
        wanted.append(
            sa.Index(
                search_index_name(column), column, postgresql_using="gin", postgresql_ops={column.name: "gin_trgm_ops"}
            )
        )
        first = None if installed else "run CREATE EXTENSION pg_trgm; in this database (as its owner) before it"
        return wanted, first

    def engine_options(
        self, url: sa.URL, db: model.DatabaseConfig, create: bool
    ) -> tuple[sa.URL, dict[str, Any], dict[str, Any]]:
        connect_args: dict[str, Any] = {"connect_timeout": db.connect_timeout, "application_name": "workbench"}
        if db.pooler == "transaction":
            # Every transaction may run on another server session: psycopg prepares no statement
            # (it would by the fifth run of one, under a name the next session does not know), and
            # the timeouts are made per transaction (session_setup), not for the session.
            connect_args["prepare_threshold"] = None
        else:
            # Our transactions are one statement or a few; anything slower is a hung server or a
            # lock wait, and must not freeze the operator's window.
            connect_args["options"] = (
                f"-c statement_timeout={db.statement_timeout * 1000} "
                f"-c idle_in_transaction_session_timeout={db.statement_timeout * 2000}"
            )
        return url, {}, connect_args

    def session_setup(self, engine: sa.Engine, db: model.DatabaseConfig) -> None:
        if db.pooler != "transaction":
            # Sessions are relied on from here: refused through a transaction pooler, whichever session it lends.
            pg_sessions.check_connections(engine)
            return
        from workbench.db import fastpath

        statement = ("statement_timeout", db.statement_timeout * 1000)
        timeouts = (statement, ("idle_in_transaction_session_timeout", db.statement_timeout * 2000))
        # The timeouts the connection's options set without a pooler, for one transaction each (SET LOCAL).
        # The fast pool's one-statement calls (the claim, the Complete) send the statement timeout in the
        # statement's pipeline (fastpath.py), the idle one not: the server arms it only when it reports itself
        # ready with a transaction open, and the pipeline's one Sync ends the transaction before that.
        name, ms = statement
        engine.workbench_transaction_settings = sa.select(  # type: ignore[attr-defined]
            sa.func.set_config(sa.literal(name), sa.literal(str(ms)), sa.true())
        )
        # The operations' transactions (connect.Database's) get them with their BEGIN, in one message
        # (fastpath.begin_with_settings): one round trip, two utility commands the server neither analyses
        # nor plans, where psycopg's BEGIN and a `SELECT set_config(…)` were two round trips and a statement
        # parsed, analysed and planned each time (PgBouncer 1.18 prepares nothing): issue 51.
        settings = "; ".join(f"SET LOCAL {name} = {int(ms)}" for name, ms in timeouts)

        @sa.event.listens_for(engine, "begin")
        def _begin(conn: sa.Connection) -> None:
            if not conn.get_execution_options().get(OPERATION):
                return  # init, attach, …: no timeout of their own through the pooler (docs/setup/pgbouncer.md)
            dbapi = conn.connection.dbapi_connection
            try:
                fastpath.begin_with_settings(dbapi, settings)
            except conn.dialect.loaded_dbapi.Error as exc:
                # As SQLAlchemy wraps a statement's error: dberrors.translated() says what it means, and a
                # connection found dead is not given out again.
                invalid = conn.dialect.is_disconnect(exc, dbapi, None)
                if invalid:
                    conn.invalidate(exc)
                raise sa.exc.DBAPIError.instance(
                    settings, None, exc, conn.dialect.loaded_dbapi.Error, connection_invalidated=invalid
                ) from exc

    def server_address(self, dbapi_connection: Any) -> Any:
        # The host and port libpq settled on, of those the URL lists: free, no round trip.
        return (dbapi_connection.info.host, dbapi_connection.info.port)

    def fast_pool_setup(self, engine: sa.Engine) -> None:
        if getattr(engine, "workbench_pooler", "none") == "transaction":
            # A SET here would stay with whichever server session the pooler lent this connection,
            # and change it for every other client of the pool. The claim function carries the
            # setting itself (pg_function.py), and a statement not prepared has no plan to keep.
            return

        @sa.event.listens_for(engine, "connect")
        def _generic_plans(dbapi_conn: Any, _record: Any) -> None:
            # The claim and Complete prepared here keep one plan per connection. By default the plan
            # cache compares a new plan's cost with the custom plans made so far: after the table's
            # statistics change (a few live locks in the morning, 100,000 in the afternoon) it went
            # on planning every claim afresh, reading the lock index's ends each time (2-3x the
            # claim's time, live_locks_bench, README "Many people holding locks"). The claim's plan
            # does not depend on its parameters (the user, the queue's name), so one generic plan,
            # rebuilt when the table's statistics are, serves every call. PostgreSQL 12 and later.
            if getattr(getattr(dbapi_conn, "info", None), "server_version", 0) >= 120000:
                cursor = dbapi_conn.cursor()
                cursor.execute("SET plan_cache_mode = force_generic_plan")
                cursor.close()
                if not getattr(dbapi_conn, "autocommit", True):
                    dbapi_conn.commit()  # a SET rolled back with its transaction would be undone

    def probe_options(self, url: sa.URL, timeout: int) -> tuple[sa.URL, dict[str, Any]]:
        if url.get_driver_name() in ("psycopg", "psycopg2"):
            return url, {"connect_timeout": timeout, "application_name": "workbench"}
        return super().probe_options(url, timeout)

    def server_version(self, conn: sa.Connection) -> str:
        return " ".join(str(conn.exec_driver_sql("SELECT version()").scalar()).split()[:2])

    def new_row(self, table: sa.Table, row: Mapping[str, sa.ColumnElement[Any]]) -> NewRow:
        from sqlalchemy.dialects import postgresql

        # RETURNING says whether a row went in (the driver's rowcount may be -1 here).
        return NewRow(postgresql.insert(table).values(dict(row)).on_conflict_do_nothing().returning(sa.literal(1)))

    def insert_new(self, conn: sa.Connection, new: NewRow, params: Mapping[str, Any]) -> bool:
        return conn.execute(new.insert, params).first() is not None

    def iso_text(self, time: sa.ColumnElement[Any], *, aware: bool, utc: bool) -> sa.ColumnElement[str]:
        def shown(pattern: str) -> sa.ColumnElement[str]:
            return sa.func.to_char(time, sa.literal(pattern, literal_execute=True), type_=sa.String())

        micro = shown("US")
        fraction = sa.case((micro != "000000", sa.literal(".", literal_execute=True) + micro), else_="")
        zone: sa.ColumnElement[str] = shown("TZH:TZM") if aware else sa.literal("+00:00" if utc else "")
        return shown('YYYY-MM-DD"T"HH24:MI:SS') + fraction + zone

    def token_digest(self, token: sa.ColumnElement[Any]) -> sa.ColumnElement[str]:
        text = sa.func.convert_to(sa.func.lower(sa.cast(token, sa.Text())), sa.literal("UTF8", literal_execute=True))
        return sa.func.encode(sa.func.sha256(text), sa.literal("hex", literal_execute=True), type_=sa.String())

    def newest_audit_id(self, conn: sa.Connection, audit: sa.Table) -> int:
        """The trail's `id` has only a BRIN index here (its key is by item): max(id) read the whole trail
        (at the console's and the relay's first look). Its sequence's last value is read in one step instead:
        every id handed out, a row still being written included (a reader starting there misses only what
        was in flight as it started, as one starting at the newest visible id may). Without the privilege
        (the logins that write the trail have it), or a sequence not used yet: max(id)."""
        sequence = sa.func.pg_get_serial_sequence(conn.dialect.identifier_preparer.format_table(audit), "id")
        last = sa.case(
            (
                sa.func.has_sequence_privilege(sequence, "SELECT,USAGE"),
                # to_regclass, not a cast to REGCLASS: SQLAlchemy's postgresql dialect module stays unloaded
                # where the site is on another database (tests/test_live_locks.py: one dialect loaded).
                sa.func.pg_sequence_last_value(sa.func.to_regclass(sequence)),
            )
        )
        found = conn.execute(sa.select(last)).scalar()
        return int(found) if found is not None else super().newest_audit_id(conn, audit)

    def index_serves(self, conn: sa.Connection, table: sa.Table, found: Mapping[str, Any], wanted: sa.Index) -> bool:
        if not indexes.leads_with(found, wanted, directions_known=True):
            return False
        have = (found.get("dialect_options") or {}).get("postgresql_where")
        want = wanted.dialect_options["postgresql"]["where"]
        if want is None or have is None:
            return want is None and have is None
        normalised = self._normalised_predicate(conn, table, want)
        return normalised is not None and _without_casts(have) == _without_casts(normalised)

    @staticmethod
    def _normalised_predicate(conn: sa.Connection, table: sa.Table, predicate: sa.ColumnElement[bool]) -> str | None:
        """The predicate as PostgreSQL itself prints an index's (pg_get_expr), so that two spellings
        of one condition compare equal: an index on an empty temporary copy of the table's columns,
        rolled back at once. None when that cannot be done (e.g. no TEMP privilege)."""
        prep = conn.dialect.identifier_preparer
        text = str(
            predicate.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True, "include_table": False})
        )
        if conn.dialect.paramstyle in ("format", "pyformat"):
            text = text.replace("%%", "%")
        first = prep.quote(next(iter(table.c)).name)
        try:
            with conn.begin_nested() as savepoint:
                conn.exec_driver_sql(f"CREATE TEMP TABLE wb_attach_probe (LIKE {prep.format_table(table)})")
                conn.exec_driver_sql(f"CREATE INDEX wb_attach_probe_ix ON wb_attach_probe ({first}) WHERE {text}")
                result = conn.exec_driver_sql(
                    "SELECT pg_get_expr(indpred, indrelid) FROM pg_catalog.pg_index "
                    "WHERE indexrelid = 'wb_attach_probe_ix'::regclass"
                ).scalar()
                savepoint.rollback()
        except sa.exc.DBAPIError:
            return None
        return str(result) if result is not None else None

    def in_database_role(self, conn: sa.Connection, user: str, group: str) -> bool:
        # Directly or through other roles; False where either role does not exist (pg_has_role
        # by name would fail on a workbench user without a login).
        found = conn.execute(
            sa.text(
                "SELECT pg_has_role(u.oid, g.oid, 'MEMBER') FROM pg_catalog.pg_roles u, "
                "pg_catalog.pg_roles g WHERE u.rolname = :user AND g.rolname = :grp"
            ),
            {"user": user, "grp": group},
        ).scalar()
        return bool(found)

    def hides_rows(self, conn: sa.Connection) -> bool:
        return True  # row-level security (`workbench grants`) hides rows from an UPDATE's view

    def held_open_reads(self, rows: sa.Select[Any]) -> Any:
        # The claim skips locked rows: a plain read sees them, a locking read that skips them does not.
        first = rows.limit(1)
        return first, first.with_for_update(skip_locked=True)

    def held_open(self, conn: sa.Connection, reads: Any, params: dict[str, Any]) -> bool:
        seen, unlocked = reads
        if conn.execute(seen, params).first() is None:
            return False
        try:
            with conn.begin_nested():
                return conn.execute(unlocked, params).first() is None
        except sa.exc.DBAPIError:  # a login that may not lock rows cannot tell
            return False

    def auto_claim_method(self, engine: sa.Engine) -> str:
        return "skip-locked"

    def notify_changes(self, conn: sa.Connection, audit: sa.Table) -> None:
        # A NOTIFY per audit row whose actor is not its owner (someone else's act on a user's item: a
        # force-release, reassign, takeover, expiry; or a row of no owner), sent by PostgreSQL when the
        # transaction commits (never for one rolled back), in commit order: what a window is woken for
        # (relay_client.concerns). A user's own claims, Saves and Completes send none and cost nothing:
        # a row trigger's WHEN is asked as the row is written, and only a row it admits queues a call.
        # Why not every row: a notifying transaction's commit takes a lock every other notifying commit
        # waits for (its WAL flush included); on the claim path that cost the pair a fifth of its rate
        # in claim_bench, and a statement trigger (its transition table, its call) a quarter more server
        # CPU per pair. The consoles, woken for every change, see the users' own by their own look.
        # SECURITY INVOKER: it does nothing the inserting login could not (pg_notify is everyone's); a
        # fixed search_path, so nothing on the caller's path runs inside.
        prep = conn.dialect.identifier_preparer
        table = prep.format_table(audit)
        function = prep.quote(NOTIFY_FUNCTION)
        if audit.schema:
            function = f"{prep.quote_schema(audit.schema)}.{function}"
        conn.exec_driver_sql(
            f"CREATE OR REPLACE FUNCTION {function}() RETURNS trigger LANGUAGE plpgsql SECURITY INVOKER "
            "SET search_path = pg_catalog, pg_temp AS $wb$\nBEGIN\n"
            f"  PERFORM pg_catalog.pg_notify('{CHANGES_CHANNEL}', pg_catalog.json_build_object("
            "'id', NEW.id, 'queue', NEW.queue, 'owner', NEW.owner, 'actor', NEW.actor)::text);\n"
            "  RETURN NULL;\nEND\n$wb$"
        )
        # A trigger's function is not called by hand, and its EXECUTE is checked when the trigger is made,
        # not as it fires: no one needs it (tests/test_protocol_holes.py lists what each login may call).
        conn.exec_driver_sql(f"REVOKE ALL ON FUNCTION {function}() FROM PUBLIC")
        conn.exec_driver_sql(f"DROP TRIGGER IF EXISTS {prep.quote(NOTIFY_TRIGGER)} ON {table}")
        conn.exec_driver_sql(
            f"CREATE TRIGGER {prep.quote(NOTIFY_TRIGGER)} AFTER INSERT ON {table} FOR EACH ROW "
            f"WHEN (NEW.owner IS DISTINCT FROM NEW.actor) EXECUTE PROCEDURE {function}()"
        )

    def change_listener(self, engine: sa.Engine) -> NoticeListener | None:
        if getattr(engine, "workbench_pooler", "none") == "transaction":
            return None  # PgBouncer's transaction pooling carries no LISTEN: the readers read by the clock
        return NoticeListener(engine)


_CAST = re.compile(r"::[a-z_ ]+(?:\[\])?")


def _without_casts(predicate: str) -> str:
    """pg_get_expr text without casts, parentheses and spaces: `IN ('new', 'open')` on a varchar
    column prints with ::character varying, `= ANY (ARRAY['new', 'open'])` with ::text; both are
    compared with the same column, so the casts say nothing about which rows the index holds.
    (Doubled parentheses are collapsed; single ones, which carry the structure, are kept.)"""
    text = "".join(ch for ch in _CAST.sub("", predicate.lower()) if not ch.isspace())
    while "((" in text or "))" in text:  # a cast's own parentheses, left doubled
        text = text.replace("((", "(").replace("))", ")")
    return text


def _folded(column: sa.ColumnElement[Any]) -> sa.ColumnElement[Any]:
    """lower(column) in the "C" collation: what a lookup's prefix search matches, orders by and indexes."""
    return sa.collate(sa.func.lower(column, type_=sa.Text()), "C")


class NoticeListener:
    """LISTEN on a connection of its own (psycopg 3's notifies()), made like the engine's others (login,
    password, timeouts) but kept out of its pool: a session that does nothing but wait costs the server
    no time. Blocking, one thread at a time (base.ChangeListener)."""

    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._fairy: Any = None  # SQLAlchemy's handle on the connection, detached from the pool
        self._conn: Any = None  # the driver's connection
        self._heard = 0.0  # time.monotonic() when the server last answered

    def open(self) -> None:
        self.close()
        try:
            fairy = self.engine.raw_connection()
            fairy.detach()  # never handed to anyone else, and closed for good by close()
            conn: Any = fairy.dbapi_connection
            if not hasattr(conn, "notifies"):  # another driver than psycopg 3
                fairy.invalidate()
                raise ListenRefused(f"the driver {type(conn).__module__} cannot wait for notifications")
            if not conn.autocommit:
                conn.rollback()
                conn.autocommit = True
            conn.execute(f"SET application_name = '{LISTEN_APPLICATION}'")  # what pg_stat_activity shows
            conn.execute(f"LISTEN {CHANGES_CHANNEL}")
            came_back = _echo(conn)
        except ListenLost:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure to connect or listen: read by the clock
            raise ListenLost(f"cannot listen for the audit trail's notices: {dberrors.first_line(exc)}") from None
        if not came_back:
            fairy.invalidate()
            raise ListenRefused(
                "a notice sent on the listening connection did not come back from its own session: a pooler "
                'stands between (set [database] pooler = "transaction" for PgBouncer\'s transaction pooling)'
            )
        self._fairy, self._conn, self._heard = fairy, conn, time.monotonic()

    def wait(self, timeout: float) -> list[models.Notice]:
        conn = self._conn
        if conn is None:
            raise ListenLost("not listening")
        try:
            got = list(conn.notifies(timeout=max(0.0, timeout), stop_after=1))
            if got:
                got += conn.notifies(timeout=0.0)  # the rest of a burst, already here
                self._heard = time.monotonic()
            elif time.monotonic() - self._heard > ALIVE_SECONDS:
                conn.execute("SELECT 1")  # a server gone quiet: is it still there?
                self._heard = time.monotonic()
        except Exception as exc:  # noqa: BLE001 - the connection broke: the reader reads by the clock
            self.close()
            raise ListenLost(f"the listening connection: {dberrors.first_line(exc)}") from None
        if conn.closed:
            self.close()
            raise ListenLost("the listening connection closed")
        return [notice for notice in map(_notice, got) if notice is not None]

    def close(self) -> None:
        fairy, self._fairy, self._conn = self._fairy, None, None
        if fairy is not None:
            with contextlib.suppress(Exception):
                fairy.invalidate()  # closed without the pool's reset (a rollback on a connection maybe lost)


def _echo(conn: Any) -> bool:
    """Whether a notice this connection sends comes back to it from its own server session: not so through
    a pooler that lends each statement a session (PgBouncer's transaction pooling, a pooler not declared),
    whose LISTEN would hear nothing, or whose session's process id is not the one the pooler told us."""
    mark = f"listening {conn.info.backend_pid}"
    conn.execute("SELECT pg_catalog.pg_notify(%s, %s)", (CHANGES_CHANNEL, mark))
    pid = conn.info.backend_pid
    return any(notify.payload == mark and notify.pid == pid for notify in conn.notifies(timeout=ECHO_SECONDS))


def _notice(notify: Any) -> models.Notice | None:
    """A notice's payload as notify_changes writes it; None for anything else on the channel."""
    if notify.channel != CHANGES_CHANNEL:
        return None
    try:
        body = json.loads(notify.payload)
        owner = None if body["owner"] is None else str(body["owner"])
        return models.Notice(int(body["id"]), str(body["queue"]), owner, str(body["actor"]))
    except (ValueError, TypeError, KeyError):
        log.debug("a notice on %s not workbench's: %r", CHANGES_CHANNEL, notify.payload[:200])
        return None

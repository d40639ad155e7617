"""PostgreSQL through a transaction pooler: the hot reads' plans kept by the server sessions.

Straight to the server psycopg prepares a statement by its fifth run, and the session keeps its
parsed and planned form. Through PgBouncer in transaction pooling (before 1.21, no prepared
statements) every read is parsed, analysed and planned again at each call: at 250 windows through
PgBouncer that was half of the server's CPU (perf), the statements' execution a fifth of it.

Here a read the engine sends often (a plain SELECT, no row locks, the same text KEEP_AFTER times in
this process) becomes a call of a permanent PL/pgSQL function in workbench's schema whose body is
that very statement: PL/pgSQL keeps the plan of its query per server session, and every pooled
session that runs the call plans it once, however many clients lend it. What the call itself costs
the server (a short text, one function scan) is a fraction of the statement's own parse and plan.

The function runs with the caller's rights (SECURITY INVOKER, the default) and is STABLE (it sees the
snapshot of the statement that calls it, as the statement itself would): the grants and row
policies that apply to the statement apply to it, and nothing else changes. Its name is derived from
its text and types, so a changed statement makes a new one, and two processes making the same one at
once leave one. It is made on a connection of its own, once per process and statement: the
statement run there as it is, its columns' types read from the result, the function made where this
login may create it (else the statement stays as it is, as where anything here fails), and the call
run once there to prove it returns the same columns. The types of the arguments are the ones psycopg
sends for the values (text for a string, whose type the server would infer), cast in the call.
"""

from __future__ import annotations

import hashlib
import logging
import re
import threading
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

log = logging.getLogger("workbench.db")

KEEP_AFTER = 3  # a read's text seen this often in a process gets its function
MAX_KEPT = 200  # functions one process makes at most (reads whose text varies, e.g. IN lists, stay plain)
FROM = re.compile(r"\bFROM\b", re.IGNORECASE)
PLACEHOLDER = re.compile(r"%\((\w+)\)s")
# Not a plain read: rows locked, values written or sessions changed (set_config, advisory locks, notices,
# sequences), or a call of a function of workbench's (the claim's writes, a kept read's own call).
NOT_PLAIN = re.compile(
    r"\bFOR\s+(UPDATE|SHARE|NO\s+KEY|KEY\s+SHARE)\b|\bINTO\b|nextval|setval|set_config|advisory|pg_notify|"
    r"pg_sleep|pg_cancel|pg_terminate|dblink|\bwb_\w+\s*\(|pg_catalog\.|information_schema\.",
    re.IGNORECASE,
)
INT_OIDS = (21, 23)  # smallint, integer: psycopg sends a small int as these; the argument takes bigint (20)
BIGINT = 20


class _Kept:
    """The statements of one process: how often each was seen, and each kept one's call (None: plain).
    Shared by the engines of one login and server (a process may hold many, as the benchmark's windows)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.seen: dict[tuple[Any, ...], int] = {}
        self.calls: dict[tuple[Any, ...], str | None] = {}


_KEPT = _Kept()


def _kinds(parameters: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """What the values are, as far as it decides the types psycopg sends them as (None: a NULL, whose
    type the server infers at each call: not kept)."""
    kinds = []
    for name, value in parameters.items():
        if value is None:
            return None
        aware = getattr(value, "tzinfo", None) is not None
        kinds.append((name, type(value), aware))
    return tuple(kinds)


def keep_plans(engine: sa.Engine) -> None:
    """Send the engine's frequent plain reads as calls of functions whose plans the server sessions keep."""
    route = (engine.url.render_as_string(hide_password=True),)

    @sa.event.listens_for(engine, "before_cursor_execute", retval=True)
    def _kept_call(
        conn: sa.Connection, _cursor: Any, statement: str, parameters: Any, _context: Any, executemany: bool
    ) -> tuple[str, Any]:
        if executemany or not isinstance(parameters, Mapping) or not _readable(statement):
            return statement, parameters
        kinds = _kinds(parameters)
        if kinds is None:
            return statement, parameters
        key = (route, statement, kinds)
        call = _KEPT.calls.get(key, "")
        if call:
            return call, parameters
        if call is None:
            return statement, parameters
        with _KEPT.lock:
            seen = _KEPT.seen.get(key, 0) + 1
            _KEPT.seen[key] = seen
            if seen < KEEP_AFTER or key in _KEPT.calls:
                return statement, parameters
            _KEPT.calls[key] = None  # while it is made: plain (and plain for good where it fails)
            if len(_KEPT.calls) > MAX_KEPT:
                return statement, parameters
        # Made beside, on a connection of its own: the caller's transaction does not wait for it (an idle
        # transaction the server would end), and the statement runs as it is until the call is there.
        engine_ = conn.engine
        params = dict(parameters)

        def make() -> None:
            _KEPT.calls[key] = _make(engine_, statement, params)

        threading.Thread(target=make, name="workbench kept plan", daemon=True).start()
        return statement, parameters


def _readable(statement: str) -> bool:
    """A plain read: one SELECT that locks no rows and writes nothing."""
    text = statement.lstrip()
    return text[:6].upper() == "SELECT" and ";" not in text and bool(FROM.search(text)) and not NOT_PLAIN.search(text)


def _make(engine: sa.Engine, statement: str, parameters: Mapping[str, Any]) -> str | None:
    """The call of the function that runs `statement` (made now where missing), or None where there
    can be none (no schema this login may create in, a type with no name, anything refused)."""
    try:
        raw = engine.raw_connection()
    except Exception:  # noqa: BLE001 - no function: the statement stays as it is
        return None
    try:
        return _made(raw, engine, statement, parameters)
    except Exception as exc:  # noqa: BLE001 - any refusal: the statement stays as it is
        log.debug("no kept plan for a read: %s", exc)
        try:
            raw.rollback()
        except Exception:  # noqa: BLE001
            raw.invalidate()
        return None
    finally:
        raw.close()


def _made(raw: Any, engine: sa.Engine, statement: str, parameters: Mapping[str, Any]) -> str | None:
    from psycopg import adapt, pq  # the psycopg dialect's driver, the only one PostgresqlBackend uses

    dbapi = raw.driver_connection
    names: list[str] = []
    for name in PLACEHOLDER.findall(statement):
        if name not in names:
            names.append(name)
    if set(names) != set(parameters):
        return None
    transformer = adapt.Transformer(dbapi)
    oids = [transformer.get_dumper(parameters[name], adapt.PyFormat.TEXT).oid for name in names]
    oids = [BIGINT if oid in INT_OIDS else oid for oid in oids]
    position = {name: f"${i}" for i, name in enumerate(names, 1)}
    body = PLACEHOLDER.sub(lambda m: position[m.group(1)], statement).replace("%%", "%")
    cursor = raw.cursor()
    try:
        # The arguments' types as the server infers them for the values psycopg sends (a string's
        # from where it stands, as for the statement itself): PREPARE with those it sends, then read.
        cursor.execute(
            "SELECT string_agg(CASE WHEN o = 0 THEN 'unknown' ELSE format_type(o, NULL) END, ', ' ORDER BY n) "
            "FROM unnest(%(oids)s::oid[]) WITH ORDINALITY AS t(o, n)",
            {"oids": oids},
        )
        sent = cursor.fetchone()[0]
        cursor.execute(f"PREPARE wb_kept_probe{f' ({sent})' if sent else ''} AS {body}")
        cursor.execute("SELECT parameter_types::text[] FROM pg_prepared_statements WHERE name = 'wb_kept_probe'")
        arg_types = list(cursor.fetchone()[0])
        cursor.execute("DEALLOCATE wb_kept_probe")
        cursor.execute(statement, parameters)
        description = cursor.description
        cursor.fetchall()
        if description is None or len(arg_types) != len(names):
            return None
        columns = [column.name for column in description]
        if len(set(columns)) != len(columns):
            return None
        cursor.execute(
            "SELECT format_type(o, NULL) FROM unnest(%(oids)s::oid[]) WITH ORDINALITY AS t(o, n) ORDER BY n",
            {"oids": [int(column.type_code) for column in description]},
        )
        result_types = [str(row[0]) for row in cursor.fetchall()]
        types = arg_types + result_types
        cursor.execute("SELECT current_schema()")
        home = cursor.fetchone()[0]
        if home is None or any(t in ("-", "unknown", "record") or t.startswith("???") for t in types):
            return None
        prep = engine.dialect.identifier_preparer
        schema = prep.quote_schema(home)
        digest = hashlib.sha256("\0".join([body, *types]).encode()).hexdigest()
        name = f"wb_read_{digest[:24]}"
        tag = f"$wb_{digest[:12]}$"
        if tag in body:
            return None
        signature = f"{schema}.{name}({', '.join(arg_types)})"
        cursor.execute("SELECT to_regprocedure(%(s)s) IS NOT NULL", {"s": signature})
        if not cursor.fetchone()[0]:
            create = (
                f"CREATE FUNCTION {signature} RETURNS SETOF record LANGUAGE plpgsql STABLE AS {tag}\n"
                f"BEGIN\n  RETURN QUERY {body};\nEND\n{tag}"
            )
            raw.commit()
            try:
                cursor.execute(create)  # no parameters: the text as it is
                raw.commit()
            except Exception:  # noqa: BLE001 - refused: no CREATE here, or another process made it
                raw.rollback()
            cursor.execute("SELECT to_regprocedure(%(s)s) IS NOT NULL", {"s": signature})
            if not cursor.fetchone()[0]:
                return None
        args = ", ".join(f"%({n})s::{t}" for n, t in zip(names, arg_types, strict=True))
        shape = ", ".join(f"{prep.quote(c)} {t}" for c, t in zip(columns, result_types, strict=True))
        call = f"SELECT * FROM {schema}.{name}({args}) AS wb_kept({shape})"
        # Proved once: the call runs and returns the statement's columns.
        cursor.execute(call, parameters)
        proved = cursor.description
        cursor.fetchall()
        raw.commit()
        if proved is None or [c.name for c in proved] != columns:
            return None
        if dbapi.pgconn.transaction_status != pq.TransactionStatus.IDLE:
            raw.rollback()
        return call
    finally:
        cursor.close()

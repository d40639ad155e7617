"""PostgreSQL: the claim of the next item as a plpgsql function of the connection's own (pg_temp).

The one-statement claim (postgresql.SkipLockedClaim._build) reads its candidates with the snapshot
the statement started with. When another claimer commits the row it found meanwhile, PostgreSQL
locks the row's new version and re-checks it (EvalPlanQual), and that re-check sets up the executor
for every sub-plan of the statement again: the branches, the UPDATE, the audit INSERT and, with
then_next, the Complete. With 8 claimers on the head of one queue that happens on most claims, and
the server's CPU per pair doubled from 1 process to 8 (tests/benchmarks/claim_bench.py; README,
"How far one server goes").

Here the same pieces run as separate statements of one function: the Complete (with then_next),
then one small query per branch (expired locks, deferred items due, free items) until one locks a
row, then the lock and audit rows written on that row. Each query takes a fresh snapshot and is
planned once per connection, and a re-check sets up only the small query it is in. Still one round
trip, one statement as the client sees it, one transaction.

Setting a query up (PostgreSQL builds its plan tree's executor state on every execution) costs
more than running it when it finds nothing, which the branches before the free rows do on nearly
every claim. One probe (ClaimMethod.served_first: any stale lock, any deferral due) decides whether
to run them (the server's CPU per then_next call on one connection: 0.33-0.41 ms against
0.41-0.48 ms without it).

The function is created in the session's temporary schema on each connection, in the one
transaction and round trip of its first call there (fastpath.FastStatement's setup), under a name
derived from its text: a changed config makes a new one, and nothing has to be installed in the
database. Where the login may not create temporary objects (the setup refused), the claim is the
one statement from then on: nothing is asked of the database beforehand.

Through a transaction pooler (`[database] pooler = "transaction"`) a session's temporary function
would be gone, or another client's, by the next transaction: there the function is a permanent one
in workbench's schema (the connection's default schema without one), made by the first login that
may create it there (`workbench init` or `attach` run by the table's owner, or that owner's first
claim, which makes it when its call finds it missing) and used by every login after; its plan
setting goes with it (SET plan_cache_mode in the definition, not on the session). A login that finds
none and may not make one claims with the one statement.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import sqlalchemy as sa

from workbench.core import errors
from workbench.db import audit as audit_mod
from workbench.db import connect, fastpath, guarded, mapping
from workbench.db.claims import base
from workbench.db.rules import pg_names


class Pieces(Protocol):
    """What the function's body is built from: the one-statement claim's own pieces
    (postgresql.SkipLockedClaim, which hands itself), so the two say the same thing."""

    def limit_checks(
        self, q: mapping.BoundQueue, user: Any, now: sa.ColumnElement[Any], check_limit: bool, *, completed_before: bool
    ) -> list[sa.ColumnElement[bool]]: ...

    def candidate_columns(self, q: mapping.BoundQueue, with_order: bool = False) -> list[sa.ColumnElement[Any]]: ...

    def pick(
        self, q: mapping.BoundQueue, where: sa.ColumnElement[bool], extra: list[sa.ColumnElement[bool]], limit: Any
    ) -> sa.Select[Any]: ...

    def branches(
        self,
        q: mapping.BoundQueue,
        now: sa.ColumnElement[Any],
        request: base.ClaimRequest,
        trail: audit_mod.AuditTrail,
        user: Any = None,
        *,
        anyone: bool = False,
    ) -> list[sa.ColumnElement[bool]]: ...

    def served_first(
        self, q: mapping.BoundQueue, now: sa.ColumnElement[Any], request: base.ClaimRequest, trail: audit_mod.AuditTrail
    ) -> sa.ColumnElement[bool]: ...

    def write(
        self,
        q: mapping.BoundQueue,
        trail: audit_mod.AuditTrail,
        cand: sa.CTE,
        user: Any,
        *,
        count: int = 1,
        table_row: bool = False,
        after: sa.CTE | None = None,
    ) -> sa.Select[Any]: ...


PICKED = "wb_picked"  # the function's variable: the key of the row a branch locked
FIRST = "wb_first"  # may a branch before the free rows find a row (ClaimMethod.served_first)?
COMPLETED = "wb_completed_at"  # with then_next: the Complete's time (NULL: its fence failed)
# PostgreSQL's refusal of a function whose result does not match the declared columns.
DATATYPE_MISMATCH = "42804"
UNDEFINED_FUNCTION = "42883"  # a permanent function (through a pooler) not made yet, or dropped


Statement = Callable[[], fastpath.FastStatement]  # builds the one statement that does the function's work


def next_claim(
    method: Pieces,
    db: connect.Database,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    statement: Statement,
    finish: sa.Select[Any] | None = None,
) -> fastpath.FastStatement | FunctionCall:
    """The claim of one item (after `finish`, a Complete's statement, when given): the function's
    call, or `statement()` where this login cannot create the function."""
    pooled = connect.pooled(db.engine)
    built = _built(method, db, q, trail, request, check_limit, finish, pooled=pooled)
    if built is None:
        return statement()
    name, create, call, args = built
    sample = dict.fromkeys(args, "")
    if finish is not None:
        sample.update(guarded.FINISH_SAMPLE)
    if pooled:
        # Assumed there (made by `init`, or by an earlier claim): the first call that finds it missing
        # makes it where this login may, else the one statement claims. No look on the hot path.
        return FunctionCall(
            fastpath.FastStatement(db.held, call, sample), statement, make=lambda: _permanent(db, name, create)
        )
    # Made on each connection in the transaction of its first call (fastpath's setup); a login that
    # may not create it (no TEMPORARY privilege) claims with the one statement from then on.
    return FunctionCall(fastpath.FastStatement(db.held, call, sample, setup=create), statement)


def install(
    method: Pieces,
    db: connect.Database,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
) -> bool:
    """Make the permanent function of the claim `request` (through a transaction pooler) now, as
    `workbench init` does; whether it is there."""
    built = _built(method, db, q, trail, request, check_limit, None, pooled=True)
    return built is not None and _permanent(db, built[0], built[1])


def _built(
    method: Pieces,
    db: connect.Database,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    finish: sa.Select[Any] | None,
    *,
    pooled: bool,
) -> tuple[str, str, sa.TextClause, list[str]] | None:
    """_function's answer for a function in pg_temp, or a permanent one (`pooled`); None where there
    can be none: a column type with no name in SQL (reflected as NullType), no schema to put it in."""

    def build(conn: sa.Connection) -> tuple[str, str, sa.TextClause, list[str]] | None:
        home = _home(conn, trail) if pooled else "pg_temp"
        return None if home is None else _function(method, conn, q, trail, request, check_limit, finish, home)

    try:
        return db.read(build)
    except (sa.exc.CompileError, NotImplementedError):
        return None


def _permanent(db: connect.Database, name: str, create: str) -> bool:
    """Whether the permanent function `name` is there, made with `create` where it was not."""
    if _installed(db, name):
        return True
    # Refused: no CREATE on the schema (an operator's own login), or another process made it at the
    # same moment (its name is unique). Whichever it was, look again.
    with contextlib.suppress(errors.NotPermitted, errors.InvalidValue, sa.exc.DBAPIError):
        db.write(lambda conn: conn.execution_options(no_parameters=True).exec_driver_sql(create))
    return _installed(db, name)


def _home(conn: sa.Connection, trail: audit_mod.AuditTrail) -> str | None:
    """The schema of the permanent function, quoted: workbench's (its audit table's), else the
    connection's default (None where there is none)."""
    schema = trail.table.schema or conn.execute(sa.select(sa.func.current_schema())).scalar()
    return None if schema is None else str(conn.dialect.identifier_preparer.quote_schema(str(schema)))


def _installed(db: connect.Database, signature: str) -> bool:
    """Whether the function `schema.name(types)` exists."""
    found = db.read(lambda conn: conn.execute(sa.select(sa.func.to_regprocedure(signature).is_not(None))).scalar())
    return bool(found)


class FunctionCall:
    """The function's call, and the one statement in its place from the first time the database
    refuses the function: a column's type changed since workbench reflected it (42804), this login
    may not create it (the setup refused), or, through a pooler, it is missing (42883) and this
    login may not make it (`make`).

    A refusal rolls the whole call back, the Complete of then_next too, so the same values are
    sent again (to the statement, or to the function just made). Both return method.write's
    columns in the same order.
    """

    def __init__(
        self, function: fastpath.FastStatement, statement: Statement, make: Callable[[], bool] | None = None
    ) -> None:
        """`make`: makes the missing (permanent) function; whether it is there now."""
        self._fast, self._statement, self._make = function, statement, make
        self._replaced = False

    @property
    def columns(self) -> list[str]:
        return self._fast.columns

    def rows(self, values: Mapping[Any, Any]) -> list[tuple[Any, ...]]:
        try:
            return self._fast.rows(values)
        except fastpath.SetupRefused:
            pass
        except sa.exc.DBAPIError as exc:
            code = str(getattr(exc.orig, "sqlstate", "") or "")
            if self._replaced or code not in (DATATYPE_MISMATCH, UNDEFINED_FUNCTION):
                raise
            if code == UNDEFINED_FUNCTION:
                make, self._make = self._make, None
                if make is None:
                    raise
                if make():
                    return self._fast.rows(values)
        self._fast, self._replaced = self._statement(), True
        return self._fast.rows(values)


def _function(
    method: Pieces,
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    finish: sa.Select[Any] | None,
    home: str,
) -> tuple[str, str, sa.TextClause, list[str]]:
    """The function's qualified name and signature, CREATE FUNCTION in `home` (pg_temp or a quoted
    schema), the call returning the claimed row, and the call's parameters."""
    dialect = conn.dialect
    args: list[tuple[str, Any]] = [("wb_user", sa.String())]
    args += [(f"wb_f{i}", q.table.c[name].type) for i, (name, _) in enumerate(request.where)]
    if finish is not None:
        args += [("wb_key", q.key.type), ("wb_token", sa.String()), ("wb_a_token", sa.String())]
    params = {name: f"${i}" for i, (name, _) in enumerate(args, 1)}
    body = _body(method, conn, q, trail, request, check_limit, finish, params)
    digest = hashlib.sha256(body.encode()).hexdigest()
    name = f"wb_claim_{digest[:24]}"
    tag = f"$wb_{digest[:12]}$"
    if tag in body:  # cannot happen for a tag made from the body's own digest, short of a collision
        raise NotImplementedError("the function's quote tag occurs in its body")
    types = ", ".join(t.compile(dialect=dialect) for _, t in args)
    # A permanent function (through a pooler) keeps its one generic plan per query itself, which
    # the fast pool's sessions get from their own setting without one (PostgresqlBackend).
    generic = (
        " SET plan_cache_mode = force_generic_plan"
        if home != "pg_temp" and (dialect.server_version_info or (0,)) >= (12,)
        else ""
    )
    # CREATE, not CREATE OR REPLACE, for the permanent one: two processes replacing it at once fail
    # with "tuple concurrently updated", and its name says its text.
    verb = "CREATE OR REPLACE" if home == "pg_temp" else "CREATE"
    create = (
        f"{verb} FUNCTION {home}.{name}({types}) RETURNS SETOF record LANGUAGE plpgsql{generic} AS {tag}\n{body}{tag}"
    )
    call = _call(conn, q, home, name, args, finish)
    return f"{home}.{name}({types})", create, call, [a for a, _ in args]


def _body(
    method: Pieces,
    conn: sa.Connection,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    finish: sa.Select[Any] | None,
    params: Mapping[str, str],
) -> str:
    """The function's PL/pgSQL body: the Complete before (with then_next), a probe, a query per branch
    until one locks a row, then the lock and audit rows written on that row."""
    dialect = conn.dialect
    user = sa.bindparam("wb_user", type_=sa.String())

    def sql(statement: sa.Executable) -> str:
        return pg_names.with_params(conn, statement, params).strip()

    stamp = "timestamp with time zone" if q.aware else "timestamp without time zone"
    key_type = q.key.type.compile(dialect=dialect)
    declare = [f"  {PICKED} {key_type};"]
    steps = []
    if finish is not None:
        declare.append(f"  {COMPLETED} {stamp};")
        done = finish.cte("wb_done")
        # A Complete whose fence failed returns no row: nothing is claimed, the call returns no row.
        steps.append(
            f"  {sql(sa.select(done.c.wb_now))} INTO {COMPLETED};\n  IF NOT FOUND THEN\n    RETURN;\n  END IF;\n"
        )
    now = q.now()
    shaped = base.ClaimRequest(user="", use_cooldown=request.use_cooldown, where=request.bound_filter(q))
    # The Complete before is this transaction's own: its lock is gone for these later statements.
    extra = method.limit_checks(q, user, now, check_limit, completed_before=False)
    one = sa.bindparam("wb_count", 1, type_=sa.Integer(), literal_execute=True)

    # A branch's query reads the candidate's columns (its key, the lock it had) into variables, and
    # the write takes them from there: the row is locked by then, so it cannot have changed.
    candidate = method.candidate_columns(q)
    variables = [PICKED, *(f"wb_v{i}" for i in range(1, len(candidate)))]
    declare += [
        f"  {var} {column.type.compile(dialect=dialect)};"
        for var, column in zip(variables[1:], candidate[1:], strict=True)
    ]
    into = ", ".join(variables)

    def pick(where: sa.ColumnElement[bool]) -> str:
        return f"{sql(method.pick(q, where, extra, one))} INTO {into};"

    *first, free = method.branches(q, now, shaped, trail, user=user)
    # The branches served before the free rows (expired locks, deferred items due) find nothing on
    # nearly every claim, and their queries cost more to set up than to run: one cheap probe says
    # whether to run them at all.
    declare.append(f"  {FIRST} boolean;")
    steps.append(f"  {sql(sa.select(method.served_first(q, now, shaped, trail)))} INTO {FIRST};\n  IF {FIRST} THEN\n")
    for i, where in enumerate(first):
        steps.append(
            f"    {pick(where)}\n" if i == 0 else f"    IF {PICKED} IS NULL THEN\n      {pick(where)}\n    END IF;\n"
        )
    steps.append(f"  END IF;\n  IF {PICKED} IS NULL THEN\n    {pick(free)}\n  END IF;\n")
    cand = sa.select(
        *(
            sa.literal_column(var, column.type).label(column.name)
            for var, column in zip(variables, candidate, strict=True)
        )
    ).cte("wb_cand")
    after = sa.select(sa.literal_column(COMPLETED).label("wb_now")).cte("wb_done") if finish is not None else None
    if after is None:
        steps.append(f"  IF {PICKED} IS NULL THEN\n    RETURN;\n  END IF;\n")
    steps.append(f"  RETURN QUERY {sql(method.write(q, trail, cand, user, after=after))};\n")
    body = "DECLARE\n" + "\n".join(declare) + "\nBEGIN\n" + "".join(steps) + "END\n"
    return body


def _call(
    conn: sa.Connection, q: mapping.BoundQueue, home: str, name: str, args: list[tuple[str, Any]], finish: Any
) -> sa.TextClause:
    """The call of the function, the claimed row's columns typed (a record's must be named)."""
    dialect = conn.dialect
    prep = dialect.identifier_preparer
    stamp = "timestamp with time zone" if q.aware else "timestamp without time zone"
    returned: list[tuple[str, Any]] = [(c.name, c.type) for c in q.table.c]
    returned += [
        ("wb_now", None),
        ("wb_prev_owner", q.user.type),
        ("wb_prev_token", q.shape.token_column().type),
        ("wb_prev_time", q.time.type),
    ]
    if finish is not None:
        returned.append(("wb_done_at", None))
    columns = ", ".join(
        f"{prep.quote(column)} {stamp if kind is None else kind.compile(dialect=dialect)}" for column, kind in returned
    )
    call = sa.text(
        f"SELECT * FROM {home}.{name}({', '.join(f':{a}' for a, _ in args)}) AS wb_claimed({columns})"
    ).bindparams(*(sa.bindparam(a, type_=t) for a, t in args))
    return call

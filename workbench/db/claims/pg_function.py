"""PostgreSQL's Next item: the free row by two prepared statements, else a plpgsql function of the connection's own.

The free claim (FreeFirst) is what nearly every Next item runs: the hand-written loop's UPDATE with its pick
(the free rows, FOR NO KEY UPDATE SKIP LOCKED, the probe below as an InitPlan that empties it whenever a branch
before the free rows may find a row), then the claim's audit row as a second prepared statement in the same
pipeline: one round trip, one implicit transaction (an audit row refused rolls the lock back). The UPDATE
hands its key on in a setting of the transaction (set_config(…, true)), and nothing but the pick is set up
again when a claimer's row was taken meanwhile (EvalPlanQual re-checks the pick's own small plan). Where it
claims nothing (a stale lock or a deferral due somewhere, or nothing waits), the function below claims. At one
connection the pair's statements cost the server about a third less than the function's call (issue 52;
docs/explanation/performance.md). The function follows.

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
import typing
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import sqlalchemy as sa

from workbench.core import errors, models
from workbench.db import audit as audit_mod
from workbench.db import clock, connect, fastpath, guarded, mapping
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
RESULT_TYPE_CHANGED = "0A000"  # "cached plan must not change result type": a prepared statement's columns changed
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
) -> fastpath.FastStatement | FunctionCall | FreeFirst:
    """The claim of one item (after `finish`, a Complete's statement, when given): the function's
    call, or `statement()` where this login cannot create the function."""
    pooled = connect.pooled(db.engine)
    # Next item's own claim (no Complete before it): the free row first, by the free claim, where it applies.
    free = _free_first(method, db, q, trail, request, check_limit) if finish is None else None
    built = _built(method, db, q, trail, request, check_limit, finish, pooled=pooled)
    if built is None:
        return _free_then(free, statement())
    name, create, call, args = built
    sample = dict.fromkeys(args, "")
    if finish is not None:
        sample.update(guarded.FINISH_SAMPLE)
    if pooled:
        # Assumed there (made by `init`, or by an earlier claim): the first call that finds it missing
        # makes it where this login may, else the one statement claims. No look on the hot path.
        made = FunctionCall(
            fastpath.FastStatement(db.held, call, sample), statement, make=lambda: _permanent(db, name, create)
        )
        return _free_then(free, made)
    # Made on each connection in the transaction of its first call (fastpath's setup); a login that
    # may not create it (no TEMPORARY privilege) claims with the one statement from then on.
    return _free_then(free, FunctionCall(fastpath.FastStatement(db.held, call, sample, setup=create), statement))


def _free_then(
    free: fastpath.FastStatement | None, call: fastpath.FastStatement | FunctionCall
) -> fastpath.FastStatement | FunctionCall | FreeFirst:
    """`call`, with the free claim before it where there is one."""
    return call if free is None else FreeFirst(free, call)


class _Parts(typing.NamedTuple):
    """What the function's body and the free claim build from: the clock, the branches (the free rows last),
    the probe of the branches before them, the per-user limit's tests, the constant LIMIT 1."""

    now: sa.ColumnElement[Any]
    branches: list[sa.ColumnElement[bool]]
    served_first: sa.ColumnElement[bool]
    extra: list[sa.ColumnElement[bool]]
    one: sa.BindParameter[int]


def _parts(
    method: Pieces,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
    user: sa.BindParameter[str],
) -> _Parts:
    now = q.now()
    shaped = base.ClaimRequest(user="", use_cooldown=request.use_cooldown, where=request.bound_filter(q))
    # A Complete before (then_next) is the function's transaction's own: its lock is gone for the claim after it.
    extra = method.limit_checks(q, user, now, check_limit, completed_before=False)
    one = sa.bindparam("wb_count", 1, type_=sa.Integer(), literal_execute=True)
    branches = method.branches(q, now, shaped, trail, user=user)
    return _Parts(now, branches, method.served_first(q, now, shaped, trail), extra, one)


MARK = "workbench.claimed"  # the transaction's setting: the key the free claim locked, for its audit row


def _free_first(
    method: Pieces,
    db: connect.Database,
    q: mapping.BoundQueue,
    trail: audit_mod.AuditTrail,
    request: base.ClaimRequest,
    check_limit: bool,
) -> fastpath.FastStatement | None:
    """The claim of the free row first in queue order, while no branch before the free rows may find one
    (ClaimMethod.served_first, an InitPlan of the pick): the hand-written loop's UPDATE with its pick as a
    subquery, then the claim's audit row in a second prepared statement of the same pipeline (one round
    trip, one implicit transaction), which finds the row by the key the UPDATE left in a setting of the
    transaction. None where it does not apply: through a transaction pooler (no prepared statements of
    the session's), without a token column (the audit row copies it in SQL)."""
    if connect.pooled(db.engine) or not q.shape.token_in_row or q.token is None:
        return None
    user = sa.bindparam("wb_user", type_=sa.String())
    parts = _parts(method, q, trail, request, check_limit, user)
    now = parts.now
    pick = (
        sa.select(q.key)
        .where(parts.branches[-1], ~parts.served_first, *parts.extra)
        .order_by(*q.order_by())
        .limit(parts.one)
        .with_for_update(skip_locked=True, key_share=True)
        .scalar_subquery()
    )
    writes = {**q.lock_writes(user, now, q.shape.new_token()), **q.writes(q.on_claim, user, now)}
    nothing = [
        sa.cast(sa.null(), column.type).label(name)
        for name, column in (("wb_prev_owner", q.user), ("wb_prev_token", q.token), ("wb_prev_time", q.time))
    ]
    mark = sa.func.set_config(
        sa.literal(MARK, literal_execute=True), sa.cast(q.key, sa.Text()), sa.true(), type_=sa.Text()
    )
    claim = (
        sa.update(q.table)
        .where(q.key == pick)
        .values(writes)
        .returning(*q.table.c, now.label("wb_now"), *nothing, mark.label("wb_mark"))
    )
    marked = sa.cast(
        sa.func.nullif(sa.func.current_setting(sa.literal(MARK, literal_execute=True), sa.true()), ""), q.key.type
    )

    def constant(value: Any) -> sa.BindParameter[Any]:
        return sa.literal(value, literal_execute=True)

    audit = sa.insert(trail.table).from_select(
        ["queue", "item_key", "event", "actor", "owner", "token", "at"],
        sa.select(
            constant(q.name),
            sa.cast(q.key, sa.String(200)),
            constant(models.EventKind.CLAIM.value),
            user,
            user,
            q.backend.token_digest(q.shape.as_text(q.token)),
            clock.db_now(),
        ).where(q.key == marked),
    )
    sample = {"wb_user": "", **request.filter_params()}
    try:
        return fastpath.FastStatement(db.held, claim, sample, follow=audit)
    except (sa.exc.CompileError, NotImplementedError):
        return None


class FreeFirst:
    """Next item's claim: the free claim (_free_first), and where it claims nothing (a stale lock or a
    deferral due somewhere, or nothing waits) the function's call (pg_next.Call). Both answer the same
    columns in the same order; the free claim's last one, its mark, is left off."""

    def __init__(self, free: fastpath.FastStatement, call: fastpath.FastStatement | FunctionCall) -> None:
        self._free: fastpath.FastStatement | None = free
        self._call = call

    @property
    def columns(self) -> list[str]:
        return (self._free.columns[:-1] if self._free is not None else []) or self._call.columns

    def rows(self, values: Mapping[Any, Any]) -> list[tuple[Any, ...]]:
        if self._free is not None:
            try:
                rows = self._free.rows(values)
            except sa.exc.DBAPIError as exc:
                # A column's type changed since workbench reflected it: the prepared claim may not answer
                # another row type (rolled back, nothing claimed); the call claims from then on.
                if str(getattr(exc.orig, "sqlstate", "") or "") != RESULT_TYPE_CHANGED:
                    raise
                self._free = None
            else:
                if rows:
                    return [row[:-1] for row in rows]
        return self._call.rows(values)


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
    parts = _parts(method, q, trail, request, check_limit, user)
    extra, one = parts.extra, parts.one

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

    *first, free = parts.branches
    # The branches served before the free rows (expired locks, deferred items due) find nothing on
    # nearly every claim, and their queries cost more to set up than to run: one cheap probe says
    # whether to run them at all.
    declare.append(f"  {FIRST} boolean;")
    steps.append(f"  {sql(sa.select(parts.served_first))} INTO {FIRST};\n  IF {FIRST} THEN\n")
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

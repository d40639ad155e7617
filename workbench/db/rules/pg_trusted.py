"""PostgreSQL under grants: the busiest writes (claim, Complete) as trusted functions run as the owner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from workbench.db import mapping, tables
from workbench.db.rules.pg_names import (
    OPERATOR_ROLE,
    Renderer,
    complete_function_name,
    next_function_name,
    own_table,
    qualified,
    search_path,
    serves,
    with_params,
)


def trusted_next(conn: sa.Connection, q: mapping.BoundQueue, schema: str, statement: sa.Select[Any]) -> list[str]:
    """`q`'s claim of the next item as a SECURITY DEFINER function: workbench's own one-statement
    claim (`statement`, built with session_user as the claimer), run as the table's owner. Its
    change is not checked again by the protocol trigger, whose WHEN clause tests current_user, and
    it writes its audit rows itself, as workbench's statement does."""
    sql = str(statement.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True}))
    if conn.dialect.paramstyle in ("format", "pyformat"):
        sql = sql.replace("%%", "%")
    member = (
        ""
        if q.config.serves is None
        else (
            f"  IF NOT {serves(conn, q, schema, 'session_user')} THEN\n"
            f"    RAISE EXCEPTION 'workbench: % is not in the group %, which queue % serves', session_user, "
            f"{Renderer.literal_of(conn, q.config.serves)}, {Renderer.literal_of(conn, q.name)} USING ERRCODE = '42501';\n"  # noqa: E501
            "  END IF;\n"
        )
    )
    return _trusted_function(
        conn,
        q,
        schema,
        next_function_name(q.name),
        (),
        conn.dialect.identifier_preparer.format_table(q.table),
        f"{member}  RETURN QUERY {sql};\n",
    )


def trusted_complete(
    conn: sa.Connection, q: mapping.BoundQueue, schema: str, statements: Mapping[str, sa.Executable]
) -> list[str]:
    """`q`'s Complete without edits as a SECURITY DEFINER function of (key, token, outcome): for each
    outcome workbench's own one-statement Complete (fenced by this login, the token and a live lock;
    it writes the audit row), run as the table's owner. Returns the time of the write, or no row when
    the fence failed (the lock is not the caller's any more)."""
    kept = q.backend.token_digest(sa.literal_column("p_token"))  # what the trail keeps of the token
    params = {
        "wb_user": "CAST(session_user AS VARCHAR)",
        "wb_key": "p_key",
        "wb_token": "p_token",
        "wb_a_token": str(kept.compile(dialect=conn.dialect, compile_kwargs={"literal_binds": True})),
    }
    review = q.config.review
    reviewed = set(review.outcomes) if review is not None and review.first_items else set()

    def first_items(outcome: str) -> str:
        """Each of an operator's first items goes to review: never through this plain Complete."""
        if outcome not in reviewed or review is None:
            return ""
        own = conn.dialect.identifier_preparer.format_table(own_table(schema, tables.REVIEWS_TABLE))
        return (
            f"    IF (SELECT count(*) FROM {own} rv WHERE rv.source = {Renderer.literal_of(conn, q.name)} "
            f"AND rv.doer = session_user AND rv.why = 'first') < {review.first_items} THEN\n"
            f"      RAISE EXCEPTION 'workbench: % may not complete without review: each of their first % items "
            f"goes to review', session_user, {review.first_items} USING ERRCODE = '42501';\n    END IF;\n"
        )

    branches = "".join(
        f"  IF p_outcome = {Renderer.literal_of(conn, outcome)} THEN\n{first_items(outcome)}"
        f"    RETURN QUERY {with_params(conn, statement, params)};\n    RETURN;\n  END IF;\n"
        for outcome, statement in statements.items()
    )
    body = branches + "  RAISE EXCEPTION 'workbench: no outcome %', p_outcome USING ERRCODE = '22023';\n"
    arguments = (("p_key", q.key.type.compile(dialect=conn.dialect)), ("p_token", "text"), ("p_outcome", "text"))
    returns = "timestamp with time zone" if q.aware else "timestamp without time zone"
    return _trusted_function(conn, q, schema, complete_function_name(q.name), arguments, returns, body)


def _trusted_function(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    schema: str,
    name: str,
    arguments: tuple[tuple[str, str], ...],
    returns: str,
    body: str,
) -> list[str]:
    """A SECURITY DEFINER plpgsql function returning SETOF `returns`, callable by operators only. Its
    search_path is fixed, built-ins first: the queue's and workbench's tables, nothing of the caller's."""
    prep = conn.dialect.identifier_preparer
    function = qualified(prep, schema, name)
    path = search_path(prep, q, schema)
    signature = f"{function}({', '.join(f'{arg} {kind}' for arg, kind in arguments)})"
    types = f"{function}({', '.join(kind for _arg, kind in arguments)})"
    return [
        (
            f"CREATE OR REPLACE FUNCTION {signature} RETURNS SETOF {returns} LANGUAGE plpgsql SECURITY DEFINER "
            f"SET search_path = {path} AS $wb$\nBEGIN\n{body}END\n$wb$"
        ),
        f"REVOKE ALL ON FUNCTION {types} FROM PUBLIC",
        f"GRANT EXECUTE ON FUNCTION {types} TO {prep.quote(OPERATOR_ROLE)}",
    ]

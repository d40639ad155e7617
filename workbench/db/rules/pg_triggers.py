"""PostgreSQL under grants: a queue table's one trigger, which calls each enforced queue's check, and its removal."""

from __future__ import annotations

import sqlalchemy as sa

from workbench.config import model
from workbench.db import mapping, workflow_sql
from workbench.db.rules import pg_lock_check
from workbench.db.rules.pg_names import (
    OPERATOR_ROLE,
    SUPERVISOR_ROLE,
    Renderer,
    check_function_name,
    complete_function_name,
    create_function,
    enforced_table,
    if_exists,
    next_function_name,
    owner_oid,
    private,
    qualified,
    table_oid,
    trigger_name,
    wb_audit_table,
)


def enforced_row(
    conn: sa.Connection,
    q: mapping.BoundQueue,
    schema: str,
    reviewed: model.QueueConfig | None,
    locks: int | None = None,
) -> str:
    """`q` in the list of enforced queues: its table, its lock table (if separate), and for a reviewing
    queue the queue whose completions it reviews and its outcome that sends them back."""
    reviews, send_back = "NULL", "NULL"
    if reviewed is not None and reviewed.review is not None:
        reviews, send_back = (Renderer.literal_of(conn, text) for text in (reviewed.name, reviewed.review.send_back))
    # The queue's own say for the shared guards: the actions it needs a note with (Text.CONFIGURED;
    # NULL: none) and whether it lets items be deferred (Check.ALLOW_DEFER).
    needed = [Renderer.literal_of(conn, action) for action in q.config.notes_required]
    notes = f"ARRAY[{', '.join(needed)}]::text[]" if needed else "NULL"
    defers = "true" if q.config.allow_defer else "false"
    return (
        f"INSERT INTO {conn.dialect.identifier_preparer.format_table(enforced_table(schema))} "
        f"(queue, tbl, locks, reviews, send_back, notes, defers) VALUES ({Renderer.literal_of(conn, q.name)}, "
        f"{table_oid(conn, q.table)}, {locks if locks is not None else 'NULL'}, {reviews}, {send_back}, "
        f"{notes}, {defers}) "
        "ON CONFLICT (queue) DO UPDATE SET tbl = EXCLUDED.tbl, locks = EXCLUDED.locks, "
        "reviews = EXCLUDED.reviews, send_back = EXCLUDED.send_back, notes = EXCLUDED.notes, "
        "defers = EXCLUDED.defers"
    )


def taken_here(conn: sa.Connection, q: mapping.BoundQueue, schema: str, queue_name: str, key: str) -> str:
    """SQL: the lock on the row `key` (SQL text, as the trail keeps it) was taken in this queue, not in
    another enforced queue over the same table: no claim of the item recorded by one of them is newer
    than this queue's newest (the engine's fence asks the same, AuditTrail.claimed_here). The queue a
    change under a lock belongs to is decided here, once, never by a label its audit row names. No
    claim recorded at all (a lock another program wrote): every queue's, as before."""
    prep = conn.dialect.identifier_preparer
    audit = prep.format_table(wb_audit_table(schema))
    enforced = prep.format_table(enforced_table(schema))
    claim = workflow_sql.event("claim")
    return (
        f"NOT EXISTS (SELECT 1 FROM {audit} t JOIN {enforced} s ON s.queue = t.queue "
        f"WHERE s.tbl = {table_oid(conn, q.table)} AND t.queue <> {queue_name} AND t.item_key = {key} "
        f"AND t.event = {claim} AND t.id > coalesce((SELECT max(m.id) FROM {audit} m WHERE m.queue = {queue_name} "
        f"AND m.item_key = {key} AND m.event = {claim}), 0))"
    )


def table_trigger(conn: sa.Connection, q: mapping.BoundQueue, schema: str, queues: list[str]) -> list[str]:
    """The trigger on `q`'s table that admits an update one of `queues` (the table's enforced queues,
    each with its check function) admits, and otherwise refuses it saying why; none left: dropped."""
    prep = conn.dialect.identifier_preparer
    table = prep.format_table(q.table)
    trigger = prep.quote(trigger_name(q.table.name))
    function = qualified(prep, schema, trigger_name(q.table.name))
    # Triggers of one queue each, as grants made them before several queues could share a table.
    statements = [
        f"DROP TRIGGER IF EXISTS {prep.quote(trigger_name(name))} ON {table}"
        for name in queues
        if trigger_name(name) != trigger_name(q.table.name)
    ]
    statements.append(f"DROP TRIGGER IF EXISTS {trigger} ON {table}")
    if not queues:
        return [*statements, f"DROP FUNCTION IF EXISTS {function}()"]
    r = Renderer(conn.dialect, q)
    old, new = r.old, r.new
    key = f"CAST({r.col(new, q.key)} AS text)"
    queue_names = r.literal(", ".join(queues))
    checks = "".join(
        f"  IF {qualified(prep, schema, check_function_name(name))}(OLD, NEW) THEN\n    RETURN NEW;\n  END IF;\n"
        for name in dict.fromkeys(queues)
    )
    if q.shape.separate_locks:
        # The queue row's change after a lock row's write in this transaction is first the change of the queue
        # that lock row names (the lock taken, given up or freed there: its claim's, release's or expire's
        # values), asked before the table's other queues: in the queues' order another's supervisor's move
        # took it first (a sweep of a twin's run-out lock row, the row written as it was, became a move
        # wanting a reason).
        locked = "".join(
            f"  IF {pg_lock_check.lock_written_here(r.literal(name), f'CAST({r.col(old, q.key)} AS text)')} "
            f"AND {qualified(prep, schema, check_function_name(name))}(OLD, NEW) THEN\n    RETURN NEW;\n  END IF;\n"
            for name in dict.fromkeys(queues)
        )
        checks = locked + checks
    # Where the lock is in the row, say when a refusal is about someone else's name or lock.
    whose = ""
    if not q.shape.separate_locks:
        user_old, user_new = r.col(old, q.user), r.col(new, q.user)
        whose = f"""  IF {user_new} IS NOT NULL AND {user_new} <> login AND {user_new} IS DISTINCT FROM {user_old}
      AND NOT pg_has_role(session_user, '{SUPERVISOR_ROLE}', 'USAGE') THEN
    RAISE EXCEPTION 'workbench: % may not lock % item % under the name %: with workbench grants each person '
      'works under their own database login, named exactly like their workbench user', login, {queue_names}, {key},
      {user_new} USING ERRCODE = '42501';
  END IF;
  IF {user_old} IS NOT NULL AND {user_old} <> login AND {r.sql(q.live(q.now()), old)}
      AND NOT pg_has_role(session_user, '{SUPERVISOR_ROLE}', 'USAGE') THEN  -- a supervisor may use it
    RAISE EXCEPTION 'workbench: %''s lock on % item % cannot be used from the database login %: with workbench '
      'grants each person works under their own database login, named exactly like their workbench user',
      {user_old}, {queue_names}, {key}, login USING ERRCODE = '42501';
  END IF;
"""
    body = f"""
DECLARE
  login text := session_user;
BEGIN
{checks}{whose}  RAISE EXCEPTION 'workbench: % may not make this change to % item %', login, {queue_names}, {key}
    USING ERRCODE = '42501',
          HINT = 'queue rows change only through workbench''s operations (claim, save, extend, release, '
                 'complete, undo; force-release, reassign, move and reopen for supervisors), each with its '
                 'audit row';
END"""
    # current_user: inside workbench's trusted functions (SECURITY DEFINER) it is the owner, whose
    # writes are not checked; an operator's own statement runs as the operator.
    checked = (
        f"pg_has_role(current_user, '{OPERATOR_ROLE}', 'USAGE') "
        f"AND NOT pg_has_role(current_user, {owner_oid(conn, q.table)}::oid, 'MEMBER')"
    )
    return [
        create_function(function, body, security="DEFINER"),
        private(f"{function}()"),
        *statements,
        (
            f"CREATE TRIGGER {trigger} BEFORE UPDATE ON {table} FOR EACH ROW WHEN ({checked}) "
            f"EXECUTE FUNCTION {function}()"
        ),
    ]


def enforced_on(conn: sa.Connection, q: mapping.BoundQueue, schema: str) -> list[str]:
    """The other queues of `q`'s table whose protocol the database enforces (and whose check exists)."""
    return enforced_where(conn, schema, "tbl", table_oid(conn, q.table), q.name)


def enforced_where(conn: sa.Connection, schema: str, column: str, oid: int, other_than: str) -> list[str]:
    """The enforced queues but `other_than` whose `column` (tbl: the queue's table; locks: its lock
    table) is the table `oid`, and whose check function exists."""
    assert column in ("tbl", "locks")
    enforced = conn.dialect.identifier_preparer.format_table(enforced_table(schema))
    if not conn.execute(
        sa.text(
            "SELECT to_regclass(:t) IS NOT NULL AND EXISTS (SELECT 1 FROM pg_catalog.pg_attribute "
            "WHERE attrelid = to_regclass(:t) AND attname = :c AND NOT attisdropped)"
        ),
        {"t": enforced, "c": column},
    ).scalar():
        return []
    names = (
        conn.execute(
            sa.text(f"SELECT queue FROM {enforced} WHERE {column} = :oid AND queue <> :q ORDER BY queue"),
            {"oid": oid, "q": other_than},
        )
        .scalars()
        .all()
    )
    prep = conn.dialect.identifier_preparer
    return [
        str(name)
        for name in names
        if conn.execute(
            sa.text("SELECT to_regproc(:f) IS NOT NULL"),
            {"f": qualified(prep, schema, check_function_name(str(name)))},
        ).scalar()
    ]


def drop_queue_trigger(conn: sa.Connection, q: mapping.BoundQueue, schema: str, others: list[str]) -> list[str]:
    """What undoes queue_trigger() and the trusted functions for `q`; the table's trigger stays for
    `others`, the table's other enforced queues."""
    prep = conn.dialect.identifier_preparer
    row_type = prep.format_table(q.table)
    return [
        *table_trigger(conn, q, schema, others),
        f"DROP TRIGGER IF EXISTS {prep.quote(trigger_name(q.name))} ON {prep.format_table(q.table)}",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, trigger_name(q.name))}()",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, check_function_name(q.name))}({row_type}, {row_type})",
        f"DROP FUNCTION IF EXISTS {qualified(prep, schema, next_function_name(q.name))}()",
        (
            f"DROP FUNCTION IF EXISTS {qualified(prep, schema, complete_function_name(q.name))}"
            f"({q.key.type.compile(dialect=conn.dialect)}, text, text)"
        ),
        if_exists(
            prep.format_table(enforced_table(schema)),
            f"DELETE FROM {prep.format_table(enforced_table(schema))} WHERE queue = "
            f"{Renderer.literal_of(conn, q.name)}",
        ),
    ]

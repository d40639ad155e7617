"""workbench on SQL Server under `workbench grants`: its operations as calls of the script's procedures.

No SQL Server runs here (../shared/notes/platform.md), so the engine runs against a stand-in
connection that keeps each statement as pyodbc sends it and answers as the procedures would:
rows, no row for a lost lock, or the server's error messages in the drivers' own format.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import re
import types
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from tests import test_mssql_protocol as mssql_protocol
from tests import test_mssql_sql as mssql_sql
from workbench import demo
from workbench.core import errors, models, problems
from workbench.db import dberrors, enforcement, mapping, procedures, service, tables, workqueue
from workbench.db.backends import mssql as mssql_backend
from workbench.db.claims.mssql import ReadpastClaim
from workbench.db.rules import mssql_parts, mssql_script
from workbench.db.supervision import Supervision

NOW = dt.datetime(2026, 11, 26, 9, 0)
LOGIN = "ann"


def driver_error(number: int, text: str) -> sa.exc.DBAPIError:
    """A server error as Microsoft's ODBC driver reports it through pyodbc."""
    said = f"[42000] [Microsoft][ODBC Driver 18 for SQL Server][SQL Server]{text} ({number}) (SQLExecDirectW)"
    return sa.exc.ProgrammingError("EXEC", {}, Exception("42000", said))


class _Answer:
    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows
        self.rowcount = 1  # an UPDATE of workbench's own matched its row

    def mappings(self) -> _Answer:
        return self

    def one(self) -> Any:
        (row,) = self.rows
        return row

    def first(self) -> Any:
        return self.rows[0] if self.rows else None

    def scalars(self) -> list[Any]:
        return [row[0] for row in self.rows]

    def scalar(self) -> Any:
        return self.rows[0][0] if self.rows else None

    def __iter__(self) -> Iterator[Any]:
        return iter(self.rows)


class _Server:
    """A SQL Server connection with the script applied: each statement is kept as pyodbc gets it (qmark
    parameters); `answer` says what the server returns (rows, or an exception to raise)."""

    dialect = mssql_sql.mssql_pyodbc.dialect(paramstyle="qmark")

    def __init__(self, answer: Callable[[str, list[Any]], list[Any]], *, installed: bool = True) -> None:
        self.answer, self.installed = answer, installed
        self.sent: list[tuple[str, list[Any]]] = []

    def execute(self, stmt: Any, params: dict[str, Any] | None = None) -> _Answer:
        compiled = stmt.compile(dialect=self.dialect)
        state = compiled.construct_expanded_state(params or {})
        values = [state.parameters[name] for name in state.positiontup or ()]
        text = " ".join(state.statement.split())
        self.sent.append((text, values))
        if "OBJECT_ID(" in text and "ORIGINAL_LOGIN()" in text:
            return _Answer([(1 if self.installed else 0, LOGIN)])
        result = self.answer(text, values)
        return _Answer(result)

    def exec_sent(self) -> list[tuple[str, list[Any]]]:
        return [(text, values) for text, values in self.sent if text.startswith("EXEC ")]


class _Database:
    """connect.Database's face to the engine: each read and write gets the stand-in connection."""

    def __init__(self, server: _Server) -> None:
        self.server = server
        self.engine = sa.create_engine("mssql+pyodbc://u@h/db?driver=FreeTDS")  # never connects
        self.backend = mssql_sql.backends.for_dialect("mssql")
        self.held = types.SimpleNamespace(batches=False)
        self.kept: dict[str, Any] = {}

    def read(self, fn: Callable[[Any], Any]) -> Any:
        return fn(self.server)

    def write(self, fn: Callable[[Any], Any]) -> Any:
        return fn(self.server)


def lock_row(q: mapping.BoundQueue, key: Any, user: str | None = LOGIN, token: str | None = "t" * 32) -> dict[str, Any]:
    """What a procedure's last SELECT returns: the row's lock as lock_from_row reads it."""
    held = user is not None
    return {
        "wb_key": key,
        "wb_user": user,
        "wb_time": NOW if held else None,
        "wb_expires": NOW + dt.timedelta(minutes=15) if held else None,
        "wb_token": token if held else None,
        "wb_now": NOW,
        "wb_here": 1,
    }  # wb_here: the lock is the queue's (a supervisor's read asks)


def queue(
    answer: Callable[[str, list[Any]], list[Any]], *, installed: bool = True, text: str = ""
) -> tuple[workqueue.WorkQueue, _Server]:
    server = _Server(answer, installed=installed)
    q = mssql_sql.bound(text or demo.config_text(), "cases")
    db = _Database(server)
    metadata, audit, _ = tables.build_metadata()
    own = {t.name: t for t in metadata.tables.values()}
    trail = service.trail_of(
        q.config,
        None,
        audit,
        own[tables.COOLDOWN_TABLE],
        own[tables.NOTES_TABLE],
        own[tables.DEFERRALS_TABLE],
        own[tables.REVIEWS_TABLE],
    )
    # Bound as the service binds a queue: its Enforcement is handed the finder of its procedures.
    enforced = enforcement.of(db, q, trail.table.schema, procedures.of)  # type: ignore[arg-type]
    return workqueue.WorkQueue(db, q, trail, ReadpastClaim(), enforced=enforced), server  # type: ignore[arg-type]


def declared(operation: str) -> list[str]:
    """The parameters the script's CREATE PROCEDURE declares, in order."""
    body = mssql_protocol.batches()[operation]
    head = body.split("WITH EXECUTE AS OWNER")[0]
    return re.findall(r"@(p_\w+) ", head)


def test_each_call_binds_exactly_the_parameters_its_procedure_declares() -> None:
    q = mssql_sql.demo_queue()
    made = mssql_script.procedures(mssql_sql.DIALECT, q, "dbo")
    assert set(made) == set(mssql_parts.OPERATIONS)
    for operation, (name, parameters) in made.items():
        assert parameters == declared(operation), operation
        sent = str(procedures.call_statement(q, name, parameters).compile(dialect=_Server.dialect))
        assert sent == f"EXEC dbo.wb_cases_{operation}" + ", ".join(f" @{p} = ?" for p in parameters)


def test_binding_reads_the_parameters_without_building_a_procedure_body(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every bound SQL Server queue asks procedures(); the bodies (the whole script) are script()'s alone.
    for operation in mssql_parts.OPERATIONS:
        monkeypatch.setattr(mssql_script.Procedures, f"_{operation}", lambda self: pytest.fail("a body was built"))
    made = mssql_script.procedures(mssql_sql.DIALECT, mssql_sql.demo_queue(), "dbo")
    assert made["complete"][1] == ["p_key", "p_token", "p_outcome", "p_edits", "p_note"]
    assert made["next"][1] == ["p_f0", "p_pick"]


def test_a_queue_the_script_refuses_has_no_procedures_to_call() -> None:
    q = mssql_sql.bound(mssql_sql.LEGACY, "orders")  # no token column
    with pytest.raises(errors.UsageError, match="the procedures need a token column") as refused:
        mssql_script.script(mssql_sql.DIALECT, q, "dbo")
    with pytest.raises(errors.UsageError) as asked:
        mssql_script.procedures(mssql_sql.DIALECT, q, "dbo")
    assert str(asked.value) == str(refused.value)


def test_save_sends_the_edits_as_json_and_hands_back_the_lock() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        return [lock_row(q, 7)] if text.startswith("EXEC dbo.wb_cases_save") else []

    wq, server = queue(answer)
    q = wq.q
    lock = wq.save(LOGIN, 7, "t" * 32, {"subject": "Printer on fire", "priority": 4})
    assert lock.owner == LOGIN and lock.key == 7 and lock.token == "t" * 32
    ((text, values),) = server.exec_sent()
    assert text == "EXEC dbo.wb_cases_save @p_key = ?, @p_token = ?, @p_edits = ?"
    assert values[:2] == [7, "t" * 32] and json.loads(values[2]) == {"subject": "Printer on fire", "priority": 4}
    # Nothing but the procedure writes: no UPDATE or INSERT of workbench's own went out.
    assert not [t for t, _ in server.sent if t.startswith(("UPDATE", "INSERT"))], q.name


def test_complete_release_and_defer_pass_the_outcome_reason_note_and_time() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC"):
            return [lock_row(wq.q, values[0], user=None)]
        return [
            {
                "id": 1,
                "queue": "cases",
                "item_key": "7",
                "actor": LOGIN,
                "until": NOW + dt.timedelta(days=1),
                "at": NOW,
                "reason": "customer away",
            }
        ]

    wq, server = queue(answer)
    done = wq.complete(LOGIN, 7, "t" * 32, "resolved", note="called back")
    assert done.outcome == "resolved" and done.at == NOW.replace(tzinfo=dt.UTC)
    wq.release(LOGIN, 8, "u" * 32, reason="wrong team")
    until = dt.datetime(2026, 11, 27, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(wq, "db_clock", lambda: types.SimpleNamespace(utc=NOW))
        wq.defer(LOGIN, 9, "v" * 32, until, "customer away")
    sent = server.exec_sent()
    complete = "EXEC dbo.wb_cases_complete @p_key = ?, @p_token = ?, @p_outcome = ?, @p_edits = ?, @p_note = ?"
    assert sent[0] == (complete, [7, "t" * 32, "resolved", None, "called back"])
    assert sent[1] == (
        "EXEC dbo.wb_cases_release @p_key = ?, @p_token = ?, @p_reason = ?, @p_note = ?",
        [8, "u" * 32, "wrong team", None],
    )
    # The deferral's time in UTC, as the procedure compares it with SYSUTCDATETIME().
    assert sent[2] == (
        "EXEC dbo.wb_cases_defer @p_key = ?, @p_token = ?, @p_until = ?, @p_reason = ?, @p_note = ?",
        [9, "v" * 32, dt.datetime(2026, 11, 27, 9, 0), "customer away", None],
    )


def test_next_item_claims_through_the_procedure_one_call_per_item() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC dbo.wb_cases_next"):
            calls.append(text)
            if len(calls) > 2:
                return []  # nothing more waits
            row = {c.name: None for c in wq.q.table.columns}
            return [{**row, "case_id": 40 + len(calls), "subject": "s", **lock_row(wq.q, 40 + len(calls))}]
        return []

    calls: list[str] = []
    wq, server = queue(answer)
    claimed = wq.claim_next(LOGIN, count=3)
    assert [c.lock.key for c in claimed] == [41, 42] and all(c.lock.owner == LOGIN for c in claimed)
    assert claimed[0].item["subject"] == "s"
    assert len(calls) == 3 and not [t for t, _ in server.sent if t.startswith(("UPDATE", "INSERT"))]


def test_an_item_picked_by_key_or_next_item_narrowed_is_claimed_by_the_same_procedure() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC dbo.wb_cases_next"):
            key = values[1] if values[1] is not None else 41  # the item picked, or the first of its category
            row = {c.name: None for c in wq.q.table.columns}
            return [{**row, "case_id": key, **lock_row(wq.q, key)}]
        return []

    wq, server = queue(answer)
    wq.show = lambda key: types.SimpleNamespace(lock=None)  # type: ignore[method-assign]  # nobody holds it yet
    assert wq.claim(LOGIN, 5).lock.key == 5
    assert wq.claim_next(LOGIN, where={"category": "billing"})[0].lock.key == 41
    assert server.exec_sent() == [
        ("EXEC dbo.wb_cases_next @p_f0 = ?, @p_pick = ?", [None, 5]),
        ("EXEC dbo.wb_cases_next @p_f0 = ?, @p_pick = ?", ["billing", None]),
    ]


def test_another_workbench_user_than_the_login_is_refused() -> None:
    wq, server = queue(lambda text, values: [lock_row(wq.q, 7)])
    with pytest.raises(errors.NotPermitted, match="bob's lock cannot be used from the database login ann"):
        wq.save("bob", 7, "t" * 32, {"subject": "x"})
    assert not server.exec_sent()


def test_without_the_script_workbench_writes_with_its_own_statements() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        return [lock_row(wq.q, 7)] if text.startswith("SELECT cases.case_id AS wb_key") else []

    wq, server = queue(answer, installed=False)
    assert wq.save(LOGIN, 7, "t" * 32, {"subject": "x"}).owner == LOGIN
    assert not server.exec_sent() and any(t.startswith("UPDATE cases SET subject=?") for t, _ in server.sent)


def test_the_servers_refusals_are_said_as_workbench_says_them() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if "force_release" in text:
            raise driver_error(
                229,
                "The EXECUTE permission was denied on the object 'wb_cases_force_release', "
                "database 'helpdesk', schema 'dbo'.",
            )
        if "wb_cases_note" in text:
            raise driver_error(50418, "workbench: cases has no item with key 7")
        if "wb_cases_extend" in text:
            raise driver_error(50401, "workbench: not held")
        if "wb_cases_save" in text:  # a script applied by an older workbench: any refusal as 50403
            raise driver_error(50403, "workbench: only the queue's editable fields may be changed")
        if text.startswith("SELECT cases.case_id AS wb_key"):
            return [lock_row(wq.q, 7)]
        if text == "SELECT cases.case_id FROM cases WHERE cases.case_id = ?":  # the item exists, as far as it reads
            return [(values[0],)] if values[0] == 7 else []
        return []

    wq, _ = queue(answer)
    with pytest.raises(errors.NotPermitted, match=r"ann may not force-release cases 7.*workbench_supervisor"):
        Supervision(wq).force_release(LOGIN, 7, "stuck")
    # The procedure's refusal, read back to the engine's own error (backends/mssql.REFUSALS) and template.
    with pytest.raises(errors.InvalidValue, match=r"^cases has no item with key 7$") as missing:
        wq.add_note(LOGIN, 7, "see attachment")
    assert missing.value.template == problems.NO_ITEM and missing.value.column == "case_id"
    calls = wq.enforcement.procedures()
    with pytest.raises(errors.NotPermitted, match=r"^the database did not permit this: only the queue's editable"):
        calls.run(wq.db.server, "save", {"p_key": 7, "p_token": "t"})
    # An item that is not there is said as without the script (in the user's language), before any call.
    with pytest.raises(errors.WorkbenchError, match=r"^cases has no item with key 8$"):
        wq.add_note(LOGIN, 8, "see attachment")
    assert calls.run(wq.db.server, "extend", {"p_key": 7, "p_token": "t"}) == []  # the lock is gone


def test_a_procedure_removed_meanwhile_sends_workbench_back_to_its_own_statements() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC"):
            server.installed = False  # `workbench grants --revoke` ran
            raise driver_error(2812, "Could not find stored procedure 'dbo.wb_cases_save'.")
        return [lock_row(wq.q, 7)] if text.startswith("SELECT cases.case_id AS wb_key") else []

    wq, server = queue(answer)
    assert wq.save(LOGIN, 7, "t" * 32, {"subject": "x"}).owner == LOGIN
    assert len(server.exec_sent()) == 1 and any(t.startswith("UPDATE cases SET subject=?") for t, _ in server.sent)


# A value for each placeholder a refusal's template has, as a procedure fills them in.
_SAID = ("cases", "7", "bob", "10 min", "2 min")


@pytest.mark.parametrize("number", sorted(mssql_backend.REFUSALS))
def test_each_refusal_of_the_procedures_is_read_back_to_the_engines_error_and_template(number: int) -> None:
    """Declared once (backends/mssql.REFUSALS): the number a procedure THROWs with a problems.py text is
    read back to the error the engine raises for that problem, with its template and values, so the
    window says it in the user's language; one whose lock or row is gone answers no row, as before."""
    refusal = mssql_backend.REFUSALS[number]
    args = _SAID[: len(set(re.findall(r"\{(\d)\}", refusal.template)))]
    said = refusal.template.format(*args)
    text = mssql_backend.PREFIX + ("subject: " if refusal.column else "") + said

    def answer(statement: str, values: list[Any]) -> list[Any]:
        if statement.startswith("EXEC"):
            raise driver_error(number, text)
        return []

    wq, _ = queue(answer)
    calls = wq.enforcement.procedures()
    if refusal.lost:
        assert calls.run(wq.db.server, "extend", {"p_key": 7, "p_token": "t"}) == []
        return
    with pytest.raises(refusal.error) as caught:
        calls.run(wq.db.server, "extend", {"p_key": 7, "p_token": "t"}, user=LOGIN)
    error = caught.value
    assert type(error) is refusal.error and error.template == refusal.template
    if refusal.column:
        assert str(error) == f"subject: {said}" and isinstance(error, errors.InvalidValue) and error.column == "subject"
    else:
        assert str(error) == said and error.template_args == args
    if isinstance(error, errors.NothingToClaim):
        assert error.reason == "limit"


def test_every_declared_refusal_has_its_own_number_and_template() -> None:
    assert len(set(mssql_backend.NUMBERS)) == len(mssql_backend.REFUSALS)
    assert all(number >= 50000 for number in mssql_backend.REFUSALS)  # THROW's user-defined range
    assert all(refusal.problem in problems.templates() for refusal in mssql_backend.REFUSALS.values())
    assert {mssql_backend.OLD_NOT_HELD, mssql_backend.OLD_REFUSED}.isdisjoint(mssql_backend.REFUSALS)


def test_the_error_number_is_read_from_either_drivers_message() -> None:
    assert procedures.error_number(driver_error(50403, "workbench: no such outcome")) == (
        50403,
        "workbench: no such outcome",
    )
    freetds = Exception(
        "42000", "[42000] [FreeTDS][SQL Server]Could not find stored procedure 'x'. (2812) (SQLExecDirectW)"
    )
    assert procedures.error_number(freetds) == (2812, "Could not find stored procedure 'x'.")
    assert procedures.error_number(Exception("connection refused")) is None


def test_edits_are_json_text_sql_server_casts_back() -> None:
    q = mssql_sql.demo_queue()
    aware = dt.datetime(2026, 11, 26, 10, 30, 15, 123456, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    sent = json.loads(
        procedures.edits_json(
            q,
            {
                "due_at": aware,
                "priority": 3,
                "resolution": None,
                "subject": "Ünïcode",
                "time_spent_min": decimal.Decimal("12.50"),
            },
        )
    )  # a DECIMAL column's value
    # DATETIME takes at most three fractional digits; UTC as the column keeps it.
    assert sent == {
        "due_at": "2026-11-26T09:30:15.123",
        "priority": 3,
        "resolution": None,
        "subject": "Ünïcode",
        "time_spent_min": "12.50",
    }
    assert json.loads(procedures.edits_json(q, {"due_at": dt.datetime(2026, 1, 2, 3, 4)})) == {
        "due_at": "2026-01-02T03:04:00"
    }


def test_a_note_required_with_a_release_is_required_by_the_procedure_too() -> None:
    text = demo.config_text().replace(
        "max_locks_per_user = 3", 'max_locks_per_user = 3\nnotes_required = ["release", "resolved"]', 1
    )
    script = mssql_protocol.batches(text)
    required = mssql_protocol.refused("@note IS NULL OR @note = N''", problems.NOTE_NEEDED)
    assert re.search(required, mssql_protocol.flat(script["release"]))
    complete = mssql_protocol.flat(script["complete"])
    resolved, others = complete.split("ELSE IF", 1)
    assert re.search(required, resolved) and not re.search(required, others)
    assert "queue cases needs a note with Complete with outcome ''resolved''" in resolved
    assert not re.search(required, mssql_protocol.flat(mssql_protocol.batches()["release"]))


def test_a_lock_from_the_procedure_reads_as_the_engines_lock() -> None:
    q = mssql_sql.demo_queue()
    lock = q.lock_from_row(lock_row(q, 7))
    assert lock == models.Lock(
        queue="cases",
        key=7,
        owner=LOGIN,
        token="t" * 32,
        locked_at=NOW.replace(tzinfo=dt.UTC),
        expires_at=(NOW + dt.timedelta(minutes=15)).replace(tzinfo=dt.UTC),
        db_now=NOW.replace(tzinfo=dt.UTC),
    )


def test_a_supervisors_reassign_and_reopen_run_their_procedures_under_the_login() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC dbo.wb_cases_reassign"):
            return [lock_row(wq.q, 7, user="bob", token="n" * 32)]
        if text.startswith("EXEC dbo.wb_cases_reopen"):
            return [lock_row(wq.q, 8, user=None)]
        if text.startswith("SELECT cases.case_id AS wb_key"):  # the lock as the supervisor's window showed it
            return [lock_row(wq.q, 7)]
        if text.startswith("SELECT CASE WHEN"):  # reopen's reading: finished, nobody holds it
            return [{"wb_waiting": 0, **lock_row(wq.q, 8, user=None)}]
        if text.startswith("SELECT cases.case_id") and "wb_locked_by IS NULL" in text:  # the lock rule holds
            return [{"case_id": 8}]
        return []

    wq, server = queue(answer)
    moved = Supervision(wq).reassign(LOGIN, 7, "bob", "ann is away")
    assert (moved.owner, moved.token) == ("bob", "n" * 32)
    Supervision(wq).reopen(LOGIN, 8, "customer wrote again")
    assert server.exec_sent() == [
        ("EXEC dbo.wb_cases_reassign @p_key = ?, @p_to = ?, @p_reason = ?", [7, "bob", "ann is away"]),
        ("EXEC dbo.wb_cases_reopen @p_key = ?, @p_reason = ?", [8, "customer wrote again"]),
    ]
    assert not [t for t, _ in server.sent if t.startswith(("UPDATE", "INSERT"))]


def test_a_write_the_script_denies_says_which_login_may_do_it() -> None:
    # `sweep` has no procedure: under the script its UPDATE is denied to anyone but the table's owner.
    denied = driver_error(
        229, "The UPDATE permission was denied on the object 'cases', database 'helpdesk', schema 'dbo'."
    )
    said = r"the database did not permit this: .*UPDATE permission was denied.*`sweep` needs the table owner's login"
    with pytest.raises(errors.NotPermitted, match=said), dberrors.translated():
        raise denied
    assert dberrors.is_denied(denied)


def test_a_supervisors_move_runs_the_move_procedure_per_item() -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC dbo.wb_cases_move"):
            return [lock_row(wq.q, values[0], user=None)]
        if text.startswith("SELECT TOP 500 cases.case_id, cases.category"):  # the waiting items, read and locked
            return [{"case_id": 3, "category": "billing"}, {"case_id": 4, "category": "billing"}]
        return []

    wq, server = queue(answer)
    assert Supervision(wq).move(LOGIN, {"category": "Hardware"}, "wrong team", keys=[4, 3]) == [3, 4]
    assert server.exec_sent() == [
        (
            "EXEC dbo.wb_cases_move @p_key = ?, @p_changes = ?, @p_reason = ?",
            [key, '{"category": "Hardware"}', "wrong team"],
        )
        for key in (3, 4)
    ]
    assert not [t for t, _ in server.sent if t.startswith(("UPDATE", "INSERT"))]


def test_a_script_applied_while_workbench_runs_is_used_from_the_next_check_on(monkeypatch: pytest.MonkeyPatch) -> None:
    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith(("EXEC dbo.wb_cases_save", "SELECT cases.case_id AS wb_key")):
            return [lock_row(wq.q, 7)]
        return []

    wq, server = queue(answer, installed=False)
    wq.save(LOGIN, 7, "t" * 32, {"subject": "x"})
    assert not server.exec_sent()
    server.installed = True  # `workbench grants` applied by the administrator meanwhile
    wq.save(LOGIN, 7, "t" * 32, {"subject": "y"})
    assert not server.exec_sent()  # not asked again yet
    monkeypatch.setattr(procedures, "RECHECK_SECONDS", 0.0)
    wq.save(LOGIN, 7, "t" * 32, {"subject": "z"})
    assert [values for _, values in server.exec_sent()] == [[7, "t" * 32, '{"subject": "z"}']]


def test_a_member_of_the_groups_database_role_takes_through_the_engine_as_through_the_procedure() -> None:
    """One meaning of "in the group" (Actor.ESCALATED_TO) on SQL Server too: the engine asks the groups
    table, then the database role named like the group (IS_ROLEMEMBER, as the take procedure asks it), then
    the roles table, before it calls the procedure; a member of the role alone takes the item."""
    member: dict[str, int | None] = {"level2": 1}

    def answer(text: str, values: list[Any]) -> list[Any]:
        if text.startswith("EXEC"):
            return [{**lock_row(wq.q, 7), "status": "open"}]
        if text.startswith("SELECT IS_ROLEMEMBER("):
            return [(member[values[0]],)]
        return []  # not in the groups table, and no supervisor in the roles table

    text = demo.config_text().replace("[queues.cases]\n", '[queues.cases]\nescalate_to = "level2"\n', 1)
    wq, server = queue(answer, text=text)
    taken = Supervision(wq).take(LOGIN, 7)
    assert taken.lock.owner == LOGIN
    asked = [values for text, values in server.sent if text.startswith("SELECT IS_ROLEMEMBER(")]
    assert asked == [["level2", LOGIN]]
    assert server.exec_sent() == [("EXEC dbo.wb_cases_take @p_key = ?", [7])]
    # Not a member (NULL: no such role, or no such user): refused in the engine's words, nothing called.
    member["level2"] = None
    with pytest.raises(errors.NotPermitted) as refused:
        Supervision(wq).take(LOGIN, 7)
    assert refused.value.template == problems.TAKE_NOT_IN_GROUP
    assert refused.value.template_args == ("cases", "level2", LOGIN)
    assert len(server.exec_sent()) == 1


def test_take_is_a_call_of_its_procedure_answering_the_row_as_after_a_claim() -> None:
    """The procedure for the table's take (where the queue escalates): called with the key alone, its
    answer read as a claim's row. The engine's Supervision.take calls it where the script is applied."""

    def answer(text: str, values: list[Any]) -> list[Any]:
        return [{**lock_row(wq.q, 7, user="sue"), "status": "open"}] if text.startswith("EXEC") else []

    wq, server = queue(answer, text=demo.config_text())
    calls = wq.enforcement.procedures()
    assert calls.parameters["take"] == declared("take") == ["p_key"]
    rows = calls.run(wq.db.server, "take", {"p_key": 7}, user="sue")
    assert [(text, values) for text, values in server.exec_sent()] == [("EXEC dbo.wb_cases_take @p_key = ?", [7])]
    assert wq.q.lock_from_row(rows[0]).owner == "sue"
    # The engine's take is that call where the script is applied.
    taken = Supervision(wq).take(LOGIN, 7)
    assert server.exec_sent()[-1] == ("EXEC dbo.wb_cases_take @p_key = ?", [7])
    assert taken.lock.owner == "sue"
    # Without on_escalate the queue has no take procedure, and a call of one says so.
    plain, _ = queue(answer, text=support.without_table(demo.config_text(), "queues.cases.on_escalate"))
    with pytest.raises(errors.UsageError, match="no take procedure"):
        plain.enforcement.procedures().run(plain.db.server, "take", {"p_key": 7})

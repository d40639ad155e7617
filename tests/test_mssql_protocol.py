"""SQL Server's protocol script (db/rules/mssql_*.py), checked as text: no SQL Server runs here."""

from __future__ import annotations

import argparse
import dataclasses
import re
import tomllib

import pytest

from tests import support
from tests import test_mssql_sql as mssql_sql
from workbench import demo
from workbench.config import loader
from workbench.core import errors, problems, workflow
from workbench.db import backends, groups
from workbench.db.rules import mssql_parts, mssql_script

DIALECT = mssql_sql.DIALECT


def batches(text: str = "", name: str = "cases") -> dict[str, str]:
    """The script's batches, the procedures by operation and the rest under "grants"."""
    text = text or demo.config_text()
    q = mssql_sql.bound(text, name)
    reviewed = loader.parse(tomllib.loads(text), "x.toml").reviewed_by(name)  # as `workbench grants` finds it
    found: dict[str, str] = {"grants": ""}
    for batch in mssql_script.script(DIALECT, q, "dbo", reviewed):
        match = re.match(rf"CREATE OR ALTER PROCEDURE dbo\.wb_\w+?_({'|'.join(mssql_parts.OPERATIONS)})\b", batch)
        if match:
            found[match.group(1)] = batch
        else:
            found["grants"] += batch + "\n"
    return found


def flat(text: str) -> str:
    return " ".join(text.split())


def throw(template: str) -> str:
    """The THROW of `template`'s refusal (core/problems.py), under its number (backends/mssql.REFUSALS)."""
    return f"THROW {backends.mssql.number_of(template)},"


def refused(when: str, template: str) -> str:
    """`when` (T-SQL) refused with `template`'s text, flat: IF … BEGIN [ROLLBACK;] [SET @refusal …;] THROW."""
    return rf"IF {re.escape(when)} BEGIN (ROLLBACK; )?(SET @refusal = CONCAT\(.*?\); )?{re.escape(throw(template))}"


def test_every_operation_is_a_procedure_run_as_the_owner_for_the_calling_login() -> None:
    script = batches()
    assert set(script) == {"grants", *mssql_parts.OPERATIONS}
    for operation in mssql_parts.OPERATIONS:
        body = script[operation]
        assert "WITH EXECUTE AS OWNER" in body and "SET XACT_ABORT ON;" in body
        # Inside EXECUTE AS OWNER, SUSER_SNAME() names the owner; ORIGINAL_LOGIN() the caller.
        assert "DECLARE @login nvarchar(128) = ORIGINAL_LOGIN();" in body and "SUSER_SNAME" not in body
        # Every parameter was replaced by a procedure variable or rendered as a constant.
        assert not re.search(r"\?|:wb_|%\(|\[POSTCOMPILE", body), operation
        assert body.count("BEGIN TRANSACTION;") == body.count("COMMIT;") or operation == "complete"


def test_operators_write_nothing_directly_and_supervisors_alone_take_locks_away() -> None:
    grants = batches()["grants"]
    assert "DENY INSERT, UPDATE, DELETE ON cases TO workbench_operator;" in grants
    assert "DENY INSERT, UPDATE, DELETE ON dbo.workbench_audit TO workbench_operator;" in grants
    assert "GRANT SELECT ON dbo.workbench_audit TO workbench_operator;" in grants
    assert "ALTER ROLE workbench_operator ADD MEMBER workbench_supervisor;" in grants
    executes = re.findall(r"GRANT EXECUTE ON dbo\.wb_cases_(\w+) TO (\w+);", grants)
    assert sorted(executes) == sorted(
        (
            op,
            "workbench_supervisor"
            if op in ("force_release", "reassign", "reopen", "take", "move")
            else "workbench_operator",
        )
        for op in mssql_parts.OPERATIONS
    )
    assert "GRANT UPDATE" not in grants and "GRANT INSERT" not in grants


def test_operators_may_read_a_lookups_related_table() -> None:
    import sqlalchemy as sa

    from workbench.db import lookups
    from workbench.demo import schema

    q = mssql_sql.bound(demo.config_text(), "imports")
    vendors = schema.vendors(sa.MetaData())
    q.bind_lookups(
        {"vendor": lookups.Lookup("vendor", vendors, vendors.c.name, vendors.c.name, vendors.c.city, q.backend)}
    )
    grants = "\n".join(b for b in mssql_script.script(DIALECT, q, "dbo", None) if "CREATE OR ALTER" not in b)
    assert "GRANT SELECT ON vendors TO workbench_operator;" in grants
    assert "GRANT SELECT ON vendors" not in "\n".join(
        b for b in mssql_script.script(DIALECT, mssql_sql.bound(demo.config_text(), "imports"), "dbo", None)
    )  # without the lookup, no grant on it


def test_next_claims_as_the_engine_does_and_audits_the_token_digest() -> None:
    body = flat(batches()["next"])
    served = body.split(" END ELSE BEGIN ")[0]  # Next item; an item picked by key follows
    picks = re.findall(
        r"INSERT INTO @pick SELECT TOP 1 .*? FROM cases WITH \(UPDLOCK, READPAST, ROWLOCK, "
        r"READCOMMITTEDLOCK\) WHERE (.*?) ORDER BY cases\.priority ASC",
        served,
    )
    assert len(picks) == 3
    assert "wb_lock_expires <= SYSUTCDATETIME()" in picks[0] and "wb_locked_by IS NULL" in picks[2]  # expired first
    # Then items deferred to a time that has come: to the login that deferred them, to anyone after
    # defer_owner_first (15 min in the demo).
    assert (
        "workbench_deferrals.until <= SYSUTCDATETIME() AND (dbo.workbench_deferrals.actor = @login OR "
        "DATEADD(second, 900, dbo.workbench_deferrals.until) <= SYSUTCDATETIME())"
    ) in picks[1]
    assert "workbench_cooldown.actor = @login" in picks[2]  # not served again right after this login released it
    assert "NOT (EXISTS (SELECT * FROM dbo.workbench_deferrals WHERE" in picks[2]  # a deferred item waits its time
    assert "SET @held = (SELECT count(*)" in body  # the demo's max_locks_per_user
    assert re.search(refused("@held >= 3", problems.LIMIT_REACHED), body)
    assert re.search(
        r"UPDATE cases SET status='open', wb_locked_by=@login, wb_locked_at=SYSUTCDATETIME\(\), "
        r"wb_lock_expires=DATEADD\(second, 900, SYSUTCDATETIME\(\)\), wb_lock_token=.*NEWID\(\).* "
        r"WHERE cases\.case_id = @p_key;",
        body,
    )
    digest = "lower(convert(VARCHAR(64), hashbytes('SHA2_256', lower(CAST(@p_token AS VARCHAR(200)))), 2))"
    assert f"N'claim', @login, @login, {digest}" in body
    assert f"N'expire', @login, @prev_owner, {digest.replace('@p_token', '@prev_token')}" in body
    assert body.index("N'expire'") < body.index("N'claim'")  # the history reads in the order things happened


def test_next_claims_an_item_picked_by_key_as_the_engine_does() -> None:
    body = flat(batches()["next"])
    assert "@p_pick INTEGER = NULL WITH EXECUTE AS OWNER" in body
    served, picked = body.split("IF @p_pick IS NULL BEGIN ")[1].split(" END ELSE BEGIN ")
    # The item asked for, expired or free, without the cool-down or the deferrals that order Next item.
    picks = re.findall(r"INSERT INTO @pick SELECT TOP 1 .*? WHERE (.*?) ORDER BY", picked)
    assert len(picks) == 2 and all("cases.case_id = @p_pick" in p for p in picks)
    assert "workbench_cooldown" not in picked and "workbench_deferrals" not in picked
    assert "cases.case_id = @p_pick" not in served and "workbench_cooldown" in served
    # Next item narrowed by filter_by (the demo's category): each branch, unless the value is NULL.
    assert "@p_f0 VARCHAR(30) = NULL, @p_pick INTEGER = NULL WITH EXECUTE AS OWNER" in body
    assert served.count("WHERE (@p_f0 IS NULL OR cases.category = @p_f0) AND ") == 3 and "@p_f0" not in picked
    # A queue that serves in order only has no pick.
    text = demo.config_text().replace("max_locks_per_user = 3", "max_locks_per_user = 3\nallow_pick = false", 1)
    assert "@p_pick" not in batches(text)["next"]


def test_writes_are_fenced_by_key_login_token_and_a_live_lock() -> None:
    script = batches()
    fence = (
        "WHERE cases.case_id = @p_key AND cases.wb_lock_token = @p_token AND coalesce(cases.wb_locked_by, '') "
        "= @login AND cases.wb_lock_expires > SYSUTCDATETIME()"
    )
    for operation in ("save", "extend", "release", "complete"):
        assert fence in flat(script[operation]), operation
        assert "SET @done = @@ROWCOUNT;" in script[operation]
        # The row's lock as the engine reads it after a write (lock_from_row), or no row if the lock was gone.
        assert (
            "SELECT cases.case_id AS wb_key, cases.wb_locked_by AS wb_user, cases.wb_locked_at AS wb_time, "
            "cases.wb_lock_expires AS wb_expires, cases.wb_lock_token AS wb_token, SYSUTCDATETIME() AS wb_now "
            "FROM cases WHERE cases.case_id = @p_key AND @done = 1;"
        ) in script[operation]
    # Extend is capped by max_lock_duration (2 h) from the claim time.
    assert "DATEADD(second, 7200, cases.wb_locked_at)" in script["extend"]
    release = flat(script["release"])
    assert "N'release', @login, @login" in release and "@p_reason, NULL, NULL);" in release
    assert "INSERT INTO dbo.workbench_cooldown (queue, actor, item_key, until) VALUES ('cases', @login" in release
    assert "OUTPUT" not in release
    # Whoever releases an item decides anew: its deferral goes, in the same transaction.
    forget = (
        "IF @done = 1 BEGIN DELETE FROM dbo.workbench_deferrals WHERE dbo.workbench_deferrals.queue = 'cases' "
        "AND dbo.workbench_deferrals.item_key = CAST(@p_key AS nvarchar(200));"
    )
    assert forget in release and release.index(forget) < release.index("COMMIT;")
    # A note given with the release is kept with it, in its transaction, under the login's name.
    noted = (
        "IF @note <> N'' INSERT INTO dbo.workbench_notes (queue, item_key, author, at, kind, text) VALUES "
        "('cases', CAST(@p_key AS nvarchar(200)), @login, SYSUTCDATETIME(), 'release', @note); END;"
    )
    assert release.index(forget) < release.index(noted) < release.index("COMMIT;")
    assert "@p_note nvarchar(max) = NULL WITH EXECUTE AS OWNER" in release
    assert "DECLARE @note nvarchar(max) = TRIM(CHAR(9) + CHAR(10) + CHAR(13) + N' ' FROM @p_note);" in release


def test_defer_gives_the_item_back_until_a_time_within_the_limits() -> None:
    defer = flat(batches()["defer"])
    fence = (
        "WHERE cases.case_id = @p_key AND cases.wb_lock_token = @p_token AND coalesce(cases.wb_locked_by, '') "
        "= @login AND cases.wb_lock_expires > SYSUTCDATETIME()"
    )
    assert fence in defer and "wb_locked_by=NULL" in defer
    assert re.search(refused("@p_reason IS NULL OR LTRIM(RTRIM(@p_reason)) = N''", problems.REASON_NEEDED), defer)
    # In the future, at most 366 days ahead; the clock said as deferrals.checked_until says it.
    assert re.search(refused("@p_until IS NULL OR @p_until <= SYSUTCDATETIME()", problems.DEFER_PAST), defer)
    assert "CONVERT(nvarchar(16), SYSUTCDATETIME(), 120)" in defer
    assert re.search(refused("@p_until > DATEADD(second, 31622400, SYSUTCDATETIME())", problems.DEFER_TOO_FAR), defer)
    assert "N'defer', @login, @login" in defer
    assert 'CONCAT(N\'{"until": "\', CONVERT(nvarchar(30), @p_until, 126)' in defer
    replaced = re.search(
        r"IF @done = 1 BEGIN DELETE FROM dbo\.workbench_deferrals WHERE .*?item_key = CAST\(@p_key "
        r"AS nvarchar\(200\)\) OR dbo\.workbench_deferrals\.until < DATEADD\(second, -\d+, "
        r"SYSUTCDATETIME\(\)\)\); INSERT INTO dbo\.workbench_deferrals \(queue, item_key, actor, "
        r"until, at, reason\) VALUES \('cases', CAST\(@p_key AS nvarchar\(200\)\), @login, @p_until, "
        r"SYSUTCDATETIME\(\), @p_reason\); IF @note <> N'' INSERT INTO dbo\.workbench_notes "
        r".*?'defer', @note\); END; COMMIT;",
        defer,
    )
    assert replaced, defer
    grants = batches()["grants"]
    assert "DENY INSERT, UPDATE, DELETE ON dbo.workbench_deferrals TO workbench_operator;" in grants


def test_a_queue_that_does_not_defer_has_no_defer_procedure() -> None:
    text = demo.config_text().replace("max_locks_per_user = 3", "max_locks_per_user = 3\nallow_defer = false", 1)
    script = batches(text)
    assert "defer" not in script and "wb_cases_defer" not in script["grants"]


def test_edits_come_as_json_and_only_editable_columns_may_change() -> None:
    save = flat(batches()["save"])
    editable = ["subject", "description", "category", "priority", "resolution", "time_spent_min"]
    assert f"WHERE [key] NOT IN ({', '.join(f'N{chr(39)}{n}{chr(39)}' for n in editable)}) ORDER BY [key]);" in save
    # The first column that is not editable, named as the engine names it ("COLUMN: cannot be edited").
    assert re.search(refused("@column IS NOT NULL", problems.READ_ONLY), save)
    assert "CONCAT(N'workbench: ', @column, N': cannot be edited')" in save
    assert (
        "priority=CASE WHEN EXISTS (SELECT 1 FROM OPENJSON(@p_edits) WHERE [key] = N'priority') THEN "
        "CAST((SELECT [value] FROM OPENJSON(@p_edits) WHERE [key] = N'priority') AS INTEGER) ELSE priority END" in save
    )
    assert "status=" not in save and "wb_locked_by=" not in save  # neither the workflow's nor the lock's columns
    assert "JSON_VALUE" not in save  # it cuts text after 4,000 characters to NULL


def test_complete_writes_only_a_configured_outcome() -> None:
    complete = batches()["complete"]
    outcomes = re.findall(r"IF @p_outcome = N'(\w+)'", complete)
    assert outcomes == [o.name for o in mssql_sql.demo_queue().config.outcomes]
    assert (
        "ELSE BEGIN SET @refusal = CONCAT(N'workbench: queue cases has no outcome ''', @p_outcome, "
        "N''' (outcomes: resolved, waiting)'); " + throw(problems.NO_OUTCOME)
    ) in flat(complete)
    assert not re.search(r"END;\s*ELSE", complete)  # a semicolon would end the IF before its ELSE
    resolved = flat(complete.split("ELSE IF")[0])
    assert "status='resolved'" in resolved and "wb_locked_by=NULL" in resolved
    assert (
        "N'complete', @login, @login" in resolved and "NULL, N'resolved', (SELECT CONCAT(N'{\"columns\": ['" in resolved
    )


def test_supervisors_force_release_and_reassign_with_a_reason_under_their_login() -> None:
    script = batches()
    for operation, event in (("force_release", "force_release"), ("reassign", "reassign")):
        body = flat(script[operation])
        assert re.search(refused("@p_reason IS NULL OR LTRIM(RTRIM(@p_reason)) = N''", problems.REASON_NEEDED), body)
        assert "WITH (UPDLOCK, ROWLOCK) WHERE cases.case_id = @p_key AND cases.wb_locked_by IS NOT NULL" in body
        # Nobody holds it: read by the engine as the row changed since its own read (REFUSALS: lost).
        assert re.search(refused("@prev_owner IS NULL", problems.NOT_LOCKED), body)
        assert f"N'{event}', @login, @prev_owner" in body and "@p_reason" in body
    reassign = flat(script["reassign"])
    assert "wb_locked_by=@p_to" in reassign and "N'claim', @login, @p_to" in reassign
    assert "STRING_ESCAPE(@p_to, 'json')" in reassign


def test_every_reason_the_table_requires_is_refused_in_the_engines_words() -> None:
    """One declaration (Transition.reason, problems.REASON_NEEDED): each procedure of a transition that
    needs a reason refuses a blank one with the engine's message; the release's optional one is not."""
    script = batches()
    needs = {name for name in workflow.TRANSITIONS if workflow.needs_reason(name)}
    assert needs == {"defer", "escalate", "force_release", "reassign", "reopen", "move"}
    for name in sorted(needs | {"release"}):
        refusal = ("workbench: " + problems.REASON_NEEDED.format(workflow.command(name))).replace("'", "''")
        checked = (
            f"IF @p_reason IS NULL OR LTRIM(RTRIM(@p_reason)) = N'' BEGIN {throw(problems.REASON_NEEDED)} "
            f"N'{refusal}', 1;"
        )
        assert (checked in flat(script[name])) == (name in needs), name
        assert "@p_reason IS NULL OR" not in flat(script[name]).replace(checked, ""), name


QUOTED = """
[database]
url = "mssql+pyodbc://u@h/db?driver=FreeTDS"

[queues.cases]
table = "cases"
key = "case_id"
lock_duration = "10m"

[queues.cases.todo]
status = "it's new"

[queues.cases.on_claim]
status = "o'clock"

[queues.cases.on_release]
status = "it's new"

[queues.cases.outcomes.resolved]
set = { status = "x'; DROP TABLE y;--" }
"""


def test_config_values_are_quoted_by_the_dialect() -> None:
    script = batches(QUOTED)
    assert "status IN ('it''s new')" in flat(script["next"]) or "status = 'it''s new'" in flat(script["next"])
    assert "status='o''clock'" in script["next"]
    assert "status='x''; DROP TABLE y;--'" in script["complete"]


def test_tables_without_a_token_column_are_refused() -> None:
    with pytest.raises(errors.UsageError, match="need a token column"):
        batches(mssql_sql.LEGACY, "orders")


def test_only_sql_server_prints_a_script() -> None:
    q = mssql_sql.demo_queue()
    assert backends.for_dialect("postgresql").protocol_script(mssql_script, DIALECT, q, "dbo") is None
    undo = backends.for_dialect("mssql").protocol_script(mssql_script, DIALECT, q, "dbo", revoke=True)
    assert undo is not None and "DROP PROCEDURE IF EXISTS dbo.wb_cases_reassign;" in undo
    assert "REVOKE SELECT, INSERT, UPDATE, DELETE ON cases FROM workbench_operator;" in undo


def test_grants_prints_the_script_for_review_and_never_applies_it(capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.cli import permission_commands

    args = argparse.Namespace(queue="cases", apply=False, revoke=False)
    assert permission_commands._script(args, False, "mssql", ["CREATE ROLE a;", "GRANT b;"]) == 0
    out, err = capsys.readouterr()
    assert out == "CREATE ROLE a;\nGO\nGRANT b;\nGO\n" and "untested on a live SQL Server" in err
    with pytest.raises(errors.UsageError, match="--apply is not offered here"):
        permission_commands._script(argparse.Namespace(queue="cases", apply=True, revoke=False), False, "mssql", [])


def test_a_configured_release_reason_writes_its_values_in_its_own_branch() -> None:
    text = demo.config_text() + (
        '\n[queues.cases.release_reasons]\n"Needs a specialist" = { category = \'Hardware\' }\n"Duplicate" = {}\n'
    )
    release = batches(text)["release"]
    branch, _, rest = release.partition("  ELSE\n")
    assert "IF @p_reason = N'Needs a specialist'" in branch and "category='Hardware'" in branch
    assert "Duplicate" not in release  # a reason that writes nothing takes the plain release
    assert "category=" not in rest and "wb_locked_by=NULL" in rest
    assert branch.count("INSERT INTO dbo.workbench_cooldown") == rest.count("INSERT INTO dbo.workbench_cooldown") == 1


def test_a_note_is_added_under_the_login_and_only_through_its_procedure() -> None:
    script = batches()
    grants = script["grants"]
    assert "GRANT SELECT ON dbo.workbench_notes TO workbench_operator;" in grants
    assert "DENY INSERT, UPDATE, DELETE ON dbo.workbench_notes TO workbench_operator;" in grants
    body = flat(script["note"])
    assert "@p_key INTEGER, @p_text nvarchar(max) WITH EXECUTE AS OWNER" in body
    # notes.checked's rules: blanks around dropped, some text, at most MAX_LENGTH characters; an item that exists.
    assert "DECLARE @text nvarchar(max) = TRIM(CHAR(9) + CHAR(10) + CHAR(13) + N' ' FROM @p_text);" in body
    assert re.search(refused("@text IS NULL OR @text = N''", problems.NOTE_EMPTY), body)
    assert re.search(refused("LEN(@text) > 4000", problems.NOTE_TOO_LONG), body)
    assert re.search(refused("NOT EXISTS (SELECT * FROM cases WHERE cases.case_id = @p_key)", problems.NO_ITEM), body)
    assert (
        "INSERT INTO dbo.workbench_notes (queue, item_key, author, at, kind, text) VALUES ('cases', "
        "CAST(@p_key AS nvarchar(200)), @login, SYSUTCDATETIME(), NULL, @text);"
    ) in body
    assert "WHERE dbo.workbench_notes.id = SCOPE_IDENTITY();" in body


def test_a_supervisor_reopens_a_finished_item_as_the_engine_does() -> None:
    script = batches()
    assert "GRANT EXECUTE ON dbo.wb_cases_reopen TO workbench_supervisor;" in script["grants"]
    body = flat(script["reopen"])
    assert "@p_key INTEGER, @p_reason VARCHAR(1000) WITH EXECUTE AS OWNER" in body
    assert re.search(refused("@p_reason IS NULL OR LTRIM(RTRIM(@p_reason)) = N''", problems.REASON_NEEDED), body)
    # The row read and locked, then refused while anyone holds it, even a lock that ran out (the table's
    # lock rule for a reopen is FREE), or while it waits (in that order).
    assert (
        "@held = CASE WHEN (cases.wb_locked_by IS NULL) THEN 0 ELSE 1 END, "
        "@waiting = CASE WHEN (cases.status IN ('new', 'open')) THEN 1 ELSE 0 END, "
        "@holder = cases.wb_locked_by FROM cases WITH (UPDLOCK, ROWLOCK) WHERE cases.case_id = @p_key;"
    ) in body
    assert body.index("IF @held = 1") < body.index("IF @waiting = 1") < body.index("UPDATE cases")
    for when, template in (
        ("@found = 0", problems.NO_ITEM),
        ("@held = 1", problems.REOPEN_HELD),
        ("@waiting = 1", problems.REOPEN_WAITING),
    ):
        assert re.search(refused(when, template), body), template
    assert "COALESCE(@holder, N'another queue of its table')" in body  # as Supervision._refuse_reopen says it
    # The demo's on_reopen, only on a finished row nobody holds (the statement carries the lock rule too,
    # as the engine's does) that on_reopen's values put back in todo (the table's After.WAITING, read
    # with them written: here a constant); the audit row names the supervisor, no lock, the reason.
    assert (
        "UPDATE cases SET status='open' WHERE cases.case_id = @p_key AND (cases.status NOT IN ('new', 'open')) "
        "AND cases.wb_locked_by IS NULL AND 'open' IN ('new', 'open');"
    ) in body
    assert (
        "VALUES (N'cases', CAST(@p_key AS nvarchar(200)), N'reopen', @login, NULL, NULL, SYSUTCDATETIME(), "
        "@p_reason, NULL, NULL);"
    ) in body
    assert "DROP PROCEDURE IF EXISTS dbo.wb_cases_reopen;" in mssql_script.revoke_script(
        DIALECT, mssql_sql.bound(demo.config_text(), "cases"), "dbo"
    )


def test_a_queue_without_on_reopen_has_no_reopen_procedure() -> None:
    text = re.sub(r"\[queues\.cases\.on_reopen\][^\n]*\nstatus = \"open\"\n", "", demo.config_text())
    assert text != demo.config_text()
    assert "reopen" not in batches(text)


def test_undo_takes_back_the_logins_own_complete_as_the_engine_does() -> None:
    body = flat(batches()["undo"])
    assert "GRANT EXECUTE ON dbo.wb_cases_undo TO workbench_operator;" in batches()["grants"]
    # The row locked first, then the item's last audit event (which outcome's branch, how a refusal is said).
    assert body.index("FROM cases WITH (UPDLOCK, ROWLOCK)") < body.index("ORDER BY dbo.workbench_audit.id DESC")
    assert re.search(refused("@found = 0", problems.NO_ITEM), body)
    # Per outcome one UPDATE holds to the table's rules (db/rowrules.py): the lock free, the row finished
    # with what the outcome wrote, and the trail rule (LAST_OWN_COMPLETE): the item's newest audit row
    # the login's Complete with that outcome, within undo_within (UNDO_WINDOW); then on_reopen's
    # values and a fresh lock of the login's.
    assert (
        "IF @outcome = N'resolved' BEGIN UPDATE cases SET status='open', wb_locked_by=@login, "
        "wb_locked_at=SYSUTCDATETIME(), wb_lock_expires=DATEADD(second, 900, SYSUTCDATETIME()), wb_lock_token="
    ) in body
    assert (
        "WHERE cases.case_id = @p_key AND cases.wb_locked_by IS NULL AND (cases.status NOT IN ('new', 'open')) "
        "AND cases.status = 'resolved' AND (EXISTS (SELECT wb_last.id FROM dbo.workbench_audit AS wb_last "
        "WHERE wb_last.queue = 'cases' AND wb_last.item_key = CAST(@p_key AS nvarchar(200)) "
        "AND wb_last.event = 'complete' AND wb_last.actor = @login AND NOT (EXISTS (SELECT wb_later.id "
        "FROM dbo.workbench_audit AS wb_later WHERE wb_later.queue = 'cases' "
        "AND wb_later.item_key = CAST(@p_key AS nvarchar(200)) AND wb_later.id > wb_last.id)) "
        "AND wb_last.outcome = 'resolved' AND wb_last.at >= DATEADD(second, -120, SYSUTCDATETIME()))); "
        "SET @done = @@ROWCOUNT; END ELSE IF @outcome = N'waiting'"
    ) in body
    # Refused, the last event says why, in the engine's words (WorkQueue._undo_refused), in that order.
    refusals = body[body.index("IF @done = 0 BEGIN") :]
    for when, template in (
        ("@event IS NULL", problems.UNDO_NOTHING),
        ("@event <> N'complete' OR @actor <> @login", problems.UNDO_NOT_YOURS),
        ("@age > 120", problems.UNDO_TOO_LATE),
    ):
        assert re.search(refused(when, template), refusals), template
    assert "SET @age = DATEDIFF(second, @at, SYSUTCDATETIME());" in refusals
    assert "N' ago, and undo works for 2 min; a supervisor can reopen it'" in body  # undo_within, as the engine says
    changed = refusals.index(
        "ROLLBACK; SET @refusal = CONCAT(N'workbench: cases ', CAST(@p_key AS nvarchar(200)), N' changed"
    )
    assert refusals.index("IF @age > 120") < changed < refusals.index("END; SELECT @p_token")
    assert refusals.index(throw(problems.UNDO_CHANGED)) > changed
    assert "N'undo', @login, @login, NULL, SYSUTCDATETIME(), NULL, @outcome, NULL);" in body
    assert body.index("N'undo', @login") < body.index("N'claim', @login, @login, lower(") < body.index("COMMIT;")
    assert "workbench_reviews" not in body  # the demo's cases are not reviewed


def test_undo_of_a_complete_chosen_for_review_checks_the_reviews_values_and_withdraws_it() -> None:
    body = flat(batches(name="imports")["undo"])
    # Chosen for review, check_status was written twice: the review's value is the one to find.
    assert (
        "(JSON_VALUE(@detail, '$.review') IS NULL AND import_rows.check_status != 'pending' AND "
        "import_rows.check_status = 'verified' AND import_rows.checked_by = @login AND "
        "import_rows.checked_at IS NOT NULL OR JSON_VALUE(@detail, '$.review') IS NOT NULL AND "
        "import_rows.check_status != 'pending' AND import_rows.check_status = 'to_review' AND "
        "import_rows.checked_by = @login AND import_rows.checked_at IS NOT NULL)"
    ) in body
    assert (
        "IF JSON_VALUE(@detail, '$.review') IS NOT NULL UPDATE dbo.workbench_reviews SET verdict='superseded' "
        "WHERE dbo.workbench_reviews.queue = 'imports_review' AND dbo.workbench_reviews.item_key = "
        "CAST(@p_key AS nvarchar(200)) AND dbo.workbench_reviews.verdict IS NULL;"
    ) in body


def test_a_complete_is_chosen_for_review_in_the_database_as_reviews_choose_does() -> None:
    body = flat(batches(name="imports")["complete"])
    # The demo reviews a clerk's first 5 verified lines, then 20 % at random; rejected lines never.
    assert (
        "IF (SELECT count(*) AS count_1 FROM dbo.workbench_reviews WHERE dbo.workbench_reviews.source = "
        "'imports' AND dbo.workbench_reviews.doer = @login AND dbo.workbench_reviews.why = 'first') < 5 "
        "SET @why = N'first'; ELSE IF RAND(CHECKSUM(NEWID())) * 100 < 20 SET @why = N'share';"
    ) in body
    verified = body[body.index("IF @p_outcome = N'verified'") : body.index("ELSE IF @p_outcome = N'rejected'")]
    rejected = body[body.index("ELSE IF @p_outcome = N'rejected'") :]
    assert "@why" in verified and "@why" not in rejected
    plain, chosen = verified.split("ELSE BEGIN", 1)
    assert "check_status='verified'" in plain and "workbench_reviews (queue" not in plain
    # Chosen: the review's values over the outcome's, its record, and why in the audit row's detail.
    assert "check_status='to_review'" in chosen
    assert (
        "INSERT INTO dbo.workbench_reviews (queue, item_key, source, doer, at, why) SELECT 'imports_review' "
        "AS anon_1, CAST(@p_key AS nvarchar(200)), 'imports' AS anon_2, @login, SYSUTCDATETIME() AS anon_3, "
        "@why;"
    ) in chosen
    assert "N'], ') FROM OPENJSON(@p_edits) HAVING COUNT(*) > 0), N'\"review\": \"', @why, N'\"}')" in chosen


def test_the_reviewing_queue_keeps_four_eyes_and_records_the_verdict() -> None:
    script = batches(name="imports_review")
    assert "DENY INSERT, UPDATE, DELETE ON dbo.workbench_reviews TO workbench_operator;" in script["grants"]
    assert "GRANT SELECT ON dbo.workbench_reviews TO workbench_operator;" in script["grants"]
    # Its claim never serves the login its own work (the script knows which queue it reviews).
    assert (
        "NOT (EXISTS (SELECT * FROM dbo.workbench_reviews WHERE dbo.workbench_reviews.queue = 'imports_review' "
        "AND dbo.workbench_reviews.item_key = CAST(import_rows.row_id AS VARCHAR(200)) AND "
        "dbo.workbench_reviews.doer = @login AND dbo.workbench_reviews.verdict IS NULL))"
    ) in flat(script["next"])
    body = flat(script["complete"])
    accepted = body[body.index("IF @p_outcome = N'accepted'") : body.index("ELSE IF @p_outcome = N'sent_back'")]
    sent_back = body[body.index("ELSE IF @p_outcome = N'sent_back'") :]
    assert (
        "UPDATE dbo.workbench_reviews SET verdict='accepted', reviewer=@login, reviewed_at=SYSUTCDATETIME()" in accepted
        and "workbench_deferrals" not in accepted
    )
    # Sent back: deferred in the source queue to its doer, due at once, then the verdict.
    assert (
        sent_back.index("DELETE FROM dbo.workbench_deferrals WHERE dbo.workbench_deferrals.queue = 'imports'")
        < sent_back.index("INSERT INTO dbo.workbench_deferrals")
        < sent_back.index("UPDATE dbo.workbench_reviews SET verdict='sent_back', reviewer=@login")
    )
    # A reviewer's note (the loader requires one when sending back) is kept with the reviewed queue's
    # notes, where the operator reads why; so is one added by the note procedure.
    note_needed = refused("@note IS NULL OR @note = N''", problems.NOTE_NEEDED)
    assert re.search(note_needed, sent_back) and not re.search(note_needed, accepted)
    assert "queue imports_review needs a note with Complete with outcome ''sent_back''" in sent_back
    assert "INSERT INTO dbo.workbench_notes (queue, item_key, author, at, kind, text) VALUES ('imports', " in sent_back
    assert "INSERT INTO dbo.workbench_notes (queue, item_key, author, at, kind, text) VALUES ('imports', " in flat(
        script["note"]
    )


def test_a_supervisor_moves_a_waiting_item_as_the_engine_does() -> None:
    body = flat(batches()["move"])
    assert "@p_key INTEGER, @p_changes nvarchar(max), @p_reason VARCHAR(1000) WITH EXECUTE AS OWNER" in body
    # Movable columns only: neither the key nor the lock.
    allowed = re.search(r"WHERE \[key\] NOT IN \((.*?)\) ORDER BY \[key\]\); IF @column IS NOT NULL", body)
    nothing = "@p_changes IS NULL OR NOT EXISTS (SELECT 1 FROM OPENJSON(@p_changes))"
    for when, template in (
        (nothing, problems.MOVE_NOTHING),
        ("@column IS NOT NULL", problems.MOVE_NOT_MOVABLE),
        ("@found = 0", problems.MOVE_NOT_WAITING),
        ("@finishes = 1", problems.MOVE_FINISHES),
    ):
        assert re.search(refused(when, template), body), template
    assert allowed and "N'status'" in allowed[1] and "case_id" not in allowed[1] and "wb_" not in allowed[1]
    # A waiting item nobody holds, read and locked first; refused if the move would finish it.
    assert (
        "FROM cases WITH (UPDLOCK, ROWLOCK) WHERE cases.case_id = @p_key AND cases.status IN ('new', 'open') AND "
        "cases.wb_locked_by IS NULL;"
    ) in body
    assert (
        "@finishes = CASE WHEN ((CASE WHEN EXISTS (SELECT 1 FROM OPENJSON(@p_changes) WHERE [key] = N'status') "
        "THEN CAST((SELECT [value] FROM OPENJSON(@p_changes) WHERE [key] = N'status') AS VARCHAR(20)) ELSE status "
        "END NOT IN ('new', 'open'))) THEN 1 ELSE 0 END"
    ) in body
    update = body[body.index("UPDATE cases SET") : body.index("SET @done = @@ROWCOUNT;")]
    assert "WHERE cases.case_id = @p_key AND cases.status IN ('new', 'open') AND cases.wb_locked_by IS NULL;" in update
    assert "wb_locked_by=" not in update and "case_id=" not in update
    # Recorded under the login with the reason and each changed column's value before and after.
    assert "N'move', @login, NULL, NULL, SYSUTCDATETIME(), @p_reason, NULL, (SELECT CONCAT(N'{\"changes\": {'" in body
    assert "FROM OPENJSON(@p_changes) AS c JOIN OPENJSON(@before) AS b ON b.[key] = c.[key]" in body
    assert body.index("SET @before = (SELECT") < body.index("UPDATE cases SET") < body.index("SET @after = (SELECT")


def test_a_lock_is_written_and_taken_away_only_through_the_queue_it_was_taken_in() -> None:
    # imports_review shares import_rows with imports: its procedures touch only rows in its own state.
    script = batches(name="imports_review")
    mine = r"import_rows\.check_status = N?'to_review'"
    for operation in ("save", "extend", "release", "complete", "force_release", "reassign"):
        assert re.search(mine, flat(script[operation])), operation
    taken = flat(script["force_release"])
    assert re.search(
        r"WHERE import_rows\.row_id = @p_key AND import_rows\.wb_locked_by IS NOT NULL "
        rf"AND import_rows\.wb_locked_at IS NOT NULL AND {mine}",
        taken,
    )


def test_every_write_under_a_lock_holds_the_row_to_the_queues_work_as_the_engine_does() -> None:
    """Issue 48: a row another program took out of the queue's work (spam, cancelled, finished) is
    never written under a lock taken before. Every procedure carrying an operator's transition on a
    held row (the workflow table's RowRule.HELD: save, extend, release, defer, Complete and a review's
    verdicts) writes the queue's row only while it is in the queue's work, BoundQueue.in_work() as the
    engine renders it for SQL Server; with a claim that moves the row into a state of its own, that is
    waiting or in that state. The engine then says "no longer in this queue's work"."""
    text = demo.config_text().replace("[queues.cases]\n", "[queues.cases]\nallow_defer = true\n")
    moved = re.sub(r'(\[queues\.cases\.todo\]\n)status = \["new", "open"\]', r'\1status = "new"', text)
    moved = moved.replace(
        "[queues.cases.on_claim]\n", '[queues.cases.on_release]\nstatus = "new"\n\n[queues.cases.on_claim]\n'
    )
    moved = re.sub(r'(\[queues\.cases\.on_reopen\][^\n]*\n)status = "open"', r'\1status = "new"', moved)
    held = {
        name
        for name, t in workflow.TRANSITIONS.items()
        if t.row is workflow.RowRule.HELD and t.who is workflow.Actor.OPERATOR
    }
    for config, name, work in (
        (moved, "cases", "(cases.status = 'new' OR cases.status = 'open')"),
        (text, "imports_review", "import_rows.check_status = 'to_review'"),
    ):
        q = mssql_sql.bound(config, name)
        assert flat(mssql_parts.Sql(DIALECT, {})(q.in_work())) in work  # the engine's row rule, rendered
        script = batches(config, name)
        carrying = [op for op, carried in mssql_parts.CARRIES.items() if set(carried) & held and op in script]
        assert {"save", "extend", "release", "complete"} <= set(carrying), name
        for op in carrying:
            updates = re.findall(rf"UPDATE {q.table.name} SET .*?;", flat(script[op]))
            assert updates, (name, op)
            for update in updates:  # each outcome's, each release reason's: all of them
                assert update.endswith(f"AND {work};") or f"AND {work} " in update, (name, op, update)


# A twin of the demo's cases over the same rows and todo (its own outcome): the rows' state does not tell
# whose lock it is, the audit trail's newest claim does.
TWIN = """
[queues.cases2]
table = "cases"
key = "case_id"
order = ["opened_at asc"]
lock_duration = "15m"

[queues.cases2.lock]
user = "wb_locked_by"
time = "wb_locked_at"
expires = "wb_lock_expires"
token = "wb_lock_token"

[queues.cases2.todo]
status = ["new", "open"]

[queues.cases2.on_claim]
status = "open"

[queues.cases2.outcomes.dropped]
set = { status = "dropped" }
"""


def _twin_script() -> list[str]:
    """The demo's cases with a twin serving the same rows (BoundQueue.rivals, as the service binds them)."""
    q = mssql_sql.bound(demo.config_text() + TWIN, "cases")
    q.rivals = ("cases2",)
    return mssql_script.script(DIALECT, q, "dbo")


def _scripts() -> list[str]:
    """Every procedure the demo's queues have, with every refusal: escalate (to a group), notes required,
    reviews, a twin."""
    text = demo.config_text().replace(
        "max_locks_per_user = 3", 'max_locks_per_user = 3\nnotes_required = ["release", "defer", "resolved"]', 1
    )
    text = text.replace("[queues.cases]\n", '[queues.cases]\nescalate_to = "level2"\n', 1)
    return [
        *("\n".join(batches(text, name).values()) for name in ("cases", "imports", "imports_review")),
        "\n".join(_twin_script()),
    ]


_THROW = re.compile(r"THROW (\d+), (N'(?:[^']|'')*'|@refusal), 1;")
_LITERAL = re.compile(r"N'((?:[^']|'')*)'")


def test_every_refusal_in_the_script_is_a_declared_number_saying_a_problems_text() -> None:
    """Issue 47: no refusal text written in the T-SQL. Each THROW has a number of backends/mssql.REFUSALS
    and says that refusal's template of core/problems.py (the values the procedure knows filled in)."""
    seen = set()
    for script in _scripts():
        assert "RAISERROR" not in script
        for found in _THROW.finditer(script):
            refusal = backends.mssql.REFUSALS[int(found[1])]
            seen.add(refusal.problem)
            if found[2] == "@refusal":
                # The text put together just before: its literal parts, the values between them.
                statement = script[script.rindex("SET @refusal = CONCAT(", 0, found.start()) : found.start()]
                literals = "".join(piece.replace("''", "'") for piece in _LITERAL.findall(statement))
            else:
                literals = found[2][2:-1].replace("''", "'")
            assert literals.startswith(backends.mssql.PREFIX), literals
            said = literals.removeprefix(backends.mssql.PREFIX)
            if refusal.column:
                said = said.removeprefix(": ")  # after the column's name (a value: @column)
            pattern = "".join(
                ".*" if re.fullmatch(r"\{\d\}", piece) else re.escape(piece)
                for piece in re.split(r"(\{\d\})", refusal.template)
            )
            assert re.fullmatch(pattern, said, re.S), (refusal.problem, said)
    # Every declared refusal is said somewhere in these scripts.
    assert seen == {r.problem for r in backends.mssql.REFUSALS.values()}


def test_a_problems_text_changed_changes_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """The refusals are rendered from core/problems.py when the script is made, not copied into it."""
    before = _scripts()
    for name in ("NOTE_EMPTY", "UNDO_TOO_LATE", "MOVE_FINISHES", "LIMIT_REACHED", "READ_ONLY"):
        monkeypatch.setattr(problems, name, getattr(problems, name) + " (changed)")
    after = _scripts()
    assert before != after
    for name in ("NOTE_EMPTY", "UNDO_TOO_LATE", "MOVE_FINISHES", "LIMIT_REACHED", "READ_ONLY"):
        number = backends.mssql.NUMBERS[name]
        changed = [
            script[script.rindex("BEGIN", 0, at) : at + 200]
            for script in after
            for at in (m.start() for m in re.finditer(rf"THROW {number},", script))
        ]
        assert changed and all(" (changed)" in text for text in changed), name


def test_a_supervisor_takes_an_escalated_item_as_the_engine_does() -> None:
    """Supervision.take as a procedure: the row rule (ESCALATED: out of todo, on_escalate's values still
    there) and the lock rule (FREE) in the one UPDATE that writes on_reopen's values, a fresh lock of the
    login's and on_claim's; recorded as the login's claim; the row answered as after a claim."""
    script = batches()
    assert "GRANT EXECUTE ON dbo.wb_cases_take TO workbench_supervisor;" in script["grants"]
    body = flat(script["take"])
    assert "-- transition: take" in body
    assert "@p_key INTEGER WITH EXECUTE AS OWNER" in body
    assert (
        "UPDATE cases SET status='open', wb_locked_by=@login, wb_locked_at=SYSUTCDATETIME(), "
        "wb_lock_expires=DATEADD(second, 900, SYSUTCDATETIME()), wb_lock_token="
    ) in body
    assert (
        "WHERE cases.case_id = @p_key AND cases.wb_locked_by IS NULL AND (cases.status NOT IN ('new', 'open')) "
        "AND cases.status = 'escalated'; SET @done = @@ROWCOUNT;"
    ) in body
    # The row read and locked first; no such key, then not (or no longer) escalated, in the engine's words.
    assert body.index("FROM cases WITH (UPDLOCK, ROWLOCK)") < body.index("UPDATE cases")
    assert re.search(refused("@found = 0", problems.NO_ITEM), body)
    assert re.search(refused("@done = 0", problems.TAKE_NOT_ESCALATED), body)
    assert body.index("IF @done = 0") < body.index("N'claim', @login, @login, lower(") < body.index("COMMIT;")
    assert (
        "cases.wb_lock_token AS wb_token, SYSUTCDATETIME() AS wb_now FROM cases WHERE cases.case_id = @p_key;" in body
    )
    assert "DROP PROCEDURE IF EXISTS dbo.wb_cases_take;" in mssql_script.revoke_script(
        DIALECT, mssql_sql.bound(demo.config_text(), "cases"), "dbo"
    )


def test_whoever_escalated_an_item_it_is_taken_and_a_queue_not_set_up_for_it_has_no_take() -> None:
    # on_escalate naming who escalated (a user's name) or when: some name, some time (Supervision.take's).
    text = demo.config_text().replace('status = "escalated"\n', 'status = "escalated"\nresolution = { user = true }\n')
    assert text != demo.config_text()
    assert "AND cases.status = 'escalated' AND cases.resolution IS NOT NULL;" in flat(batches(text)["take"])
    # Without on_escalate (Check.ON_ESCALATE_SET) or on_reopen (ON_REOPEN_SET): no procedure, no grant.
    assert "take" not in batches(support.without_table(demo.config_text(), "queues.cases.on_escalate"))
    without_reopen = re.sub(r"\[queues\.cases\.on_reopen\][^\n]*\nstatus = \"open\"\n", "", demo.config_text())
    script = batches(without_reopen)
    assert "take" not in script and "wb_cases_take" not in script["grants"] and "escalate" in script


def _declared(monkeypatch: pytest.MonkeyPatch, name: str, **fields: object) -> None:
    """Transition `name` of core/workflow.py's table declared otherwise (for this test only)."""
    monkeypatch.setitem(workflow._TABLE, name, dataclasses.replace(workflow.TRANSITIONS[name], **fields))


def test_force_release_and_reassign_hold_to_the_tables_lock_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: their lock rule (HELD_HERE) is the table's, rendered by lockrules.guard for a lock the
    procedure reads in its own statement: declared otherwise, the procedures' read and UPDATE follow."""
    stale = "cases.wb_lock_expires <= SYSUTCDATETIME()"
    held = "cases.case_id = @p_key AND cases.wb_locked_by IS NOT NULL AND cases.wb_locked_at IS NOT NULL"
    before = batches()
    for name in ("force_release", "reassign"):
        assert f"WITH (UPDLOCK, ROWLOCK) WHERE {held} AND cases.status IN ('new', 'open');" in flat(before[name])
        assert stale not in flat(before[name])
        _declared(monkeypatch, name, lock=workflow.LockRule.STALE_HERE)  # only a lock that ran out
    after = batches()
    for name in ("force_release", "reassign"):
        body = flat(after[name])
        assert f"WITH (UPDLOCK, ROWLOCK) WHERE {held} AND cases.status IN ('new', 'open') AND {stale};" in body
        update = body[body.index("UPDATE cases SET") : body.index("SET @done = @@ROWCOUNT;")]
        assert update.endswith(f"AND {stale}; "), update
        where = f"{held} AND cases.status IN ('new', 'open')"
        assert flat(before[name]).replace(where, f"{where} AND {stale}") == body  # and nothing else


def test_the_names_an_edit_or_a_move_may_write_are_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 47: which columns @p_edits and @p_changes may name is what the transition's row writes
    (Write.EDITS: the editable columns, Write.MOVED_VALUES: the movable ones: BoundQueue.given), checked
    by one function for both procedures and by the engine: declared otherwise, all of them follow."""
    q = mssql_sql.demo_queue()
    editable = [c.name for c in q.editable]
    before = {name: flat(body) for name, body in batches().items()}
    allowed = re.compile(
        r"SET @column = \(SELECT TOP 1 \[key\] FROM OPENJSON\((@p_\w+)\)(?: WHERE \[key\] NOT IN \((.*?)\))? "
    )
    names = {m[1]: m[2] for name in ("save", "complete", "move") for m in allowed.finditer(before[name])}
    assert names["@p_edits"] == ", ".join(f"N'{n}'" for n in editable)
    assert "N'status'" in names["@p_changes"] and "case_id" not in names["@p_changes"]
    # A save that writes no edits, a move that writes an edit's columns (not the workflow's status).
    _declared(monkeypatch, "save", writes=workflow.TRANSITIONS["save"].writes - {workflow.Write.EDITS})
    moved = workflow.TRANSITIONS["move"].writes - {workflow.Write.MOVED_VALUES} | {workflow.Write.EDITS}
    _declared(monkeypatch, "move", writes=moved)
    after = {name: flat(body) for name, body in batches().items()}
    save, move = after["save"], after["move"]
    # Every name refused, none written.
    assert "SET @column = (SELECT TOP 1 [key] FROM OPENJSON(@p_edits) ORDER BY [key]);" in save
    assert "OPENJSON(@p_edits) WHERE [key] = N'" not in save
    assert re.search(refused("@column IS NOT NULL", problems.READ_ONLY), save)
    # The editable columns (any other refused in the move's words), written from @p_changes; status no longer.
    assert f"OPENJSON(@p_changes) WHERE [key] NOT IN ({names['@p_edits']}) ORDER BY [key]);" in move
    assert re.search(refused("@column IS NOT NULL", problems.MOVE_NOT_MOVABLE), move)
    assert "OPENJSON(@p_changes) WHERE [key] = N'subject'" in move
    assert "OPENJSON(@p_changes) WHERE [key] = N'status'" not in move
    assert after["complete"] == before["complete"]
    # The engine checks the same names.
    with pytest.raises(errors.InvalidValue):
        q.coerce_edits({"subject": "x"})
    assert q.coerce_edits({"subject": "x"}, "complete") == {"subject": "x"}
    with pytest.raises(errors.InvalidValue, match="a move does not write it"):
        q.coerce_moves({"status": "open"}, "--set")
    assert q.coerce_moves({"status": "open"}, "--where") == {"status": "open"}


def _escalating_to(group: str) -> str:
    return demo.config_text().replace("[queues.cases]\n", f'[queues.cases]\nescalate_to = "{group}"\n', 1)


def test_a_queues_escalate_to_group_may_run_its_take_procedure() -> None:
    """With escalate_to, the take procedure is the group's too (the table's Actor.ESCALATED_TO): the script
    makes the database role of that name, and operators (whom the groups table may name) and that role may
    run it; it asks inside who the caller is (test below). Nothing else changes."""
    grants = batches(_escalating_to("level 2"))["grants"]
    assert "IF DATABASE_PRINCIPAL_ID(N'level 2') IS NULL CREATE ROLE [level 2];" in grants
    assert "GRANT EXECUTE ON dbo.wb_cases_take TO workbench_operator, [level 2];" in grants
    assert "GRANT EXECUTE ON dbo.wb_cases_reopen TO workbench_supervisor;" in grants
    # The engine reads the groups table as the login (groups.is_member, before it calls the procedure).
    assert "GRANT SELECT ON dbo.workbench_groups TO workbench_operator;" in grants
    assert "level 2" not in batches()["grants"]


# The caller's test inside the take procedure, flat: IF NOT (…) BEGIN [SET @refusal …;] THROW … END;
_WHO = re.compile(r"-- transition: take IF NOT \((.*?)\) BEGIN (SET @refusal = CONCAT\((.*?)\); )?THROW (\d+),")


def test_the_take_procedure_admits_whom_the_engine_admits_the_groups_table_too() -> None:
    """One meaning of "in the group" (Actor.ESCALATED_TO): the engine (Supervision._require_escalated_to,
    groups.is_member) and PostgreSQL (pg_names.member_of) admit a supervisor, a member of the database role
    named like the group or a user in workbench's groups table. The take procedure, which every operator may
    run where the queue names a group, asks the same of the calling login before it reads the item, and
    refuses anyone else with the engine's words (TAKE_NOT_IN_GROUP, its number)."""
    body = flat(batches(_escalating_to("level 2"))["take"])
    found = _WHO.search(body)
    assert found is not None, body
    admitted, said, number = found[1], found[3], int(found[4])
    assert admitted.split(" OR ") == [
        "IS_ROLEMEMBER(N'workbench_supervisor', @login) = 1",
        "IS_ROLEMEMBER(N'level 2', @login) = 1",
        (
            "EXISTS (SELECT * FROM dbo.workbench_groups WHERE dbo.workbench_groups.user_name = @login "
            "AND dbo.workbench_groups.group_name = N'level 2')"
        ),
    ]
    assert number == backends.mssql.number_of(problems.TAKE_NOT_IN_GROUP)
    assert backends.mssql.REFUSALS[number].error is errors.NotPermitted
    # The template filled with the queue, the group and the calling login (said twice).
    assert said.split(", @login, ") == [
        "N'workbench: queue cases hands its escalated items to the group level 2 and to supervisors, and '",
        "N' is neither; a supervisor adds '",
        "N' with `workbench group add '",
        "N' level 2`'",
    ]
    assert body.index("IF NOT (") < body.index("BEGIN TRANSACTION;")  # before the item is read or locked
    # The groups table asked is the one the engine reads (and `workbench group add` writes).
    assert groups.groups_table("dbo").fullname == "dbo.workbench_groups"
    # A group's name is a text, quoted as one: no way out of the literal.
    quoted = flat(batches(_escalating_to("o'brien"))["take"])
    assert "IS_ROLEMEMBER(N'o''brien', @login) = 1" in quoted and "group_name = N'o''brien')" in quoted
    # Without escalate_to only supervisors run it, and the grant alone decides: no test inside.
    plain = batches()
    assert "IF NOT (" not in plain["take"] and "workbench_groups" not in plain["take"]
    assert "GRANT EXECUTE ON dbo.wb_cases_take TO workbench_supervisor;" in plain["grants"]


def test_who_may_run_a_procedure_is_read_from_the_tables_actor(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test inside and the grant follow the row's `who`, not the procedure's name: take declared a
    supervisor's has neither the operators' grant nor the test; reopen declared Actor.ESCALATED_TO gets both."""
    text = _escalating_to("level2")
    _declared(monkeypatch, "take", who=workflow.Actor.SUPERVISOR)
    _declared(monkeypatch, "reopen", who=workflow.Actor.ESCALATED_TO)
    monkeypatch.setattr(mssql_parts, "SUPERVISOR_ONLY", ("force_release", "reassign", "reopen", "take", "move"))
    script = batches(text)
    assert "GRANT EXECUTE ON dbo.wb_cases_take TO workbench_supervisor;" in script["grants"]
    assert "IF NOT (" not in script["take"]
    assert "GRANT EXECUTE ON dbo.wb_cases_reopen TO workbench_operator, level2;" in script["grants"]
    assert "IS_ROLEMEMBER(N'level2', @login) = 1" in flat(script["reopen"])
    assert "GRANT EXECUTE ON dbo.wb_cases_force_release TO workbench_supervisor;" in script["grants"]


def test_force_release_and_reassign_refuse_a_lock_taken_through_the_twin_queue() -> None:
    """Issue 47: where a twin serves the same rows (BoundQueue.rivals, as the service binds them), the
    supervisors' procedures hold a lock to this queue as the engine and the guarded writes do (one clause,
    lockrules.owned: the item's newest claim is this queue's), in their read and in their UPDATE, and
    refuse a lock held through the twin in the engine's words (TAKEN_ELSEWHERE, its number)."""
    script = {}
    for batch in _twin_script():
        match = re.match(r"CREATE OR ALTER PROCEDURE dbo\.wb_cases_(\w+)", batch)
        if match:
            script[match.group(1)] = flat(batch)
    newest = re.compile(r"\(SELECT TOP 1 dbo\.workbench_audit\.queue FROM .*? DESC\) = 'cases'")
    claimed = newest.search(script["save"])  # the guarded write's fence (the engine's)
    assert claimed is not None and "'cases2'" in claimed[0]
    for name in ("force_release", "reassign"):
        body = script[name]
        start = body.index("WITH (UPDLOCK, ROWLOCK) WHERE")
        read = body[start : body.index(";", start)]
        update = body[body.index("UPDATE cases SET") : body.index("SET @done = @@ROWCOUNT;")]
        for statement in (read, update):
            assert claimed[0] in statement, (name, statement)
        assert re.search(refused("@prev_owner IS NULL AND @taken <> N'cases'", problems.TAKEN_ELSEWHERE), body)
        assert body.index("DECLARE @taken") < body.index(throw(problems.NOT_LOCKED))
    # Without a twin, neither the clause nor the refusal.
    alone = batches()
    for name in ("force_release", "reassign"):
        assert "@taken" not in alone[name] and "workbench_audit.queue IN" not in alone[name]

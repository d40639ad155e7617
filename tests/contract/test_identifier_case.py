"""One config for every database: `tblQueue`, `LockUser` as written for SQL Server or MariaDB also
find the table PostgreSQL folded to `tblqueue`, `lockuser`, for every key that names a column; `attach`
uses those columns instead of adding a second pair; a name that matches two is refused."""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support
from workbench.core import errors
from workbench.db.supervision import Supervision

CONFIG = """
[database]
url = "{url}"

[queues.inbox]
table = "tblQueue"
key = "QueueID"
order = ["CreatedAt"]
lock = { user = "LockUser", time = "LockTime" }
todo = { Status = "new" }
outcomes.done.set = { Status = "done" }
"""


def _unquoted_table(env: support.Env, rows: int = 3) -> None:
    """The table as a script with unquoted names makes it: PostgreSQL folds every name to lower case."""
    md = sa.MetaData()
    table = sa.Table(
        "tblQueue",
        md,
        sa.Column("QueueID", sa.Integer, primary_key=True, autoincrement=False, quote=False),
        sa.Column("CreatedAt", sa.DateTime, nullable=False, quote=False),
        sa.Column("Subject", sa.String(100), quote=False),
        sa.Column("Status", sa.String(20), nullable=False, quote=False),
        sa.Column("LockUser", sa.String(128), quote=False),
        sa.Column("LockTime", sa.DateTime, quote=False),
        quote=False,
    )
    md.create_all(env.engine)
    start = dt.datetime(2026, 5, 1)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {"QueueID": i, "CreatedAt": start + dt.timedelta(minutes=i), "Subject": f"Message {i}", "Status": "new"}
                for i in range(1, rows + 1)
            ],
        )


def test_one_config_finds_the_table_and_columns_whatever_the_database_did_to_their_case(
    native_env: support.Env,
) -> None:
    env = native_env
    _unquoted_table(env)
    with env.engine.connect() as conn:
        names = sa.inspect(conn).get_table_names()
    if env.backend == "postgresql":
        assert "tblqueue" in names  # folded: the config's spelling is not the table's
    wb = env.open(env.load(CONFIG))
    wb.init()
    q = wb.queue("inbox")
    claim = q.claim_next("alice")[0]
    assert claim.lock.key == 1 and claim.lock.owner == "alice"
    q.save("alice", 1, claim.lock.token, {"Subject": "Message 1, read"})
    q.complete("alice", 1, claim.lock.token)
    with env.engine.connect() as conn:
        table = sa.Table(next(n for n in names if n.lower() == "tblqueue"), sa.MetaData(), autoload_with=conn)
        row = {k.lower(): v for k, v in conn.execute(sa.select(table).where(table.c[0] == 1)).mappings().one().items()}
    assert (row["subject"], row["status"], row["lockuser"]) == ("Message 1, read", "done", None)


def test_a_name_that_matches_two_tables_by_case_is_refused(native_env: support.Env) -> None:
    env = native_env
    if env.backend != "postgresql":
        pytest.skip("only PostgreSQL keeps two tables whose names differ only in case here")
    _unquoted_table(env)
    with env.engine.begin() as conn:
        conn.execute(sa.text('CREATE TABLE "TBLQUEUE" (id integer primary key)'))
    wb = env.open(env.load(CONFIG))
    wb.init()
    with pytest.raises(errors.ConfigError, match="differ from it only in case") as info:
        wb.queue("inbox")
    assert info.value.key == "queues.inbox.table"


# -- attach: the columns the table has in another case are the ones used (issue 41) -------------------

# The table of an old Access/SQL Server application, moved by a script with unquoted names:
# PostgreSQL folds them to lower case, SQLite and MariaDB keep them as written.
LEGACY_DDL = """CREATE TABLE tblQueue (ItemId INTEGER PRIMARY KEY, CustomerName VARCHAR(100), Phone VARCHAR(40),
  Notes VARCHAR(2000), Verified SMALLINT NOT NULL DEFAULT 0, LockUser VARCHAR(50) NULL,
  LockTime TIMESTAMP NULL)"""

# The config as the application's documents write the names.
LEGACY_CONFIG = """
[database]
url = "{url}"

[queues.tblqueue]
table = "tblQueue"
key = "ItemId"
order = ["ItemId"]
lock = { user = "LockUser", time = "LockTime" }
todo = { "Verified" = 0 }
outcomes.done.set = { "Verified" = 1 }
"""


def _upper_names(config: str) -> str:
    """The config with every quoted name in upper case (not the URL, not a value)."""
    return re.sub(r'"([A-Za-z_ ]+)"', lambda m: f'"{m[1].upper()}"', config)


def _names_in(index: sa.Index) -> list[str]:
    return [getattr(e, "element", e).name for e in index.expressions]


@pytest.mark.parametrize("spelling", ["as documented", "upper case"])
def test_the_old_applications_lock_columns_are_found_in_any_case_and_never_added_again(
    native_env: support.Env, spelling: str
) -> None:
    from workbench.db import attach

    env = native_env
    with env.engine.begin() as conn:
        conn.execute(sa.text(LEGACY_DDL))
        conn.execute(
            sa.text("INSERT INTO tblQueue (ItemId, CustomerName, Phone) VALUES (:i, :n, :p)"),
            [{"i": i, "n": f"Customer {i}", "p": f"0301234{i}"} for i in (1, 2, 3)],
        )
    # "upper case": the names differ in case on every database, not only where PostgreSQL folded them.
    config = env.load(LEGACY_CONFIG if spelling == "as documented" else _upper_names(LEGACY_CONFIG))
    wb = env.open(config)
    wb.init()
    wb.validate(attaching=True)
    with wb.engine.begin() as conn:
        before = [
            c["name"]
            for c in sa.inspect(conn).get_columns(
                next(n for n in sa.inspect(conn).get_table_names() if n.lower() == "tblqueue")
            )
        ]
        plan = attach.plan(conn, config.queues["tblqueue"], config.path)
        ddl = attach.render(conn, plan)
    assert plan.add_columns == [] and "ALTER TABLE" not in ddl.upper(), ddl
    lock = config.queues["tblqueue"].lock
    for key, configured in (("lock.user", lock.user), ("lock.time", lock.time)):
        real = next(n for n in before if n.lower() == configured.lower())
        if real != configured:  # attach says which column it uses
            assert any(f"'{real}'" in note and key in note for note in plan.notes), plan.notes
    for index in plan.indexes:  # the order column is the key: listed once
        names = [n.lower() for n in _names_in(index)]
        assert len(names) == len(set(names)), ddl
    with wb.engine.begin() as conn:
        attach.apply(conn, plan)
    with wb.engine.connect() as conn:
        table = next(n for n in sa.inspect(conn).get_table_names() if n.lower() == "tblqueue")
        assert [c["name"] for c in sa.inspect(conn).get_columns(table)] == before  # no second pair
    q = env.open(config).queue("tblqueue")
    claim = q.claim_next("alice")[0]
    assert claim.lock.key == 1
    with wb.engine.connect() as conn:  # what the old application reads: its own lock columns
        user, time = conn.execute(sa.text("SELECT LockUser, LockTime FROM tblQueue WHERE ItemId = 1")).one()
    assert user == "alice" and time is not None
    q.complete("alice", 1, claim.lock.token)
    with wb.engine.connect() as conn:
        row = conn.execute(sa.text("SELECT Verified, LockUser, LockTime FROM tblQueue WHERE ItemId = 1")).one()
    assert tuple(row) == (1, None, None)


# Every config key that names a column, each name between <> (written by _spelled in another case).
EVERY_KEY_CONFIG = """
[database]
url = "{url}"

[queues.work]
table = "<tblWork>"
key = "<ItemId>"
order = ["<ReceivedAt> desc", "<ItemId>"]
created = "<ReceivedAt>"
due = "<DueAt>"
summary = ["<CustomerName>", "<Phone>"]
read_only = ["<Phone>"]
audit_hidden = ["<Iban>"]
filter_by = ["<Category>"]
source = "<ScanText>"
lock = { user = "<LockUser>", time = "<LockTime>", expires = "<LockExpires>", token = "<LockToken>" }
scope = { "<Category>" = ["a", "b"] }
todo = { "<Status>" = "new" }
on_claim = { "<Status>" = "busy" }
on_release = { "<Status>" = "new" }
on_reopen = { "<Status>" = "new" }
release_reasons = { "needs level 2" = { "<Tier>" = 2 } }
fields."<Notes>" = { label = "Remarks" }

[queues.work.outcomes.done]
set = { "<Status>" = "done", "<DoneBy>" = { user = true } }

[queues.work.outcomes.checked]
set = { "<Status>" = "checked" }

[queues.work.review]
by = "work_review"
set = { "<Status>" = "to_review" }
outcomes = ["checked"]
send_back = "sent_back"

[queues.work_review]
table = "<tblWork>"
key = "<ItemId>"
lock = { user = "<LockUser>", time = "<LockTime>", expires = "<LockExpires>", token = "<LockToken>" }
todo = { "<Status>" = "to_review" }
outcomes.accepted.set = { "<Status>" = "done" }
outcomes.sent_back.set = { "<Status>" = "new" }
"""


def _spelled(config: str, spell: Any) -> str:
    return re.sub(r"<(\w+)>", lambda m: spell(m[1]), config)


def _work_table(env: support.Env, quoted: bool) -> dict[str, str]:
    """tblWork with every column a config key can name, created with its names quoted (kept as written
    everywhere) or unquoted (folded to lower case by PostgreSQL); {lower-case name: name in the database}."""
    md = sa.MetaData()
    columns = [
        sa.Column("ItemId", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("Category", sa.String(20), nullable=False),
        sa.Column("Status", sa.String(20), nullable=False),
        sa.Column("Tier", sa.Integer),
        sa.Column("CustomerName", sa.String(100)),
        sa.Column("Phone", sa.String(40)),
        sa.Column("Notes", sa.String(2000)),
        sa.Column("Iban", sa.String(40)),
        sa.Column("ReceivedAt", sa.DateTime, nullable=False),
        sa.Column("DueAt", sa.DateTime),
        sa.Column("ScanText", sa.String(2000)),
        sa.Column("DoneBy", sa.String(50)),
        sa.Column("LockUser", sa.String(128)),
        sa.Column("LockTime", sa.DateTime),
        sa.Column("LockExpires", sa.DateTime),
        sa.Column("LockToken", sa.String(32)),
    ]
    for column in columns:
        column.quote = quoted
    table = sa.Table("tblWork", md, *columns, quote=quoted)
    md.create_all(env.engine)
    start = dt.datetime(2026, 5, 1)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {
                    "ItemId": i,
                    "Category": "a",
                    "Status": "new",
                    "CustomerName": f"Customer {i}",
                    "Phone": f"030 {i}",
                    "ReceivedAt": start + dt.timedelta(minutes=i),
                    "DueAt": start + dt.timedelta(days=1),
                    "ScanText": f"Scanned letter {i}",
                }
                for i in (1, 2, 3)
            ],
        )
        inspector = sa.inspect(conn)
        name = next(n for n in inspector.get_table_names() if n.lower() == "tblwork")
        real = {c["name"].lower(): c["name"] for c in inspector.get_columns(name)}
    return {"tblwork": name, **real}


@pytest.mark.parametrize("ddl", ["unquoted", "quoted"])
def test_every_key_that_names_a_column_finds_it_in_another_case(native_env: support.Env, ddl: str) -> None:
    from workbench.db import attach
    from workbench.services import operator

    env = native_env
    real = _work_table(env, quoted=ddl == "quoted")
    # The config in another case than the database keeps: upper case for the folded table, lower for the quoted.
    config = env.load(_spelled(EVERY_KEY_CONFIG, str.upper if ddl == "unquoted" else str.lower))
    wb = env.open(config)
    wb.init()
    with wb.engine.begin() as conn:
        before = [c["name"] for c in sa.inspect(conn).get_columns(real["tblwork"])]
        for name in ("work", "work_review"):
            plan = attach.plan(conn, config.queues[name], config.path)
            ddl_text = attach.render(conn, plan)
            assert plan.add_columns == [] and "ALTER TABLE" not in ddl_text.upper(), ddl_text
            for index in plan.indexes:  # key and created are in `order` already: each listed once
                names = [n.lower() for n in _names_in(index)]
                assert len(names) == len(set(names)), ddl_text
            attach.apply(conn, plan)
        assert [c["name"] for c in sa.inspect(conn).get_columns(real["tblwork"])] == before

    q = wb.queue("work").q
    lock = {b.column.name for b in q.on_claim}
    assert (q.table.name, q.key.name, [c.name for c, _ in q.order]) == (
        real["tblwork"],
        real["itemid"],
        [real["receivedat"], real["itemid"]],
    )
    assert [c.name for c in (q.user, q.time, q.expires, q.token)] == [
        real["lockuser"],
        real["locktime"],
        real["lockexpires"],
        real["locktoken"],
    ]
    assert (q.created.name, q.due.name, q.source_column.name) == (real["receivedat"], real["dueat"], real["scantext"])
    assert [c.name for c in q.list_columns] == [real["customername"], real["phone"]]
    assert q.protected[real["phone"]] == "is read-only" and q.audit_hidden == {real["iban"]}
    assert [c.name for c in q.filter_columns.values()] == [real["category"]]
    assert [b.column.name for b in q.scope] == [real["category"]] and lock == {real["status"]}
    assert {b.column.name for group in (q.todo, q.on_release, q.on_reopen, q.review_writes) for b in group} == lock
    assert {b.column.name for b in q.outcomes["done"]} == {real["status"], real["doneby"]}
    assert [b.column.name for b in q.reason_writes["needs level 2"]] == [real["tier"]]
    assert q.specs[real["notes"]].label == "Remarks"

    # At run time too a name is found in any case: a filter, an edit; and the item's source is read.
    work = wb.queue("work")
    spell = str.upper if ddl == "unquoted" else str.lower
    with pytest.raises(errors.NothingToClaim):
        work.claim_next("alice", where={spell("Category"): "b"})
    claim = work.claim_next("alice", where={real["category"]: "a"})[0]
    assert claim.lock.key == 3  # ReceivedAt desc
    work.save("alice", 3, claim.lock.token, {spell("Notes"): "called back"})
    item = work.show(3).item
    source = operator.Operator(wb, "alice").source("work", item)
    assert (source.kind, source.text) == ("text", "Scanned letter 3")
    assert Supervision(work).board()[0].summary == {real["customername"]: "Customer 3", real["phone"]: "030 3"}
    work.release("alice", 3, claim.lock.token, reason="needs level 2")
    again = work.claim("alice", 3)
    work.complete("alice", 3, again.lock.token, "done")
    table = sa.Table(real["tblwork"], sa.MetaData(), autoload_with=wb.engine)
    with wb.engine.connect() as conn:
        row = conn.execute(sa.select(table).where(table.c[real["itemid"]] == 3)).mappings().one()
    assert (row[real["status"]], row[real["doneby"]], row[real["tier"]], row[real["notes"]]) == (
        "done",
        "alice",
        2,
        "called back",
    )
    assert row[real["lockuser"]] is None and [c.name for c in table.c] == before


def test_a_name_that_matches_two_columns_by_case_is_refused_naming_both(native_env: support.Env) -> None:
    from workbench.db import attach

    env = native_env
    if env.backend != "postgresql":
        pytest.skip("only PostgreSQL keeps two columns whose names differ only in case")
    _unquoted_table(env)  # lockuser, locktime
    with env.engine.begin() as conn:
        conn.execute(sa.text('ALTER TABLE tblqueue ADD COLUMN "LockUser" VARCHAR(128)'))
    text = CONFIG.replace('user = "LockUser"', 'user = "LOCKUSER"')
    wb = env.open(env.load(text))
    wb.init()
    with pytest.raises(errors.ConfigError, match="'LockUser' and 'lockuser'") as info:
        wb.queue("inbox")
    assert info.value.key == "queues.inbox.lock.user"
    config = env.load(text)
    with wb.engine.connect() as conn, pytest.raises(errors.ConfigError, match="'LockUser' and 'lockuser'"):
        attach.plan(conn, config.queues["inbox"], config.path)  # never a third column
    # Written exactly, the name is the column of that spelling.
    assert env.open(env.load(CONFIG)).queue("inbox").q.user.name == "LockUser"


def test_the_claim_id_column_is_found_in_another_case(native_env: support.Env) -> None:
    """lock.claim_id (shape 6), the one column key the table above cannot take beside a lock user."""
    from tests.contract import test_claim_id

    env = native_env
    test_claim_id._tables(env)  # export_rows with its claim-id column "Lock"
    config = env.load(test_claim_id.CONFIG.replace('claim_id = "Lock"', 'claim_id = "LOCK"'))
    wb = env.open(config)
    q = wb.queue("exports")
    assert [c.name for c in q.q.lock_columns] == ["Lock"]
    claim = q.claim_next("alice")[0]
    assert test_claim_id._row(env, "export_rows", claim.lock.key)["Lock"] == claim.lock.token
    q.complete("alice", claim.lock.key, claim.lock.token)
    assert test_claim_id._row(env, "export_rows", claim.lock.key)["Lock"] is None


def test_the_customers_index_on_the_key_serves_a_queue_ordered_by_the_key(native_env: support.Env) -> None:
    """`order = ["ItemId"]` and the key are one column: the claim index wanted is the customer's own."""
    from workbench.db import attach

    env = native_env
    with env.engine.begin() as conn:
        conn.execute(sa.text(LEGACY_DDL))
        conn.execute(
            sa.text(
                "CREATE INDEX tblqueue_head ON tblQueue (Verified, LockUser, ItemId)"
                if env.backend.startswith("mariadb")
                else "CREATE INDEX tblqueue_head ON tblQueue (ItemId) WHERE Verified = 0 AND LockUser IS NULL"
            )
        )
    config = env.load(LEGACY_CONFIG)
    with env.engine.connect() as conn:
        plan = attach.plan(conn, config.queues["tblqueue"], config.path)
    assert "wb_tblqueue_claim" not in [index.name for index in plan.indexes], attach.render(conn, plan)
    assert any("tblqueue_head already serves" in note for note in plan.notes), plan.notes


def _review_table_spelled(config: str, table: str) -> str:
    """The config with the reviewing queue's table written `table`."""
    head, review = config.split("[queues.work_review]")
    return head + "[queues.work_review]" + re.sub(r"(?m)^table = .*$", f'table = "{table}"', review)


def test_a_review_queue_may_write_the_table_in_another_case(native_env: support.Env) -> None:
    env = native_env
    real = _work_table(env, quoted=True)
    config = env.load(_review_table_spelled(_spelled(EVERY_KEY_CONFIG, str.upper), "tblwork"))
    wb = env.open(config)
    wb.init()
    review = wb.queue("work_review").q
    assert (review.table.name, review.key.name) == (real["tblwork"], real["itemid"])


def test_a_review_queue_over_another_table_that_differs_only_in_case_is_refused(native_env: support.Env) -> None:
    env = native_env
    if env.backend != "postgresql":
        pytest.skip("only PostgreSQL keeps two tables whose names differ only in case here")
    _work_table(env, quoted=True)
    with env.engine.begin() as conn:
        conn.execute(sa.text('CREATE TABLE tblwork (LIKE "tblWork" INCLUDING ALL)'))
    config = env.load(_review_table_spelled(_spelled(EVERY_KEY_CONFIG, str), "tblwork"))
    wb = env.open(config)
    wb.init()
    with pytest.raises(errors.ConfigError, match="works tblwork by ItemId; a review queue works the same") as info:
        wb.queue("work")
    assert info.value.key == "queues.work.review.by"

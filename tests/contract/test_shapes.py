"""The table shapes customers bring: legacy lock columns, status-driven messages, numeric moderation."""

from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import pytest
import sqlalchemy as sa
from sqlalchemy.dialects import mysql

from tests import support
from workbench.core import errors
from workbench.db import attach
from workbench.db.supervision import Supervision

# -- shape 2: a legacy table with only a lock-user and a lock-time column and a processed flag ----

LEGACY_CONFIG = support.sample_config("legacy-orders")


def _legacy(env: support.Env, rows: int = 6, lock_time: Any = None) -> Any:
    md = sa.MetaData()
    table = sa.Table(
        "legacy_orders",
        md,
        sa.Column("order_no", sa.String(20), primary_key=True),
        sa.Column("customer", sa.String(100), nullable=False),
        sa.Column("amount", sa.Numeric(10, 2)),
        sa.Column("note", sa.String(200)),
        sa.Column("processed", sa.Integer, nullable=False),
        sa.Column("lock_user", sa.String(50)),
        # A plain DATETIME: whole seconds on MySQL/MariaDB, as legacy tables usually have.
        sa.Column("lock_time", lock_time if lock_time is not None else sa.DateTime),
    )
    md.create_all(env.engine)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {"order_no": f"SO-{i:05d}", "customer": f"Customer {i}", "amount": i * 10, "processed": 0}
                for i in range(1, rows + 1)
            ],
        )
        # An order a legacy program holds right now; workbench must respect it.
        conn.execute(
            sa.update(table)
            .where(table.c.order_no == "SO-00002")
            .values(lock_user="legacyapp", lock_time=sa.func.current_timestamp())
        )
    wb = env.open(env.load(LEGACY_CONFIG))
    wb.init()
    return wb


def test_legacy_claim_fences_complete_on_lock_time(env: support.Env) -> None:
    wb = _legacy(env)
    q = wb.queue("orders")
    a = q.claim_next("alice")[0]
    assert a.lock.token.startswith("@")
    assert a.lock.expires_at - a.lock.locked_at == dt.timedelta(minutes=20)
    b = q.claim_next("bob")[0]
    if env.method == "native":
        assert (a.lock.key, b.lock.key) == ("SO-00001", "SO-00003")
    # SO-00002 is held by the legacy program: never handed out.
    rest = {c.lock.key for c in q.claim_next("carol", 10)}
    assert "SO-00002" not in rest | {a.lock.key, b.lock.key} and len(rest) == 3
    with pytest.raises(errors.LockLost):
        q.complete("bob", a.lock.key, a.lock.token)  # right token, wrong user
    with pytest.raises(errors.LockLost):
        q.complete("alice", a.lock.key, "@2001-01-01T00:00:00+00:00")
    q.save("alice", a.lock.key, a.lock.token, {"note": "checked"})
    done = q.complete("alice", a.lock.key, a.lock.token)
    row = env.row(wb, "orders", a.lock.key)
    assert done.outcome == "done" and row["processed"] == 1 and row["lock_user"] is None
    assert row["note"] == "checked"
    held = q.mine("carol")[0]
    q.release("carol", held.key, held.token)
    assert a.lock.key not in {c.lock.key for c in q.claim_next("dave", 10)}


_PRINTED_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:[+-]\d{2}:\d{2}| UTC)?")


def test_legacy_tokens_cannot_be_rebuilt_from_what_workbench_prints(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    """A token of a table without a token column is the lock time at full precision; whatever
    `locks`, `show`, `board` and `history` print (text, --json, CSV), a token built from it is refused."""
    env = native_env
    wb = _legacy(env, lock_time=sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"))
    config = env.write_config(LEGACY_CONFIG)
    q = wb.queue("orders")
    for _ in range(5):  # a lock time that happens to fall on a whole second cannot show the point
        code, claim, _ = support.run_cli(capsys, "--config", config, "--user", "alice", "--json", "next", "orders")
        assert code == 0, claim
        key, token = claim["key"], claim["token"]
        stored = env.row(wb, "orders", key)["lock_time"]
        stored = dt.datetime.fromisoformat(stored) if isinstance(stored, str) else stored
        if stored.microsecond:
            break
        q.release("alice", key, token)
    assert stored.microsecond, "the lock time is kept below the second"
    printed = []
    for args in (
        ["locks", "orders"],
        ["show", "orders", key],
        ["board", "orders"],
        ["board", "orders", "--csv"],
        ["history", "orders", key],
        ["health", "orders"],
    ):
        for form in ([], ["--json"]) if "--csv" not in args else ([],):
            code, out, err = support.run_cli(capsys, "--config", config, "--user", "bob", *form, *args)
            assert code == 0, (args, err)
            printed.append(out if isinstance(out, str) else json.dumps(out))
    text = "\n".join(printed)
    times = _PRINTED_TIME.findall(text)
    assert times, text
    fractions = [t for t in times if "." in t]
    assert not fractions, f"printed times carry the lock time's fraction of a second: {fractions}"
    assert token.split("T")[-1][:8] in text  # the second itself is shown; the fence lies below it
    candidates = set()
    for found in times:
        when = dt.datetime.fromisoformat(found.replace(" UTC", "+00:00"))
        when = when.replace(tzinfo=dt.UTC) if when.tzinfo is None else when
        candidates.add("@" + when.isoformat())
    assert token not in candidates
    for forged in sorted(candidates):
        for user in ("alice", "bob"):  # alice's name, as another user can claim it with --user
            code, out, _ = support.run_cli(
                capsys, "--config", config, "--user", user, "complete", "orders", key, "--token", forged
            )
            assert code == 4, (forged, out)
    # The user is part of the fence: alice's real token is refused for anyone else.
    for write in (
        lambda: q.save("bob", key, token, {"note": "not mine"}),
        lambda: q.extend("bob", key, token),
        lambda: q.release("bob", key, token),
        lambda: q.complete("bob", key, token),
    ):
        with pytest.raises(errors.LockLost):
            write()
    assert env.row(wb, "orders", key)["lock_user"] == "alice"
    code, done, _ = support.run_cli(
        capsys, "--config", config, "--user", "alice", "--json", "complete", "orders", key, "--token", token
    )
    processed = env.row(wb, "orders", key)["processed"]
    assert code == 0 and done["outcome"] == "done" and processed == 1, (done, token, stored)


def test_a_refused_complete_does_not_give_away_the_new_holders_lock_time(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    """After a reassignment the old holder's error names when it happened: the new lock's time
    (to the microsecond on PostgreSQL), which must not be printed finer than the second."""
    env = native_env
    wb = _legacy(env, lock_time=sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb"))
    config = env.write_config(LEGACY_CONFIG)
    q = wb.queue("orders")
    alice = q.claim_next("alice")[0].lock
    Supervision(q).reassign("sue", alice.key, "bob", "alice is out")
    bob = q.mine("bob")[0]
    code, out, _ = support.run_cli(
        capsys, "--config", config, "--user", "alice", "--json", "complete", "orders", alice.key, "--token", alice.token
    )
    assert code == 4 and out["error"]["cause"] == "reassigned"
    assert "." not in out["error"]["at"] and "@" + out["error"]["at"] != bob.token
    code, out, _ = support.run_cli(
        capsys, "--config", config, "--user", "bob", "--json", "history", "orders", alice.key
    )
    assert code == 0 and all("." not in event["at"] for event in out)
    q.complete("bob", bob.key, bob.token)


def test_attach_says_when_a_legacy_fence_keeps_whole_seconds(native_env: support.Env) -> None:
    env = native_env
    wb = _legacy(env)  # a plain DATETIME: whole seconds on MySQL/MariaDB
    config = env.load(LEGACY_CONFIG)
    with wb.engine.begin() as conn:
        notes = attach.plan(conn, config.queues["orders"], config.path).notes
    guessable = [n for n in notes if "can be guessed" in n]
    assert bool(guessable) == env.backend.startswith("mariadb"), notes
    assert all("lock_time" in n and "DATETIME(6)" in n for n in guessable)


def test_legacy_stale_token_after_expiry(env: support.Env) -> None:
    wb = _legacy(env)
    q = wb.queue("orders")
    a = q.claim_next("alice")[0]
    env.age_lock(wb, "orders", a.lock.key, 21 * 60)
    b = q.claim("bob", a.lock.key)
    assert b.lock.owner == "bob"
    with pytest.raises(errors.LockLost) as info:
        q.complete("alice", a.lock.key, a.lock.token)
    assert info.value.cause in ("expired", "not_held") and info.value.holder == "bob"
    q.complete("bob", b.lock.key, b.lock.token)


def test_legacy_extend_moves_lock_time_and_token(env: support.Env) -> None:
    wb = _legacy(env)
    q = wb.queue("orders")
    a = q.claim_next("alice")[0]
    env.age_lock(wb, "orders", a.lock.key, 10 * 60)
    aged = q.mine("alice")[0]
    assert aged.remaining < dt.timedelta(minutes=11)
    extended = q.extend("alice", a.lock.key, aged.token)
    assert extended.token != aged.token  # the lock time is the fence, and it moved
    assert extended.remaining > dt.timedelta(minutes=19)
    with pytest.raises(errors.LockLost):
        q.save("alice", a.lock.key, aged.token, {"note": "old token"})
    # The cap counts from the claim recorded in the audit trail: pretend it was 50 minutes ago,
    # so claim + 1 h leaves only a little more time than the lock has now.
    env.age_lock(wb, "orders", a.lock.key, 15 * 60)
    current = q.mine("alice")[0]  # aging the lock time changed the token, as an extension does
    env.age_audit(wb, "orders", a.lock.key, 50 * 60)
    capped = q.extend("alice", a.lock.key, current.token)
    claim_at = q.history(a.lock.key)[0].at
    assert abs((capped.expires_at - (claim_at + dt.timedelta(hours=1))).total_seconds()) < 1.5
    assert capped.expires_at > current.expires_at
    with pytest.raises(errors.ExtendLimitReached):
        q.extend("alice", a.lock.key, capped.token)
    q.complete("alice", a.lock.key, capped.token)


def test_legacy_boolean_flag(native_env: support.Env) -> None:
    env = native_env
    md = sa.MetaData()
    sa.Table(
        "flags",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("done", sa.Boolean, nullable=False),
        sa.Column("lock_user", sa.String(50)),
        sa.Column("lock_time", sa.DateTime),
    ).create(env.engine)
    with env.engine.begin() as conn:
        conn.execute(sa.text("INSERT INTO flags (id, done) VALUES (1, :f), (2, :f)"), {"f": False})
    config = (
        LEGACY_CONFIG.replace('"legacy_orders"', '"flags"')
        .replace('"order_no"', '"id"')
        .replace("processed = 0", "done = false")
        .replace("processed = 1", "done = true")
    )
    wb = env.open(env.load(config))
    wb.init()
    q = wb.queue("orders")
    c = q.claim_next("alice")[0]
    q.complete("alice", c.lock.key, c.lock.token)
    assert [x.lock.key for x in q.claim_next("alice", 5)] == [2]


# -- shape 3: a status-driven message table (New / Active / Completed / Error, with a type) -------

MESSAGES_CONFIG = support.sample_config("messages")


def _messages(env: support.Env) -> Any:
    md = sa.MetaData()
    table = sa.Table(
        "messages",
        md,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("msg_type", sa.String(20), nullable=False),
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("payload", sa.Text),
        sa.Column("error_text", sa.String(500)),
        sa.Column("received_at", sa.DateTime, nullable=False),
        sa.Column("handled_by", sa.String(50)),
        sa.Column("handled_at", sa.DateTime),
        sa.Column("locked_by", sa.String(50)),
        sa.Column("locked_at", sa.DateTime().with_variant(sa.dialects.mysql.DATETIME(fsp=6), "mysql", "mariadb")),
        sa.Column("lock_token", sa.String(32)),
    )
    md.create_all(env.engine)
    start = dt.datetime(2026, 11, 20, 8, 0)
    rows = [
        {
            "id": i,
            "msg_type": "Invoice" if i % 3 else "Order",
            "status": "New",
            "payload": f'{{"invoice": {1000 + i}}}',
            "received_at": start + dt.timedelta(minutes=i),
        }
        for i in range(1, 10)
    ]
    rows[0]["status"] = "Completed"
    with env.engine.begin() as conn:
        conn.execute(sa.insert(table), rows)
    wb = env.open(env.load(MESSAGES_CONFIG))
    wb.init()
    return wb


def test_messages_claim_sets_active_and_outcomes_set_final_status(env: support.Env) -> None:
    wb = _messages(env)
    q = wb.queue("invoices")
    first = q.claim_next("alice")[0]
    assert first.item["status"] == "Active"
    second = q.claim_next("bob")[0]
    if env.method == "native":
        assert (first.lock.key, second.lock.key) == (2, 4)  # 1 is completed, 3 is an Order
    q.complete("alice", first.lock.key, first.lock.token, "error", {"error_text": "unknown vendor"})
    q.complete("bob", second.lock.key, second.lock.token)
    a, b = env.row(wb, "invoices", first.lock.key), env.row(wb, "invoices", second.lock.key)
    assert (a["status"], a["error_text"], a["handled_by"]) == ("Error", "unknown vendor", "alice")
    assert (b["status"], b["handled_by"]) == ("Completed", "bob") and b["handled_at"] is not None
    assert a["locked_by"] is None and b["lock_token"] is None


def test_messages_queue_limited_to_one_type(env: support.Env) -> None:
    wb = _messages(env)
    invoices = {c.lock.key for c in wb.queue("invoices").claim_next("alice", 20)}
    orders = {c.lock.key for c in wb.queue("orders").claim_next("bob", 20)}
    assert invoices == {2, 4, 5, 7, 8} and orders == {3, 6, 9}
    assert {lock.key for lock in wb.queue("orders").locks()} == orders


def test_messages_expired_active_row_is_served_again(env: support.Env) -> None:
    wb = _messages(env)
    q = wb.queue("invoices")
    lost = q.claim_next("alice")[0]
    env.age_lock(wb, "invoices", lost.lock.key, 6 * 60)
    # The row is still "Active" (not New), but its lock expired: the claim serves it, first.
    again = q.claim_next("bob")[0]
    assert again.lock.key == lost.lock.key and again.item["status"] == "Active"
    with pytest.raises(errors.LockLost) as info:
        q.complete("alice", lost.lock.key, lost.lock.token)
    assert info.value.holder == "bob"
    assert [e.kind.value for e in q.history(lost.lock.key)] == ["claim", "expire", "claim"]


def test_messages_release_and_sweep_set_status_back_to_new(env: support.Env) -> None:
    wb = _messages(env)
    q = wb.queue("invoices")
    a, b = q.claim_next("alice", 2)
    q.release("alice", a.lock.key, a.lock.token, "wrong queue?")
    assert env.row(wb, "invoices", a.lock.key)["status"] == "New"
    env.age_lock(wb, "invoices", b.lock.key, 3600)
    assert [lock.key for lock in Supervision(q).sweep("cron")] == [b.lock.key]
    row = env.row(wb, "invoices", b.lock.key)
    assert row["status"] == "New" and row["locked_by"] is None


# -- shape 4: a moderation table with a numeric status, completed two ways -------------------------

MODERATION_CONFIG = support.sample_config("moderation")


def _moderation(env: support.Env) -> Any:
    from workbench.demo import schema

    md = sa.MetaData()
    table = sa.Table(
        "posts",
        md,
        sa.Column(
            "post_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), primary_key=True, autoincrement=False
        ),
        sa.Column("author", sa.String(60), nullable=False),
        sa.Column("body", sa.Text, nullable=False),
        sa.Column("reported_count", sa.Integer, nullable=False),
        sa.Column("moderation_status", sa.SmallInteger, nullable=False),
        sa.Column("moderated_by", sa.String(60)),
        sa.Column("moderated_at", sa.DateTime),
        sa.Column("mod_note", sa.String(300)),
        *schema.lock_columns(),
    )
    md.create_all(env.engine)
    reports = [0, 5, 2, 5, 9, 1]
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(table),
            [
                {"post_id": 100 + i, "author": f"user{i}", "body": "text", "reported_count": n, "moderation_status": 0}
                for i, n in enumerate(reports)
            ],
        )
    wb = env.open(env.load(MODERATION_CONFIG))
    wb.init()
    return wb


def test_moderation_order_and_two_outcomes(env: support.Env) -> None:
    wb = _moderation(env)
    q = wb.queue("moderation")
    claims = q.claim_next("mod", 3)
    if env.method == "native":
        assert [c.lock.key for c in claims] == [104, 101, 103]  # most reported first, ties by id
    approve, reject = claims[0], claims[1]
    q.complete("mod", approve.lock.key, approve.lock.token, "approve")
    q.complete("mod", reject.lock.key, reject.lock.token, "reject", {"mod_note": "spam"})
    assert env.row(wb, "moderation", approve.lock.key)["moderation_status"] == 1
    rejected = env.row(wb, "moderation", reject.lock.key)
    assert rejected["moderation_status"] == 2 and rejected["mod_note"] == "spam"
    assert rejected["moderated_by"] == "mod"
    assert q.show(approve.lock.key).state == "done:approve"
    assert q.show(reject.lock.key).state == "done:reject"
    with pytest.raises(errors.InvalidValue, match=r"mod_note: at most 300 characters \(301 given\)"):
        q.save("mod", claims[2].lock.key, claims[2].lock.token, {"mod_note": "x" * 301})

"""The local draft journal: exact value round trips, file handling, damage and crash safety."""

from __future__ import annotations

import datetime as dt
import enum
import json
import math
import os
import random
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import zoneinfo
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.sql.elements import quoted_name

from workbench import journal
from workbench.journal import Draft, Journal

REPO = Path(__file__).resolve().parent.parent
DB = "postgresql://alice@db.example/crm"
OTHER_DB = "sqlite:////srv/other.sqlite"
QUEUE = "customers"
BERLIN = zoneinfo.ZoneInfo("Europe/Berlin")


def make_draft(
    key: Any = 1,
    *,
    database: str = DB,
    queue: str = QUEUE,
    owner: str = "alice",
    token: str | None = "tok-1",
    values: dict[str, Any] | None = None,
    base: dict[str, Any] | None = None,
    updated_at: str = "2024-05-01T10:00:00+00:00",
) -> Draft:
    return Draft(
        database=database,
        queue=queue,
        key=key,
        owner=owner,
        token=token,
        values={"name": "Ada"} if values is None else values,
        base={"name": "Ad"} if base is None else base,
        updated_at=updated_at,
    )


def files(directory: Path, pattern: str = "*") -> list[Path]:
    return sorted(directory.glob(pattern))


def assert_identical(got: Any, expected: Any) -> None:
    """Same type and same value, down to what == ignores (exponent, tzinfo, fold, sign of zero)."""
    assert type(got) is type(expected), (got, expected)
    if isinstance(expected, float):
        if math.isnan(expected):
            assert math.isnan(got)
        else:
            assert got == expected and math.copysign(1, got) == math.copysign(1, expected), (got, expected)
    elif isinstance(expected, Decimal):
        assert got.as_tuple() == expected.as_tuple(), (got, expected)
    elif isinstance(expected, (dt.datetime, dt.time)):
        assert got.replace(tzinfo=None) == expected.replace(tzinfo=None), (got, expected)  # wall time
        assert got.fold == expected.fold, (got, expected)
        assert type(got.tzinfo) is type(expected.tzinfo), (got.tzinfo, expected.tzinfo)
        if isinstance(expected.tzinfo, zoneinfo.ZoneInfo):
            assert got.tzinfo.key == expected.tzinfo.key
        else:
            assert got.tzinfo == expected.tzinfo
        if isinstance(expected, dt.datetime):
            assert got.utcoffset() == expected.utcoffset()
            assert got == expected
    else:
        assert got == expected, (got, expected)


VALUES = {
    "str": "plain",
    "empty str": "",
    "unicode": 'Zoë – 日本語 🙂 \u0000 \n\t"quoted"',
    "lone surrogate": "a\ud800b\udfff",
    "looks like a tag": '{"$decimal": "1"}',
    "int": 42,
    "zero": 0,
    "negative int": -7,
    "big int": 10**40,
    "true": True,
    "false": False,
    "float": 0.1,
    "float int-like": 3.0,
    "negative zero": -0.0,
    "tiny float": 5e-324,
    "infinity": float("inf"),
    "nan": float("nan"),
    "none": None,
    "decimal exponent": Decimal("12.30"),
    "decimal zero scale": Decimal("0.000"),
    "decimal negative zero": Decimal("-0"),
    "decimal E": Decimal("1E+2"),
    "decimal nan": Decimal("NaN"),
    "date": dt.date(2024, 2, 29),
    "early date": dt.date(1, 1, 1),
    "naive datetime": dt.datetime(2024, 3, 31, 2, 30, 15, 123456),
    "naive datetime fold": dt.datetime(2024, 10, 27, 2, 30, fold=1),
    "utc datetime": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC),
    "offset datetime": dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone(dt.timedelta(hours=5, minutes=30))),
    "zoneinfo summer": dt.datetime(2024, 7, 1, 12, 0, tzinfo=BERLIN),
    "zoneinfo winter": dt.datetime(2024, 1, 1, 12, 0, tzinfo=BERLIN),
    "zoneinfo ambiguous fold 0": dt.datetime(2024, 10, 27, 2, 30, tzinfo=BERLIN, fold=0),
    "zoneinfo ambiguous fold 1": dt.datetime(2024, 10, 27, 2, 30, tzinfo=BERLIN, fold=1),
    "zoneinfo other zone": dt.datetime(2024, 3, 10, 1, 59, 59, tzinfo=zoneinfo.ZoneInfo("America/New_York")),
    "zoneinfo UTC": dt.datetime(2024, 3, 10, 1, 59, 59, tzinfo=zoneinfo.ZoneInfo("UTC")),
    "time": dt.time(13, 45),
    "time micro": dt.time(0, 0, 0, 1),
    "time fold": dt.time(2, 30, fold=1),
    "time offset": dt.time(8, 15, tzinfo=dt.timezone(dt.timedelta(hours=-3))),
}


@pytest.mark.parametrize("value", list(VALUES.values()), ids=list(VALUES))
def test_every_supported_value_round_trips_exactly(tmp_path: Path, value: Any) -> None:
    Journal(tmp_path / "j").save(make_draft(values={"v": value}, base={"b": value}))
    draft = Journal(tmp_path / "j").load(DB, QUEUE, 1)  # a fresh journal: read from disk
    assert draft is not None
    assert list(draft.values) == ["v"] and list(draft.base) == ["b"]
    assert_identical(draft.values["v"], value)
    assert_identical(draft.base["b"], value)


def test_whole_draft_round_trips(tmp_path: Path) -> None:
    values = {f"col {name} ✓": value for name, value in VALUES.items() if "nan" not in name}  # NaN != NaN
    base = {"only in base": Decimal("1.10"), "col str ✓": "before"}
    draft = make_draft(
        key="KEY/../ä",
        owner="bøb\ud800",
        token=None,
        values=values,
        base=base,
        updated_at="2024-05-01T12:00:00.123456+02:00",
    )
    Journal(tmp_path).save(draft)
    loaded = Journal(tmp_path).load(DB, QUEUE, "KEY/../ä")
    assert loaded == draft
    assert list(loaded.values) == list(values)  # column order kept
    for name, value in values.items():
        assert_identical(loaded.values[name], value)
    assert_identical(loaded.base["only in base"], Decimal("1.10"))
    assert loaded.token is None and loaded.owner == "bøb\ud800"
    assert [p.parent for p in files(tmp_path)] == [tmp_path]  # the key cannot escape the directory


def test_zone_name_survives_even_where_offset_alone_would_do(tmp_path: Path) -> None:
    value = dt.datetime(2024, 10, 27, 2, 30, tzinfo=BERLIN, fold=1)
    j = Journal(tmp_path)
    j.save(make_draft(values={"at": value}))
    got = Journal(tmp_path).load(DB, QUEUE, 1).values["at"]
    assert got.tzinfo is BERLIN  # ZoneInfo instances are cached per key
    assert got.fold == 1 and got.utcoffset() == dt.timedelta(hours=1)
    # DST rules come back with the zone: a day later the offset is the zone's, not a fixed one
    assert (got + dt.timedelta(days=200)).utcoffset() == dt.timedelta(hours=2)


def test_unknown_zone_in_file_reads_as_same_instant(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    value = dt.datetime(2024, 7, 1, 12, 0, tzinfo=BERLIN)
    for zone in ("Nowhere/Atlantis", "Europe", "a" * 300, "../etc/passwd"):  # "Europe" is a directory
        j.save(make_draft(values={"at": value}))
        (path,) = files(tmp_path, "*.json")
        document = json.loads(path.read_text())
        document["values"]["at"]["zone"] = zone
        path.write_text(json.dumps(document))
        got = j.load(DB, QUEUE, 1).values["at"]
        assert got == value and got.utcoffset() == dt.timedelta(hours=2), zone
        assert got.tzinfo == dt.timezone(dt.timedelta(hours=2)), zone
    assert files(tmp_path, "*.corrupt") == []


def test_keys_of_different_types_are_different_drafts(tmp_path: Path) -> None:
    keys = [1, "1", True, 1.0, Decimal(1), Decimal("1.0"), dt.date(2001, 1, 1), "2001-01-01", 0, False, ""]
    j = Journal(tmp_path)
    for index, key in enumerate(keys):
        j.save(make_draft(key, values={"index": index}))
    assert len(files(tmp_path, "*.json")) == len(keys)
    fresh = Journal(tmp_path)
    for index, key in enumerate(keys):
        draft = fresh.load(DB, QUEUE, key)
        assert draft is not None and draft.values == {"index": index}, key
        assert_identical(draft.key, key)
    fresh.discard(DB, QUEUE, 1)
    assert fresh.load(DB, QUEUE, 1) is None
    assert fresh.load(DB, QUEUE, "1").values == {"index": 1}
    assert fresh.load(DB, QUEUE, True).values == {"index": 2}
    assert len(fresh.drafts()) == len(keys) - 1


def test_nan_key_can_be_loaded(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(float("nan")))
    draft = j.load(DB, QUEUE, float("nan"))
    assert draft is not None and math.isnan(draft.key)


def test_str_subclasses_are_accepted_and_come_back_as_str(tmp_path: Path) -> None:
    class Shouty(str):
        def __str__(self) -> str:
            return self.upper() + "!"

    column = quoted_name("CustomerName", quote=True)
    j = Journal(tmp_path)
    j.save(
        make_draft(
            quoted_name("K1", quote=None),
            values={column: quoted_name("Ada", quote=True), Shouty("note"): Shouty("quiet")},
            base={column: "Ad"},
        )
    )
    draft = Journal(tmp_path).load(DB, QUEUE, "K1")
    assert draft is not None
    assert type(draft.key) is str and draft.key == "K1"
    assert draft.values == {"CustomerName": "Ada", "note": "quiet"}  # the text, not its __str__
    for name, value in draft.values.items():
        assert type(name) is str and type(value) is str
    assert [type(name) for name in draft.base] == [str]
    assert j.load(DB, QUEUE, quoted_name("K1", quote=True)) == draft  # same draft by either spelling


class Colour(enum.IntEnum):
    RED = 1


class MyDecimal(Decimal):
    pass


class MyDatetime(dt.datetime):
    pass


UNSUPPORTED_VALUES = {
    "object": object(),
    "bytes": b"abc",
    "bytearray": bytearray(b"abc"),
    "list": [1, 2],
    "tuple": (1,),
    "dict": {"$decimal": "1"},
    "set": {1},
    "complex": 1j,
    "IntEnum": Colour.RED,
    "Decimal subclass": MyDecimal("1.5"),
    "datetime subclass": MyDatetime(2024, 1, 1),
    "timedelta": dt.timedelta(days=1),
    "time in a named zone": dt.time(12, 0, tzinfo=BERLIN),
}


@pytest.mark.parametrize(
    ("where", "value"),
    [
        pytest.param(where, value, id=f"{where}-{name}")
        for where in ("values", "base", "key")
        for name, value in UNSUPPORTED_VALUES.items()
    ],
)
def test_unsupported_value_raises_and_keeps_previous_draft(tmp_path: Path, value: Any, where: str) -> None:
    j = Journal(tmp_path)
    good = make_draft("k", values={"a": Decimal("1.0")})
    j.save(good)
    before = {p.name: p.read_bytes() for p in files(tmp_path)}
    bad = {
        "values": make_draft("k", values={"a": Decimal("2.0"), "bad": value}),
        "base": make_draft("k", values={"a": Decimal("2.0")}, base={"bad": value}),
        "key": make_draft(value),
    }[where]
    with pytest.raises(TypeError):
        j.save(bad)
    assert {p.name: p.read_bytes() for p in files(tmp_path)} == before  # nothing written, no temp left
    assert Journal(tmp_path).load(DB, QUEUE, "k") == good


@pytest.mark.parametrize(
    "change",
    [
        {"values": {1: "one"}},
        {"base": {None: "x"}},
        {"values": [("a", 1)]},
        {"key": None},
        {"database": None},
        {"queue": quoted_name("q", True)},
        {"owner": 5},
        {"token": b"tok"},
        {"updated_at": dt.datetime(2024, 1, 1)},
    ],
    ids=lambda change: next(iter(change)),
)
def test_malformed_draft_raises_type_error(tmp_path: Path, change: dict[str, Any]) -> None:
    j = Journal(tmp_path)
    j.save(make_draft())
    before = {p.name: p.read_bytes() for p in files(tmp_path)}
    fields: dict[str, Any] = {
        "database": DB,
        "queue": QUEUE,
        "key": 1,
        "owner": "bob",
        "token": "t",
        "values": {"x": 2},
        "base": {},
        "updated_at": "2024-06-01T00:00:00+00:00",
    }
    fields.update(change)
    with pytest.raises(TypeError):
        j.save(Draft(**fields))
    assert {p.name: p.read_bytes() for p in files(tmp_path)} == before
    assert j.load(DB, QUEUE, 1) == make_draft()


def test_save_replaces_the_previous_draft(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(values={"a": 1, "b": 2}, token="t1"))
    j.save(make_draft(values={"a": 3}, token=None, owner="bob", updated_at="2024-05-02T00:00:00+00:00"))
    draft = Journal(tmp_path).load(DB, QUEUE, 1)
    assert draft == make_draft(values={"a": 3}, token=None, owner="bob", updated_at="2024-05-02T00:00:00+00:00")
    assert len(files(tmp_path)) == 1  # one file per item, no temp files left behind
    assert len(j.drafts()) == 1


def test_discard(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(1))
    j.save(make_draft(2))
    j.discard(DB, QUEUE, 1)
    assert j.load(DB, QUEUE, 1) is None
    assert j.load(DB, QUEUE, 2) == make_draft(2)
    j.discard(DB, QUEUE, 1)  # absent: no error
    j.discard(DB, "other queue", 2)  # absent in that queue: no error, and the other is kept
    j.discard(OTHER_DB, QUEUE, 2)
    assert j.load(DB, QUEUE, 2) == make_draft(2)
    assert [d.key for d in j.drafts()] == [2]
    j.discard(DB, QUEUE, 2)
    assert j.drafts() == [] and files(tmp_path) == []


def test_drafts_filters_and_is_newest_first(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    specs = [  # key, database, queue, owner, updated_at
        ("a", DB, "q1", "alice", "2024-05-01T10:00:00+00:00"),
        ("b", DB, "q1", "bob", "2024-05-01T11:30:00+02:00"),  # 09:30 UTC: older than "a"
        ("c", DB, "q2", "alice", "2024-05-01T10:00:01Z"),
        ("d", OTHER_DB, "q1", "alice", "2024-05-01T09:59:59.999999+00:00"),
        ("e", DB, "q1", "alice", "2024-04-30T23:00:00-12:00"),  # 11:00 UTC next day: newest
        ("f", DB, "q1", "alice", "2024-05-01T10:00:00.5"),  # naive: read as UTC
    ]
    for key, database, queue, owner, updated_at in reversed(specs):
        j.save(make_draft(key, database=database, queue=queue, owner=owner, updated_at=updated_at))

    def keys(**filters: Any) -> list[str]:
        return [d.key for d in Journal(tmp_path).drafts(**filters)]

    assert keys() == ["e", "c", "f", "a", "d", "b"]
    assert keys(database=DB) == ["e", "c", "f", "a", "b"]
    assert keys(database=OTHER_DB) == ["d"]
    assert keys(database=DB, queue="q1") == ["e", "f", "a", "b"]
    assert keys(queue="q1") == ["e", "f", "a", "d", "b"]
    assert keys(owner="bob") == ["b"]
    assert keys(database=DB, queue="q1", owner="alice") == ["e", "f", "a"]
    assert keys(database=DB, queue="q2", owner="bob") == []
    assert keys(database="nope") == []
    assert all(isinstance(d, Draft) for d in j.drafts())


def test_two_databases_never_mix(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(7, database=DB, values={"from": "first"}))
    j.save(make_draft(7, database=OTHER_DB, values={"from": "second"}))
    assert j.load(DB, QUEUE, 7).values == {"from": "first"}
    assert j.load(OTHER_DB, QUEUE, 7).values == {"from": "second"}
    assert j.load(DB + "/", QUEUE, 7) is None
    assert [d.values for d in j.drafts(database=DB)] == [{"from": "first"}]
    j.discard(DB, QUEUE, 7)
    assert j.load(DB, QUEUE, 7) is None
    assert j.load(OTHER_DB, QUEUE, 7).values == {"from": "second"}


def test_a_file_copied_under_another_name_is_never_mixed_in(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(1, database=DB))
    j.save(make_draft(1, database=OTHER_DB))
    by_db = {json.loads(p.read_text())["database"]: p for p in files(tmp_path, "*.json")}
    by_db[OTHER_DB].write_bytes(by_db[DB].read_bytes())  # DB's draft under OTHER_DB's name
    assert j.load(OTHER_DB, QUEUE, 1) is None
    assert [d.database for d in j.drafts()] == [DB]
    assert files(tmp_path, "*.corrupt") == []


DAMAGE = {
    "truncated": lambda data: data[: len(data) // 2],
    "truncated to one byte": lambda data: data[:1],
    "empty": lambda data: b"",
    "zeros": lambda data: b"\0" * len(data),
    "invalid utf-8": lambda data: b"\xff\xfe" + data,
    "not an object": lambda data: b"[1, 2, 3]",
    "values not an object": lambda data: data.replace(b'"values": {', b'"values": [{', 1).replace(b"}", b"}]", 1),
    "unknown tag": lambda data: data.replace(b"$decimal", b"$decimel"),
    "bad decimal": lambda data: data.replace(b'"12.30"', b'"twelve"'),
    "bad date": lambda data: data.replace(b'"2024-02-29"', b'"2024-02-30"'),
    "bad fold": lambda data: data.replace(b'"fold": 1', b'"fold": 2'),
    "missing key": lambda data: data.replace(b'"key"', b'"kee"'),
    "null key": lambda data: data.replace(b'"key": 1', b'"key": null'),
    "non-str owner": lambda data: data.replace(b'"owner": "alice"', b'"owner": 5'),
    "deeply nested": lambda data: data.replace(b'"12.30"', b"[" * 100000 + b"]" * 100000),
}


@pytest.mark.parametrize("damage", list(DAMAGE.values()), ids=list(DAMAGE))
def test_damaged_file_is_set_aside_and_others_still_load(tmp_path: Path, damage: Any) -> None:
    j = Journal(tmp_path)
    victim = make_draft(1, values={"d": Decimal("12.30"), "day": dt.date(2024, 2, 29), "t": dt.time(1, 0, fold=1)})
    j.save(victim)
    (victim_path,) = files(tmp_path, "*.json")
    j.save(make_draft(2))
    data = victim_path.read_bytes()
    damaged = damage(data)
    assert damaged != data, "the damage did not change the file"
    victim_path.write_bytes(damaged)

    assert j.load(DB, QUEUE, 1) is None
    assert not victim_path.exists()
    (aside,) = files(tmp_path, "*.corrupt")
    assert aside.name.startswith(victim_path.name) and aside.read_bytes() == damaged  # kept, unchanged
    assert j.load(DB, QUEUE, 2) == make_draft(2)
    assert [d.key for d in j.drafts()] == [2]
    j.save(victim)  # the item can be journalled again
    assert j.load(DB, QUEUE, 1) == victim


def test_drafts_sets_damaged_files_aside_and_keeps_every_damaged_copy(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(2))
    for round_ in range(3):
        j.save(make_draft(1))
        (path,) = [p for p in files(tmp_path, "*.json") if json.loads(p.read_text())["key"] == 1]
        path.write_bytes(b"garbage %d" % round_)
        assert [d.key for d in Journal(tmp_path).drafts()] == [2]
    assert sorted(p.read_bytes() for p in files(tmp_path, "*.corrupt")) == [b"garbage 0", b"garbage 1", b"garbage 2"]
    assert [d.key for d in j.drafts()] == [2]


def test_file_of_another_format_is_left_alone(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(1))
    j.save(make_draft(2))
    path = next(p for p in files(tmp_path, "*.json") if json.loads(p.read_text())["key"] == 1)
    document = json.loads(path.read_text())
    document["format"] = journal.FORMAT + 1
    document["values"] = {"new": {"$fancy": [1, 2]}}  # something this version cannot read
    future = json.dumps(document).encode()
    path.write_bytes(future)

    assert j.load(DB, QUEUE, 1) is None
    assert [d.key for d in j.drafts()] == [2]
    assert path.read_bytes() == future  # neither changed nor set aside
    assert files(tmp_path, "*.corrupt") == []
    assert Journal(tmp_path).load(DB, QUEUE, 2) == make_draft(2)


def test_stale_temp_files_are_removed_and_fresh_ones_kept(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(1))
    (draft_path,) = files(tmp_path)
    stale = tmp_path / f".{draft_path.name}.abc123.tmp"
    fresh = tmp_path / f".{draft_path.name}.def456.tmp"
    other = tmp_path / "notes.tmp.txt"
    for path in (stale, fresh, other):
        path.write_bytes(b"half a draf")
    old = time.time() - journal.STALE_TEMP_SECONDS - 60
    nearly = time.time() - journal.STALE_TEMP_SECONDS + 60
    os.utime(stale, (old, old))
    os.utime(fresh, (nearly, nearly))
    os.utime(other, (old, old))
    os.utime(draft_path, (old, old))

    j = Journal(tmp_path)
    assert not stale.exists()
    assert fresh.exists() and other.exists() and draft_path.exists()
    assert j.load(DB, QUEUE, 1) == make_draft(1)  # the draft the dead save would have replaced
    assert [d.key for d in j.drafts()] == [1]  # temp files are never listed as drafts


@pytest.mark.parametrize("failing", ["_fsync", "replace"])
def test_failed_write_keeps_previous_draft_and_leaves_no_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(values={"v": 1}))
    before = {p.name: p.read_bytes() for p in files(tmp_path)}

    def disk_full(*args: Any) -> None:
        raise OSError(28, "No space left on device")

    if failing == "replace":
        monkeypatch.setattr(journal.os, "replace", disk_full)
    else:
        monkeypatch.setattr(journal, failing, disk_full)
    with pytest.raises(OSError):
        j.save(make_draft(values={"v": 2}))
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in files(tmp_path)} == before
    assert j.load(DB, QUEUE, 1) == make_draft(values={"v": 1})


def test_a_good_draft_saved_while_a_damaged_one_is_read_is_not_set_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    j = Journal(tmp_path)
    j.save(make_draft(values={"v": 1}))
    (path,) = files(tmp_path, "*.json")
    path.write_bytes(b"{torn")
    real = journal._from_bytes

    def racing(data: bytes) -> Any:
        Journal(tmp_path).save(make_draft(values={"v": 2}))  # another process's save lands just now
        return real(data)

    monkeypatch.setattr(journal, "_from_bytes", racing)
    assert j.load(DB, QUEUE, 1) is None  # what it read was damaged ...
    monkeypatch.undo()
    assert j.load(DB, QUEUE, 1) == make_draft(values={"v": 2})  # ... but the new draft was kept
    assert files(tmp_path, "*.corrupt") == []


@pytest.mark.skipif(os.name == "nt", reason="POSIX permissions")
def test_directory_is_0700_and_files_0600(tmp_path: Path) -> None:
    old_umask = os.umask(0)
    try:
        new = tmp_path / "a" / "journal"
        j = Journal(new)
        j.save(make_draft(1))
        existing = tmp_path / "existing"
        existing.mkdir(mode=0o755)
        os.chmod(existing, 0o755)
        Journal(existing).save(make_draft(2))
    finally:
        os.umask(old_umask)
    for directory in (new, existing):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700, directory
        (path,) = files(directory)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path


# -- real processes ---------------------------------------------------------------------------------

CHILD_SAVER = textwrap.dedent("""
    import sys, hashlib
    from pathlib import Path
    from workbench.journal import Draft, Journal

    directory, database, keys = sys.argv[1], sys.argv[2], int(sys.argv[3])
    j = Journal(Path(directory))
    version = 0
    for key in range(keys):  # carry on from what survived the last kill
        draft = j.load(database, "q", key)
        if draft is not None:
            version = max(version, draft.values["version"])
    announced = False
    while True:
        version += 1
        for key in range(keys):
            blob = "%d:%d;" % (key, version) * (1000 + (version * 7919 + key * 104729) % 20000)
            digest = hashlib.sha256(blob.encode()).hexdigest()
            j.save(Draft(database=database, queue="q", key=key, owner="child", token=str(version),
                         values={"version": version, "blob": blob, "digest": digest},
                         base={"version": version}, updated_at="2024-01-01T00:00:00+00:00"))
        if not announced:
            print("saving", flush=True)
            announced = True
""")


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH", "")]))
    return env


def _check_intact(directory: Path, database: str, keys: int) -> dict[int, int]:
    """Every key's draft loads and is whole; returns key -> version."""
    import hashlib

    versions = {}
    fresh = Journal(directory)
    for key in range(keys):
        draft = fresh.load(database, "q", key)
        assert draft is not None, f"draft {key} lost or torn"
        blob, version = draft.values["blob"], draft.values["version"]
        assert draft.values["digest"] == hashlib.sha256(blob.encode()).hexdigest(), f"draft {key} mixed"
        assert blob.startswith(f"{key}:{version};") and draft.base == {"version": version}
        assert draft.token == str(version)
        versions[key] = version
    assert files(directory, "*.corrupt") == []
    assert len(fresh.drafts(database=database)) == keys
    return versions


@pytest.mark.slow
def test_sigkill_during_saves_never_leaves_a_torn_draft(tmp_path: Path) -> None:
    if not hasattr(signal, "SIGKILL"):
        pytest.skip("needs SIGKILL")
    seed = random.randrange(2**32)
    rng = random.Random(seed)
    directory = tmp_path / "journal"
    keys = 5
    seen: dict[int, int] = {}
    kills = 0
    for round_ in range(20):
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD_SAVER, str(directory), DB, str(keys)],
            cwd=REPO,
            env=_child_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        try:
            line = child.stdout.readline()
            assert line == b"saving\n", (line, child.stderr.read() if child.poll() is not None else b"")
            time.sleep(rng.uniform(0.0, 0.2))
            assert child.poll() is None, child.stderr.read()
            os.kill(child.pid, signal.SIGKILL)
            kills += 1
        finally:
            if child.poll() is None:
                child.kill()
            child.wait(timeout=30)
            child.stdout.close()
            child.stderr.close()
        assert child.returncode == -signal.SIGKILL, f"seed {seed}: child exited {child.returncode}"
        versions = _check_intact(directory, DB, keys)
        for key, version in versions.items():  # durable: a save that was seen never goes back
            assert version >= seen.get(key, 0), f"seed {seed}, round {round_}: draft {key} went back"
        assert max(versions.values()) > max(seen.values(), default=0), f"seed {seed}: no progress"
        seen = versions
    assert kills == 20


CONCURRENT_SAVER = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from workbench.journal import Draft, Journal

    directory, prefix, start, rounds = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
    while time.time() < start:
        time.sleep(0.001)
    j = Journal(Path(directory))
    for version in range(1, rounds + 1):
        for item in range(20):
            j.save(Draft(database="db", queue="q", key=f"{prefix}{item}", owner=prefix, token=None,
                         values={"version": version, "pad": prefix * (item * 97)}, base={},
                         updated_at="2024-01-01T00:00:00+00:00"))
        if version % 5 == 0:
            j.discard("db", "q", f"{prefix}gone")
            j.save(Draft(database="db", queue="q", key=f"{prefix}gone", owner=prefix, token=None,
                         values={"version": version}, base={}, updated_at="2024-01-01T00:00:00+00:00"))
            j.discard("db", "q", f"{prefix}gone")
        j.drafts()
""")


@pytest.mark.slow
def test_two_processes_saving_different_items_lose_nothing(tmp_path: Path) -> None:
    directory = tmp_path / "journal"
    rounds = 15
    start = time.time() + 1.0  # both begin together, including creating the directory
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_SAVER, str(directory), prefix, repr(start), str(rounds)],
            cwd=REPO,
            env=_child_env(),
            stderr=subprocess.PIPE,
        )
        for prefix in ("a", "b")
    ]
    errors = [child.communicate(timeout=120)[1] for child in children]
    assert [child.returncode for child in children] == [0, 0], errors
    j = Journal(directory)
    for prefix in ("a", "b"):
        for item in range(20):
            draft = j.load("db", "q", f"{prefix}{item}")
            assert draft is not None, f"{prefix}{item} lost"
            assert draft.values == {"version": rounds, "pad": prefix * (item * 97)} and draft.owner == prefix
        assert j.load("db", "q", f"{prefix}gone") is None
        assert len(j.drafts(owner=prefix)) == 20
    assert len(files(directory)) == 40  # no temp or corrupt files either


def test_threads_saving_and_discarding_share_one_journal(tmp_path: Path) -> None:
    j = Journal(tmp_path)
    failures: list[Exception] = []

    def work(prefix: str) -> None:
        try:
            for version in range(30):
                for item in range(5):
                    j.save(make_draft(f"{prefix}{item}", values={"v": version}))
                j.discard(DB, QUEUE, f"{prefix}0")
                j.drafts()
        except Exception as exc:  # noqa: BLE001 - reported below
            failures.append(exc)

    threads = [threading.Thread(target=work, args=(prefix,)) for prefix in "xyz"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert sorted(d.key for d in j.drafts()) == sorted(f"{p}{i}" for p in "xyz" for i in range(1, 5))
    assert all(d.values == {"v": 29} for d in j.drafts())
    assert files(tmp_path, "*.corrupt") == [] and files(tmp_path, ".*") == []

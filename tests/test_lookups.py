"""Lookups: a column whose value is a row of another table, searched, resolved and checked there."""

from __future__ import annotations

import json
from typing import Any

import pytest
import sqlalchemy as sa

from tests import support, test_permissions
from tests.test_permissions import pg  # noqa: F401  (the fixture: a PostgreSQL database under grants)
from workbench import demo, services
from workbench.core import errors
from workbench.db import lookups
from workbench.demo import schema

# Orders whose customer_id has a foreign key to customers (reflected: no lookup configured).
ORDERS_CONFIG = """
[database]
url = "{url}"

[queues.orders]
table = "orders"
key = "order_id"
order = ["order_id"]
[queues.orders.todo]
status = "new"
[queues.orders.outcomes.done]
set = { status = "done" }
"""


def _orders(env: support.Env) -> None:
    """customers (100 rows, names shared by two of them, one with a LIKE wildcard) and orders."""
    metadata = sa.MetaData()
    customers = sa.Table(
        "customers",
        metadata,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(80), nullable=False, index=True),
        sa.Column("city", sa.String(40)),
    )
    orders = sa.Table(
        "orders",
        metadata,
        sa.Column("order_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("customer_id", sa.Integer, sa.ForeignKey("customers.id")),
        sa.Column("status", sa.String(10), nullable=False),
        *schema.lock_columns(),
    )
    metadata.create_all(env.engine)
    rows: list[dict[str, Any]] = [{"id": i, "name": f"Customer {i:03d}", "city": "Oslo"} for i in range(1, 96)]
    rows += [
        {"id": 96, "name": "Acme", "city": "Berlin"},
        {"id": 97, "name": "ACME", "city": "Lyon"},  # the same name in other letters: ambiguous
        {"id": 98, "name": "Acme Tools", "city": "Graz"},
        {"id": 99, "name": "Best_Price 100%", "city": "Riga"},
        {"id": 100, "name": "The Acme Shop", "city": "Turku"},
    ]
    with env.engine.begin() as conn:
        conn.execute(sa.insert(customers), rows)
        conn.execute(sa.insert(orders), [{"order_id": k, "customer_id": 1, "status": "new"} for k in (1, 2, 3)])


def _op(env: support.Env, text: str) -> tuple[Any, services.Operator]:
    wb = env.open(env.load(text))
    wb.init()
    return wb, services.Operator(wb, "ann")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_a_foreign_key_is_a_lookup_searched_in_the_database(native_env: support.Env) -> None:
    env = native_env
    _orders(env)
    wb, op = _op(env, ORDERS_CONFIG)
    spec = wb.queue("orders").q.specs["customer_id"]
    assert spec.lookup == "customers" and spec.kind == "integer"
    found = op.lookup_search("orders", "customer_id", "acme")
    # Starting with the text first (whatever its case), then containing it; the key kept, the city beside.
    assert [(c.key, c.display) for c in found[:3]] == [(97, "ACME"), (96, "Acme"), (98, "Acme Tools")] or [
        (c.key, c.display) for c in found[:3]
    ] == [(96, "Acme"), (97, "ACME"), (98, "Acme Tools")]
    assert [c.key for c in found][3:] == [100]
    # The LIKE wildcards typed are searched as text.
    assert [c.key for c in op.lookup_search("orders", "customer_id", "_price 100%")] == [99]
    assert [c.key for c in op.lookup_search("orders", "customer_id", "%")] == [99]
    assert len(op.lookup_search("orders", "customer_id", "customer", limit=10)) == 10  # bounded
    assert op.lookup_resolve("orders", "customer_id", [98, 1234]) == {
        98: op.lookup_search("orders", "customer_id", "Acme Tools")[0]
    }
    # The foreign key's table and key, with a second column configured beside the display.
    _, detailed = _op(env, ORDERS_CONFIG + '[queues.orders.fields.customer_id]\nlookup = { detail = "city" }\n')
    assert [c.text for c in detailed.lookup_search("orders", "customer_id", "acme t")] == ["Acme Tools (Graz)"]


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_a_large_tables_rows_inside_names_come_apart(native_env: support.Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """A picker's keystroke answers with the rows starting with the text (an index's range); in a large
    table the rows containing it are a second call (reading them may take the whole table), added after."""
    env = native_env
    _orders(env)
    _, op = _op(env, ORDERS_CONFIG)
    # Small (100 rows): one call answers all, nothing left to ask.
    found, more = op.lookup_search_start("orders", "customer_id", "acme")
    assert ([c.key for c in found][3:], more) == ([100], False)
    monkeypatch.setattr(lookups, "LARGE_ROWS", 50)
    _, op = _op(env, ORDERS_CONFIG)  # a fresh engine: whether the table is large is read once
    found, more = op.lookup_search_start("orders", "customer_id", "acme")
    assert (sorted(c.key for c in found), more) == ([96, 97, 98], True)
    assert [c.key for c in op.lookup_search_inside("orders", "customer_id", "acme")] == [100]
    assert [c.key for c in op.lookup_search("orders", "customer_id", "acme")][3:] == [100]  # the two together
    # Two letters: the start of names only in a large table; a full screen: nothing more to ask either.
    assert op.lookup_search_start("orders", "customer_id", "ac")[1] is False
    assert op.lookup_search_start("orders", "customer_id", "cus", limit=10)[1] is False


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_a_search_ignores_the_case_of_letters_beyond_ascii(native_env: support.Env) -> None:
    """SQLite's LIKE folds A-Z only; every database finds "Müller" by "MÜL" and "École" by "é"."""
    env = native_env
    _orders(env)
    customers = sa.Table("customers", sa.MetaData(), autoload_with=env.engine)
    with env.engine.begin() as conn:
        conn.execute(
            sa.insert(customers),
            [
                {"id": 201, "name": "Müller GmbH", "city": "Graz"},
                {"id": 202, "name": "MÜLLER AG", "city": "Bern"},
                {"id": 203, "name": "École Horlogère", "city": "Genf"},
                {"id": 204, "name": "Café Émile", "city": "Lyon"},
                {"id": 205, "name": "Mulled Wine Co", "city": "Hull"},  # "mul", not "mül": never found by it
                {"id": 206, "name": "Öko Bau", "city": "Wels"},
                {"id": 207, "name": "öl AG", "city": "Linz"},
                {"id": 208, "name": "Ostwind", "city": "Kiel"},  # "o", not "ö"
            ],
        )
    _, op = _op(env, ORDERS_CONFIG)

    def keys(text: str) -> set[int]:
        return {c.key for c in op.lookup_search("orders", "customer_id", text) if c.key > 200}

    # MariaDB compares in the column's collation, which by default ignores accents too ("é" finds
    # "Customer", "ü" may find "y"): there the rows wanted are among those found.
    exact = env.backend != "mariadb"
    for texts, wanted in (
        (("MÜL", "mül", "Mül"), {201, 202}),
        (("é", "É"), {203, 204}),  # the first starts with it, the second contains it
        (("ÉMILE", "émile"), {204}),
        (("üLL", "ÜLLER"), {201, 202}),
        (("Ö", "ö"), {206, 207}),  # each letter's case a range of SQLite's index of its own
        (("ÖK", "öko b"), {206}),
        (("öL", "ÖL AG"), {207}),
        (("horlogÈre",), {203}),
    ):
        for text in texts:
            assert keys(text) == wanted if exact else keys(text) >= wanted, text
    assert op.lookup_search("orders", "customer_id", "école")[0].key == 203  # a prefix first
    # The command line's display text too, whatever its case.
    assert op.resolve_lookups("orders", {"customer_id": "müller gmbh"}) == {"customer_id": 201}
    assert op.resolve_lookups("orders", {"customer_id": "CAFÉ ÉMILE"}) == {"customer_id": 204}


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_save_and_complete_refuse_a_value_the_related_table_lacks(native_env: support.Env) -> None:
    env = native_env
    _orders(env)
    wb, op = _op(env, ORDERS_CONFIG)
    claim = op.next_item("orders")
    assert claim is not None
    held = services.HeldLock("orders", claim.lock.key, claim.lock.token)
    with pytest.raises(errors.InvalidValue) as caught:
        op.save(held, {"customer_id": "4242"})
    assert caught.value.column == "customer_id"
    assert str(caught.value) == "customer_id: 4242 is not in customers; pick one of its rows"
    with pytest.raises(errors.InvalidValue, match="4242 is not in customers"):
        op.complete(held, "done", {"customer_id": 4242})
    op.save(held, {"customer_id": "98"})
    assert env.row(wb, "orders", claim.lock.key)["customer_id"] == 98
    op.save(held, {"customer_id": ""})  # empty is no value: nothing to look up
    op.complete(held, "done", {"customer_id": 96})
    row = env.row(wb, "orders", claim.lock.key)
    assert (row["customer_id"], row["status"]) == (96, "done")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_a_display_text_resolves_to_its_key_when_one_row_has_it(native_env: support.Env) -> None:
    env = native_env
    _orders(env)
    _, op = _op(env, ORDERS_CONFIG)
    assert op.resolve_lookups("orders", {"customer_id": "acme tools", "status": "x"}) == {
        "customer_id": 98,
        "status": "x",
    }
    assert op.resolve_lookups("orders", {"customer_id": "97"}) == {"customer_id": 97}  # a key stays a key
    with pytest.raises(errors.InvalidValue) as caught:
        op.resolve_lookups("orders", {"customer_id": "Acme"})
    assert "2 rows of customers are named 'Acme'" in str(caught.value)
    assert "96 = Acme" in str(caught.value) and "97 = ACME" in str(caught.value)
    with pytest.raises(errors.InvalidValue) as caught:
        op.resolve_lookups("orders", {"customer_id": "Acme Shop"})
    assert "no row of customers has the key or the name 'Acme Shop'; similar: The Acme Shop" in str(caught.value)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_the_demo_vendor_is_a_configured_lookup(native_env: support.Env) -> None:
    env = native_env
    wb = env.demo(case_rows=2, import_rows=5)
    op = services.Operator(wb, "ann")
    assert wb.queue("imports").q.specs["vendor"].lookup == "vendors"
    assert wb.queue("imports_review").q.specs["vendor"].lookup == "vendors"  # the reviewer's picker too
    found = op.lookup_search("imports", "vendor", "fj")
    assert [(c.key, c.display, c.detail) for c in found] == [("Fjord Energy", "Fjord Energy", "Bergen")]
    claim = op.next_item("imports")
    assert claim is not None
    held = services.HeldLock("imports", claim.lock.key, claim.lock.token)
    with pytest.raises(errors.InvalidValue, match="Fjord Energie is not in vendors"):
        op.save(held, {"vendor": "Fjord Energie"})
    op.save(held, op.resolve_lookups("imports", {"vendor": "iris telecom"}))
    assert env.row(wb, "imports", claim.lock.key)["vendor"] == "Iris Telecom"


def _config_with(lookup: str) -> str:
    return demo.config_text("{url}").replace(
        'lookup = { table = "vendors", key = "name", display = "name", detail = "city" }', lookup
    )


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
@pytest.mark.parametrize(
    ("lookup", "key", "message"),
    [
        ('lookup = { table = "vendor" }', "table", "table 'vendor' does not exist; did you mean 'vendors'?"),
        ('lookup = { table = "vendors", display = "nmae" }', "display", "'vendors' has no column 'nmae'"),
        ('lookup = { table = "vendors", key = "id" }', "key", "'vendors' has no column 'id'"),
        ('lookup = { table = "vendors", detail = "town" }', "detail", "'vendors' has no column 'town'"),
        ('lookup = { display = "name" }', "table", "'vendor' has no foreign key: name the related table"),
    ],
)
def test_every_configured_lookup_name_is_checked(native_env: support.Env, lookup: str, key: str, message: str) -> None:
    env = native_env
    env.demo(case_rows=1, import_rows=1)
    with pytest.raises(errors.ConfigError) as caught:
        env.open(env.load(_config_with(lookup))).queue("imports")
    assert caught.value.key == f"queues.imports.fields.vendor.lookup.{key}"
    assert message in str(caught.value)
    with pytest.raises(errors.ConfigError, match="unknown key; did you mean 'display'"):
        env.load(_config_with('lookup = { table = "vendors", dispaly = "name" }'))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_the_command_line_sets_a_lookup_by_its_display_text(
    native_env: support.Env, capsys: pytest.CaptureFixture[str]
) -> None:
    from workbench.cli import main

    env = native_env
    _orders(env)
    config = env.write_config(ORDERS_CONFIG)

    def run(*args: str) -> tuple[int, str, str]:
        code = main.main(["--config", str(config), "--user", "ann", *args])
        out = capsys.readouterr()
        return code, out.out, out.err

    capsys.readouterr()
    assert run("init")[0] == 0
    code, out, _ = run("next", "orders", "--json")
    assert code == 0
    lock = json.loads(out)
    key, token = str(lock["key"]), lock["token"]
    code, _, err = run("save", "orders", key, "--token", token, "--set", "customer_id=Acme")
    assert code == 5 and "2 rows of customers are named 'Acme': 96 = Acme; 97 = ACME; give the key" in err
    code, _, err = run("save", "orders", key, "--token", token, "--set", "customer_id=Acme Shop")
    assert code == 5 and "no row of customers has the key or the name 'Acme Shop'; similar: The Acme Shop" in err
    assert run("save", "orders", key, "--token", token, "--set", "customer_id=acme tools")[0] == 0
    assert env.row(env.open(env.load(ORDERS_CONFIG)), "orders", int(key))["customer_id"] == 98
    assert run("complete", "orders", key, "--token", token, "--set", "customer_id=The Acme Shop")[0] == 0
    assert env.row(env.open(env.load(ORDERS_CONFIG)), "orders", int(key))["customer_id"] == 100


def test_under_grants_an_operator_searches_and_checks_the_related_table(
    pg: test_permissions.Pg, capsys: pytest.CaptureFixture[str]
) -> None:
    """`workbench grants` lets operators read a lookup's related table, and nothing more of it."""
    pg.imports_enforced(capsys)
    ann = services.Operator(pg.open("ann"), "ann")
    assert [c.key for c in ann.lookup_search("imports", "vendor", "iris")] == ["Iris Telecom"]
    claim = ann.next_item("imports")
    assert claim is not None
    held = services.HeldLock("imports", claim.lock.key, claim.lock.token)
    with pytest.raises(errors.InvalidValue, match="Iris Telekom is not in vendors"):
        ann.save(held, {"vendor": "Iris Telekom"})
    ann.save(held, {"vendor": "Iris Telecom"})
    with pg.engine("ann").begin() as conn, pytest.raises(sa.exc.ProgrammingError, match="permission denied"):
        conn.execute(sa.text("UPDATE vendors SET city = 'x'"))


@pytest.mark.parametrize("backend", ["sqlite", "postgresql", "mariadb"], indirect=True)
def test_attach_suggests_the_index_a_large_related_tables_search_reads(native_env: support.Env) -> None:
    """From 10,000 rows, `attach` suggests (never makes) the index the lookup's search can read; once
    the table has it, or one that serves, nothing. The primary key on vendors.name serves MariaDB's
    LIKE; SQLite's LIKE wants COLLATE NOCASE, PostgreSQL's ILIKE a trigram index."""
    from workbench.db import attach
    from workbench.services import admin

    env = native_env
    wb = env.demo(case_rows=1, import_rows=1)
    assert not admin.attach(wb, "imports", apply=False).suggested  # a few vendors: nothing to suggest
    texts = ("ap", "IT S", "dor")

    def found() -> list[list[str]]:  # vendors found by text inside names, by a queue opened now
        op = services.Operator(env.open(wb.config), "ann")
        return [[c.display for c in op.lookup_search("imports", "vendor", text)][:2] for text in texts]

    # A small table: text inside names from the first letter on.
    assert found() == [["Baltic Paper Mills"], ["Granite IT Services"], []]
    vendors = schema.vendors(sa.MetaData())
    rows = [{"name": f"Vendor {i:05d}", "city": "Riga"} for i in range(attach.SEARCH_INDEX_ROWS)]
    with env.engine.begin() as conn:
        conn.execute(sa.insert(vendors), rows)
    # A large one: from the third letter on, where a search that finds nothing is quick only by an index.
    assert found() == [[], ["Granite IT Services"], ["Vendor 00000", "Vendor 00001"]]
    plan = admin.attach(wb, "imports", apply=True)
    if env.backend == "mariadb":
        assert not plan.suggested and "vendors" not in plan.ddl
        return
    suggested = {
        "sqlite": ['CREATE INDEX wb_vendors_name_search ON vendors (name COLLATE "NOCASE")'],
        "postgresql": [  # a prefix reads the b-tree in order; text inside names the trigrams
            'CREATE INDEX wb_vendors_name_prefix ON vendors ((lower(name) COLLATE "C"))',
            "CREATE INDEX wb_vendors_name_search ON vendors USING gin (name gin_trgm_ops)",
        ],
    }[env.backend]
    assert plan.suggested and f"-- suggested, not applied by --apply:\n-- {suggested[0]};" in plan.ddl
    assert all(f"-- {index};" in plan.ddl for index in suggested), plan.ddl
    assert any("lookup vendor searches vendors.name (10,0" in note for note in plan.notes)
    with env.engine.begin() as conn:
        assert "wb_vendors_name_search" not in {i["name"] for i in sa.inspect(conn).get_indexes("vendors")}
        if env.backend == "postgresql":
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
            # An ordinary index on the column does not serve ILIKE: still suggested.
            conn.exec_driver_sql("CREATE INDEX vendors_name_plain ON vendors (name)")
    assert admin.attach(wb, "imports", apply=False).suggested
    with env.engine.begin() as conn:
        for index in suggested:
            conn.exec_driver_sql(index.replace("wb_vendors_name_", "vendors_by_name_"))
    again = admin.attach(wb, "imports", apply=False)
    assert not again.suggested and "vendors" not in again.ddl


def test_no_character_beyond_sqlites_bound_folds() -> None:
    """SQLite's search for text beyond ASCII inside names reads only rows holding a character that
    folds to its first such letter; those are gathered up to LAST_FOLDING, which must be the last."""
    from workbench.db.backends import sqlite

    assert all(chr(p).casefold() == chr(p) for p in range(sqlite.LAST_FOLDING + 1, 0x110000))
    assert sqlite.folding_to("ö") == {"ö", "Ö"} and sqlite.folding_to("σ") == {"σ", "Σ", "ς"}
    assert "\u0130" in sqlite.folding_to("\u0307")  # "İ" folds to "i" and a combining dot

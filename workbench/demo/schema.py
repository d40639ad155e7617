"""Tables of the demo: a helpdesk case table and an import-verification table, on any database."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa
from sqlalchemy.dialects import mssql, mysql


def _datetime() -> sa.types.TypeEngine[dt.datetime]:
    datetime2 = mssql.DATETIME2()  # type: ignore[no-untyped-call]  # as in db/tables.py
    return sa.DateTime().with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb").with_variant(datetime2, "mssql")


def lock_columns(prefix: str = "wb_") -> list[sa.Column[object]]:
    """The four lock columns `workbench attach` adds, as the demo has them already."""
    return [
        sa.Column(f"{prefix}locked_by", sa.String(128)),
        sa.Column(f"{prefix}locked_at", _datetime()),
        sa.Column(f"{prefix}lock_expires", _datetime()),
        sa.Column(f"{prefix}lock_token", sa.String(32)),
    ]


def vendors(metadata: sa.MetaData) -> sa.Table:
    """The import's vendors: the lines' `vendor` is a lookup of this table, configured (no foreign key)."""
    return sa.Table(
        "vendors",
        metadata,
        sa.Column("name", sa.String(120), primary_key=True),
        sa.Column("city", sa.String(60), nullable=False),
        sa.Column("vat_id", sa.String(20)),
    )


def build(metadata: sa.MetaData) -> tuple[sa.Table, sa.Table]:
    cases = sa.Table(
        "cases",
        metadata,
        sa.Column("case_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("opened_at", _datetime(), nullable=False),
        sa.Column("customer", sa.String(100), nullable=False),
        sa.Column("email", sa.String(200)),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("description", sa.Text),
        sa.Column("category", sa.String(30), nullable=False),
        sa.Column("priority", sa.Integer, nullable=False),  # 1 urgent … 4 low
        sa.Column("status", sa.String(20), nullable=False),
        sa.Column("due_at", _datetime()),
        sa.Column("resolution", sa.Text),
        sa.Column("time_spent_min", sa.Integer),
        *lock_columns(),
    )
    imports = sa.Table(
        "import_rows",
        metadata,
        sa.Column("row_id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("batch", sa.String(40), nullable=False),
        sa.Column("source_file", sa.String(200), nullable=False),
        sa.Column("scan", sa.String(300)),  # the scanned invoice, relative to the demo's folder
        sa.Column("line_no", sa.Integer, nullable=False),
        sa.Column("vendor", sa.String(120), nullable=False),
        sa.Column("invoice_no", sa.String(40), nullable=False),
        sa.Column("invoice_date", sa.Date),
        sa.Column("amount", sa.Numeric(12, 2)),
        sa.Column("currency", sa.String(3), nullable=False),
        sa.Column("vat_rate", sa.Numeric(5, 2)),
        sa.Column("iban", sa.String(34)),
        sa.Column("paid", sa.Boolean, nullable=False, default=False),
        sa.Column("check_status", sa.String(20), nullable=False),
        sa.Column("checker_note", sa.String(500)),
        sa.Column("checked_by", sa.String(128)),
        sa.Column("checked_at", _datetime()),
        *lock_columns(),
    )
    return cases, imports

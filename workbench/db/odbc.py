"""What every ODBC connection needs, whatever the database behind it: connection-string options, timeouts."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy import event


def odbc_option(url: sa.URL, key: str, value: str) -> sa.URL:
    """Add an ODBC connection-string keyword unless the URL already sets it."""
    query = dict(url.query)
    if "odbc_connect" in query:
        text = str(query["odbc_connect"])
        if f"{key.lower()}=" not in text.lower():
            query["odbc_connect"] = f"{text.rstrip(';')};{key}={value};"
    elif not any(k.lower() == key.lower() for k in query):
        query[key] = value
    return url.set(query=query)


def query_timeout(engine: sa.Engine, seconds: int) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn: Any, _record: Any) -> None:
        # The connect "timeout" is the login timeout only; this one bounds every statement,
        # so a hung server cannot hold the operator's call (SQL_ATTR_QUERY_TIMEOUT).
        dbapi_conn.timeout = seconds

"""A publisher of queue settings in a process of its own, for tests/test_published.py's concurrent publishers."""

from __future__ import annotations

from typing import Any

from workbench.config import model
from workbench.db import connect, published


def publish_in_process(database: model.DatabaseConfig, body: str, user: str, barrier: Any, results: Any) -> None:
    """Publish `body` as `user` once all publishers have connected (`barrier`); put (user, version) on
    `results`, or (user, the error's text)."""
    engine = connect.create_engine(database)
    try:
        with engine.connect():  # connected before the start, so that the publishes really overlap
            pass
        barrier.wait(timeout=60)
        results.put((user, published.publish(engine, None, body, user).version))
    except BaseException as exc:  # noqa: BLE001 - reported to the test
        results.put((user, f"{type(exc).__name__}: {exc}"))
    finally:
        engine.dispose()

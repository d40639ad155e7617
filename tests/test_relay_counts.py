"""The change relay carries the start page's figures (issue 51): counted once for every window, a window's start
page after a Complete opens no transaction; figures older than counts_every are read again, and a relay or a
window of the version before (no figures, or figures not asked for) works as before."""

from __future__ import annotations

import dataclasses
import time
from typing import Any

import sqlalchemy as sa

from tests import support
from tests.test_relay import RelayThread, relays  # noqa: F401 - the fixture
from workbench import services
from workbench.config import model
from workbench.services import door, relay_client

EVERY = 2  # [app] counts_every here: short, so that a figure goes stale within the test


def _begun(op: services.Operator) -> list[object]:
    """The transactions the operator's engine begins from now on (through a pooler each sends BEGIN and SET)."""
    begun: list[object] = []
    sa.event.listen(door.engine(op.database).engine, "begin", begun.append)
    return begun


def _window(env: support.Env, relay: RelayThread | None = None) -> tuple[services.Operator, Any]:
    """Alice's window: opened (its start page counted), its relay client connected where there is a relay."""
    config = env.demo_config()
    op = services.Operator(env.open(dataclasses.replace(config, app=model.AppConfig(counts_every=EVERY))), "alice")
    op.opening()
    if relay is None:
        return op, None
    heard: list[relay_client.Figures] = []

    def take(figures: relay_client.Figures) -> None:
        heard.append(figures)
        op.take_figures(figures)

    client = relay_client.RelayClient(relay.address, "alice", op.queues, on_counts=take)
    client.connect()
    client.heard = heard
    return op, client


def _complete_one(op: services.Operator) -> None:
    op.complete(op.next_item("cases").lock)
    op.changes()  # the window's own claim and Complete told back: "Yours" known


def _relay_wb(env: support.Env) -> services.Workbench:
    return env.open(dataclasses.replace(env.demo_config(), app=model.AppConfig(counts_every=EVERY)))


def test_a_windows_start_page_takes_the_relays_figures(native_env: support.Env, relays: list[RelayThread]) -> None:
    _takes_the_relays_figures(native_env, relays)


def test_the_relays_figures_through_pgbouncer(pooled_env: support.Env, relays: list[RelayThread]) -> None:
    """Where the transactions are costly (each sends BEGIN and its settings through the pooler)."""
    _takes_the_relays_figures(pooled_env, relays)


def _takes_the_relays_figures(env: support.Env, relays: list[RelayThread]) -> None:
    env.demo(case_rows=10, import_rows=6)
    relays.append(RelayThread(_relay_wb(env), counting=True))
    op, client = _window(env, relays[0])
    time.sleep(EVERY + 0.2)  # the window's own count (its opening's) is old now: it would read again
    client.heard.clear()
    deadline = time.monotonic() + 3 * EVERY
    while not client.heard and time.monotonic() < deadline:  # the relay's next figures (sent as they go stale)
        client.wait(0.1)
    assert client.heard and set(client.heard[-1]) == {"cases", "imports", "imports_review"}
    _complete_one(op)
    begun = _begun(op)
    counts = {c.queue: c.waiting for c in op.queue_counts()}
    assert begun == []  # without the relay's figures: one read transaction
    sent = {queue: figures[0] for queue, (figures, _age) in client.heard[-1].items()}
    assert counts == sent | {"cases": sent["cases"] - 1}  # the relay's, and one fewer waiting: the one completed
    # The relay gone, the figures it sent go stale: the start page reads them again.
    client.close()
    relays[0].stop()
    time.sleep(EVERY + 0.2)
    op.queue_counts()
    assert begun


def test_a_relay_without_figures_and_a_window_not_asking_for_them(
    native_env: support.Env,
    relays: list[RelayThread],
) -> None:
    """A relay of the version before sends no figures: the window wakes and counts as before. A window of the
    version before (no on_counts) on a relay sending them: woken as before, the figures skipped."""
    env = native_env
    wb = env.demo(case_rows=10, import_rows=6)
    relays.append(RelayThread(_relay_wb(env)))  # no figures
    relays.append(RelayThread(_relay_wb(env), counting=True))
    op, new_window = _window(env, relays[0])
    old_window = relay_client.RelayClient(relays[1].address, "alice", op.queues)
    old_window.connect()
    claim = op.next_item("cases")
    wb.supervision("cases").force_release("sue", claim.lock.key, "needed")
    assert new_window.wait(3.0) is not None and old_window.wait(3.0) is not None
    assert new_window.heard == []
    op.changes()
    time.sleep(EVERY + 0.2)
    begun = _begun(op)
    op.queue_counts()
    assert len(begun) == 1  # read as without a relay
    new_window.close()
    old_window.close()


def test_figures_badly_formed_are_left_out() -> None:
    assert relay_client.figures_of({"a": [1, None, 2, 0.5], "b": [1, 2], "c": ["x", 1, 2, 0], "d": [1, 2, 3, 4]}) == {
        "a": ((1, None, 2), 0.5),
        "d": ((1, 2, 3), 4.0),
    }
    assert relay_client.figures_of([1, 2]) == {}

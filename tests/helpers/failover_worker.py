"""A separate OS process that claims, saves and completes items through a database failover
(tests/test_failover.py). Each step the database acknowledged is written to the log at once, with the
time, so the test can look for it on the server that took over."""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from workbench.config import loader
from workbench.core import errors
from workbench.db import service

RETRY = 0.1


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--log", required=True)
    parser.add_argument("--go", required=True, help="start when this file appears")
    parser.add_argument("--stop", required=True, help="stop when this file appears")
    parser.add_argument("--pause", type=float, default=0.0, help="seconds between items (an operator's thinking)")
    args = parser.parse_args()
    wb = service.Workbench.open(loader.load(args.config))
    go, stop = Path(args.go), Path(args.stop)
    with open(args.log, "a", encoding="utf-8") as log:

        def note(**entry: Any) -> None:
            log.write(json.dumps({"at": time.time(), **entry}, default=str) + "\n")
            log.flush()

        q = wb.queue(args.queue)  # bound (the table reflected) before the test starts the clock
        note(ready=True)
        while not go.exists():
            time.sleep(0.005)

        def retried(step: str, fn: Any) -> Any:
            """Run fn until the database answers (a failover is under way while it does not)."""
            while not stop.exists():
                try:
                    return fn()
                except errors.DatabaseUnavailable:
                    note(unavailable=step)
                    time.sleep(RETRY)
            raise TimeoutError(step)

        try:
            while not stop.exists():
                try:
                    claim = retried("claim", lambda: q.claim_next(args.user)[0])
                except errors.NothingToClaim:
                    time.sleep(RETRY)
                    continue
                key, token = claim.lock.key, claim.lock.token
                note(claim=key, token=token)
                edits = {"resolution": f"worked by {args.user}"}
                retried("save", lambda k=key, t=token, e=edits: q.save(args.user, k, t, e))
                note(saved=key)
                try:
                    retried("complete", lambda k=key, t=token: q.complete(args.user, k, t))
                except errors.LockLost:
                    # Sent, then the connection broke: did the Complete commit before it did?
                    view = retried("show", lambda k=key: q.show(k))
                    if not view.state.startswith("done"):
                        raise
                note(completed=key)
                time.sleep(args.pause)
        except TimeoutError:
            pass
        except Exception:  # noqa: BLE001 - any other error is a test failure; report it
            note(failure=traceback.format_exc())
    wb.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A separate OS process that claims and completes items until the queue is empty (concurrency tests)."""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

from workbench.config import loader
from workbench.core import errors
from workbench.db import service


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", required=True)
    parser.add_argument("--queue", required=True)
    parser.add_argument("--user", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--go", required=True, help="start when this file appears")
    parser.add_argument("--count", type=int, default=1, help="items per claim")
    parser.add_argument("--ready", help="written once the queue is open and the database answered")
    parser.add_argument(
        "--then-next",
        action="store_true",
        help="complete with then_next: each Complete claims the next item in the same step",
    )
    args = parser.parse_args()
    done: list[list[object]] = []
    failures: list[str] = []
    wb = service.Workbench.open(loader.load(args.config))
    q = wb.queue(args.queue)
    if args.ready:
        q.count_waiting(1)  # connected: a worker still starting must not find the queue drained by the others
        Path(args.ready).write_text("ready")
    go = Path(args.go)
    while not go.exists():  # all workers start together, to maximise contention
        time.sleep(0.005)
    empty_in_a_row = 0
    while True:
        try:
            claims = q.claim_next(args.user, args.count)
        except errors.NothingToClaim:
            # Empty now; check twice more so a momentary race with other claimers cannot end early.
            empty_in_a_row += 1
            if empty_in_a_row >= 3:
                break
            time.sleep(0.05)
            continue
        except Exception:  # noqa: BLE001 - any error is a test failure; report it
            failures.append(traceback.format_exc())
            break
        empty_in_a_row = 0
        while claims:
            claim = claims.pop(0)
            try:
                completion = q.complete(args.user, claim.lock.key, claim.lock.token, then_next=args.then_next)
                done.append([claim.lock.key, claim.lock.token])
            except Exception:  # noqa: BLE001
                failures.append(traceback.format_exc())
                continue
            if completion.next is not None:
                claims.append(completion.next)
    wb.close()
    Path(args.out).write_text(json.dumps({"done": done, "failures": failures}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

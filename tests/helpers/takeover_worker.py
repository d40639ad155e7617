"""A separate OS process that claims, saves 20 ms later and never completes, so that short locks expire
all the time while others claim: each save's outcome is written out (tests/contract/test_no_takeover.py).
With --holders it also reads, right after each claim, every queue's lock rows of the item from the lock
table, and with --release-note gives the item back after the save (tests/contract/test_twin_holders.py)."""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path

import sqlalchemy as sa

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
    parser.add_argument("--ready", required=True, help="written once the queue is open and the database answered")
    parser.add_argument("--seconds", type=float, default=6.0, help="how long to claim")
    parser.add_argument("--count", type=int, default=1, help="items per claim")
    parser.add_argument(
        "--min-saves", type=int, default=0, help="go on past --seconds until this many saves (at most a minute more)"
    )
    parser.add_argument(
        "--progress", help="append each save's outcome to this file as it comes (one JSON line), for --stop"
    )
    parser.add_argument(
        "--stop", help="end before --seconds once this file appears (the test has its evidence) and --min-saves are in"
    )
    parser.add_argument("--field", default="resolution", help="the column each save writes")
    parser.add_argument("--holders", action="store_true", help="record the item's lock rows after each claim")
    parser.add_argument("--release-note", help="release each item after its save, with this note")
    args = parser.parse_args()
    saves: list[dict[str, object]] = []
    failures: list[str] = []
    wb = service.Workbench.open(loader.load(args.config))
    q = wb.queue(args.queue)
    q.count_waiting(1)
    Path(args.ready).write_text("ready")
    go = Path(args.go)
    while not go.exists():  # all workers start together, to maximise contention
        time.sleep(0.005)
    end = time.monotonic() + args.seconds
    # On a loaded machine (CI's two cores under other workers' servers) a worker may get few turns in
    # --seconds; the test needs its claims, not its pace, so it goes on until it has them.
    cap = end + 60
    stop = Path(args.stop) if args.stop else None
    progress = open(args.progress, "a", encoding="utf-8") if args.progress else None  # noqa: SIM115
    n = 0

    def more() -> bool:
        if len(saves) < args.min_saves:
            return time.monotonic() < cap
        # --seconds is the cap; the test says (by --stop) when what it checks is already there.
        return not (stop is not None and stop.exists()) and time.monotonic() < end

    while more():
        # From before the claim: its lock is written somewhere between here and its answer, so a save
        # answered within 0.5 s of this found a lock at most 0.5 s old, whenever the claim's answer came.
        # (Timed from the answer, a claim answered late on a loaded machine made an honest expiry look
        # like a takeover: a 1 s lock found expired 0.4 s "after" it, at load 25.)
        claim_started = time.monotonic()
        try:
            claims = q.claim_next(args.user, args.count)
        except errors.NothingToClaim:
            time.sleep(0.01)
            continue
        except Exception:  # noqa: BLE001 - any other error is a test failure; report it
            failures.append(traceback.format_exc())
            break
        time.sleep(0.02)
        for claim in claims:
            n += 1
            entry: dict[str, object] = {"key": claim.lock.key, "token": claim.lock.token}
            if args.holders:  # every queue's lock rows of the item, as they are now
                locks = q.q.shape.locks  # type: ignore[attr-defined]
                with wb.engine.connect() as conn:
                    held = conn.execute(
                        sa.select(locks.c.queue, locks.c.lock_user).where(locks.c.item_key == str(claim.lock.key))
                    )
                    entry["holders"] = [list(row) for row in held]
            try:
                q.save(args.user, claim.lock.key, claim.lock.token, {args.field: f"{args.user} {n}"})
                entry["ok"] = True
                if args.release_note:
                    q.release(args.user, claim.lock.key, claim.lock.token, note=args.release_note)
            except errors.LockLost as exc:
                entry["ok"] = False
                entry["why"] = str(exc)
            except Exception:  # noqa: BLE001
                failures.append(traceback.format_exc())
                continue
            # Measured after the save's answer: a refusal that came later than 0.5 s after the claim
            # began may be an honest expiry on a loaded machine, and is not counted against the claim.
            entry["after"] = time.monotonic() - claim_started
            saves.append(entry)
            if progress is not None:
                progress.write(json.dumps(entry, default=str) + "\n")
                progress.flush()
    if progress is not None:
        progress.close()
    wb.close()
    Path(args.out).write_text(json.dumps({"saves": saves, "failures": failures}, default=str))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

"""Messages a user acts on, each once, as a template whose {0}, {1} are filled in (the window shows
them translated: gui/problem_text.py): what is wrong with a value, why nothing could be claimed, why an
undo or a reopen is refused."""

from __future__ import annotations

# The column's type (db/values.py).
NUL = "contains a NUL character (code 0), which text in a database cannot hold; remove it"
NOT_NULL = "a value is required (the column does not allow empty values)"
NOT_ENUM = "{0} is not one of {1}"
BINARY = "binary columns cannot be edited"
NOT_BOOLEAN = "{0} is not true/false (use true, false, yes, no, 1 or 0)"
NOT_WHOLE = "{0} is not a whole number"
OUT_OF_RANGE = "{0} is out of range for this column"
NOT_NUMBER = "{0} is not a number"
NOT_FINITE = "{0} is not a finite number"
TOO_LARGE = "{0} is too large for this column"
TOO_MANY_DIGITS = "{0} is too large (at most {1} digits before the point)"
TOO_MANY_DECIMALS = "{0} has more than {1} decimal places"
NOT_DATETIME = "{0} is not a date and time (use 2026-11-21 14:30)"
NOT_DATE = "{0} is not a date (use 2026-11-21)"
NOT_TIME = "{0} is not a time (use 14:30)"
NOT_TEXT = "expected text"
TOO_LONG = "at most {0} characters ({1} given)"
# The field's rules (fieldspec.py).
READ_ONLY = "cannot be edited"
REQUIRED = "required"
AT_LEAST = "must be at least {0}"
AT_MOST = "must be at most {0}"
PATTERN = "must match {0}"
CHOICES = "must be one of {0}"
# A lookup's value (db/lookups.py): {0} the value, {1} the related table.
NOT_IN_LOOKUP = "{0} is not in {1}; pick one of its rows"
# Notes and logins (not about a queue: NOT_ABOUT_A_QUEUE).
NOTE_EMPTY = "a note needs some text (--note TEXT, or --text TEXT for `note`)"
NOTE_TOO_LONG = "a note holds at most {0} characters ({1} given); shorten it or split it in two"
# A transition the table says needs a reason (core/workflow.py: reason_given), given none: {0} its command.
REASON_NEEDED = "{0} needs a reason: say why (--reason TEXT); it is kept in the item's history"
# A deferral's time (db/deferrals.py): {0} the database's clock, the days at most.
DEFER_PAST = "defer until a time still to come (it is {0} UTC on the database's clock)"
DEFER_TOO_FAR = "defer at most {0} days ahead; for longer, change the item's status"
# A supervisor's move given nothing to write (Supervision.move).
MOVE_NOTHING = "say what to change: --set COL=VALUE"
LOGIN_MISMATCH = (
    "{0}'s lock cannot be used from the database login {1}: under `workbench grants` each person "
    "logs in with their own database login, named exactly like their workbench user"
)
# From here on {0} is always the queue (the window shows its title).
NO_ITEM = "{0} has no item with key {1}"
# A Complete's outcome the queue does not have: {1} the outcome, {2} the queue's outcomes.
NO_OUTCOME = "queue {0} has no outcome '{1}' (outcomes: {2})"
# A release, defer or Complete without the note the queue requires: {1} the act ("a release").
NOTE_NEEDED = "queue {0} needs a note with {1}: say what happened for whoever works the item next (--note TEXT)"
# Nothing to claim (errors.NothingToClaim).
NOTHING_WAITING = "nothing to do in {0}: no item is waiting"
NOTHING_FREE_NOW = (
    "nothing to claim in {0} right now: the items waiting are held by open transactions (a session "
    "that locked them has not finished); try again in a moment"
)
NOTHING_WITH = "nothing to do in {0} with {1}"
NOTHING_BUT_OWN_WORK = (
    "nothing for you in {0}: the items waiting are your own work from {1}, and someone else reviews them (four eyes)"
)
LIMIT_REACHED = "you already hold {1} item(s) in {0}, the most this queue allows ({2}); complete or release one first"
HELD_BY = "{0} {1} is held by {2} since {3} (until {4})"
HELD_BY_PROGRAM = (
    "{0} {1} is held by another program under the name {2} since {3}: workbench does not take it before {4}; "
    "a supervisor can release it"
)
HELD_THROUGH = "{0} {1} is held by {2} through queue {3}: it is worked on there until it is given back"
OWN_WORK = "{0} {1} is your own work; someone else reviews it (four eyes)"
REASSIGN_TO_DOER = "{0} {1} is {2}'s own work: reassign its review to someone else (four eyes)"
NOT_WAITING = "{0} {1} is not waiting to be worked on (state: {2})"
NOT_IN_GROUP = (
    "queue {0} serves the group {1} only, and {2} is not in it; a supervisor adds you with "
    "`workbench group add {2} {1}`"
)
# Undo of a Complete (WorkQueue.undo_complete): {0} the queue, {1} the item.
UNDO_NOTHING = "nothing of yours to undo on {0} {1}: nothing has happened to it"
UNDO_NOT_YOURS = "nothing of yours to undo on {0} {1}: the last thing that happened to it was {2} by {3}"
UNDO_TOO_LATE = "too late to undo: {0} {1} was completed {2} ago, and undo works for {3}; a supervisor can reopen it"
UNDO_CHANGED = "{0} {1} changed since you completed it: undo is refused; a supervisor can reopen it"
# A supervisor's reopen (WorkQueue.reopen).
REOPEN_HELD = "{0} {1} is held by {2}, not finished: force-release it instead"
REOPEN_WAITING = "{0} {1} is waiting already: nothing to reopen"
REOPEN_NOT_SET = (
    "queue {0} does not say how to reopen an item: set [queues.{1}.on_reopen] to the values that make "
    'it wait again, e.g. status = "open"'
)
# An operator's escalate (WorkQueue.escalate): {0} the queue, {1} its name in the config.
ESCALATE_NOT_SET = (
    "queue {0} does not say how to hand an item to a supervisor: set [queues.{1}.on_escalate] to the values "
    'that take it out of the work to do, e.g. status = "escalated"'
)
CHANGED_REOPENING = "{0} {1} changed while it was being reopened; try again"
# A supervisor's take of an escalated item (Supervision.take): {0} the queue, {1} the item.
TAKE_NOT_ESCALATED = "{0} {1} is not waiting for a supervisor (taken, reopened or never escalated): nothing to take"
TAKE_NOT_AVAILABLE = "take is not available on queue {0}: {1}; reopen the item, then claim it"
# Someone neither in the queue's escalate_to group nor a supervisor: {1} the group, {2} the user.
TAKE_NOT_IN_GROUP = (
    "queue {0} hands its escalated items to the group {1} and to supervisors, and {2} is neither; a "
    "supervisor adds {2} with `workbench group add {2} {1}`"
)
# A supervisor's force-release, reassign and move.
NOT_LOCKED = "{0} {1} is not locked by anyone"
# A lock taken in another queue over the same table (lockloss.Diagnosis.elsewhere): {2} that queue, {3} the
# act (complete, force-release, …), which goes there.
TAKEN_ELSEWHERE = "{0} {1}: this item was taken in {2}; {3} it there"
CHANGED_REASSIGNING = "{0} {1} changed while it was being reassigned; try again"
CHANGED_RELEASING = "{0} {1} changed while it was being released; try again"
MOVE_NOT_WAITING = "{0} {1} is not waiting, or someone holds it: a move leaves it as it is"
MOVE_NOT_MOVABLE = "a move writes neither the key nor the lock (nor a column the database computes)"
MOVE_FINISHES = (
    "{1} would take waiting items of {0} out of its work to do: a move keeps items waiting (another "
    "category, tier, team or priority); items are finished by working them"
)

# What a supervisor may do and a refusal names (errors.Phrase): {0} the queue, {1} the item.
DO_FORCE_RELEASE = "force-release {0} {1}"
DO_REASSIGN = "reassign {0} {1}"
DO_REOPEN = "reopen {0} {1}"
DO_TAKE = "take {0} {1}"
DO_MOVE = "move items of {0}"
# Not about a queue: the user whose group changes and the group; the role and the user.
DO_PUBLISH = "publish queue settings"
DO_GROUP_ADD = "change groups (here: add {0} to {1})"
DO_GROUP_REMOVE = "change groups (here: remove {0} from {1})"
DO_GRANT_ROLE = "grant roles (here: {0} to {1})"
DO_REVOKE_ROLE = "revoke roles (here: {0}'s)"
# Refusals: {0} the user, {1} what they may not do (one of the DO_ phrases).
NOT_SUPERVISOR = (
    "{0} may not {1}: only supervisors may, and {0} is not one in this database's roles table "
    "(supervisors: {2}); a supervisor grants it with `workbench --user NAME role grant {0} supervisor`"
)
NOT_IN_ROLE = (
    "{0} may not {1}: the database allows that only to members of the role {2}, and the login {3} is "
    "not one; a database administrator grants it with GRANT {2} TO {3}"
)
HIDDEN_BY_POLICY = "{0} may not {1}: the database's row-level security does not let this login change it"

# A connection profile's fields (config/profiles.py; the connection dialog names the field).
PROFILE_NAME = "give the profile a name of 1 to 64 characters (no line breaks, no spaces at the ends)"
PROFILE_PATH = "choose the SQLite database file"
PROFILE_HOST = "enter the server's host name or address"
PROFILE_NOT_A_HOST = "{0} is not a host name; write only the name or address, and the port in its own field"
PROFILE_PORT = "must be between 1 and 65535"
PROFILE_DATABASE = "enter the database name"
PROFILE_USER = "enter the user name to log in with"
PROFILE_ODBC_DRIVER = "choose the installed ODBC driver, e.g. 'ODBC Driver 18 for SQL Server'"
PROFILE_CONFIG = "choose the queue config file, or use the settings published in the database"

# Whose {0} is not a queue: the window does not put a queue's title there.
NOT_ABOUT_A_QUEUE = frozenset(
    {
        NOTE_EMPTY,
        NOTE_TOO_LONG,
        DEFER_PAST,
        DEFER_TOO_FAR,
        MOVE_NOTHING,
        MOVE_NOT_MOVABLE,
        REASON_NEEDED,
        LOGIN_MISMATCH,
        DO_PUBLISH,
        DO_GROUP_ADD,
        DO_GROUP_REMOVE,
        DO_GRANT_ROLE,
        DO_REVOKE_ROLE,
        NOT_SUPERVISOR,
        NOT_IN_ROLE,
        HIDDEN_BY_POLICY,
        PROFILE_NOT_A_HOST,
    }
)


def templates() -> dict[str, str]:
    """Every template by its name."""
    return {name: value for name, value in globals().items() if name.isupper() and isinstance(value, str)}

"""Spot a password written where a file would keep it: a config's database URL, a profile's fields."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

# What to do instead, said the same way wherever a password is refused.
KEYRING_HINT = ("remove it and supply the password through the OS keyring (`workbench profile password NAME`) "
                "or the WORKBENCH_DB_PASSWORD environment variable")

# A password option in a URL query or an ODBC connection string: ?password=…, &pwd=…, ;PWD=…
_OPTION = re.compile(r"(^|[;?&])\s*(password|pwd|passwd)\s*=\s*[^;&\s]", re.IGNORECASE)


def password_in(text: str) -> bool:
    """Does this URL, URL part or connection string carry a password (user:PW@…, ?password=…, PWD=…)?"""
    if not text:
        return False
    try:
        if "://" in text and urlsplit(text).password:
            return True
    except ValueError:
        pass
    return bool(_OPTION.search(text) or _OPTION.search(unquote(text)))

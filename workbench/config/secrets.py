"""Spot a secret written where a file would keep it: a config's database URL, a profile's fields and options."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlsplit

# What to do instead, said the same way wherever a password is refused.
KEYRING_HINT = (
    "remove it and supply the password through the OS keyring (`workbench profile password NAME`) "
    "or the WORKBENCH_DB_PASSWORD environment variable"
)

# An option in a URL query or an ODBC connection string: ?NAME=…, &NAME=…, ;NAME=…
_OPTION = re.compile(r"(^|[;?&])\s*([A-Za-z][\w.-]*)\s*=\s*[^;&\s]")
# Words in an option's name that say its value is a secret: libpq's password and sslpassword, PyMySQL's
# passwd, ODBC's PWD, a key's passphrase, an access token. A file's path (passfile, sslkey) is none.
_SECRET_WORDS = ("password", "passwd", "passphrase", "secret", "token", "apikey", "credential")


def secret_option(name: str) -> bool:
    """Is a driver option of this name a secret (password, sslpassword, PWD, ssl_key_password, …)?"""
    plain = re.sub(r"[^a-z]", "", name.lower())
    return plain in ("pass", "pwd") or plain.endswith("pwd") or any(word in plain for word in _SECRET_WORDS)


def password_in(text: str) -> bool:
    """Does this URL, URL part or connection string carry a secret (user:PW@…, ?password=…, PWD=…,
    ?sslpassword=…)?"""
    if not text:
        return False
    try:
        if "://" in text and urlsplit(text).password:
            return True
    except ValueError:
        pass
    return any(secret_option(m.group(2)) for form in (text, unquote(text)) for m in _OPTION.finditer(form))

"""The secrets a judge backend holds, checked up front, and the one scrubber for them.

An API key comes from an environment variable and a password may sit in a base URL
(``https://user:pass@host/v1``). Neither may reach the store or the console, in any
form a server could echo it back in: as is, JSON-escaped (``\\/``), URL-encoded,
inside base64 (``Authorization: Bearer <key>`` or ``user:pass`` encoded whole), or
wrapped over lines. :class:`Scrubber` replaces all of them with ``***``; every text
from a server passes through it before it is stored or printed.

A key that an HTTP header cannot carry as is (non-ASCII, whitespace, control
characters: usually a copy-paste or a trailing newline) is refused before any
request by :func:`api_key`, naming the variable and never the key.
"""

from __future__ import annotations

import base64
import os
import re
import urllib.parse
from collections.abc import Iterable

from recuse.errors import ConfigError

MASK = "***"
_KEY_CHARS = re.compile(r"[\x21-\x7e]+")  # printable ASCII, no space
_GAP = r"(?:\s|\\[nrt])*"  # a line break (or its JSON escape) inside a wrapped secret


def api_key(env: str) -> str:
    """The API key held by environment variable ``env``, checked for use in a header."""
    key = os.environ.get(env)
    if not key:
        raise ConfigError(
            f"environment variable {env} (--api-key-env) is not set or empty — "
            "export your API key there"
        )
    if not _KEY_CHARS.fullmatch(key):
        raise ConfigError(
            f"the API key in environment variable {env} has whitespace, control or "
            "non-ASCII characters, which an HTTP header cannot carry — export it again "
            "without them (a trailing newline is the usual cause)"
        )
    return key


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``url`` without ``user:password@`` and the (decoded) user and password, if any."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host if parts.port is None else f"{host}:{parts.port}"
    bare = urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    user = urllib.parse.unquote(parts.username or "")
    return bare, (user, urllib.parse.unquote(parts.password or ""))


def _forms(secret: str) -> list[str]:
    """Ways ``secret`` can appear in a server's text (base64: the part that is the
    same wherever the secret starts inside an encoded blob)."""
    forms = {
        secret,
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret, safe=""),
    }
    data = secret.encode("utf-8")
    for start in range(3):
        whole = data[start : start + 3 * ((len(data) - start) // 3)]
        for enc in (base64.b64encode, base64.urlsafe_b64encode):
            core = enc(whole).decode("ascii")
            if len(core) >= 8:  # shorter cores would mask unrelated text
                forms.add(core)
    return sorted(forms, key=len, reverse=True)


def _pattern(form: str) -> str:
    """A regex for ``form`` with optional line breaks between its characters and
    JSON's optional escaping of ``/``."""
    return _GAP.join(r"\\?/" if ch == "/" else re.escape(ch) for ch in form)


class Scrubber:
    """Replaces every form of the given secrets in a text with ``***``."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms = [f for s in secrets if s for f in _forms(s)]
        self._re = (
            re.compile("|".join(_pattern(f) for f in forms), re.IGNORECASE) if forms else None
        )

    def __call__(self, text: str) -> str:
        return text if self._re is None else self._re.sub(MASK, text)

    def __repr__(self) -> str:  # never show what it hides
        return "Scrubber(...)"

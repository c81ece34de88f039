"""recuse: is your LLM judge biased, by how much, with what confidence, how to correct it."""

from typing import TYPE_CHECKING

from recuse.errors import RecuseError
from recuse.roster import Roster
from recuse.tables import PAIRS, RATINGS, validate_pairs, validate_ratings

__all__ = [
    "PAIRS",
    "RATINGS",
    "RecuseError",
    "Report",
    "Roster",
    "audit",
    "certify",
    "validate_pairs",
    "validate_ratings",
]
__version__ = "0.1.0"

if TYPE_CHECKING:  # at run time they load on first use (below)
    from recuse.api import Report, audit, certify


def __getattr__(name: str) -> object:
    # recuse.audit / recuse.Report load the analyses on first use, not on `import recuse`
    # (seconds of statsmodels and matplotlib that `recuse --help` does not need)
    if name in ("audit", "Report", "certify"):
        from recuse import api

        globals().update(audit=api.audit, Report=api.Report, certify=api.certify)
        return getattr(api, name)
    raise AttributeError(f"module 'recuse' has no attribute {name!r}")

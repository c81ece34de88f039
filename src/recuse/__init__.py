"""recuse: is your LLM judge biased, by how much, with what confidence, how to correct it."""

# nothing is imported here at run time (typing and recuse.errors took 13 ms): the
# program's entry point (recuse._program) holds Ctrl-C from its first line, and
# `import recuse` runs before it, outside any handler
TYPE_CHECKING = False

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
    from recuse.errors import RecuseError
    from recuse.roster import Roster
    from recuse.tables import PAIRS, RATINGS, validate_pairs, validate_ratings

#: the module of each name loaded on first use
_LAZY = {
    "RecuseError": "recuse.errors",
    "audit": "recuse.api",
    "Report": "recuse.api",
    "certify": "recuse.api",
    "Roster": "recuse.roster",
    "PAIRS": "recuse.tables",
    "RATINGS": "recuse.tables",
    "validate_pairs": "recuse.tables",
    "validate_ratings": "recuse.tables",
}


def __getattr__(name: str) -> object:
    # recuse.audit / recuse.Report load the analyses on first use, not on `import recuse`
    # (seconds of statsmodels and matplotlib that `recuse --help` does not need), and
    # the tables and the roster pandas: `import recuse` takes no time, so a Ctrl-C while
    # the program loads lands in recuse's entry point (recuse._program), not in pandas
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'recuse' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with those loaded on first use (``dir()``, a REPL's or an
    editor's completion, ``help()``), listed before any is loaded."""
    return sorted({*globals(), *__all__})

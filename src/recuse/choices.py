"""The named choices and lists the command line declares, light to import.

Each is defined here once and imported by the module that computes with it (and
re-exported there): :mod:`recuse.options` and the ``recuse`` command modules read
them from here, so ``recuse --help``, ``recuse <command> --help`` and ``recuse gate``
import none of NumPy, pandas, SciPy or statsmodels (tests/cli/test_cli_lazy.py).
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "CHECKS",
    "FAST_CHECKS",
    "LEAST_N_BOOT",
    "ROSTER_ENV",
    "SE",
    "ConfidenceOf",
    "FigureFormat",
    "HumanTies",
    "ImportFormat",
    "JudgeTies",
    "Orders",
    "SelfScope",
    "SwappedFrame",
    "TableKind",
    "Verdict",
]

# ---- the tables (recuse.tables)
SwappedFrame = Literal["original", "presented"]
ConfidenceOf = Literal["winner", "a"]
#: the two evidence tables (:data:`recuse.tables.PAIRS`, :data:`recuse.tables.RATINGS`):
#: which one an input holds
TableKind = Literal["pairs", "ratings"]

# ---- the verdicts (recuse.metrics.verdicts)
Verdict = Literal["prob", "pick"]
Orders = Literal["both", "first", "second"]
HumanTies = Literal["drop", "split"]
JudgeTies = Literal["half", "drop"]

# ---- the roster (recuse.roster)
ROSTER_ENV = "RECUSE_ROSTER"  # read by the CLI only, as the default of --roster
SelfScope = Literal["snapshot", "line"]

# ---- files of other tools (recuse.data.importers)
ImportFormat = Literal["fastchat-pair", "fastchat-single", "arena-hard", "alpaca-eval", "inspect"]

# ---- the report (recuse.report.model)
FigureFormat = Literal["png", "svg"]

# ---- the regression (recuse.regression.ols, recuse.regression.robustness)
#: standard errors of the regression: heteroskedasticity-consistent (HC0, HC1, HC3) or
#: clustered by prompt (CR1)
SE = Literal["HC0", "HC1", "HC3", "cluster"]
CHECKS: tuple[str, ...] = (
    "length",
    "ordinal",
    "gam",
    "leave-family-out",
    "drop-weakest",
    "drop-one-model",
    "by-dimension",
    "by-task",
    "by-dataset",
)
# The checks ``battery(checks="fast")`` and the audit run by default. Measured on Play
# Favorites (63k ratings, 2 cores; benchmarks/favoritism.py): each of these takes well
# under a second with the sparse OLS; the GAM (pygam, judge-specific splines) takes
# seconds, and the ordered logit's cost grows with the distinct rows (every row for a
# continuous reference): ask for them with ``"all"`` or by name (see battery()).
FAST_CHECKS: tuple[str, ...] = (
    "length",
    "leave-family-out",
    "drop-weakest",
    "drop-one-model",
    "by-dimension",
    "by-task",
    "by-dataset",
)

# ---- the audit (recuse.analyses.base)
#: the audit's bounds on the bootstrap: an interval level of at least LEAST_LEVEL (0.5,
#: the library's own rule, recuse.bootstrap_rules), at least 100 resamples (tighter
#: than the library's 10); checked by the bootstrap's check_level / check_n_boot, in
#: recuse.analyses.base and as recuse.options reads a value
LEAST_N_BOOT = 100

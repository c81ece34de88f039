"""The named choices and lists the command line declares, light to import.

Each is defined here once and imported by the module that computes with it (and
re-exported there): :mod:`recuse.options` and the ``recuse`` command modules read
them from here, so ``recuse --help``, ``recuse <command> --help`` and ``recuse gate``
import none of NumPy, pandas, SciPy or statsmodels (tests/cli/test_cli_lazy.py).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = [
    "BINS",
    "CALIBRATED_RUNGS",
    "CHECKS",
    "COVARIATES",
    "FAST_CHECKS",
    "FOLDS",
    "LEAST_N_BOOT",
    "METRICS",
    "NORMALIZE",
    "POSITION_DEFAULTS",
    "ROSTER_ENV",
    "SE",
    "SE_TYPES",
    "ConfidenceOf",
    "Endpoint",
    "FigureFormat",
    "HumanTies",
    "HumanTiesMode",
    "ImportFormat",
    "JudgeTies",
    "JudgmentKind",
    "Normalize",
    "Orders",
    "PairwiseMode",
    "Planned",
    "PromptLogprobMode",
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
#: ``--human-ties`` of ``recuse audit`` and ``recuse metrics pairs``: a :data:`HumanTies`,
#: or "error" (refuse a table with a tied human label)
HumanTiesMode = Literal["drop", "split", "error"]
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
SE_TYPES: tuple[str, ...] = get_args(SE)
#: per-dimension scaling of the ratings before the favoritism regression
Normalize = Literal["max", "range", "none"]
NORMALIZE: tuple[str, ...] = get_args(Normalize)
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

# ---- judging (recuse.judging.backends.http, .protocols, .store)
#: the OpenAI-compatible server's endpoint a judge is asked through
Endpoint = Literal["completions", "chat"]
PromptLogprobMode = Literal["echo", "vllm"]
PairwiseMode = Literal["direct", "explain"]
JudgmentKind = Literal["pairwise", "likert"]

# ---- recuse metrics pairs (recuse.metrics.competence, recuse.metrics.summary)
#: the calibrated estimate's ladder: each rung's part, ``(own picks − Σ π)`` over the own
#: pairs on that rung divided by the weight of all own pairs; the parts add up to it
CALIBRATED_RUNGS: dict[str, str] = {
    "calibrated_rung_human_prefers_own": "own picks minus the competence-predicted own "
    "picks on the own pairs where the human prefers the judge's answer, per own pair",
    "calibrated_rung_human_neither": "the same on the own pairs the human calls a tie or "
    "did not label, per own pair",
    "calibrated_rung_human_prefers_other": "the same on the own pairs where the human "
    "prefers the other answer, per own pair",
}
# ---- the leaderboard (recuse.metrics.bradley_terry)
#: the style and self covariates of the Bradley–Terry leaderboard, each in words
COVARIATES: dict[str, str] = {
    "length": "tanh of the standardised length difference a − b (words)",
    "headers": "difference in log(1 + markdown headers)",
    "lists": "difference in log(1 + markdown list items)",
    "bold": "difference in log(1 + bold spans)",
    "first": "+1 shown first, −1 shown second, 0 order unknown",
    "own": "+1 when the answer is the judge's own, −1 when the other one is",
    "family": "+1 when the answer is from the judge's family (not its own), −1 when the "
    "other one is",
}
# ---- calibration (recuse.metrics.calibration)
BINS = 10
FOLDS = 5
#: the metrics of ``recuse metrics pairs`` (:func:`recuse.metrics.summary.pairwise_bias`)
METRICS = (
    "self_preference_eo",
    "self_preference_dp",
    "self_preference_calibrated",
    "family_preference_calibrated",
    *CALIBRATED_RUNGS,
    "family_preference_eo",
    "family_preference_dp",
    "verbosity_bias",
    "verbosity_deviation",
    "verbosity_longer_gap",
    "position_consistency",
    "flip_rate",
    "first_position_rate",
)

# ---- recuse plan (recuse.simulate.power)
#: the biases a study can be planned for
Planned = Literal["self-preference", "verbosity", "position"]
#: how position is simulated unless --flip-rate/--ties/--icc or --like say otherwise:
#: the order flips, ties and within-prompt correlation typical of LLM judges
POSITION_DEFAULTS: dict[str, float] = {"flip_rate": 0.25, "tie_rate": 0.05, "icc": 0.2}

# ---- the audit (recuse.analyses.base)
#: the audit's bounds on the bootstrap: an interval level of at least LEAST_LEVEL (0.5,
#: the library's own rule, recuse.bootstrap_rules), at least 100 resamples (tighter
#: than the library's 10); checked by the bootstrap's check_level / check_n_boot, in
#: recuse.analyses.base and as recuse.options reads a value
LEAST_N_BOOT = 100

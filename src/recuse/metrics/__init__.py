"""Pairwise bias metrics: pure functions of a ``pairs`` table with bootstrap intervals.

* :mod:`~recuse.metrics.self_preference` — self and family preference (Equal
  Opportunity, Def. 4.1; Demographic Parity, Eq. 4) and Figure 2's confusion matrix;
* :mod:`~recuse.metrics.competence` — self and family preference measured against the
  judge's own competence (the calibrated estimate);
* :mod:`~recuse.metrics.familiarity_mediation` — how much of it familiarity explains;
* :mod:`~recuse.metrics.verbosity` — verbosity bias (Eq. 6 / Eq. 5) and the curves of
  Figures 3–5;
* :mod:`~recuse.metrics.position` — consistency, flip rate, first-position rate;
* :mod:`~recuse.metrics.summary` — all of them for every judge from one bootstrap;
* :mod:`~recuse.metrics.bootstrap` — the vectorised cluster (prompt) bootstrap; every
  metric function takes its settings as one value, ``boot=Resampling(level, n_boot, seed)``.
"""

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.metrics.position import first_position_rate, flip_rate, position_consistency
from recuse.metrics.result import MetricResult, Skipped, results_frame
from recuse.metrics.self_preference import (
    ConfusionMatrix,
    confusion_matrix,
    family_preference,
    self_preference,
)
from recuse.metrics.summary import METRICS, PairwiseBias, pairwise_bias
from recuse.metrics.verbosity import (
    human_alignment_curve,
    human_verbosity_curve,
    judge_verbosity_curve,
    verbosity_bias,
)

__all__ = [
    "METRICS",
    "ConfusionMatrix",
    "MetricResult",
    "PairwiseBias",
    "Resampling",
    "Skipped",
    "calibrated_self_preference",
    "confusion_matrix",
    "family_preference",
    "first_position_rate",
    "flip_rate",
    "human_alignment_curve",
    "human_verbosity_curve",
    "judge_verbosity_curve",
    "pairwise_bias",
    "position_consistency",
    "results_frame",
    "self_preference",
    "verbosity_bias",
]

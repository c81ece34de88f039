"""Regression analyses of judge bias: the favoritism model of Play Favorites (Eq. 1),
its robustness battery, exploration and stratified prediction-powered inference.
(Debiasing is in :mod:`recuse.mitigation`, the ratings simulator in
:mod:`recuse.simulate`.)"""

from recuse.regression.explore import (
    Agreement,
    ScoreMatrix,
    agreement,
    judge_agreement,
    score_matrix,
    spearman_by_dimension,
)
from recuse.regression.favoritism import (
    FavoritismResult,
    Prepared,
    fit_favoritism,
    fit_prepared,
    prepare,
)
from recuse.regression.ppi import PPIResult, model_mean_ppi, ppi_comparison, stratified_ppi_mean
from recuse.regression.robustness import Battery, battery, comparison_table

__all__ = [
    "Agreement",
    "Battery",
    "FavoritismResult",
    "PPIResult",
    "Prepared",
    "ScoreMatrix",
    "agreement",
    "battery",
    "comparison_table",
    "fit_favoritism",
    "fit_prepared",
    "judge_agreement",
    "model_mean_ppi",
    "ppi_comparison",
    "prepare",
    "score_matrix",
    "spearman_by_dimension",
    "stratified_ppi_mean",
]

"""Regression analyses of judge bias: the favoritism model of Play Favorites (Eq. 1),
its robustness battery, exploration, debiasing and stratified prediction-powered
inference."""

from recuse.regression.debias import DebiasEffect, debias, debias_effect
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
from recuse.regression.simulate import Simulation, simulate_ratings

__all__ = [
    "Agreement",
    "Battery",
    "DebiasEffect",
    "FavoritismResult",
    "PPIResult",
    "Prepared",
    "ScoreMatrix",
    "Simulation",
    "agreement",
    "battery",
    "comparison_table",
    "debias",
    "debias_effect",
    "fit_favoritism",
    "fit_prepared",
    "judge_agreement",
    "model_mean_ppi",
    "ppi_comparison",
    "prepare",
    "score_matrix",
    "simulate_ratings",
    "spearman_by_dimension",
    "stratified_ppi_mean",
]

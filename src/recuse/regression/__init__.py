"""Regression analyses of judge bias: the favoritism model of Play Favorites (Eq. 1),
its robustness battery, debiasing and stratified prediction-powered inference."""

from recuse.regression.favoritism import (
    FavoritismResult,
    Prepared,
    fit_favoritism,
    fit_prepared,
    prepare,
)
from recuse.regression.simulate import Simulation, simulate_ratings

__all__ = [
    "FavoritismResult",
    "Prepared",
    "Simulation",
    "fit_favoritism",
    "fit_prepared",
    "prepare",
    "simulate_ratings",
]

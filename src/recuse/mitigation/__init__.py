"""Corrections of a biased judge: scores with the estimated self- and family-bias
removed (:mod:`.debias`) and the perplexity-weighted ensemble of judges
(:mod:`.familiarity_ensemble`)."""

from recuse.mitigation.debias import DebiasEffect, debias, debias_effect

__all__ = ["DebiasEffect", "debias", "debias_effect"]

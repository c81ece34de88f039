"""Planted-truth generators: pairs with self/family/verbosity/position biases of known
size (:mod:`.pairs`), pairs with a planted familiarity effect (:mod:`.familiarity`),
and ratings drawn from the favoritism model (:mod:`.ratings`)."""

from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity
from recuse.simulate.pairs import PlantedBias, SimulatedPairs, simulate_pairs
from recuse.simulate.ratings import Simulation, simulate_ratings

__all__ = [
    "PlantedBias",
    "PlantedFamiliarity",
    "SimulatedPairs",
    "Simulation",
    "simulate_familiarity",
    "simulate_pairs",
    "simulate_ratings",
]

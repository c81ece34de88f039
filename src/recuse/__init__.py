"""recuse: is your LLM judge biased, by how much, with what confidence, how to correct it."""

from recuse.errors import RecuseError
from recuse.roster import Roster
from recuse.tables import PAIRS, RATINGS, validate_pairs, validate_ratings

__all__ = ["PAIRS", "RATINGS", "RecuseError", "Roster", "validate_pairs", "validate_ratings"]
__version__ = "0.1.0"

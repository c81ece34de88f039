"""Every analysis's words, light to import: the biases it estimates (their
:class:`~recuse.report.bias.Bias` words) and its :class:`~recuse.biases.heading.Heading`
(id, title, table kind, biases), one module per analysis of :mod:`recuse.analyses`.

Each is defined here once: the analysis module imports its biases and heading from its
module here and adds what it computes with; :data:`HEADINGS` is the audit's order, which
:data:`recuse.analyses.REGISTRY` follows. ``recuse gate`` and ``recuse analyses`` read
the biases from here without NumPy, pandas, SciPy or statsmodels
(tests/cli/test_cli_lazy.py).
"""

from recuse.biases import (
    agreement,
    calibration,
    certification,
    familiarity,
    family_preference,
    favoritism,
    leaderboard,
    position,
    probes,
    self_preference,
    self_preference_ladder,
    self_recognition,
    verbosity,
)
from recuse.biases.heading import Heading

#: every analysis's heading, in the audit's (and the registry's) order
HEADINGS: tuple[Heading, ...] = (
    self_preference.HEADING,
    self_preference_ladder.HEADING,
    family_preference.HEADING,
    verbosity.HEADING,
    position.HEADING,
    probes.HEADING,
    self_recognition.HEADING,
    familiarity.HEADING,
    favoritism.HEADING,
    leaderboard.HEADING,
    agreement.HEADING,
    calibration.HEADING,
    certification.HEADING,
)

__all__ = ["HEADINGS", "Heading"]

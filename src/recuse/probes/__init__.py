"""Counterfactual probes: measure a judge's sensitivities without labels.

:mod:`recuse.probes.transforms` holds the documented, deterministic edits of one
answer; :mod:`recuse.probes.design` turns a pairs table into the probe table the
judge runner judges (the original pair, a placebo and one row per probe) and the
self-recognition rows; :mod:`recuse.probes.run` judges them (import it directly: it
needs the runner). The effects are estimated by :mod:`recuse.metrics.probes` and
:mod:`recuse.metrics.recognition` and reported by the ``probes`` and
``self-recognition`` analyses.
"""

from recuse.probes.design import (
    RECOGNITION,
    build_probe_table,
    build_recognition_table,
    probe_bases,
)
from recuse.probes.transforms import PROBES, Probe, apply_probe

__all__ = [
    "PROBES",
    "RECOGNITION",
    "Probe",
    "apply_probe",
    "build_probe_table",
    "build_recognition_table",
    "probe_bases",
]

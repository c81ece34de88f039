"""The words of the calibration analysis (:mod:`recuse.analyses.calibration`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.choices import BINS, FOLDS
from recuse.report.bias import RATE, Bias

_QUALITY = "A quality score, not a bias"


def _ece(key: str, title: str, short: str, what: str, order: int, headline: bool) -> Bias:
    return Bias(
        key=key,
        title=title,
        short=short,
        unit=f"debiased calibration error of {what} against the human label as 0/1 (ties "
        f"left out): over {BINS} equal-width probability bins, the root of the "
        "pair-weighted mean squared gap between stated probability and share decided "
        "for a, with the gap chance alone makes taken out (Kumar et al. 2019); 0 = "
        "calibrated, at any n. The plug-in ECE, and what a perfectly calibrated judge's "
        f"plug-in ECE reads at these probabilities and n, are its components. {_QUALITY}",
        positive="stated probabilities miss the human outcome rates",
        negative="(an ECE cannot be below 0)",
        none=f"calibration error (a quality score, not a bias), {what}",
        order=order,
        null=0.0,
        headline=headline,
        kind="quality",
        scale="probability gap, root mean square",
        span=RATE,
        tested=False,  # a quality score: no p-value, never flagged
    )


def _brier(key: str, title: str, what: str, order: int) -> Bias:
    return Bias(
        key=key,
        title=title,
        unit=f"Brier score of {what}: mean of (p - y)^2, y = human label as 0/1 (ties left "
        f"out); 0 = perfect, 0.25 = always saying 0.5. {_QUALITY}",
        positive="probabilities are off the human outcomes",
        negative="(a Brier score cannot be below 0)",
        none=f"Brier score (a quality score, not a bias), {what}",
        order=order,
        null=0.0,
        headline=False,
        kind="quality",
        scale="mean squared probability error",
        span=RATE,
        tested=False,  # 0 is a floor of the Brier score, not a value a test could reject
    )


RAW = "the judge's probabilities p_a"

ISO = f"isotonic-recalibrated probabilities ({FOLDS}-fold cross-fitted by prompt)"

PLATT = f"Platt-recalibrated probabilities ({FOLDS}-fold cross-fitted by prompt)"

ECE = _ece("calibration_ece", "Calibration error (ECE)", "ECE", RAW, 110, True)

BRIER = _brier("calibration_brier", "Brier score", RAW, 111)

ECE_ISOTONIC = _ece(
    "calibration_ece_isotonic", "ECE after isotonic recalibration", "ECE iso", ISO, 112, False
)

BRIER_ISOTONIC = _brier(
    "calibration_brier_isotonic", "Brier after isotonic recalibration", ISO, 113
)

ECE_PLATT = _ece("calibration_ece_platt", "ECE after Platt scaling", "ECE Platt", PLATT, 114, False)

BRIER_PLATT = _brier("calibration_brier_platt", "Brier after Platt scaling", PLATT, 115)


HEADING = Heading(
    id="calibration",
    title="Calibration",
    table="pairs",
    biases=(ECE, BRIER, ECE_ISOTONIC, BRIER_ISOTONIC, ECE_PLATT, BRIER_PLATT),
)

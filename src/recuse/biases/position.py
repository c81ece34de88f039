"""The words of the position analysis (:mod:`recuse.analyses.position`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import RATE, Bias

POSITION = Bias(
    key="position",
    title="Position",
    unit="share of the win given to the answer shown first, over pairs judged in both "
    "orders; 0.5 = no preference",
    positive="prefers the answer shown first",
    negative="prefers the answer shown second",
    none="no detectable position preference",
    order=50,
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="share of win to first",
    span=RATE,
    null=0.5,
)


HEADING = Heading(
    id="position",
    title="Position",
    table="pairs",
    biases=(POSITION,),
)

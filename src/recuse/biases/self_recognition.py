"""The words of the self-recognition analysis (:mod:`recuse.analyses.self_recognition`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.report.bias import RATE, Bias

SELF_RECOGNITION = Bias(
    key="self_recognition",
    title="Self-recognition",
    unit="share of 'I wrote it' the judge gives its own answer when asked which of its "
    "own and another model's answer it wrote, both orders averaged; 0.5 = chance, "
    "1 = always right. A capability, not a bias",
    positive="tells its own answers from others' better than chance",
    negative="attributes others' answers to itself more often than its own",
    none="recognises its own answers no better than chance",
    order=79,
    scale="share of right attributions",
    span=RATE,
    null=0.5,
    kind="quality",
)


HEADING = Heading(
    id="self-recognition",
    title="Self-recognition (no labels needed)",
    table="pairs",
    biases=(SELF_RECOGNITION,),
)

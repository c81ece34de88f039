"""The calibrated family preference of a judge that picks its family member's answer on
every family pair and has no pair between two outsiders to learn its competence on: the
family term takes every pick (φ → ∞), the discrimination κ is then free, and the
predicted rate is where the fit started, not a measurement. It read +0.50 [0.4995,
0.5003], flagged material, with nothing said; it now carries a warning."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.metrics import competence, pairwise_bias
from recuse.metrics.bootstrap import Resampling
from recuse.roster import Roster

OUTSIDERS = ("claude-v1", "vicuna-13b", "alpaca-13b", "llama-13b")
FAMILY = "gpt-3.5-turbo"  # gpt-4's family


def _table(*, always_family: bool, outsider_pairs: int = 0, seed: int = 0) -> pd.DataFrame:
    """40 pairs of gpt-3.5-turbo against an outsider (its side alternating), judged by
    gpt-4 in both orders: always for gpt-3.5-turbo, or agreeing with the humans on 3 of 4
    orders; then ``outsider_pairs`` pairs of two outsiders, judged as the humans say."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(40 + outsider_pairs):
        if i < 40:
            a, b = (FAMILY, OUTSIDERS[i % 4]) if i % 2 == 0 else (OUTSIDERS[i % 4], FAMILY)
        else:
            a, b = OUTSIDERS[i % 4], OUTSIDERS[(i + 1) % 4]
        human = float(rng.random() < 0.5)
        if i < 40 and always_family:
            first = second = float(a == FAMILY)
        else:
            first, second = (float((rng.random() < 0.75) == (human == 1)) for _ in range(2))
        rows.append({"item_id": f"i{i}", "prompt_id": f"p{i}", "model_a": a, "model_b": b,
                     "human": human, "judge": "gpt-4", "p_a_first": first, "p_a_second": second,
                     "p_a": (first + second) / 2})  # fmt: skip
    return pd.DataFrame(rows)


def _family(pairs: pd.DataFrame):  # type: ignore[no-untyped-def]
    res = pairwise_bias(
        pairs, Roster.builtin(), judges=["gpt-4"], metrics=["family_preference_calibrated"],
        boot=Resampling(n_boot=200, seed=0),
    )  # fmt: skip
    (r,) = res.results
    return r


def _separated(warnings: tuple[str, ...]) -> list[str]:
    return [w for w in warnings if "pairs between two models outside its family (under" in w]


@pytest.mark.parametrize("most", [competence.MAX_PATTERNS, 1])  # exact, then one-step resamples
def test_every_family_pick_and_no_outsider_pair_is_said(
    monkeypatch: pytest.MonkeyPatch, most: int
) -> None:
    monkeypatch.setattr(competence, "MAX_PATTERNS", most)
    r = _family(_table(always_family=True))
    assert ("one Newton step" in r.method) == (most == 1)
    # by hand: gpt-3.5-turbo's answer picked in both orders of all 40 pairs
    assert r.components["family_pick_rate"] == 1.0
    (said,) = _separated(r.warnings)
    assert said.startswith(
        "it picked a family member's answer on every one of its 40 family pairs and judged 0 "
        "pairs between two models outside its family (under 5)"
    )


def test_pairs_between_outsiders_or_picks_both_ways_say_nothing() -> None:
    # the same judge with 20 pairs between outsiders: κ is learnt there
    with_outsiders = _family(_table(always_family=True, outsider_pairs=20))
    assert with_outsiders.components["family_pick_rate"] == 1.0
    assert not _separated(with_outsiders.warnings)
    # no outsider pairs, but the judge picks both ways: κ and φ are both learnt
    mixed = _family(_table(always_family=False))
    assert 0 < mixed.components["family_pick_rate"] < 1
    assert not _separated(mixed.warnings)

"""Resamples whose human labels give the strengths no finite estimate (Ford's condition
broken in the resample, not in the full sample): the bootstrap counts them
(``MetricResult.n_boot_unfit``) and, above :data:`~recuse.metrics.competence.UNFIT_SHARE`
of the kept resamples, the calibrated estimate says so on the result and on the
audit's finding (JSON, HTML, terminal).

The planted table: four models in every prompt, all six pairs labelled. In the
"order" prompts the human prefers m0 > m1 > m2 > m3, in the "upset" prompts the
reverse. With both kinds every model beat and lost to every other, so the full sample
meets the condition; a resample that draws no upset prompt (or only upset prompts)
breaks it. So the count is known without the graph code: the resamples whose draw
count of the upset prompts is 0 or all of them."""

from __future__ import annotations

import html
import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from recuse.metrics.bootstrap import Resampling, resample_counts
from recuse.metrics.competence import (
    UNFIT_SHARE,
    calibrated_self_preference,
    unfit_warning,
)

MODELS = ("m0", "m1", "m2", "m3")
CAL = "self_preference_calibrated"


def _planted(n_prompts: int, upsets: int, seed: int = 0) -> pd.DataFrame:
    """Judge m0 over ``n_prompts`` prompts of all six pairs of MODELS; the last
    ``upsets`` prompts reverse the human order. Its verdicts follow the label 80% of
    the time (each order drawn on its own), so its competence has a finite fit."""
    rng = np.random.default_rng(seed)
    rows = []
    for p in range(n_prompts):
        upset = p >= n_prompts - upsets
        for a, b in combinations(MODELS, 2):
            if rng.random() < 0.5:
                a, b = b, a
            human = float((MODELS.index(a) < MODELS.index(b)) != upset)
            first, second = (
                float(human if rng.random() < 0.8 else 1.0 - human) for _ in range(2)
            )
            rows.append(
                {"item_id": f"p{p}-{a}-{b}", "prompt_id": f"p{p:02d}", "model_a": a,
                 "model_b": b, "human": human, "judge": "m0", "p_a_first": first,
                 "p_a_second": second, "p_a": (first + second) / 2}
            )  # fmt: skip
    return pd.DataFrame(rows)


def _expected_unfit(t: pd.DataFrame, upsets: int, boot: Resampling) -> int:
    """The resamples that draw none of the upset prompts, or nothing else: the same
    draws as the bootstrap's (prompts sorted, one generator from the seed)."""
    prompts = np.sort(t["prompt_id"].unique())
    counts = resample_counts(len(prompts), boot.n_boot, np.random.default_rng(boot.seed))
    drawn = counts[:, len(prompts) - upsets :].sum(axis=1)
    return int(((drawn == 0) | (drawn == len(prompts))).sum())


def test_the_count_is_the_resamples_that_break_the_condition() -> None:
    """One upset prompt in 20: about (19/20)^20 = 36% of the resamples draw none of it.
    The count equals the one read off the draws; the warning states it; four upset
    prompts (about 1%) give a count but no warning."""
    boot = Resampling(n_boot=400, seed=3)
    t = _planted(20, upsets=1)
    r = calibrated_self_preference(t, judge="m0", boot=boot, stratum=None, label=False)
    want = _expected_unfit(t, 1, boot)
    assert 0.25 < want / boot.n_boot < 0.45  # the planted share, as designed
    assert r.n_boot_dropped == 0
    assert r.n_boot_unfit == want
    said = [w for w in r.warnings if "no finite estimate" in w]
    assert said == [unfit_warning(want, boot.n_boot)]
    assert said[0].startswith(f"{want} of {boot.n_boot} resamples ({want / boot.n_boot:.0%})")
    assert r.to_dict()["n_boot_unfit"] == want

    t4 = _planted(20, upsets=4)
    r4 = calibrated_self_preference(t4, judge="m0", boot=boot, stratum=None, label=False)
    want4 = _expected_unfit(t4, 4, boot)
    assert 0 < want4 <= UNFIT_SHARE * boot.n_boot
    assert r4.n_boot_unfit == want4
    assert not [w for w in r4.warnings if "no finite estimate" in w]


def test_the_threshold() -> None:
    """Said above UNFIT_SHARE of the kept resamples, not at it; nothing without kept ones."""
    at = round(UNFIT_SHARE * 1000)
    assert unfit_warning(at, 1000) is None
    assert unfit_warning(at + 1, 1000) is not None
    assert unfit_warning(0, 0) is None


def test_held_strengths_and_one_step_count_none() -> None:
    """Strengths given are not refitted, and the one-step bootstrap takes one step from
    the full-sample fit: neither has resamples without a finite fit."""
    boot = Resampling(n_boot=200, seed=3)
    t = _planted(20, upsets=1)
    fixed = {"m0": 1.5, "m1": 0.5, "m2": -0.5, "m3": -1.5}
    for kw in ({"strengths": fixed}, {"one_step": True}):
        r = calibrated_self_preference(t, judge="m0", boot=boot, stratum=None, label=False, **kw)
        assert r.n_boot_unfit == 0, kw
        assert not [w for w in r.warnings if "no finite estimate" in w], kw


def test_the_warning_reaches_the_audit_finding(tmp_path: Path) -> None:
    """The audit's calibrated finding carries the warning, in report.json, the HTML page
    and the terminal summary."""
    import recuse
    from recuse.report.html import render_html
    from recuse.report.summary_table import summary_text

    t = _planted(20, upsets=1)
    report = recuse.audit(t, only=["self-preference"], n_boot=400, seed=3, min_n=5)
    found = [f for f in report.result.findings if f.bias.key == CAL]
    assert len(found) == 1
    said = [w for w in found[0].warnings if "no finite estimate" in w]
    assert len(said) == 1 and " resamples (" in said[0]
    data = json.loads(report.to_json(tmp_path / "report.json").read_text("utf-8"))
    flat = [w for s in data["sections"] for f in s["findings"] for w in f["warnings"]]
    assert said[0] in flat
    # the page escapes ' as &#39; (Jinja)
    assert html.escape(said[0]).replace("&#x27;", "&#39;") in render_html(report.result)
    assert said[0] in summary_text(report.result)


@pytest.mark.parametrize("n_boot", [100, 2000])
def test_the_share_is_of_the_kept_resamples(n_boot: int) -> None:
    """The warning's share is of the kept resamples (the count and the denominator it
    states), whatever their number."""
    boot = Resampling(n_boot=n_boot, seed=5)
    t = _planted(20, upsets=1, seed=2)
    r = calibrated_self_preference(t, judge="m0", boot=boot, stratum=None, label=False)
    kept = r.n_boot - r.n_boot_dropped
    said = [w for w in r.warnings if "no finite estimate" in w]
    assert said and said[0].startswith(f"{r.n_boot_unfit} of {kept} resamples")

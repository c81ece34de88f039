"""The competence model's own words about itself (recuse.metrics.competence)."""

from __future__ import annotations

import re

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import calibrated_self_preference
from recuse.simulate.self_preference import simulate_lapse_judge


def test_a_judge_near_its_ceiling_is_never_said_to_pick_its_own_answer_always() -> None:
    """The ceiling warning wrote the predicted own-pick rate ``{:.0%}``: a judge predicted
    to pick its own answer 99.8% of the time read "100% of the time", a certainty its
    misses deny. It is written as every share is (numbers.share_percent: whole percents,
    more decimals where they would read 0% or 100%): under 100%, as a rate short of
    certainty is."""
    pairs = simulate_lapse_judge(own_rate=0.995, accuracy=0.999, shift=2.0, seed=1,
                                 n_prompts=320).pairs  # fmt: skip
    r = calibrated_self_preference(pairs, judge="m0", boot=Resampling(n_boot=50), label=False)
    (said,) = [w for w in r.warnings if w.startswith("competence near its ceiling")]
    shown = re.search(r"pick its own answer ([0-9.]+)% of the time", said)
    assert shown is not None, said
    assert 99.5 <= float(shown.group(1)) < 100  # under 100%, as the rate is
    assert "100% of the time" not in said

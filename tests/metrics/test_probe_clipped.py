"""A probe effect's padded end cut at the metric's bound (±1) is said as the bound.

Where the padding (:func:`recuse.metrics.estimate.padded_span`) widens an end past ±1,
the end reported is the bound: the method says so (``clipped_words``) and the
``extrapolated`` record, which describes ends extrapolated past the resamples, leaves that
end out (the bound is no extrapolated number). Before, a 99% end extrapolated and then
padded past 1 kept its ``extrapolated`` record (the method read "its ends past the
resamples' reach extrapolated" beside a high end of 1), and a 95% end padded past 1
without extrapolation was cut with nothing said.
"""

from __future__ import annotations

import pandas as pd

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.probes import probe_effects
from recuse.metrics.result import MetricResult

WIDENED = (
    "its high end is 1, the greatest value the metric takes (an end widened for the "
    "prompts that move it lay beyond it)"
)


def _effect(prompts: int, level: float) -> MetricResult:
    """``prompts`` prompts of 2 pairs each, treated answer in slot a: every pair of all
    prompts but the last moved from 0 to 1 by the edit, the last prompt's pairs moved
    0.1 back (0.5 to 0.4); 2,000 resamples, seed 7."""
    rows = []
    for q in range(prompts):
        s, e = (0.5, 0.4) if q == prompts - 1 else (0.0, 1.0)
        for k in range(2):
            for probe, share in (("original", s), ("placebo", s), ("authority", e)):
                rows.append(
                    {
                        "judge": "j", "prompt_id": f"q{q:02d}", "base_item": f"q{q:02d}-{k}",
                        "item_id": f"q{q:02d}-{k}:{probe}", "probe": probe, "treated": "a",
                        "model_a": "x", "model_b": "y", "p_a": share,
                    }
                )  # fmt: skip
    res, _ = probe_effects(pd.DataFrame(rows), boot=Resampling(n_boot=2000, seed=7, level=level))
    (x,) = res
    return x


def test_an_end_extrapolated_then_padded_past_1_is_the_bound_not_an_extrapolated_end() -> None:
    """5 prompts at 99%: the effect (4 × 1 − 0.1) / 5 = 0.78, both expanded ends past
    the resamples' reach, the high end then padded past 1 and cut. The record keeps
    the low end alone and the method says the high end is the bound."""
    x = _effect(5, 0.99)
    assert abs(x.estimate - (4 * 1.0 - 0.1) / 5) < 1e-12
    assert x.ci_high == 1.0 and x.ci_low < x.estimate
    assert x.extrapolated is not None
    assert (x.extrapolated.low, x.extrapolated.high) == (True, False)
    assert x.extrapolated.side == "low end"
    assert WIDENED in x.method
    low = "its low end past the resamples' reach extrapolated along a normal tail"
    assert x.method.endswith(low)
    assert "its ends past the resamples' reach" not in x.method


def test_an_end_padded_past_1_without_extrapolation_says_the_bound() -> None:
    """8 prompts at 95%: the effect (7 − 0.1) / 8 = 0.8625, no end past the resamples'
    reach, the high end padded past 1 and cut: the method says the bound, once."""
    x = _effect(8, 0.95)
    assert abs(x.estimate - (7 * 1.0 - 0.1) / 8) < 1e-12
    assert x.ci_high == 1.0 and x.extrapolated is None
    assert x.method.count("the greatest value the metric takes") == 1
    assert x.method.endswith(WIDENED)

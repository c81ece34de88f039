"""Probe effects by hand, with verdicts missing in one order of one version."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from recuse.metrics.bootstrap import Resampling
from recuse.metrics.probes import probe_effects
from recuse.tables import validate_pairs


def _table(first_slot: float, drop: dict[tuple[int, str], str]) -> pd.DataFrame:
    """Six base pairs (one prompt each), the edit on a, judged by a judge that gives the
    answer shown first ``first_slot`` of the win, except that ``padding`` moves it 0.1
    toward the treated answer; ``drop`` blanks one order of one version of a pair."""
    rows = []
    for i in range(6):
        for version in ("original", "placebo", "padding"):
            lift = 0.1 if version == "padding" else 0.0
            row = {
                "item_id": f"i{i}#{version}", "prompt_id": f"q{i}", "judge": "j",
                "base_item": f"i{i}", "probe": version, "treated": "a", "human": np.nan,
                "p_a_first": first_slot + lift,  # a shown first
                "p_a_second": 1 - first_slot + lift,  # b shown first: a has the second slot
            }  # fmt: skip
            order = drop.get((i, version))
            if order:
                row[f"p_a_{order}"] = np.nan
                row[f"status_{order}"] = "unparsed"
            rows.append(row)
    return validate_pairs(pd.DataFrame(rows))


def test_a_version_missing_an_order_is_compared_in_the_orders_all_versions_have() -> None:
    # by hand: in both orders the padded answer gets 0.1 more than in the placebo, so the
    # effect is 0.1 for every pair. A position-bound judge (0.9 to the first slot) with
    # padding's first order unparsed in pair 0: read in the second order alone the padded
    # answer has 0.1 + 0.1 = 0.2 against the placebo's (0.9 + 0.1) / 2 = 0.5, an effect of
    # -0.3 for that pair and a mean of (5 * 0.1 - 0.3) / 6 = 0.033 if the orders were mixed.
    # In the orders all three versions share (the second) it is 0.2 - 0.1 = 0.1.
    for drop in (
        {},
        {(0, "padding"): "first"},
        {(1, "original"): "second", (2, "placebo"): "first"},
    ):
        results, skipped = probe_effects(_table(0.9, drop), boot=Resampling(n_boot=200))
        (padding,) = results
        assert not skipped and padding.n == 6
        assert padding.estimate == pytest.approx(0.1), drop


def test_a_pair_whose_versions_share_no_order_is_left_out() -> None:
    # pair 0: the original judged only first, the padding only second: nothing to compare
    drop = {(0, "original"): "second", (0, "padding"): "first"}
    (padding,), _ = probe_effects(_table(0.9, drop), boot=Resampling(n_boot=200))
    assert padding.n == 5 and padding.estimate == pytest.approx(0.1)


def test_a_verdict_without_orders_is_its_own_order() -> None:
    t = _table(0.5, {}).drop(columns=["p_a_first", "p_a_second"])
    t["p_a"] = np.where(t["probe"] == "padding", 0.6, 0.5)
    (padding,), _ = probe_effects(t, boot=Resampling(n_boot=200))
    assert padding.estimate == pytest.approx(0.1) and padding.n == 6


def test_probe_columns_and_verdicts_as_pandas_holds_them() -> None:
    """A probe table whose probe columns are pandas' ``string[pyarrow]`` stopped
    probe_effects and validate_pairs with "operation 'and_' not supported for dtype
    'bool[pyarrow]'"; one whose missing verdict is ``pd.NA`` in an object column with
    float()'s TypeError. Both are the effect of the plain table, 0.1 by hand."""
    t = _table(0.9, {(0, "padding"): "first"})
    arrow = t.astype({c: "string[pyarrow]" for c in ("probe", "treated", "base_item")})
    held = t.astype({"p_a_first": object})
    held["p_a_first"] = held["p_a_first"].where(held["p_a_first"].notna(), pd.NA)
    assert validate_pairs(arrow)["probe"].tolist() == t["probe"].tolist()
    for given in (arrow, held):
        (padding,), _ = probe_effects(given, boot=Resampling(n_boot=200))
        assert padding.estimate == pytest.approx(0.1) and padding.n == 6


def test_a_judge_without_some_base_pairs_is_read_on_its_own() -> None:
    """A second judge that did not judge base pair 0 stopped probe_effects with
    ValueError 'cluster labels must not be missing' (the wide table held every judge ×
    every base pair, the missing one without a prompt). Each judge's effect is read on
    the pairs it judged: 0.1 by hand for both, on 6 and 5 pairs."""
    t = _table(0.9, {})
    other = t[t["base_item"] != "i0"].assign(judge="k")
    results, skipped = probe_effects(pd.concat([t, other]), boot=Resampling(n_boot=200))
    assert not skipped
    assert {r.judge: r.n for r in results} == {"j": 6, "k": 5}
    assert all(r.estimate == pytest.approx(0.1) for r in results)

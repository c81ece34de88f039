"""pairwise_bias: one shared bootstrap that agrees with the single-metric functions."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from recuse.errors import ConfigError
from recuse.metrics import (
    METRICS,
    family_preference,
    first_position_rate,
    flip_rate,
    pairwise_bias,
    position_consistency,
    self_preference,
    verbosity_bias,
)
from recuse.metrics.bootstrap import Resampling
from recuse.simulate.pairs import SimulatedPairs, simulate_pairs


@pytest.fixture(scope="module")
def sim() -> SimulatedPairs:
    return simulate_pairs(n_prompts=120, pairs_per_prompt=3, same_source_rate=0.2, seed=7)


def test_joint_results_equal_the_single_functions(sim: SimulatedPairs) -> None:
    t, fams = sim.pairs, sim.families
    res = pairwise_bias(t, fams, boot=Resampling(n_boot=300, seed=3), min_n=5)
    assert not res.skipped
    assert {(r.judge, r.metric) for r in res.results} == {
        (j, m) for j in ("claude-v1", "gpt-4") for m in METRICS
    }
    opts = {"boot": Resampling(n_boot=300, seed=3), "min_n": 5}
    for judge in ("gpt-4", "claude-v1"):
        single = {
            "self_preference_eo": self_preference(t, judge=judge, **opts),
            "self_preference_dp": self_preference(t, judge=judge, kind="dp", **opts),
            "family_preference_eo": family_preference(t, fams, judge=judge, **opts),
            "family_preference_dp": family_preference(t, fams, judge=judge, kind="dp", **opts),
            "verbosity_bias": verbosity_bias(t, judge=judge, **opts),
            "verbosity_deviation": verbosity_bias(t, judge=judge, kind="absolute", **opts),
            "position_consistency": position_consistency(t, judge=judge, **opts),
            "flip_rate": flip_rate(t, judge=judge, **opts),
            "first_position_rate": first_position_rate(t, judge=judge, **opts),
        }
        for metric, one in single.items():
            joint = res.get(metric, judge)
            assert joint.estimate == pytest.approx(one.estimate, abs=1e-12), metric
            assert (joint.ci_low, joint.ci_high) == pytest.approx(
                (one.ci_low, one.ci_high), abs=1e-12
            ), metric
            assert (joint.n, joint.n_clusters) == (one.n, one.n_clusters)
            assert joint.method == one.method


def test_curves_and_serialisation(sim: SimulatedPairs) -> None:
    res = pairwise_bias(sim.pairs, sim.families, boot=Resampling(n_boot=100), min_n=5)
    assert set(res.curves) == {
        "human_alignment_curve", "judge_verbosity_curve", "human_verbosity_curve",
    }  # fmt: skip
    alignment = res.curves["human_alignment_curve"]
    assert set(alignment["judge"]) == {"gpt-4", "claude-v1"}
    labelled = sim.pairs.drop_duplicates("item_id")
    assert res.curves["human_verbosity_curve"]["n"].sum() == labelled["human"].notna().sum()
    text = json.dumps(res.to_dict(), allow_nan=False)
    back = json.loads(text)
    assert len(back["results"]) == len(res.results)
    assert back["curves"]["human_alignment_curve"][-1]["bin_high"] is None  # open last bin
    frame = res.to_frame()
    assert list(frame["metric"][:2]) == ["self_preference_eo", "self_preference_dp"]


def test_skips_say_why(sim: SimulatedPairs) -> None:
    t = sim.pairs.drop(columns=["len_a", "len_b"])
    res = pairwise_bias(t, None, judges="gpt-4", boot=Resampling(n_boot=100), min_n=5, curves=False)
    reasons = {s.metric: s.reason for s in res.skipped}
    assert reasons["family_preference_eo"] == "no roster or family mapping given"
    assert "no response lengths" in reasons["verbosity_bias"]
    assert {r.judge for r in res.results} == {"gpt-4"}
    with pytest.raises(KeyError, match="skipped: no roster"):
        res.get("family_preference_dp", "gpt-4")
    partial = {k: v for k, v in sim.families.items() if k != "palm-2"}
    res2 = pairwise_bias(
        sim.pairs, partial, metrics=["family_preference_eo"], boot=Resampling(n_boot=100)
    )
    assert not res2.results
    assert all("'palm-2' has no entry" in s.reason for s in res2.skipped)
    big = pairwise_bias(
        sim.pairs,
        sim.families,
        metrics=["self_preference_eo"],
        boot=Resampling(n_boot=100),
        min_n=10_000,
        curves=False,
    )
    assert not big.results
    assert "need at least 10000" in big.skipped[0].reason


def test_bad_options(sim: SimulatedPairs) -> None:
    with pytest.raises(ConfigError, match="unknown metric"):
        pairwise_bias(sim.pairs, metrics=["halo_effect"])
    with pytest.raises(ConfigError, match="human_ties"):
        pairwise_bias(sim.pairs, human_ties="keep")  # type: ignore[arg-type]


def test_orders_first_and_second_by_hand(tmp_path: Path) -> None:
    from recuse.cli import main
    from recuse.metrics.summary import pairwise_bias as pb
    from recuse.tables import validate_pairs

    # gpt-4's own answer is a in all 8 pairs; humans prefer it in the first four
    t = validate_pairs(
        pd.DataFrame(
            {
                "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"),
                "model_a": ["gpt-4"] * 8, "model_b": ["claude-v1"] * 8, "judge": ["gpt-4"] * 8,
                "human": [1, 1, 1, 1, 0, 0, 0, 0],
                "p_a_first": [1, 1, 0, 1, 0, 1, 0, 0],
                "p_a_second": [0, 0, 0, 1, 0, 0, 0, 1],
                "p_a": None,
            }
        )
    )  # fmt: skip
    eo = {}
    for orders in ("first", "second", "both"):
        r = pb(t, metrics=["self_preference_eo", "first_position_rate"], orders=orders,  # type: ignore[arg-type]
               min_n=4, boot=Resampling(n_boot=200))  # fmt: skip
        eo[orders] = next(x.estimate for x in r.results if x.metric == "self_preference_eo")
        position = [x for x in r.results if x.metric == "first_position_rate"]
        assert bool(position) == (orders == "both")
        if orders != "both":
            assert any("one" in s.reason for s in r.skipped if s.metric == "first_position_rate")
    # first: recall own (1+1+0+1)/4, recall other (1+0+1+1)/4
    assert eo["first"] == pytest.approx(0.75 - 0.75, abs=1e-12)
    # second: recall own (0+0+0+1)/4, recall other (1+1+1+0)/4
    assert eo["second"] == pytest.approx(0.25 - 0.75, abs=1e-12)
    # both: the mean of the two orders' probabilities, [.5,.5,0,1 | 0,.5,0,.5]
    assert eo["both"] == pytest.approx(0.5 - 0.75, abs=1e-12)
    # the audit states the convention in its settings and on the first screen
    src = tmp_path / "pairs.csv"
    t.to_csv(src, index=False)
    assert main(["audit", str(src), "--orders", "first", "--out", str(tmp_path / "r")]) == 0
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["provenance"]["options"]["verdicts (--orders / orders=)"].startswith("first:")
    html = (tmp_path / "r" / "report.html").read_text()
    assert "verdicts: only the order with answer a shown first" in html  # the title line


def test_an_order_the_file_does_not_have_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--orders second on a file of first-order verdicts (p_a_second empty) wrote a
    report of nothing, each judge analysis saying its 60 verdicts were 'unparsed or
    missing'; now one error names the file, the order and what to do, and no report."""
    from recuse.cli import main
    from recuse.metrics.summary import pairwise_bias as pb
    from recuse.metrics.verdicts import use_orders
    from recuse.tables import validate_pairs

    t = validate_pairs(
        pd.DataFrame(
            {
                "item_id": list("abcd"), "prompt_id": list("abcd"), "model_a": ["gpt-4"] * 4,
                "model_b": ["claude-v1"] * 4, "judge": ["gpt-4"] * 4, "human": [1, 0, 1, 0],
                "p_a_first": [1, 0, 0, 1],
            }
        )
    )  # fmt: skip
    assert use_orders(t, "first")["p_a"].tolist() == [1.0, 0.0, 0.0, 1.0]
    # a Python caller is told its keyword, which it set, not a flag it has not
    with pytest.raises(ConfigError, match=r'^orders="second": no row has a verdict of the') as e:
        pb(t, orders="second")
    assert 'use orders="first" or "both"' in str(e.value) and "--orders" not in str(e.value)
    src = tmp_path / "first-only.csv"
    t.to_csv(src, index=False)
    out = tmp_path / "r"
    assert main(["audit", str(src), "--orders", "second", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"recuse: error: {src.name}: --orders second: no row has a verdict")
    assert "use --orders first or both" in err and not out.exists()
    # verdicts of an order not recorded (AlpacaEval's p_a): only both reads them
    unknown = t.assign(p_a=t["p_a_first"], p_a_first=float("nan"), p_a_second=float("nan"))
    with pytest.raises(ConfigError, match=r'use orders="both" \(its verdicts, in p_a, are of'):
        use_orders(unknown, "first")
    # a table of human labels only has no verdict of any order: nothing to refuse
    labels = t.assign(judge=None, p_a_first=float("nan"), p_a=float("nan"))
    assert use_orders(labels, "second")["p_a"].isna().all()


def test_a_calibrated_judge_that_cannot_be_fitted_has_one_reason_and_no_number() -> None:
    """Labels that leave the models in two unconnected groups: the strengths are not
    comparable. Before, the summary listed the reason AND an estimate from the
    arbitrary strengths (0.51 [0.28, 0.65] for m0). A table with verdicts only in
    p_a (no order) was skipped twice, "no human-labelled pairs" (there are) and "no
    pairs holding the judge's own answer" (there are)."""
    import numpy as np

    from recuse.metrics import pairwise_bias
    from recuse.simulate.self_preference import AuthorJudge, simulate_self_preference

    cast = {"m0": AuthorJudge(2.0, 0.5, 0.3), "m2": AuthorJudge(1.0)}
    strengths = {"m0": 1.0, "m1": 0.5, "m2": 0.0, "m3": -0.5}
    t = simulate_self_preference(cast, strengths, n_prompts=40, seed=1).pairs
    half = {"m0": 0, "m1": 0, "m2": 1, "m3": 1}
    apart = t["model_a"].map(half) != t["model_b"].map(half)
    s = pairwise_bias(
        t.assign(human=t["human"].mask(apart)), metrics=[CAL], boot=Resampling(n_boot=100)
    )
    assert not s.results
    assert sorted(str(x.judge) for x in s.skipped) == ["m0", "m2"]
    assert all("not all compared" in x.reason for x in s.skipped)

    orderless = t.assign(p_a=t["p_a"], p_a_first=np.nan, p_a_second=np.nan)
    s = pairwise_bias(orderless, metrics=[CAL], boot=Resampling(n_boot=100))
    assert not s.results
    assert sorted(str(x.judge) for x in s.skipped) == ["m0", "m2"]
    assert all("p_a_first" in x.reason for x in s.skipped), s.skipped


CAL = "self_preference_calibrated"


def test_a_table_that_is_not_pairs_is_one_clear_error() -> None:
    """A ratings table (or a path) given to a metric function raised a bare KeyError
    ('p_a_first') from deep inside pandas; it is now an InputError naming what is
    missing and where a ratings table goes."""
    from recuse.errors import InputError
    from recuse.metrics import calibrated_self_preference, self_preference
    from recuse.simulate.ratings import simulate_ratings

    ratings = simulate_ratings(seed=0).ratings
    assert {"model", "rating", "judge"} <= set(ratings.columns)
    judge = str(ratings["judge"].iloc[0])
    calls = (
        lambda: first_position_rate(ratings, judge=judge),
        lambda: self_preference(ratings, judge=judge),
        lambda: calibrated_self_preference(ratings, judge=judge),
        lambda: pairwise_bias(ratings),
    )
    for call in calls:
        with pytest.raises(InputError) as err:
            call()
        assert "expected a pairs table; this one has no verdict column (p_a_first" in str(err.value)
        assert "it looks like a ratings table" in str(err.value)
        assert "recuse.regression.fit_favoritism" in str(err.value)
    with pytest.raises(InputError, match=r"expected a pairs table .* got str"):
        first_position_rate("pairs.csv")  # type: ignore[arg-type]


def test_a_table_of_unread_verdicts_is_refused_not_estimated() -> None:
    """A pairs table not read by recuse (a DataFrame passed straight to a metric
    function) with verdicts on a 0-100 scale gave a "share of the win to first" of
    35.3 and an infinite verdict was dropped without a word; verdicts written A / B
    raised pandas' ValueError "could not convert string to float: 'A'"."""
    from recuse.errors import InputError
    from recuse.metrics import self_preference
    from recuse.tables import validate_pairs

    table = simulate_pairs(n_prompts=30, seed=2).pairs
    judge = str(table["judge"].iloc[0])
    boot = Resampling(n_boot=100)
    # the columns as recuse reads them: estimated, at the rate worked out by hand
    mine = table[table["judge"] == judge].dropna(subset=["p_a_first", "p_a_second"])
    by_hand = ((mine["p_a_first"] + 1 - mine["p_a_second"]) / 2).mean()
    assert first_position_rate(table, judge=judge, boot=boot).estimate == pytest.approx(by_hand)
    words = {1.0: "A", 0.0: "B", 0.5: "tie"}
    cases = (
        (table.assign(p_a_first=table["p_a_first"] * 100), "p_a_first", "100 is not"),
        (table.assign(p_a_second=table["p_a_second"].replace(1.0, float("inf"))), "p_a_second",
         "inf is not"),
        (table.assign(p_a_first=table["p_a_first"].map(words)), "p_a_first", "'A'"),
        (table.assign(human=table["human"].map(words)), "human", "'A'"),
        (table.assign(human=table["human"] == 1.0), "human", "True"),
    )  # fmt: skip
    for bad, column, said in cases:
        for call in (first_position_rate, self_preference, pairwise_bias):
            with pytest.raises(InputError) as err:
                if call is pairwise_bias:
                    pairwise_bias(bad, boot=boot)
                else:
                    call(bad, judge=judge, boot=boot)  # type: ignore[operator]
            assert err.value.column == column and said in str(err.value), str(err.value)
            assert "recuse.validate_pairs" in str(err.value)
    # the same words read by validate_pairs are the table's numbers again
    read = validate_pairs(table.assign(p_a_first=table["p_a_first"].map(words)))
    assert first_position_rate(read, judge=judge, boot=boot).estimate == pytest.approx(by_hand)


def test_verdicts_and_labels_of_a_category_column_are_read_as_their_numbers() -> None:
    """A pairs table whose verdict and label columns are pandas categories of numbers
    (``astype("category")``, to save memory) was estimated as its numbers are, until the
    check of a table not read by recuse refused it: "1.0 is not a probability"."""
    from recuse.errors import InputError

    table = simulate_pairs(n_prompts=30, seed=2).pairs
    judge = str(table["judge"].iloc[0])
    boot = Resampling(n_boot=100)
    mine = table[table["judge"] == judge].dropna(subset=["p_a_first", "p_a_second"])
    by_hand = ((mine["p_a_first"] + 1 - mine["p_a_second"]) / 2).mean()
    kinds = {c: "category" for c in ("p_a_first", "p_a_second", "human")}
    got = first_position_rate(table.astype(kinds), judge=judge, boot=boot)
    assert got.estimate == pytest.approx(by_hand)
    # a category of words is still refused at its first word, and of 0-100 at its 100
    words = table.assign(p_a_first=table["p_a_first"].map({1.0: "A", 0.0: "B", 0.5: "tie"}))
    for bad, said in (
        (words.astype({"p_a_first": "category"}), "'A' is not a probability"),
        (table.assign(p_a_first=table["p_a_first"] * 100).astype(kinds), "100 is not"),
    ):
        with pytest.raises(InputError, match=said) as err:
            first_position_rate(bad, judge=judge, boot=boot)
        assert err.value.column == "p_a_first"
        row = err.value.row
        assert row is not None and bad["p_a_first"].iloc[row - 1] in ("A", 100.0)


def test_one_order_is_named_as_its_caller_set_it(sim: SimulatedPairs) -> None:
    """``pairwise_bias(orders="first")`` from Python: the position metrics' reason and
    the status of the order left unread name the keyword the caller gave, not
    ``--orders first``, a flag a Python caller has not; the command line (renaming by
    flag) still names the flag, and words ``orders_said`` gives win."""
    from recuse.metrics.verdicts import use_orders
    from recuse.renaming import renaming_by

    pairs = sim.pairs.assign(status_second="ok")
    wanted = ["flip_rate"]
    reasons = {s.reason for s in pairwise_bias(pairs, orders="first", metrics=wanted).skipped}
    assert reasons == {'compares the two presentation orders; orders="first" uses one'}
    assert set(use_orders(pairs, "first")["status_second"]) == {'not used (orders="first")'}
    with renaming_by("flag"):
        result = pairwise_bias(pairs, orders="first", metrics=wanted)
    assert {s.reason for s in result.skipped} == {
        "compares the two presentation orders; --orders first uses one"
    }
    said = 'orders = "first" in r.toml'
    result = pairwise_bias(pairs, orders="first", metrics=wanted, orders_said=said)
    assert {s.reason for s in result.skipped} == {
        f"compares the two presentation orders; {said} uses one"
    }

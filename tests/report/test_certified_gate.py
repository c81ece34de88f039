"""The words of `recuse gate --certified` (:mod:`recuse.report.certified_gate`); the gate
on a whole audit's report is tested in tests/analyses/test_certification.py."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from recuse.errors import InputError
from recuse.report.certified_gate import Certified, certification_rows, gate_certified


def _row(**over: Any) -> dict[str, Any]:
    row = {"dataset": "d", "judge": "gpt-4", "stratum": "pooled", "target": 0.85,
           "delta": 0.1, "n_labelled": 200, "n_kept": 0, "coverage": 0.0,
           "heldout_coverage": 0.05, "heldout_agreement": 0.7}  # fmt: skip
    return row | over


RULE = Certified(0.85, 0.6)


def _text(*rows: dict[str, Any], rule: Certified = RULE) -> str:
    report = SimpleNamespace(
        datasets=[SimpleNamespace(name="d", table="pairs", judges=("gpt-4",))],
        certification=list(rows),
    )
    [(_, _, _, text, _, _)] = gate_certified(report, [rule], reason=lambda d, j: "", skip=False)
    return text


def test_the_held_out_share_is_named_a_check_and_carries_its_agreement() -> None:
    """llmbar-mtbench's gpt-4 at 0.85: nothing certified on the calibration pairs, while
    the held-out folds kept 10 of 200 (5.0%) of which 7 agreed (70.0%, below the
    target). The line read "certified on 0.0% of 200 labelled pairs; held out: 5.0%
    kept": a second coverage contradicting the first, nothing said about which the gate
    reads, and the 70% agreement left out."""
    text = _text(_row())
    assert text == (
        "FAIL: certified 0.85@0.6 of gpt-4 (d): at agreement ≥ 85%, δ = 0.1: certified on "
        "0.0% of 200 labelled pairs; held-out check (not gated: each prompt fold decided by "
        "thresholds certified on the other folds): 5.0% kept, 70.0% of them agree; below "
        "the required 60%"
    )
    # none kept held out: no agreement to give; no check in the report: no words
    none_kept = _text(_row(heldout_coverage=0.0, heldout_agreement=None))
    assert "on the other folds): 0.0% kept; below the required 60%" in none_kept
    assert "held-out" not in _text(_row(heldout_coverage=None, heldout_agreement=None))


@pytest.mark.parametrize(
    ("field", "value"),
    [("heldout_coverage", "0.05"), ("heldout_coverage", 7.0), ("heldout_agreement", -0.1),
     ("heldout_agreement", True), ("coverage", 1.5)],
)  # fmt: skip
def test_a_hand_edited_share_of_a_certification_row_is_refused(
    tmp_path: Path, field: str, value: object
) -> None:
    """The gate reads a row's coverage and says its held-out share and agreement: a
    held-out share written as text was dropped from the line without a word, 7 read
    "700.0% kept" and a coverage of 1.5 passed any --certified. Each is a share in
    [0, 1] or null, else the report is refused naming the table, the row and the
    fields; null (nothing held out) and the row as written are read."""

    def report(row: dict[str, Any]) -> dict[str, Any]:
        return {"sections": [{"id": "certification", "tables": ["cert-d"]}],
                "tables": {"cert-d": {"rows": [row]}}}  # fmt: skip

    with pytest.raises(InputError) as err:
        certification_rows(report(_row(**{field: value})), tmp_path / "report.json")
    assert str(err.value).startswith(
        f"{tmp_path / 'report.json'}: table 'cert-d' row 1: needs dataset, judge, stratum "
        "(texts), target, delta, "
        "n_labelled, n_kept (numbers) and coverage, heldout_coverage, heldout_agreement "
        "(each a share in [0, 1] or null)"
    )
    for fine in (_row(), _row(heldout_coverage=None, heldout_agreement=None)):
        assert certification_rows(report(fine), tmp_path / "report.json") == (fine,)


def test_the_certified_share_is_written_on_the_side_of_the_required_share_it_lies() -> None:
    """1,199 of 1,999 pairs is 59.98%: at one decimal it read "certified on 60.0% … below
    the required 60%", a share equal to the bound that failed it. The line takes the
    decimals that put the share on its side of the bound (two here); the count of pairs
    has thousands separators, as every count a user reads; a share above 0 is never
    0.0% (1 of 2,500 pairs certified, 0.04%; held out 1 of 4,000, 0.03%)."""
    below = _text(_row(coverage=1199 / 1999, n_labelled=1999, n_kept=1199))
    assert below.startswith("FAIL: ") and "certified on 59.98% of 1,999 labelled pairs" in below
    assert below.endswith("below the required 60%"), below
    # on the bound exactly: one decimal, a pass
    met = _text(_row(coverage=1200 / 2000, n_labelled=2000, n_kept=1200))
    assert met.startswith("PASS: ") and "certified on 60.0% of 2,000 labelled pairs" in met
    # a bound of more decimals: 55.52% meets 55.5%, 55.48% does not (two decimals each:
    # one wrote both 55.5%, a value that reads as the bound whichever side it lies on)
    for kept, outcome, shown in ((2776, "PASS", "55.52%"), (2774, "FAIL", "55.48%")):
        report = SimpleNamespace(
            datasets=[SimpleNamespace(name="d", table="pairs", judges=("gpt-4",))],
            certification=[_row(coverage=kept / 5000, n_labelled=5000, n_kept=kept)],
        )
        [(_, _, _, text, _, _)] = gate_certified(
            report, [Certified(0.85, 0.555)], reason=lambda d, j: "", skip=False
        )
        assert text.startswith(f"{outcome}: ") and f"certified on {shown} of 5,000" in text
    # a share a hair under the bound: four more decimals wrote it 59.5000%, "below the
    # required 59.5%"; the decimals now go as far as it takes to part them
    hair = _text(_row(coverage=5_949_999 / 10_000_000, n_labelled=10_000_000, n_kept=5_949_999),
                 rule=Certified(0.85, 0.595))  # fmt: skip
    assert hair.startswith("FAIL: ") and "certified on 59.49999% of 10,000,000" in hair, hair
    tiny = _text(_row(coverage=1 / 2500, n_labelled=2500, n_kept=1, heldout_coverage=1 / 4000,
                      heldout_agreement=1.0))  # fmt: skip
    assert "certified on 0.04% of 2,500 labelled pairs" in tiny, tiny
    assert "0.03% kept, 100.0% of them agree" in tiny, tiny


def test_the_required_share_is_written_as_given_never_rounded() -> None:
    """A required share of more than six significant digits was rounded (``:g``): a
    coverage of 0.1299952 under a required 0.12999544 read "certified on 12.9995% …
    below the required 12.9995%", a FAIL beside two equal numbers; 0.1 + 0.2 as typed
    (0.30000000000000004) failed 3 of 10 pairs "on 30.0% … below the required 30%"; a
    required 1e-07 read "1e-05%". The rule's name and the target are the typed floats."""
    hair = _text(_row(coverage=0.1299952, n_labelled=10**7, target=0.86),
                 rule=Certified(0.8500001, 0.12999544))  # fmt: skip
    assert hair.startswith("FAIL: certified 0.8500001@0.12999544 of gpt-4"), hair
    assert "at agreement ≥ 85.00001% (read at 86%" in hair, hair
    assert "on 12.9995% of 10,000,000" in hair and hair.endswith("the required 12.999544%")
    sum_ = _text(_row(coverage=3 / 10, n_labelled=10), rule=Certified(0.85, 0.1 + 0.2))
    assert sum_.startswith("FAIL: ") and sum_.endswith("below the required 30.000000000000004%")
    small = _text(_row(coverage=0.0, n_labelled=10**7), rule=Certified(0.85, 1e-7))
    assert "certified 0.85@0.0000001 of" in small and small.endswith("required 0.00001%")
    whole = _text(_row(coverage=0.6, n_labelled=10), rule=Certified(0.85, 0.555))
    assert whole.endswith("meets the required 55.5%"), whole


def test_a_share_below_all_is_never_written_as_all() -> None:
    """2,499 of 2,500 pairs certified read "100.0%" (as 1 of 2,500 read "0.0%"); a share
    past share_percent's last digit is written as a bound, which the decimals for the
    required share's side then kept: it was parsed as a number, a traceback."""
    most = _text(_row(coverage=2499 / 2500, n_labelled=2500, n_kept=2499))
    assert most.startswith("PASS: ") and "certified on 99.96% of 2,500" in most, most
    n = 10**9
    report = SimpleNamespace(
        datasets=[SimpleNamespace(name="d", table="pairs", judges=("gpt-4",))],
        certification=[_row(coverage=(n - 1) / n, n_labelled=n, n_kept=n - 1)],
    )
    [(_, _, _, text, _, _)] = gate_certified(
        report, [Certified(0.85, 1.0)], reason=lambda d, j: "", skip=False
    )
    assert text.startswith("FAIL: ") and "certified on > 99.9999% of 1,000,000,000" in text, text


def test_a_report_without_a_judge_to_certify_says_so() -> None:
    """--certified on a report with no pairs dataset with a judge (and no curve) printed
    no line, then "gate inconclusive: nothing was measured (see NOT MEASURED above)"
    with nothing above; each rule now has its NOT MEASURED line saying why."""
    rules = [Certified(0.85, 0.6), Certified(0.9, 0.5)]
    for datasets in ([], [SimpleNamespace(name="d", table="pairs", judges=())]):
        report = SimpleNamespace(datasets=datasets, certification=[])
        lines = gate_certified(report, rules, reason=lambda d, j: "", skip=False)
        assert [x[:3] for x in lines] == [("", "", "not measured")] * 2
        assert [x[4:] for x in lines] == [(None, 0.6), (None, 0.5)]
        assert [x[3] for x in lines] == [
            f"NOT MEASURED: certified {r}: no dataset of the report is a pairs table with a "
            "judge, which the Certification analysis reads"
            for r in ("0.85@0.6", "0.9@0.5")
        ]
    [(*_, skipped, _, _)] = gate_certified(report, rules[:1], reason=lambda d, j: "", skip=True)
    assert skipped.endswith("reads — skipped (--skip-unmeasured)")


def test_a_line_gives_the_coverage_it_compares_and_the_required_one() -> None:
    """`gate --certified --json` lines had estimate null and no number at all: a script
    could read the outcome but not the certified share (0.285 of 200 pairs) nor the
    rule's. Each line carries both, None where nothing was measured."""
    report = SimpleNamespace(
        datasets=[SimpleNamespace(name="d", table="pairs", judges=("gpt-4",))],
        certification=[_row(coverage=57 / 200, n_kept=57)],
    )
    [(*_, text, cov, required)] = gate_certified(report, [Certified(0.85, 0.3)],
                                                 reason=lambda d, j: "", skip=False)  # fmt: skip
    assert (cov, required) == (0.285, 0.3) and "certified on 28.5% of 200" in text
    curve_stops = SimpleNamespace(datasets=report.datasets, certification=[_row(target=0.5)])
    [(*_, cov, required)] = gate_certified(curve_stops, [RULE], reason=lambda d, j: "",
                                           skip=False)  # fmt: skip
    assert (cov, required) == (None, 0.6)


def test_a_held_out_agreement_beside_its_target_is_written_on_its_side() -> None:
    """3,998 of 5,000 held-out pairs agreeing is 79.96%, under the target 0.8 the line
    names: one decimal wrote it "80.0% of them agree" beside "at agreement ≥ 80%". It
    takes the decimals that put it below; one clear of the target keeps its one."""
    rule = Certified(0.8, 0.6)
    near = _text(_row(target=0.8, heldout_agreement=3998 / 5000), rule=rule)
    assert "at agreement ≥ 80%," in near and "5.0% kept, 79.96% of them agree" in near
    clear = _text(_row(target=0.8, heldout_agreement=0.7), rule=rule)
    assert "5.0% kept, 70.0% of them agree" in clear


@pytest.mark.parametrize(("target", "grid"), [(0.8, 0.8), (0.85, 0.85), (0.855, 0.86)])
def test_the_lines_target_is_a_percentage_as_its_shares_are(target: float, grid: float) -> None:
    """The line read "at agreement ≥ 0.85, δ = 0.1: certified on 28.5% … 90.5% of them
    agree; … the required 60%": the target a share beside percentages of the same kind.
    After the rule as typed (``certified 0.85@0.6``, the option's shares), every number
    of its sentence but δ and the counts is now a percentage, the target's (and the grid
    target it is read at) 100 × the rule's, by hand."""
    import re

    rule = Certified(target, 0.6)
    text = _text(_row(target=grid, coverage=0.285, heldout_agreement=0.905), rule=rule)
    sentence = text.split(f"certified {target}@0.6 of gpt-4 (d): ", 1)[1]
    assert sentence.startswith(f"at agreement ≥ {100 * target:g}%")
    if grid != target:
        assert f"(read at {100 * grid:g}%, the grid's next target)" in sentence
    rest = re.sub(r"δ = [0-9.]+|of [0-9,]+ labelled", "", sentence)
    numbers = re.findall(r"[0-9][0-9.,]*%?", rest)
    assert len(numbers) >= 5 and all(n.endswith("%") for n in numbers), sentence


def test_a_target_past_the_curve_is_named_as_given() -> None:
    """``--certified 0.991@0.6`` on a curve that stops at 0.99 read "the report's curve
    stops at agreement 99% (< 100%)": the grid's next target, a 100% no one asked for,
    in place of the 99.1% given. The line names the target given, and the grid's."""
    text = _text(_row(target=0.99), rule=Certified(0.991, 0.6))
    assert text.endswith(
        "the report's curve stops at agreement 99% (< 99.1%, read at 100%, the grid's next target)"
    ), text
    on_grid = _text(_row(target=0.9), rule=Certified(0.95, 0.6))
    assert on_grid.endswith("the report's curve stops at agreement 90% (< 95%)"), on_grid


def test_a_held_out_agreement_under_its_target_says_how_often_chance_reads_that_low() -> None:
    """`gate --certified 0.8@0.2` read "PASS … held-out check (not gated): 7.0% kept,
    71.4% of them agree" (10 of 14) with nothing to tell a check that small falling under
    80% by chance (0.30 of the time) from a guarantee that fails. The line now gives the
    count and how often a judge agreeing at the target reads that low on as many pairs
    (scipy's binomial, here), and says "beyond chance" where that is under δ."""
    from scipy.stats import binom

    from recuse.report.certified_gate import binomial_cdf

    small = _text(_row(heldout_kept=10.0))  # 7 of 10 at 85%
    p_small = binom.cdf(7, 10, 0.85)
    assert (
        "70.0% of them agree (7 of 10: a judge agreeing at 85% reads this low or lower on "
        f"10 pairs {p_small:.2g} of the time)"
    ) in small
    assert "beyond chance" not in small
    many = _text(_row(heldout_kept=100.0, heldout_coverage=0.5))  # 70 of 100 at 85%
    p_many = binom.cdf(70, 100, 0.85)
    assert f"on 100 pairs {p_many:.2g} of the time; below the target beyond chance)" in many
    # at the target or over it, or an older report without the count: nothing added
    assert "of the time" not in _text(_row(heldout_kept=10.0, heldout_agreement=0.9))
    assert "of the time" not in _text(_row())
    for n, p in ((14, 0.8), (300, 0.9), (5000, 0.85)):
        for k in range(0, n + 1, max(1, n // 50)):
            assert binomial_cdf(k, n, p) == pytest.approx(binom.cdf(k, n, p), abs=1e-10)

"""The figures every analysis draws the same way (``coef_figure``)."""

from __future__ import annotations

from typing import Any

import pytest

from analyses.conftest import red_pixels
from recuse.analyses import base
from recuse.analyses.base import AuditOptions, coef_figure
from recuse.analyses.position import POSITION
from recuse.analyses.self_preference import CALIBRATED, EO
from recuse.report.bias import Bias
from recuse.report.model import Figure, Finding


def _finding(bias: Bias, judge: str, est: float, low: float, high: float) -> Finding:
    return Finding(judge=judge, bias=bias, estimate=est, ci_low=low, ci_high=high, n=200,
                   level=0.9, method="bootstrap", dataset="d", clusters=80)  # fmt: skip


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """The keywords coef_figure drew its figure with (the axis label is in the PNG)."""
    seen: dict[str, Any] = {}
    draw = base.fig.coefficients

    def spy(*args: Any, **kwargs: Any) -> Figure:
        seen.update(kwargs)
        return draw(*args, **kwargs)

    monkeypatch.setattr(base.fig, "coefficients", spy)
    return seen


def test_a_number_never_flagged_is_never_red(drawn: dict[str, Any]) -> None:
    # equal opportunity beside the calibrated headline: the section calls it "never
    # flagged", the summary reads "no detectable bias"; its figure drew gpt-4's
    # +0.48 [0.23, 0.70] red, "the interval excludes 0 (no bias)"
    eo = [_finding(EO, "gpt-3.5-turbo", 0.21, 0.04, 0.33), _finding(EO, "gpt-4", 0.48, 0.23, 0.7)]
    fig = coef_figure(eo, "d", "self-preference (EO)", AuditOptions())
    assert red_pixels(fig) == 0
    assert "Never flagged (not adjusted for what moves it without any bias)" in fig.caption
    assert drawn["highlight"] == [False, False]
    assert drawn["xlabel"] == "recall difference (estimate, 90% interval)"  # its unit
    cal = [_finding(CALIBRATED, "gpt-4", 0.21, 0.04, 0.33)]
    flagged = coef_figure(cal, "d", "self-preference", AuditOptions())
    assert red_pixels(flagged) > 0  # the same interval, of a bias that flags
    assert drawn["xlabel"] == "own-pick rate − predicted (estimate, 90% interval)"
    assert flagged.caption.startswith("Dashed line: no bias = 0. Red: the interval excludes 0,")
    assert "before the false-discovery adjustment" in flagged.caption


def test_the_no_bias_value_is_the_biases_own() -> None:
    # a first-position rate's no-bias value is 0.5: 0.52 [0.49, 0.55] holds it (blue);
    # read against 0 it would be red
    found = [_finding(POSITION, "j", 0.52, 0.49, 0.55)]
    fig = coef_figure(found, "d", "first-position rate", AuditOptions())
    assert red_pixels(fig) == 0 and "no bias = 0.5" in fig.caption
    off = coef_figure([_finding(POSITION, "j", 0.6, 0.55, 0.65)], "d", "p", AuditOptions())
    assert red_pixels(off) > 0 and "excludes 0.5" in off.caption


def test_the_alt_text_reads_each_finding_as_the_findings_do() -> None:
    """A first-position rate of 0.9996 [0.999, 0.99995] (its span 0 to 1): the findings
    and the terminal write it 0.99960 [0.99900, 0.99995] (no number strictly inside the
    span reads its end); the figure's alt text, its own rounding without the span, read
    1.000 [0.999, 1.000], a rate of every pair. A share written as a percentage
    (certification's coverage) reads as one there too."""
    from recuse.biases.certification import CERTIFIED

    near = _finding(POSITION, "j", 0.9996, 0.999, 0.99995)
    fig = coef_figure([near], "d", "first-position rate", AuditOptions())
    assert near.text == "0.99960 [0.99900, 0.99995]"
    assert fig.alt == "First-position rate — d: j 0.99960 [0.99900, 0.99995]"
    share = _finding(CERTIFIED, "j", 57 / 200, 0.2327, 0.3422)
    fig = coef_figure([share], "d", "coverage", AuditOptions())
    assert fig.alt == "Coverage — d: j 28.5% [23.3%, 34.2%]" == f"Coverage — d: j {share.text}"


def test_one_figure_holds_one_bias() -> None:
    mixed = [_finding(EO, "a", 0.1, 0.0, 0.2), _finding(CALIBRATED, "b", 0.1, 0.0, 0.2)]
    with pytest.raises(ValueError, match="one figure per bias"):
        coef_figure(mixed, "d", "x", AuditOptions())


def test_red_from_a_p_value_is_said_where_an_interval_rules_nothing_out(
    drawn: dict[str, Any],
) -> None:
    # 0.30 [0.30, 0.30] from 3 prompts, p = 0.5: excludes 0 as drawn, yet not red (its
    # red is the p-value's); the caption said only "Red: the interval excludes 0"
    few = Finding(judge="j", bias=CALIBRATED, estimate=0.3, ci_low=0.3, ci_high=0.3, n=6,
                  level=0.9, method="bootstrap", dataset="d", clusters=3,
                  p_value=0.5)  # fmt: skip
    assert not few.informative and not few.excludes_null
    fig = coef_figure([few], "d", "self-preference", AuditOptions())
    assert drawn["highlight"] == [False] and red_pixels(fig) == 0
    assert "rules nothing out on its own: it is red when its p-value is at most" in fig.caption
    # a figure of informative intervals keeps the short caption
    plain = coef_figure([_finding(CALIBRATED, "j", 0.3, 0.2, 0.4)], "d", "s", AuditOptions())
    assert "p-value" not in plain.caption


def test_families_of_asks_the_roster_once_per_distinct_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A million-row ratings file names a few dozen models: the roster is asked once per
    distinct name, not once per row (2 million lookups took 14 of `recuse validate`'s 31 s
    on Play Favorites concatenated to a million rows). The answer is the row-by-row one."""
    import pandas as pd

    from recuse.roster import Roster

    roster = Roster.builtin()
    asked: list[str] = []
    real = Roster.family

    def counted(self: Roster, name: str) -> str:
        asked.append(name)
        return real(self, name)

    monkeypatch.setattr(Roster, "family", counted)
    names = pd.Series(["gpt-4o", "gpt-4-0613", "my-own-model", None] * 2_500)
    families = base.families_of(names, roster)
    assert families == {"gpt-4o": "gpt", "gpt-4-0613": "gpt", "my-own-model": "my-own-model"}
    assert sorted(asked) == ["gpt-4-0613", "gpt-4o"]


def test_every_table_of_the_planted_audit_says_what_each_column_is(planted: Any) -> None:
    """Every table the planted audit writes (tables/NAME.csv and report.json's ``tables``)
    gives words for each of its columns: the examples, reliability, familiarity, probe
    texts and tool tables had none, and certification, probes and self-recognition left
    their judge and dataset columns out."""
    missing = {
        t.name: sorted(set(map(str, t.frame.columns)) - set(t.columns))
        for s in planted.report.sections
        for t in s.tables
    }
    assert {name: cols for name, cols in missing.items() if cols} == {}
    assert len(missing) >= 20  # the planted inputs reach most analyses' tables


def test_the_reports_option_labels_name_the_keyword_beside_the_flag() -> None:
    """The report's settings were labelled by the command line's flags ("verdicts
    (--orders)") in a report made from Python (``recuse.audit(..., orders="first")``),
    which has no such flag. Each label that names a flag also names the keyword."""
    import re

    from recuse.analyses.base import AuditOptions
    from recuse.options import settings_fields

    said = AuditOptions(orders="first", fdr=False, human_ties="error").to_dict()
    assert said["verdicts (--orders / orders=)"].startswith("first:")
    assert said["multiple testing (--fdr / fdr=)"].startswith("none (--no-fdr / fdr=False)")
    assert (
        "(--human-ties error, human_ties='error')"
        in said["human ties (--human-ties / human_ties=)"]
    )
    flags = {s.flag.split("/")[0]: name for name, s in settings_fields().items() if s.api}
    for label in said:
        for flag in re.findall(r"--[a-z-]+", label):
            assert f"{flags[flag]}=" in label, label

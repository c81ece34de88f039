"""The Certification section on a planted truth (:mod:`recuse.simulate.selective`):
its numbers against a hand count, its thresholds against the planted agreement, and
`recuse gate --certified` on the report it writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest

from recuse.analyses.base import AuditOptions
from recuse.analyses.certification import FINDING_TARGETS
from recuse.cli import main
from recuse.data.inputs import Input, Source
from recuse.driver import run_audit
from recuse.mitigation.selective import Options, coverage_curve, items_of
from recuse.report.export import write_report
from recuse.report.model import AuditReport
from recuse.roster import Roster
from recuse.simulate.selective import JUDGE, SimulatedSelective, simulate_selective

LEVEL = 0.9


def _input(frame: pd.DataFrame, name: str = "sim-selective") -> Input:
    judges = tuple(sorted(frame["judge"].dropna().unique()))
    return Input(name, "pairs", frame, Source(name, "pairs", len(frame), judges=judges))


@pytest.fixture(scope="module")
def sim() -> SimulatedSelective:
    return simulate_selective(800, own_share=0.3, own_drop=0.1, family_drop=0.04, seed=3)


@pytest.fixture(scope="module")
def report(sim: SimulatedSelective) -> AuditReport:
    # a second judge gives one pick per pair in one order: no confidence to certify
    picks = sim.pairs.assign(judge="claude-v1", p_a_second=np.nan)
    picks["p_a"] = picks["p_a_first"] = (picks["p_a_first"] > 0.5).astype(float)
    frame = pd.concat([sim.pairs, picks], ignore_index=True)
    options = AuditOptions(level=LEVEL, n_boot=200, only=("certification",))
    return run_audit([_input(frame)], options=options, roster=Roster.builtin())


def _finding(report: AuditReport, key: str, target: float):  # type: ignore[no-untyped-def]
    (f,) = [f for f in report.findings if f.bias.key == key and f.judge == JUDGE
            and f.detail.startswith(f"target agreement ≥ {100 * target:.0f}%;")]  # fmt: skip
    return f


def test_coverage_is_a_hand_count_at_the_section_thresholds(
    sim: SimulatedSelective, report: AuditReport
) -> None:
    (section,) = report.sections
    curve = next(t.frame for t in section.tables if not t.show)
    conf = np.maximum(sim.pairs["p_a"], 1 - sim.pairs["p_a"]).to_numpy()
    for target in (0.80, 0.85):
        at = curve[(curve["judge"] == JUDGE) & np.isclose(curve["target"], target)]
        lam = {r.stratum: r.threshold for r in at.itertuples() if r.stratum != "pooled"}
        # the planted strata (not the roster's reading of the models) decide the count
        kept = np.zeros(len(conf), dtype=bool)
        for s, t in lam.items():
            if np.isfinite(t):
                kept |= (sim.stratum == s) & (conf >= t)
        f = _finding(report, "certified_coverage", target)
        assert f.n == len(conf) and f.estimate == pytest.approx(kept.mean())
        ci = binomtest(int(kept.sum()), len(conf)).proportion_ci(LEVEL, method="exact")
        assert (f.ci_low, f.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-9)
        own = sim.stratum == "own"
        g = _finding(report, "certified_coverage_own", target)
        assert g.n == own.sum() and g.estimate == pytest.approx(kept[own].mean())
        # the planted agreement at each certified threshold meets the target
        for s, t in lam.items():
            if np.isfinite(t):
                assert sim.true_agreement(t, s) >= target, (target, s)
        # quality scores: never flagged, 1 = every pair certified
        assert not f.significant and f.bias.null == 1.0 and f.bias.kind == "quality"
    # the judge is as confident but less often right on its own answers: at 0.85 its
    # own-answer pairs need a higher threshold and keep a smaller share
    at = curve[(curve["judge"] == JUDGE) & np.isclose(curve["target"], 0.85)]
    share = dict(zip(at["stratum"], at["coverage"], strict=True))
    assert share["own"] < share["other"]
    # the judge that gives one pick in one order is not certified, and says why
    (skip,) = [k for k in report.skipped if k.judge == "claude-v1"]
    assert "no confidence" in skip.reason and not skip.headline


def test_the_curve_holds_its_guarantee_over_planted_seeds() -> None:
    """Over 60 calibration sets, the planted agreement of the kept pairs is ≥ the
    target in ≥ 1 − δ of them, pooled and on the own-answer pairs alone."""
    delta, target = 0.1, 0.8
    o = Options(delta=delta)
    roster = Roster.builtin()
    misses = {"pooled": 0, "own": 0}
    for seed in range(60):
        s = simulate_selective(400, own_drop=0.1, seed=100 + seed)
        curve = coverage_curve(items_of(s.pairs, roster, o), o, targets=(target,), heldout=())
        lam = {r.stratum: r.threshold for r in curve.itertuples() if r.stratum != "pooled"}
        certified = {k: v for k, v in lam.items() if np.isfinite(v)}
        # pooled: the planted agreement of all kept pairs, by quadrature per stratum
        mass = {k: float(np.mean((s.stratum == k) & (np.maximum(s.pairs["p_a"],
                1 - s.pairs["p_a"]) >= v))) for k, v in certified.items()}  # fmt: skip
        total = sum(mass.values())
        if total:
            agree = sum(mass[k] * s.true_agreement(v, k) for k, v in certified.items())
            misses["pooled"] += agree / total < target
        if "own" in certified:
            misses["own"] += s.true_agreement(certified["own"], "own") < target
    assert misses["pooled"] <= delta * 60 and misses["own"] <= delta * 60


def _gate(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["gate", *args])
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def test_gate_certified_passes_fails_and_names_the_unmeasured(
    report: AuditReport, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_report(report, tmp_path / "out")["json"]
    rows = json.loads(path.read_text("utf-8"))["tables"]
    assert any(name.startswith("certification-curve") for name in rows)
    at80 = _finding(report, "certified_coverage", 0.80).estimate
    at90 = _finding(report, "certified_coverage", 0.90).estimate
    assert at80 > 0.4 > at90
    # claude-v1 has no curve: NOT MEASURED with the audit's reason, unless skipped
    code, out = _gate([str(path), "--certified", "0.8@0.4", "--skip-unmeasured"], capsys)
    assert code == 0 and f"PASS: certified 0.8@0.4 of {JUDGE} (sim-selective)" in out
    assert f"certified on {at80:.1%} of 800 labelled pairs" in out and "own-answer" in out
    assert "NOT MEASURED: certified 0.8@0.4 of claude-v1" in out and "no confidence" in out
    code, out = _gate([str(path), "--certified", "0.8@0.4"], capsys)
    assert code == 3
    # --json: each line the share it compares (the audit's finding) and the rule's
    code, out = _gate([str(path), "--certified", "0.8@0.4", "--json"], capsys)
    lines = {x["judge"]: x for x in json.loads(out)["lines"]}
    assert lines[JUDGE]["certified_coverage"] == at80 and lines[JUDGE]["estimate"] is None
    assert lines["claude-v1"]["certified_coverage"] is None
    assert {x["required_coverage"] for x in lines.values()} == {0.4}
    code, out = _gate([str(path), "--certified", "0.9@0.4", "--skip-unmeasured"], capsys)
    assert code == 1 and f"FAIL: certified 0.9@0.4 of {JUDGE}" in out
    # a target between grid points is read at the next one above (it certifies ≥ T too)
    code, out = _gate([str(path), "--certified", "0.895@0.4", "--skip-unmeasured"], capsys)
    assert code == 1 and "at agreement ≥ 89.5% (read at 90%" in out
    code, out = _gate([str(path), "--certified", "0.8@0.4", "--json", "--skip-unmeasured"],
                      capsys)  # fmt: skip
    assert code == 0 and json.loads(out)["certified"] == [{"agreement": 0.8, "coverage": 0.4}]
    # bad rules and a --max on a certified share are input errors (exit 2)
    for bad in (["--certified", "1.2@0.5"], ["--certified", "0.8"],
                ["--max", "certified_coverage=0.1"]):  # fmt: skip
        code, out = _gate([str(path), *bad], capsys)
        assert code == 2 and "--certified" in out, bad


def test_a_damaged_curve_row_is_an_input_error(
    report: AuditReport, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_report(report, tmp_path / "out")["json"]
    data = json.loads(path.read_text("utf-8"))
    name = next(n for n in data["tables"] if n.startswith("certification-curve"))
    data["tables"][name]["rows"][3]["target"] = "high"
    path.write_text(json.dumps(data), "utf-8")
    code, out = _gate([str(path), "--certified", "0.8@0.4"], capsys)
    assert code == 2 and f"table {name!r} row 4" in out


def test_gate_certified_never_prints_a_negative_zero(
    report: AuditReport, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--certified 0.5@-0` printed "0.5@-0" and "the required -0%"; a required share
    is printed as given (0.555 is 55.5%, not a rounded 56%), and a coverage of -0.0 in
    the report reads 0.0%."""
    path = write_report(report, tmp_path / "out")["json"]
    code, out = _gate([str(path), "--certified", "0.5@-0", "--skip-unmeasured"], capsys)
    assert code == 0, out
    assert "-0" not in out
    assert f"PASS: certified 0.5@0 of {JUDGE}" in out and "the required 0%" in out
    code, out = _gate([str(path), "--certified", "0.5@-0", "--json", "--skip-unmeasured"],
                      capsys)  # fmt: skip
    assert json.loads(out)["certified"] == [{"agreement": 0.5, "coverage": 0.0}]
    assert "-0.0" not in out
    code, out = _gate([str(path), "--certified", "0.8@0.555", "--skip-unmeasured"], capsys)
    assert "the required 55.5%" in out
    data = json.loads(path.read_text("utf-8"))
    for name, table in data["tables"].items():
        if name.startswith("certification-curve"):
            for row in table["rows"]:
                row["coverage"] = -0.0 if row["coverage"] is not None else None
                if "heldout_coverage" in row:
                    row["heldout_coverage"] = -0.0
    path.write_text(json.dumps(data), "utf-8")
    code, out = _gate([str(path), "--certified", "0.8@0.4", "--skip-unmeasured"], capsys)
    assert code == 1 and "certified on 0.0% of 800 labelled pairs" in out
    assert "-0" not in out


def test_the_audit_and_the_gate_write_one_number(
    report: AuditReport, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """llmbar-mtbench's gpt-3.5-turbo is certified on 57 of 200 pairs at 0.80: the audit
    wrote 0.28 (two decimals of 0.28499…, the float of 0.285) where the gate wrote 28.5%,
    then 0.285 beside it (and 1 of 2,500 pairs 0.000 beside the gate's 0.04%), and its
    held-out check "21% kept, 90% agree" where the gate's read "21.0% kept, 90.5% of
    them agree". Here, at each finding target, the audit writes the gate's percentage,
    digit for digit, and so the held-out numbers; the planted counts (of 800 pairs) are
    counted by hand from the curve."""
    path = write_report(report, tmp_path / "out")["json"]
    curve = next(t.frame for t in report.sections[0].tables if not t.show)
    for target in (0.80, 0.85, 0.90):
        f = _finding(report, "certified_coverage", target)
        (row,) = curve[(curve["judge"] == JUDGE) & (curve["stratum"] == "pooled")
                       & np.isclose(curve["target"], target)].to_dict("records")  # fmt: skip
        assert f.estimate == row["n_kept"] / 800
        _, out = _gate([str(path), "--certified", f"{target}@0.4", "--skip-unmeasured"],
                          capsys)  # fmt: skip
        line = next(t for t in out.splitlines() if f"of {JUDGE} " in t)
        gated = line.split("certified on ", 1)[1].split("% of 800", 1)[0]
        shown = f.parts[0]
        assert shown == f"{gated}%", (shown, gated)
        assert f"{shown} {f.parts[1]}, n=800" in f.verdict  # the sentence says the same
        held = line.split("other folds): ", 1)[1]
        kept = held.split(" kept", 1)[0]
        assert f"held out: {kept} kept" in f.detail, (f.detail, line)
        if "of them agree" in held:
            agree = held.split(", ", 1)[1].split(" of them agree", 1)[0]
            assert f"{kept} kept, {agree} agree" in f.detail


def test_a_findings_thresholds_are_written_unrounded() -> None:
    """A judge whose confidences are 0.99974 (a log-probability's) is certified at that
    threshold; the finding's detail read 'all c ≥ 1' (three significant digits), naming
    only verdicts given with certainty."""
    from mitigation.conftest import table

    frame = table(60, judge="gpt-4", p=0.99974, model_a="claude-v1", model_b="vicuna-13b")
    options = AuditOptions(level=LEVEL, n_boot=200, only=("certification",))
    report = run_audit([_input(frame)], options=options, roster=Roster.builtin())
    (f,) = [f for f in report.findings if f.bias.key == "certified_coverage"
            and f.detail.startswith("target agreement ≥ 80%;")]  # fmt: skip
    assert f.estimate == 1.0 and "other c ≥ 0.99974" in f.detail and "c ≥ 1" not in f.detail


def test_a_certified_share_below_every_pair_never_reads_one() -> None:
    """2,499 of 2,500 pairs certified (one own-answer pair, wrong, never kept): the
    finding read '1.000 [0.998, 1.000]', and the section defines 1 as every pair
    certified. A share strictly between 0 and 1 takes the decimals that show it, as
    `recuse gate --certified` writes it (99.96%), each end with those it needs (the
    upper bound, 99.998%, three)."""
    from mitigation.conftest import table

    other = table(2499, judge="gpt-4", model_a="claude-v1", model_b="vicuna-13b")
    own = table(1, judge="gpt-4", agree=0, model_a="gpt-4", model_b="vicuna-13b", start=2499)
    options = AuditOptions(level=LEVEL, n_boot=200, only=("certification",))
    report = run_audit([_input(pd.concat([other, own]))], options=options,
                       roster=Roster.builtin())  # fmt: skip
    f = _finding(report, "certified_coverage", 0.80)
    assert f.estimate == 2499 / 2500
    ci = binomtest(2499, 2500).proportion_ci(LEVEL, method="exact")
    assert (f.ci_low, f.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    assert f.parts == ("99.96%", "[99.8%, 99.998%]")
    assert f.text == "99.96% [99.8%, 99.998%]"
    assert "99.96% [99.8%, 99.998%], n=2,500" in f.verdict


def test_the_curves_columns_are_defined_where_it_is_written(
    report: AuditReport, tmp_path: Path
) -> None:
    """On llmbar-mtbench the curve's CSV and report.json held lower_bound 0.599 beside
    n_kept 0 and an empty agreement (gpt-3.5-turbo's own pairs: 26 of its 34 most
    confident agree, the first test), a confidence that is a name, and pooled rows
    ``certified`` with an empty threshold, defined nowhere. The tables now carry their
    columns' words (report.json ``columns``, the page under the table). Here a stratum
    that certified nothing has such a bound, by hand, and the words say whose it is."""
    from recuse.analyses.certification import CURVE_COLUMNS, shown_columns
    from recuse.mitigation.selective import clopper_pearson_lower

    path = write_report(report, tmp_path / "out")["json"]
    tables = json.loads(path.read_text(encoding="utf-8"))["tables"]
    curve = next(t for t in report.sections[0].tables if not t.show)
    assert set(curve.frame.columns) - set(CURVE_COLUMNS) == set()
    for name, table in tables.items():
        words = CURVE_COLUMNS if name == curve.name else shown_columns(curve.name)
        assert table["columns"] == words, name
    unkept = curve.frame[(curve.frame["n_kept"] == 0) & curve.frame["lower_bound"].notna()]
    assert len(unkept) and unkept["agreement"].isna().all()
    assert "first threshold tested" in CURVE_COLUMNS["lower_bound"]
    assert "not a number" in CURVE_COLUMNS["confidence"]
    assert "pooled row" in CURVE_COLUMNS["threshold"]
    # the bound of a stratum that certified nothing is of its most confident pairs' test:
    # at least one count (k of the n kept at the first threshold) gives it exactly
    r = unkept.iloc[0]
    n = int(r["n_labelled"])
    share = float(r["delta"]) / curve.frame[
        (curve.frame["judge"] == r["judge"]) & (curve.frame["target"] == r["target"])
        & (curve.frame["stratum"] != "pooled")]["stratum"].nunique()  # fmt: skip
    bounds = [float(clopper_pearson_lower(k, m, share)) for m in range(1, n + 1)
              for k in range(m + 1)]  # fmt: skip
    assert min(abs(b - float(r["lower_bound"])) for b in bounds) < 1e-9
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    (shown,) = [t.name for t in report.sections[0].tables if t.show]
    assert f'data-columns="{shown}">Columns: <code>dataset</code>' in page


def test_a_held_out_agreement_in_the_finding_reads_on_its_side_of_the_target() -> None:
    """A fold check agreeing on 79.996% of the pairs it kept read "80.0% agree" beside
    "target agreement ≥ 80%", which it misses; it now reads "79.996% agree", and one
    clear of the target keeps one decimal."""
    from recuse.analyses.certification import _detail
    from recuse.mitigation.selective import POOLED

    def detail(agree: float) -> str:
        at = pd.DataFrame({"stratum": [POOLED], "threshold": [None],
                           "heldout_coverage": [0.5], "heldout_agreement": [agree]})  # fmt: skip
        return _detail(at, 0.8, POOLED)

    assert detail(0.79996).endswith("held out: 50.0% kept, 79.996% agree")
    assert detail(0.8512).endswith("held out: 50.0% kept, 85.1% agree")


def test_the_shown_table_says_which_strata_it_holds_and_where_the_others_are(
    report: AuditReport,
) -> None:
    """The table on the page holds the own and pooled rows; its stratum column said
    "own, family or other ... pooled: their sum", so a pooled row that kept pairs beside
    an own row that kept none (llmbar-mtbench's gpt-3.5-turbo: 57 and 0) summed rows not
    there. Its words now say which rows it holds and name the curve table that has the
    others, whose words stay the curve's."""
    from recuse.analyses.certification import CURVE_COLUMNS

    (section,) = report.sections
    (shown,) = [t for t in section.tables if t.show]
    (curve,) = [t for t in section.tables if not t.show]
    assert set(shown.frame["stratum"]) == {"own", "pooled"}
    assert {"family", "other"} <= set(curve.frame["stratum"])
    words = shown.to_dict()["columns"]["stratum"]
    assert words.startswith("own or pooled") and curve.name in words
    assert curve.to_dict()["columns"] == CURVE_COLUMNS
    # a pooled row is the sum of every stratum's, the rows of the curve table
    at = curve.frame[(curve.frame["judge"] == JUDGE) & (curve.frame["target"].round(2) == 0.8)]
    pooled = at[at["stratum"] == "pooled"].iloc[0]
    parts = at[at["stratum"] != "pooled"]
    assert pooled["n_kept"] == parts["n_kept"].sum() > 0
    assert pooled["n_labelled"] == parts["n_labelled"].sum()


def test_the_page_writes_the_agreements_in_the_findings_unit(
    report: AuditReport, tmp_path: Path
) -> None:
    """The finding read "held out: 21.0% kept, 90.5% agree" above a table whose
    heldout_agreement (and agreement) read 0.905 on llmbar-mtbench's gpt-3.5-turbo: one
    number in two units. The page's table now writes both agreements as percentages, as
    the finding does, and the target too (it read 0.800 beside a lower bound of 59.9%),
    and its column words say so; the CSV and report.json keep the shares."""
    import re

    page = write_report(report, tmp_path / "out")["html"].read_text(encoding="utf-8")
    (shown,) = [t for t in report.sections[0].tables if t.show]
    columns = list(shown.frame.columns)
    rows = [re.findall(r"<td[^>]*>([^<]*)</td>", r)
            for r in re.findall(r"<tr><td>sim-selective</td>.*?</tr>", page)]  # fmt: skip
    checked = 0
    for target in (0.80, 0.85, 0.90):
        f = _finding(report, "certified_coverage", target)
        target_text = f"{100 * target:.1f}%"
        (cells,) = [dict(zip(columns, r, strict=True)) for r in rows
                    if r[1] == JUDGE and r[5] == "pooled" and r[4] == target_text]  # fmt: skip
        frame = shown.frame
        (row,) = frame[(frame["judge"] == JUDGE) & (frame["stratum"] == "pooled")
                       & np.isclose(frame["target"], target)].to_dict("records")  # fmt: skip
        if row["n_kept"]:  # by hand: n_agree / n_kept, one decimal of a percent
            assert cells["agreement"] == f"{100 * row['n_agree'] / row['n_kept']:.1f}%"
            checked += 1
        if "agree" in f.detail.split("held out: ", 1)[1]:
            kept, agree = f.detail.split("held out: ", 1)[1].removesuffix(" agree").split(" kept, ")
            assert (cells["heldout_coverage"], cells["heldout_agreement"]) == (kept, agree)
            checked += 1
    assert checked >= 2
    words = shown.to_dict()["columns"]
    for c in ("agreement", "heldout_agreement"):
        assert "percentage on the page, as the findings write it" in words[c]
    assert "percentage on the page" in words["target"] and "0.85@0.6 for 85%" in words["target"]
    kept = [r["agreement"] for r in shown.to_dict()["rows"] if r["agreement"] is not None]
    assert kept and all(0 <= a <= 1 for a in kept)  # report.json: the shares


def test_the_page_writes_an_agreements_lower_bound_in_the_agreements_unit(
    report: AuditReport, tmp_path: Path
) -> None:
    """On llmbar-mtbench the page's table read an agreement "93.0%" and, in the column
    beside it, that agreement's lower bound "0.599" (gpt-3.5-turbo's own pairs): a
    bound and the number it bounds in two units, with no word on the bound's. The page
    writes the lower bound as a percentage too, on its own side of its row's target (80.0%
    on the page), and its column words say so; the CSV and report.json keep the share."""
    import re
    from decimal import Decimal

    from recuse.numbers import lower_bound

    page = write_report(report, tmp_path / "out")["html"].read_text(encoding="utf-8")
    (shown,) = [t for t in report.sections[0].tables if t.show]
    columns = list(shown.frame.columns)
    cells_of = [re.findall(r"<td[^>]*>([^<]*)</td>", r)
                for r in re.findall(r"<tr><td>sim-selective</td>.*?</tr>", page)]  # fmt: skip
    # the shown table's rows (the page's other tables have other columns)
    rows = [dict(zip(columns, c, strict=True)) for c in cells_of
            if len(c) == len(columns) and c[5] in ("own", "pooled")]  # fmt: skip
    frame = shown.frame
    bounded = frame[np.isfinite(frame["lower_bound"].astype(float))]
    assert len(bounded) > 0
    for row in bounded.to_dict("records"):
        (cells,) = [c for c in rows if c["judge"] == row["judge"] and c["stratum"]
                    == row["stratum"] and c["target"] == f"{100 * row['target']:.1f}%"]  # fmt: skip
        text = cells["lower_bound"]
        assert text.endswith("%"), text
        shown_share = float(text.removesuffix("%")) / 100
        # by hand: rounded down, as `recuse certify` writes it (a lower bound never read
        # above itself: 0.8367 read 83.7% here, 83.6% in certify's table), within one
        # unit of its last decimal, and on its side of the target
        decimals = len(text.removesuffix("%").partition(".")[2])
        assert text == lower_bound(row["lower_bound"], percent=True, beside=row["target"])
        assert Decimal(text.removesuffix("%")).scaleb(-2) <= Decimal(repr(row["lower_bound"]))
        assert row["lower_bound"] - shown_share < 10 ** -(decimals + 2) + 1e-12
        assert (shown_share >= row["target"]) == (row["lower_bound"] >= row["target"])
    assert "percentage on the page" in shown.to_dict()["columns"]["lower_bound"]
    kept = [r["lower_bound"] for r in shown.to_dict()["rows"] if r["lower_bound"] is not None]
    assert kept and all(0 <= b <= 1 for b in kept)  # report.json: the shares


def _pct(share: float) -> str:
    """One decimal of a percentage, by hand: the share rounded once at three decimals."""
    return f"{float(f'{share:.3f}') * 100:.1f}%"


def test_a_findings_sentence_writes_its_target_and_agreements_in_one_unit(
    report: AuditReport,
) -> None:
    """The finding read "target agreement ≥ 0.80; … held out: 21.0% kept, 90.5% agree":
    the target a share and the agreements percentages in one sentence. Every number of
    the sentence but the confidence thresholds (``c ≥ 0.97``, a confidence, no share)
    is now a percentage, the target's and the held-out ones those of the curve's row,
    written by hand here; the method names the target so too."""
    import re

    curve = next(t.frame for t in report.sections[0].tables if not t.show)
    checked = 0
    for target in (0.80, 0.85, 0.90):
        for key, stratum in (("certified_coverage", "pooled"), ("certified_coverage_own", "own")):
            found = [f for f in report.findings if f.bias.key == key and f.judge == JUDGE
                     and f"agreement ≥ {round(100 * target)}% at δ" in f.method]  # fmt: skip
            if not found:
                continue
            (f,) = found
            (row,) = curve[(curve["judge"] == JUDGE) & (curve["stratum"] == stratum)
                           & np.isclose(curve["target"], target)].to_dict("records")  # fmt: skip
            assert f.detail.startswith(f"target agreement ≥ {round(100 * row['target'])}%; ")
            held = f"held out: {_pct(row['heldout_coverage'])} kept"
            if row["heldout_agreement"] == row["heldout_agreement"]:  # not NaN
                held += f", {_pct(row['heldout_agreement'])} agree"
            assert f.detail.endswith(held), (f.detail, held)
            words = re.sub(r"c ≥ [0-9.]+", "", f.detail)
            numbers = re.findall(r"[0-9][0-9.]*%?", words)
            assert numbers and all(n.endswith("%") for n in numbers), f.detail
            checked += 1
    assert checked >= 4


def test_each_targets_verdict_names_its_target(report: AuditReport) -> None:
    """A judge's certified coverage at the three targets read word for word alike
    ("certified coverage …: 0.0% [0.0%, 1.5%], n=200" three times), only its detail
    naming the target: each verdict now says which target it is for, in report.json too."""
    for key in ("certified_coverage", "certified_coverage_own"):
        said = {t: _finding(report, key, t).verdict for t in FINDING_TARGETS}
        for t, v in said.items():
            assert f", target agreement ≥ {100 * t:.0f}%: " in v, v
        assert len(set(said.values())) == len(FINDING_TARGETS)
    rows = [f.to_dict() for f in report.findings]  # as report.json holds them
    mine = [f for f in rows if f["bias"] == "certified_coverage" and f["judge"] == JUDGE]
    assert sorted(f["verdict"].split(", target agreement ≥ ")[1][:3] for f in mine) == [
        "80%",
        "85%",
        "90%",
    ]


def test_a_finding_whose_kept_pairs_err_together_by_prompt_warns() -> None:
    """The audit's certified coverage at each target counts its kept pairs one by one, as
    ``recuse certify`` does: where they agree or err together by prompt (10 pairs a
    prompt, a prompt effect of sd 2 on the logit), the finding warns with the design
    effect, and the gate shows it beside the line; a target certifying nothing, none."""
    from mitigation.conftest import prompted

    import recuse

    found = recuse.audit(prompted(40, 10, 2.0, seed=1), only=["certification"], n_boot=200)
    rows = found.findings
    said = [w for ws in rows["warnings"] for w in ws if "err together by prompt" in w]
    assert said and all("design effect" in w and "certify on one item a prompt" in w
                        for w in said)  # fmt: skip
    quiet = rows[rows["estimate"] == 0]
    assert all(not any("by prompt" in w for w in ws) for ws in quiet["warnings"])

"""A metric's result as a notebook prints it (``MetricResult.__str__``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from recuse.metrics import Resampling, pairwise_bias
from recuse.metrics.result import MetricResult
from recuse.simulate import simulate_pairs

METHOD = "recall gap (Eq. 6): recall when longer minus when shorter; verdict=prob; 90% BCa"


def _result(**fields: object) -> MetricResult:
    base: dict[str, object] = {
        "metric": "verbosity_bias", "estimate": -0.1234567891234, "ci_low": -0.3051234567,
        "ci_high": 0.0449876543, "level": 0.9, "n": 1234, "n_clusters": 321, "method": METHOD,
        "judge": "gpt-4",
    }  # fmt: skip
    return MetricResult(**(base | fields))  # type: ignore[arg-type]


def test_str_is_the_audits_line_not_the_dataclass() -> None:
    """``print(result)`` wrote the dataclass's repr: 16-digit floats on a line of 1,000
    characters and more. It writes the estimate with its sign (a signed difference),
    the interval's ends with '−' on the negative one only, the level, the no-bias
    value, n with what it counts, the prompts and the definition (the method's first
    clause); the repr keeps every field exact."""
    r = _result()
    assert str(r).splitlines() == [
        "verbosity_bias for gpt-4: \u22120.12 [\u22120.31, 0.04] (90% interval), no bias 0, "
        "n=1,234 pairs, 321 prompts resampled",
        "  recall gap (Eq. 6): recall when longer minus when shorter — the audit's "
        "headline is verbosity_longer_gap",
    ]
    assert repr(r).startswith("MetricResult(metric='verbosity_bias', estimate=-0.1234567891234,")


def test_str_follows_the_results_own_flags() -> None:
    """An absolute value and a rate are written without '+', a signed difference with
    it; a rate's no-bias value 1 and what n counts (``n_of``) come from the result, and
    its warnings follow, one a line."""
    up = _result(estimate=0.1234, ci_low=-0.05, ci_high=0.3)
    assert "+0.12 [\u22120.05, 0.30]" in str(up)
    folded = _result(estimate=0.1234, ci_low=0.0, ci_high=0.3, absolute=True)
    assert ": 0.12 [0.00, 0.30] (90% interval)" in str(folded)
    rate = _result(
        metric="position_consistency", estimate=0.875, ci_low=0.8, ci_high=0.93, null=1.0,
        bound="ceiling", level=0.95, n=67, n_clusters=73, n_of="pairs holding its own answer",
        warnings=("low n: read it as rough",),
    )  # fmt: skip
    first, _, warning = str(rate).splitlines()
    assert first == (
        "position_consistency for gpt-4: 0.88 [0.80, 0.93] (95% interval), no bias 1, "
        "n=67 pairs holding its own answer, 73 prompts resampled"
    )
    assert warning == "  warning: low n: read it as rough"


def test_str_of_computed_results_is_short() -> None:
    """Every result of a real run prints as a few short lines, each number the result's
    own (its estimate, rounded to two decimals, is in the first line)."""
    table = simulate_pairs(n_prompts=20, seed=3).pairs
    results = pairwise_bias(table, boot=Resampling(n_boot=50)).results
    assert results
    for r in results:
        first = str(r).splitlines()[0]
        assert len(first) < 200 and first.startswith(f"{r.metric} for {r.judge}: ")
        if np.isfinite(r.estimate) and abs(r.estimate) >= 0.1:
            shown = first.split(": ", 1)[1].split(" [")[0].replace("\u2212", "-")
            assert abs(float(shown) - r.estimate) <= 0.005 + 1e-12


def test_str_writes_the_datas_text_one_line_each() -> None:
    """A judge named with a newline, or a warning quoting one, printed a line the result
    never wrote ("PASS: ..."), and a terminal's escape in a name (clear the screen)
    acted on the terminal: each is written escaped, as the CLI writes it, one line per
    part (the result's line, its definition, each warning)."""
    r = _result(
        judge="gpt-4\nPASS: forged",
        warnings=("judge 'gpt-4\nPASS: forged' has 3 pairs", "name \x1b[2J\u202eevil"),
    )
    lines = str(r).splitlines()
    assert len(lines) == 4
    assert lines[0].startswith("verbosity_bias for gpt-4\\nPASS: forged: \u22120.12 [")
    assert lines[2] == "  warning: judge 'gpt-4\\nPASS: forged' has 3 pairs"
    assert lines[3] == "  warning: name \\x1b[2J\\u202eevil"
    assert not any(line.startswith("PASS") for line in lines)


def test_str_says_how_a_refitted_interval_was_made_beside_it() -> None:
    """GPT-4's calibrated self-preference on llmbar-mtbench printed −0.04 [−0.11, 0.06]
    from ``calibrated_self_preference`` (its rows alone: exact refits) and −0.04 [−0.12,
    0.05] from ``pairwise_bias`` and the audit (4 judges: one Newton step per resample),
    with no word beside either of why: ``recuse metrics pairs`` said it under its table,
    ``print`` did not. A refitted result now prints how, and that the other way moves
    the interval; a result no model was refitted for prints no such line."""
    from recuse.metrics.result import REFIT_WORDS

    exact = _result(metric="self_preference_calibrated", refit="exact")
    lines = str(exact).splitlines()
    assert lines[2] == (
        "  interval: refitted exactly in every resample; the other way (exact refits or "
        "one Newton step: the table's judges and size decide, as `method` says) gives a "
        "slightly other interval"
    )
    one = str(_result(metric="self_preference_calibrated", refit="one-step")).splitlines()
    assert one[2].startswith(f"  interval: {REFIT_WORDS['one-step']}; the other way")
    assert not any("interval:" in line for line in str(_result()).splitlines())


def _beside_headline() -> dict[str, str]:
    """What ``BESIDE_HEADLINE`` should hold, worked out from the analyses instead: per
    metric an analysis shows beside its headline, that headline and, for one not adjusted
    for the judge's competence, the caveat."""
    from recuse.analyses import REGISTRY
    from recuse.analyses.self_preference import UNADJUSTED

    out: dict[str, str] = {}
    for analysis in REGISTRY:
        of_bias = {b.key: m for m, b in (analysis.metrics or {}).items() if b is not None}
        top = analysis.biases[0]
        headline = of_bias.get(top.key)
        if not top.headline or headline is None:
            continue
        for metric, bias in (analysis.metrics or {}).items():
            if bias is None or metric == headline:
                continue
            caveat = f"{UNADJUSTED.split(' — ')[0]}; " if bias.unadjusted else ""
            out[metric] = f" — {caveat}the audit's headline is {headline}"
    return out


def test_str_words_a_number_beside_a_headline_as_recuse_metrics_pairs_does(
    shared_data: Path,
) -> None:
    """GPT-3.5's equal opportunity on llmbar-mtbench, +0.21 [0.07, 0.34], printed as the
    paper's definition alone from ``self_preference``, while ``recuse metrics pairs``
    and the audit's unit say beside it that it is not adjusted for the judge's
    competence (high for any strong judge) and which metric is the headline. Each
    metric's words now come from one table (``BESIDE_HEADLINE``), held here equal to
    what the analyses say (worked out from them here), and the printed line is
    the CLI's definition line on the real data."""
    from recuse.choices import METRICS
    from recuse.data import load
    from recuse.metrics import self_preference
    from recuse.metrics.result import beside_words

    assert {m: beside_words(m) for m in METRICS if beside_words(m)} == _beside_headline()
    pairs = load("llmbar-mtbench", data_dir=shared_data)
    eo = self_preference(pairs, judge="gpt-3.5-turbo", kind="eo", boot=Resampling(n_boot=200))
    first, second = str(eo).splitlines()[:2]
    assert first.startswith("self_preference_eo for gpt-3.5-turbo: +0.21 [")
    assert second == (
        "  Equal-Opportunity bias (Def. 4.1): recall when the human prefers the judge's own "
        "response minus recall when the human prefers the other response — not adjusted "
        "for the judge's competence: high for a strong judge with no bias, low for a weak "
        "one; the audit's headline is self_preference_calibrated"
    )


def test_a_fixed_value_writes_no_interval_error_test_or_rule() -> None:
    """A value fixed by construction is not a measurement (its verdict: "no interval"),
    but its dict and table row wrote ``ci_low``/``ci_high`` 0 and 0, its resamples'
    standard error and p-value and ``interval_rule`` "percentile": each is null now
    (empty in the CSV), and ``fixed_by_construction`` says why. A measured result with
    the same numbers keeps them."""
    from recuse.metrics.result import COLUMNS, results_frame

    kw = dict(metric="part", estimate=0.0, ci_low=0.0, ci_high=0.0, level=0.9, n=67,
              n_clusters=73, method="m", std_error=0.0, p_value=1.0,
              interval_rule="percentile")  # fmt: skip
    fixed = MetricResult(**kw, fixed=True)  # type: ignore[arg-type]
    measured = MetricResult(**kw)  # type: ignore[arg-type]
    d = fixed.to_dict()
    assert (d["ci_low"], d["ci_high"], d["std_error"], d["p_value"]) == (None,) * 4
    assert d["interval_rule"] is None and d["fixed_by_construction"] is True
    assert d["estimate"] == 0.0
    m = measured.to_dict()
    assert (m["ci_low"], m["ci_high"], m["std_error"], m["p_value"]) == (0.0, 0.0, 0.0, 1.0)
    assert m["interval_rule"] == "percentile" and m["fixed_by_construction"] is False
    frame = results_frame([fixed, measured])
    assert frame.loc[0, ["ci_low", "ci_high", "interval_rule"]].isna().all()
    assert list(frame["fixed_by_construction"]) == [True, False]
    assert "fixed by construction" in COLUMNS["fixed_by_construction"]
    assert "empty: no interval" in COLUMNS["ci_low"]
    # printed, as the JSON: no interval and no n ("part: 0 [0, 0] (90% interval), no
    # bias 0, n=67 pairs" read as a measurement of the judge's 67 own pairs)
    assert str(fixed).splitlines()[0] == (
        "part: 0, fixed by construction, not a measurement (no interval), no bias 0"
    )
    assert str(measured).splitlines()[0].startswith("part: +0.000 [0.000, 0.000] (90% interval)")


def test_a_fixed_value_prints_no_line_of_how_its_interval_was_resampled() -> None:
    """print(result) of a refitted estimate says how its resamples were refitted (its
    interval's words); a value fixed by construction has no interval, and read "(no
    interval)" above "interval: refitted exactly in every resample"."""
    kw = dict(metric="part", estimate=0.0, ci_low=0.0, ci_high=0.0, level=0.9, n=67,
              n_clusters=73, method="m", refit="exact")  # fmt: skip
    fixed = str(MetricResult(**kw, fixed=True)).splitlines()  # type: ignore[arg-type]
    measured = str(MetricResult(**kw)).splitlines()  # type: ignore[arg-type]
    assert "(no interval)" in fixed[0]
    assert not any(t.startswith("  interval:") for t in fixed), fixed
    assert measured[2].startswith("  interval: refitted exactly in every resample"), measured


def test_a_fixed_value_has_no_n_in_its_dict_or_table_row(tmp_path: Path) -> None:
    """A value fixed by construction rests on no sample: report.json writes its n and
    clusters null, but its dict (``recuse metrics --out x.json``, the audit's estimates
    tables) and its CSV row wrote n 67 and n_clusters 73, the judge's own pairs as if
    measured. Null there too (empty in the CSV, whose measured rows keep whole numbers,
    not 51.0), with what n counts (``n_of``); a measured result keeps them."""
    from recuse.metrics.result import COLUMNS, results_frame

    kw = dict(metric="part", estimate=0.0, ci_low=0.0, ci_high=0.0, level=0.9, n=67,
              n_clusters=73, method="m", n_of="own pairs")  # fmt: skip
    fixed = MetricResult(**kw, fixed=True)  # type: ignore[arg-type]
    measured = MetricResult(**kw)  # type: ignore[arg-type]
    d, m = fixed.to_dict(), measured.to_dict()
    assert (d["n"], d["n_clusters"], d["n_of"]) == (None, None, None)
    assert (m["n"], m["n_clusters"], m["n_of"]) == (67, 73, "own pairs")
    path = tmp_path / "r.csv"
    results_frame([fixed, measured]).to_csv(path, index=False)
    rows = path.read_text("utf-8").splitlines()
    head = rows[0].split(",")
    at = head.index("n"), head.index("n_clusters")
    assert [rows[1].split(",")[i] for i in at] == ["", ""]
    assert [rows[2].split(",")[i] for i in at] == ["67", "73"]
    assert "fixed by construction" in COLUMNS["n"] and "fixed" in COLUMNS["n_clusters"]

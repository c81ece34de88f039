"""`recuse metrics pairs` on a judge whose own answers are recorded under another name:
its "not estimated" reason said only "no pairs holding the judge's own answer", where
`recuse audit` names the generator spelt like it, or its model line's snapshot with
--self-scope line. Both commands now say the same."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "400")


def _pairs(path: Path, *, judge: str, own: str) -> Path:
    """20 one-pair prompts: ``own``'s answer against claude-v1's, judged by ``judge``."""
    rows = [
        {"item_id": f"i{i}", "prompt_id": f"p{i}", "model_a": own if i % 2 else "claude-v1",
         "model_b": "claude-v1" if i % 2 else own, "human": float(i % 3 == 0), "judge": judge,
         "p_a_first": float(i % 4 < 2), "p_a_second": float(i % 5 < 3)}
        for i in range(20)
    ]  # fmt: skip
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def _why(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, str]:
    """The reasons of the estimates not made, from the JSON (position, estimated, writes it)."""
    out = path.with_suffix(".json")
    code = main(["metrics", "pairs", str(path), "-m", "self_preference_eo",
                 "-m", "first_position_rate", "--n-boot", "100", "-o", str(out)])  # fmt: skip
    capsys.readouterr()
    assert code == 0
    return {s["metric"]: s["reason"] for s in json.loads(out.read_text())["skipped"]}


def test_a_snapshot_of_the_judges_line_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _pairs(tmp_path / "snap.csv", judge="gpt-4o", own="gpt-4o-2024-08-06")
    why = _why(capsys, path)["self_preference_eo"]
    assert "no pairs holding the judge's own answer" in why
    assert "'gpt-4o-2024-08-06' of its model line" in why and "--self-scope line" in why


def test_a_generator_spelt_like_the_judge_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = _pairs(tmp_path / "alike.csv", judge="acme-judge", own="acme-judge-v2")
    why = _why(capsys, path)["self_preference_eo"]
    assert "if 'acme-judge-v2' is this judge's model under another name" in why


def test_recuse_favoritism_names_the_snapshot_and_the_spelling(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`recuse favoritism`'s note on a judge that never rates its own completions said
    only that; it now names a model of its line (and --self-scope line, which it takes
    as the audit does) or a generator spelt like it."""
    from recuse.simulate import simulate_ratings

    base = simulate_ratings(n_prompts=30, dimensions=("d1",), seed=0).ratings
    base = base.astype({"judge": str, "model": str})
    for judge, own, said in (
        ("gpt-4o", "gpt-4o-2024-08-06",
         "'gpt-4o-2024-08-06' of its model line wrote answers here, read as its family "
         "(self is the judge's own snapshot): if the judge is one of them, --self-scope "
         "line counts them as its own"),
        ("acme-judge", "acme-judge-v2",
         "if 'acme-judge-v2' is this judge's model under another name, write one name for "
         "both (in the judge and model columns"),
    ):  # fmt: skip
        path = tmp_path / f"{judge}.csv"
        base.assign(
            judge=base["judge"].replace({"j0": judge}), model=base["model"].replace({"j0": own})
        ).to_csv(path, index=False)
        code = main(["favoritism", str(path), "--out", str(tmp_path / judge)])
        text = " ".join(capsys.readouterr().out.split())
        assert code == 0
        assert f"self-bias of {judge} not estimable: it never rates its own completions; " in text
        assert said in text


def test_recuse_favoritism_takes_self_scope_line_as_the_audit_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`recuse favoritism` pointed at `recuse audit --self-scope line` and took no such
    option itself. Now it does: gpt-4o over gpt-4o-2024-08-06 gets a self-bias term,
    the same γ̂ as the audit's fit with self_scope="line" (fit_favoritism with the
    line's self map, read here independently of the command), and no hint."""
    from recuse.regression import fit_favoritism
    from recuse.roster import Roster
    from recuse.simulate import simulate_ratings

    base = simulate_ratings(n_prompts=30, dimensions=("d1",), seed=0).ratings
    base = base.astype({"judge": str, "model": str})
    frame = base.assign(
        judge=base["judge"].replace({"j0": "gpt-4o"}),
        model=base["model"].replace({"j0": "gpt-4o-2024-08-06"}),
    )
    path = tmp_path / "line.csv"
    frame.to_csv(path, index=False)
    out = tmp_path / "out"
    code = main(["favoritism", str(path), "--self-scope", "line", "--out", str(out)])
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "self-bias of gpt-4o not estimable" not in text
    assert "--self-scope line counts" not in text
    roster = Roster.builtin()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        roster.keep(sorted({*frame["judge"], *frame["model"]} - set(roster.entries)))
    fit = fit_favoritism(frame, roster, selves=roster.self_map("line"))
    gamma = fit.self_bias().set_index("judge").loc["gpt-4o", "estimate"]
    written = json.loads((out / "favoritism.json").read_text())
    assert written["settings"]["self_scope"] == "line"
    coef = pd.read_csv(out / "coefficients.csv")
    (estimate,) = coef.loc[(coef["kind"] == "self") & (coef["label"] == "gpt-4o"), "estimate"]
    assert estimate == pytest.approx(gamma, abs=1e-12)
    assert estimate == pytest.approx(0.0264, abs=5e-5)  # the audit's, on these ratings


def test_the_hint_is_printed_once_per_judge_and_written_whole(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The terminal's 'Not estimated' table gave the line hint on each of the judge's
    self-preference rows (EO, DP, the calibrated headline and its rungs: the same long
    reason six times). It is printed once; the rows after it say which row holds it,
    and the --out file keeps each reason whole."""
    path = _pairs(tmp_path / "snap.csv", judge="gpt-4o", own="gpt-4o-2024-08-06")
    out = tmp_path / "snap.json"
    code = main(["metrics", "pairs", str(path), "--n-boot", "100", "-o", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert " ".join(text.split()).count("of its model line wrote answers here") == 1
    assert "as for self_preference_eo above" in text
    written = [s["reason"] for s in json.loads(out.read_text())["skipped"]]
    hinted = [r for r in written if "of its model line wrote answers here" in r]
    assert len(hinted) >= 3  # EO, DP and the calibrated headline at least


def test_metrics_pairs_orders_first_names_orders_both(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`recuse metrics pairs --orders first` on a table judged in both orders, the
    judge's own answer always in a: the one-slot warning names --orders both."""
    rows = [
        {"item_id": f"i{i}", "prompt_id": f"p{i}", "model_a": "gpt-4", "model_b": "claude-v1",
         "human": float(i % 2), "judge": "gpt-4", "p_a_first": 1.0, "p_a_second": 0.0}
        for i in range(20)
    ]  # fmt: skip
    path = tmp_path / "own-in-a.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    code = main(["metrics", "pairs", str(path), "-m", "self_preference_dp", "--orders",
                 "first", "--n-boot", "100"])  # fmt: skip
    text = " ".join(capsys.readouterr().out.split())
    assert code == 0
    assert "shown first on 20 of its 20 pairs" in text
    assert "where the table has it, --orders both reads it" in text

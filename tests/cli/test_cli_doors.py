"""``recuse audit`` and ``recuse metrics pairs`` take the same ``--human-ties`` and
``--self-scope`` (the audit had no ``--human-ties``, metrics pairs no ``--self-scope``):
the same choices, default and help, and the same number for the same choice on one real
table (LLMBar's MT-Bench set, with a quarter of its prompts' labels made ties and GPT-4
renamed to its snapshot gpt-4-0613, so both options change what is estimated)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, get_args

import pytest
import typer.main

from recuse.cli import main

FAST = ("--n-boot", "200", "--seed", "3")
#: the metrics both doors estimate (the audit's finding key is the metric's name)
SHARED = ("self_preference_eo", "self_preference_dp", "verbosity_longer_gap")


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


def _metrics_pairs(path: Path, out: Path, *options: str) -> dict[tuple[str, str], Any]:
    metrics = [w for m in SHARED for w in ("-m", m)]
    assert main(["metrics", "pairs", str(path), *FAST, *metrics, *options, "-o", str(out)]) == 0
    rows = json.loads(out.read_text())["results"]
    return {(r["judge"], r["metric"]): r for r in rows}


def _audit(
    path: Path, out: Path, *options: str, only: str = "self-preference,verbosity"
) -> dict[str, Any]:
    assert main(["audit", str(path), *FAST, "--only", only, *options, "-o", str(out)]) == 0
    return json.loads((out / "report.json").read_text())


def _findings(report: dict[str, Any]) -> dict[tuple[str, str], Any]:
    return {(f["judge"], f["bias"]): f for s in report["sections"] for f in s["findings"]}


@pytest.mark.parametrize("ties", ["drop", "split"])
@pytest.mark.parametrize("scope", ["snapshot", "line"])
def test_both_doors_give_the_same_number_for_the_same_choice(
    tied_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], ties: str, scope: str
) -> None:
    options = ("--human-ties", ties, "--self-scope", scope)
    pairs = _metrics_pairs(tied_table, tmp_path / "m.json", *options)
    report = _audit(tied_table, tmp_path / "audit", *options)
    found = _findings(report)
    shared = [k for k in pairs if k in found]
    assert {m for _, m in shared} == set(SHARED)
    for key in shared:
        p, f = pairs[key], found[key]
        fields = ("estimate", "ci_low", "ci_high", "n", "interval_rule", "heaviest_prompt")
        # metrics pairs' --out lacked the rule report.json gives each interval
        assert [f[k] for k in fields] == [p.get(k, "absent") for k in fields], key
    # and so did its CSV: the same rule on every row
    assert main(["metrics", "pairs", str(tied_table), *FAST, *options, "-o",
                 str(tmp_path / "m.csv")]) == 0  # fmt: skip
    with (tmp_path / "m.csv").open(newline="") as handle:
        rows = {(r["judge"], r["metric"]): r for r in csv.DictReader(handle)}
    assert rows and {k: r["interval_rule"] for k, r in rows.items() if k in pairs} == {
        k: pairs[k]["interval_rule"] for k in rows if k in pairs
    }
    # the options act: gpt-4-0613's own answers are gpt-4's only under line
    own = ("gpt-4-0613", "self_preference_eo")
    assert (own in pairs) == (own in found) == (scope == "line")
    # split keeps the 236 tied pairs that drop leaves out (and says it left out)
    eo = pairs[("gpt-3.5-turbo", "self_preference_eo")]
    tied = [e for e in report["exclusions"] if "tie" in e["reason"]]
    # each judge's 59 (236) are counted: left out of EO under drop, and of accuracy,
    # calibration and certification under either (their own rule)
    assert sorted(e["count"] for e in tied) == [59] * 4
    if ties == "drop":
        assert eo["n"] < 67 and "human ties left out" in eo["method"]
        assert {e["analysis"].split(",")[0] for e in tied} == {"EO"}
    else:
        assert eo["n"] == 67 and "human ties count ½" in eo["method"]
        assert all(e["analysis"].startswith("agreement accuracy") for e in tied)
    options_said = report["provenance"]["options"]["human ties (--human-ties / human_ties=)"]
    assert f"human_ties='{ties}'" in options_said


def test_human_ties_error_refuses_in_both_doors(
    tied_table: Path, shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--human-ties error: a tie is refused before any work, exit 2, the file's row and
    column named, nothing written."""
    out = tmp_path / "audit"
    code = main(["audit", str(tied_table), *FAST, "--human-ties", "error", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "tie" in err and "column 'human'" in err and "Traceback" not in err
    assert not (out / "report.json").exists()
    code = main(["metrics", "pairs", str(tied_table), "--human-ties", "error"])
    err2 = capsys.readouterr().err
    said = [e.splitlines()[-1].partition(", data row")[2] for e in (err, err2)]
    assert code == 2 and said[0] == said[1] != ""
    # a tied table after one without ties: refused before the first one's analyses run
    # (they ran to the end, the shared bootstrap and nine analyses, before the refusal)
    both = ["audit", "llmbar-mtbench", str(tied_table), "--data-dir", str(shared_data), *FAST,
            "--human-ties", "error"]  # fmt: skip
    assert main([*both, "-o", str(out)]) == 2
    captured = capsys.readouterr()
    assert "tied.csv, data row" in captured.err and not (out / "report.json").exists()
    assert "bootstrap" not in captured.out + captured.err


def _params(*path: str) -> dict[str, Any]:
    from recuse.cli import _register, app

    _register()
    command: Any = typer.main.get_command(app)
    for word in path:
        command = command.commands[word]
    return {p.opts[0]: p for p in command.params if p.opts}


@pytest.mark.parametrize("flag", ["--human-ties", "--self-scope"])
def test_the_two_options_have_one_choice_list_default_and_help(flag: str) -> None:
    audit, pairs = _params("audit")[flag], _params("metrics", "pairs")[flag]
    assert audit.default == pairs.default
    choices = [get_args(p.type_descriptor.annotation) for p in (audit, pairs)]
    assert choices[0] == choices[1] and len(choices[0]) >= 2
    assert audit.help == pairs.help
    assert audit.default == {"--human-ties": "drop", "--self-scope": "snapshot"}[flag]


def test_a_recuse_toml_gives_the_audit_its_human_ties(tmp_path: Path) -> None:
    from recuse.config import load_config
    from recuse.errors import ConfigError
    from recuse.options import resolve

    toml = tmp_path / "recuse.toml"
    toml.write_text('[audit]\nhuman-ties = "split"\n')
    given = resolve({}, config=load_config(toml))
    assert given.human_ties == "split" and given.audit_options().ties == "split"
    toml.write_text('[audit]\nhuman-ties = "half"\n')
    with pytest.raises(ConfigError, match="human-ties"):
        load_config(toml)


def test_the_humans_length_baseline_says_its_ties_beside_the_number(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """mt-bench-human (expert votes, no judge; a tie or evenly split votes = 0.5): its
    humans' preference for the longer answer read 0.69 from 693 pairs under drop and 0.65
    from 879 under split, and neither the terminal nor the page said why n moved — the
    186 tied labels were in no exclusion (the table's rows are all "no judge verdict").
    Now the sentence says them, and the two runs agree by hand: split's n = drop's n +
    the ties, its share = (drop's share · drop's n + ½ · ties) / split's n."""
    said: dict[str, Any] = {}
    for ties in ("drop", "split"):
        out = tmp_path / ties
        code = main(["audit", "mt-bench-human", "--data-dir", str(shared_data), *FAST,
                     "--human-ties", ties, "-o", str(out)])  # fmt: skip
        terminal = capsys.readouterr().out
        report = json.loads((out / "report.json").read_text())
        (base,) = [b for s in report["sections"] for b in s.get("baselines", [])]
        page = (out / "report.html").read_text()
        said[ties] = (code, base, terminal, page)
        # the table and its CSV count them too, with what the count means
        (path,) = (out / "tables").glob("human-length-preference-*.csv")
        with path.open(newline="") as handle:
            (row,) = csv.DictReader(handle)
        table = report["tables"][path.stem]
        assert row["human_ties"] == "186" and table["rows"][0]["human_ties"] == 186
        assert f"(--human-ties {ties})" in table["columns"]["human_ties"]
    (_, drop, t_drop, p_drop), (_, split, t_split, p_split) = said["drop"], said["split"]
    assert said["drop"][0] == said["split"][0] == 0
    tied = drop["counts"]["human ties (labels of 0.5)"]
    assert tied == split["counts"]["human ties (labels of 0.5)"] == 186
    assert (drop["n"], split["n"]) == (693, 693 + 186)
    by_hand = (drop["estimate"] * drop["n"] + 0.5 * tied) / split["n"]
    assert split["estimate"] == pytest.approx(by_hand, rel=1e-12)
    # 47 of the 186 are expert votes split 1–1, no tie: the sentence and the column
    # name them as the method and the exclusions do (they said "186 human ties")
    noun = "tied or evenly split human votes"
    # and the 31 pairs of equal length, said on the page's exclusions alone (693 and 186
    # of 910 rows): 693 + 186 + 31 = 910 and 879 + 31 = 910, counted by hand
    from recuse.data import load

    frame = load("mt-bench-human", data_dir=shared_data)
    equal = int(((frame["len_a"] == frame["len_b"]) & frame["human"].notna()).sum())
    assert equal == 31 and 693 + 186 + equal == len(frame) == 910
    same = f"; {equal} pairs whose two answers are of equal length (or a length unknown) left out"
    words = {
        "drop": f"693 pairs, no preference = 0.5; 186 {noun} (labels of 0.5) left out: "
        f"--human-ties drop{same})",
        "split": f"879 pairs, no preference = 0.5; 186 of them {noun} (labels of 0.5), "
        f"each counted ½ to each side: --human-ties split{same})",
    }
    for ties, terminal, page in (("drop", t_drop, p_drop), ("split", t_split, p_split)):
        assert words[ties] in " ".join(terminal.split()), ties
        assert words[ties] in page, ties
    assert f"{noun} left out (186)" in drop["method"]
    for ties in ("drop", "split"):
        (path,) = (tmp_path / ties / "tables").glob("human-length-preference-*.csv")
        report = json.loads((tmp_path / ties / "report.json").read_text())
        assert report["tables"][path.stem]["columns"]["human_ties"].startswith(f"the {noun} ")


def test_ties_agreement_leaves_out_are_counted_under_split_too(
    tied_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Agreement's accuracy leaves human ties out whatever --human-ties says (its own
    rule): under split gpt-3.5-turbo's accuracy rests on 141 of its 200 labelled, judged
    pairs, and the exclusions, which listed the 59 ties under drop, listed nothing under
    split — the 59 were accounted nowhere. Both choices now count them, naming accuracy;
    141 + 59 = 200 by hand, and κ (ties kept as the middle category) keeps all 200."""
    for ties in ("drop", "split"):
        report = _audit(tied_table, tmp_path / ties, "--human-ties", ties, only="agreement")
        found = _findings(report)
        accuracy = found[("gpt-3.5-turbo", "agreement_accuracy")]
        kappa = found[("gpt-3.5-turbo", "agreement_kappa")]
        (tied,) = [
            e for e in report["exclusions"]
            if e["judge"] == "gpt-3.5-turbo" and "tie" in e["reason"]
        ]  # fmt: skip
        assert "agreement accuracy" in tied["analysis"], ties
        assert (accuracy["n"], tied["count"], kappa["n"], tied["total"]) == (141, 59, 200, 200)
        assert "human ties left out" in accuracy["method"]


def test_split_counts_a_tie_half_to_each_side_of_eo_by_hand(
    tied_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """gpt-3.5-turbo's equal-opportunity self-preference worked out from the table by
    hand: over its pairs with its own answer on one side, v the judge's P(own) (the two
    orders averaged) and h the human's, EO = Σw·h·v / Σw·h − Σw·(1−h)(1−v) / Σw·(1−h),
    with w = 1 on every pair under split (a tie, h = ½, weighs half on each side) and
    w = 0 on the ties under drop; n = Σw."""
    import pandas as pd

    t = pd.read_csv(tied_table)
    g = t[t["judge"] == "gpt-3.5-turbo"]
    own_a, own_b = g["model_a"] == "gpt-3.5-turbo", g["model_b"] == "gpt-3.5-turbo"
    g = g[own_a != own_b]
    p_a = g[["p_a_first", "p_a_second"]].mean(axis=1)
    mine = g["model_a"] == "gpt-3.5-turbo"
    v = p_a.where(mine, 1 - p_a).to_numpy(float)
    h = g["human"].where(mine, 1 - g["human"]).to_numpy(float)
    kept = ~(pd.isna(v) | pd.isna(h))
    v, h = v[kept], h[kept]
    for ties in ("split", "drop"):
        w = (abs(h - 0.5) > 1e-9).astype(float) if ties == "drop" else h * 0 + 1
        by_hand = (w * h * v).sum() / (w * h).sum() - (w * (1 - h) * (1 - v)).sum() / (
            w * (1 - h)
        ).sum()
        out = tmp_path / ties
        found = _findings(_audit(tied_table, out, "--human-ties", ties, only="self-preference"))
        eo = found[("gpt-3.5-turbo", "self_preference_eo")]
        assert eo["estimate"] == pytest.approx(by_hand, rel=1e-12), ties
        assert eo["n"] == int(w.sum()), ties
    assert int(((h - 0.5) ** 2 < 1e-18).sum()) > 0  # the table has ties for this judge


def test_the_calibrated_headline_keeps_its_rule_and_says_it(
    tied_table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit's self-preference headline (competence-calibrated) learns the models'
    strengths from the human labels with a tie as half a win to each (a fractional
    Bradley–Terry outcome) whatever --human-ties says: the same number under drop and
    split, where EO moves (gpt-3.5-turbo: +0.18 → +0.25). Its method named no
    rule for ties, so a user of --human-ties split could not tell why the headline kept
    still; it now says so."""
    found = {
        ties: _findings(_audit(tied_table, tmp_path / ties, "--human-ties", ties,
                               "--self-scope", "line", only="self-preference"))
        for ties in ("drop", "split")
    }  # fmt: skip
    key = ("gpt-3.5-turbo", "self_preference_calibrated")
    drop, split = found["drop"][key], found["split"][key]
    assert (drop["estimate"], drop["ci_low"], drop["n"]) == (
        split["estimate"], split["ci_low"], split["n"]
    )  # fmt: skip
    eo = ("gpt-3.5-turbo", "self_preference_eo")
    assert found["drop"][eo]["estimate"] != found["split"][eo]["estimate"]
    for f in (drop, split):
        assert "human ties count ½ a win to each model, whatever human_ties says" in f["method"]

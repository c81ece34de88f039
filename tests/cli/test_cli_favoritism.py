"""`recuse favoritism`: tables printed, files written, errors exit 2 with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats

from recuse.cli import main
from recuse.data import load
from recuse.roster import Roster
from recuse.simulate.ratings import simulate_ratings


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")


def _roster(tmp_path: Path) -> Path:
    sim = simulate_ratings(seed=1, n_prompts=30)
    text = "".join(f'[[model]]\nid = "{j}"\nfamily = "{f}"\n\n' for j, f in sim.families.items())
    path = tmp_path / "roster.toml"
    path.write_text(text)
    sim.ratings.to_csv(tmp_path / "ratings.csv", index=False)
    return path


def test_file_input_prints_tables_and_writes_outputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = _roster(tmp_path)
    out = tmp_path / "out"
    code = main(
        [
            "--roster",
            str(roster),
            "favoritism",
            str(tmp_path / "ratings.csv"),
            "--se",
            "HC3",
            "--level",
            "0.8",
            "--robustness",
            "length,by-task",
            "--out",
            str(out),
        ]
    )
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert "Self-bias" in stdout and "Family-bias" in stdout and "j3" in stdout
    # each table says what its numbers are: the unit and the no-bias value
    assert "normalised score" in stdout
    assert "0 = no self-bias" in stdout and "0 = no family bias" in stdout
    # '*' is each interval alone; the audit's flags are adjusted and thresholded: said,
    # so a '*' beside the audit's 'negligible' for one coefficient is not a contradiction
    words = " ".join(stdout.split())  # a caption may wrap anywhere
    assert words.count("no multiple-testing adjustment and no materiality threshold") == 2
    payload = json.loads((out / "favoritism.json").read_text())
    assert payload["main"]["se_type"] == "HC3" and payload["main"]["level"] == 0.8
    assert payload["main"]["definitions"]["null"] == 0.0
    # the correction's means say their scale (the fit's normalised scores)
    assert "normalised score" in payload["debiasing"]["unit"]
    assert set(payload["robustness"]) == {"length control", "task: qa", "task: summarization"}
    coef = pd.read_csv(out / "coefficients.csv")
    assert {"term", "estimate", "se", "lower", "upper", "significant"} <= set(coef.columns)
    rob = pd.read_csv(out / "robustness.csv")
    assert set(rob["variant"]) >= {"main", "length control"}
    # each row's n is its coefficient's (n_term); the fit's is named n_fit, and the JSON
    # and the terminal say which is which (the column was "n", the fit's, on every row)
    assert list(rob.columns[-2:]) == ["n_term", "n_fit"] and "n" not in rob.columns
    assert set(payload["robustness_columns"]) == set(rob.columns)
    assert "not the n behind this row's coefficient" in payload["robustness_columns"]["n_fit"]
    assert "n_term, the ratings each coefficient rests on" in " ".join(stdout.split())
    # the correction: debias_effect on the same fit (j0's planted self-bias comes out)
    deb = pd.read_csv(out / "debiased.csv").set_index("model")
    assert {"before", "after", "reference", "change", "rank_after"} <= set(deb.columns)
    assert len(deb) == 5 and deb.loc["j0", "change"] < 0
    assert payload["debiasing"]["models"][0]["model"] == deb.index[0]
    assert "correction (debiased.csv)" in stdout


def test_a_stray_score_is_a_warning_above_the_tables_and_in_the_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    roster = _roster(tmp_path)
    ratings = pd.read_csv(tmp_path / "ratings.csv")
    ratings.loc[4, "rating"] = 100
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    out = tmp_path / "out"
    args = ["--roster", str(roster), "favoritism", str(tmp_path / "ratings.csv")]
    assert main([*args, "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    warning = next(ln for ln in stdout.splitlines() if ln.startswith("warning: dimension"))
    assert "its top score 100 (held by 1 of" in warning
    assert stdout.index(warning) < stdout.index("Self-bias")
    payload = json.loads((out / "favoritism.json").read_text())
    assert payload["main"]["warnings"] == [warning.removeprefix("warning: ")]


@pytest.mark.parametrize(
    "args",
    [
        ["--se", "HC9"],
        ["--level", "1.5"],
        ["--robustness", "nope"],
        ["--normalize", "zz"],
    ],
)
def test_bad_options_exit_2_and_write_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    roster = _roster(tmp_path)
    out = tmp_path / "out"
    code = main(
        [
            "--roster",
            str(roster),
            "favoritism",
            str(tmp_path / "ratings.csv"),
            "--out",
            str(out),
            *args,
        ]
    )
    _, err = capsys.readouterr()
    assert code == 2 and not out.exists()
    if args[0] in ("--se", "--normalize"):  # a choice of the library's Literal: click says so
        assert args[0] in err and args[1] in err
    else:
        assert err.startswith("recuse: error:") and len(err.strip().splitlines()) == 1
    assert not out.exists()


@pytest.mark.parametrize("name", ["debiased.csv", "for-spreadsheets/coefficients.csv"])
def test_an_input_named_like_an_output_is_refused_and_nothing_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """`--out DIR` with the input at DIR/debiased.csv replaced the ratings with the
    debiased means, exit 0."""
    roster = _roster(tmp_path)
    out = tmp_path / "out"
    src = out / name
    src.parent.mkdir(parents=True)
    (tmp_path / "ratings.csv").rename(src)
    before = src.read_bytes()
    code = main(["--roster", str(roster), "favoritism", str(src), "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 2, err
    assert (
        err.startswith(f"recuse: error: --out {out / name}: is the input") and err.count("\n") == 1
    )
    assert src.read_bytes() == before
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*")) == sorted(
        {name, *(["for-spreadsheets"] if "/" in name else [])}
    )


def test_unknown_dataset_exits_2_and_unknown_models_are_their_own_families(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["favoritism", "no-such-dataset", "--out", str(out)]) == 2
    assert not out.exists()
    roster = _roster(tmp_path)  # writes ratings.csv with ids j0..j4, unknown to the built-ins
    assert main(["favoritism", str(tmp_path / "ratings.csv"), "--out", str(out)]) == 0
    printed, err = capsys.readouterr()
    assert err.count("recuse: note:") == 1
    assert "5 model names are not in the roster, each read as its own model and family" in err
    # no family has two members: no λ_F (it read '0 families' above notes naming families)
    said = "1,500 ratings, 5 judges with a self-bias term γ_j, 0 family-bias terms λ_F (families"
    assert said in printed
    res = json.loads((out / "favoritism.json").read_text())["main"]
    assert len(res["self_bias"]) == 5 and res["family_bias"] == []
    # the roster file gives the families (A, A, B, B, C) and no note
    out2 = tmp_path / "out2"
    args = ["--roster", str(roster), "favoritism", str(tmp_path / "ratings.csv")]
    assert main([*args, "--out", str(out2)]) == 0
    printed, err = capsys.readouterr()
    assert "not in the roster" not in err
    assert "5 judges with a self-bias term γ_j, 2 family-bias terms λ_F" in printed  # A, B


def test_real_dataset_by_name(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(["favoritism", "play-favorites", "--data-dir", str(shared_data), "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert "63,222 ratings, 9 judges with a self-bias term γ_j, 4 family-bias terms λ_F" in stdout
    main_fit = json.loads((out / "favoritism.json").read_text())["main"]
    gpt4o = next(r for r in main_fit["self_bias"] if r["judge"] == "gpt-4o")
    assert gpt4o["estimate"] == pytest.approx(0.0309, abs=5e-5)  # pinned: a second check
    # every γ_j and λ_F in the JSON, and its interval, is statsmodels' OLS with
    # cluster-robust (CR1, by prompt) errors on a frame built here: ratings and references
    # over each dimension's largest value, self = own id, family = roster family
    d = load("play-favorites", data_dir=shared_data)
    d = d.assign(rating=pd.to_numeric(d["rating"], errors="coerce"),
                 reference=pd.to_numeric(d["reference"], errors="coerce"))  # fmt: skip
    d = d.dropna(subset=["rating", "reference"]).reset_index(drop=True)
    top = d.groupby("dimension")[["rating", "reference"]].transform("max").max(axis=1)
    d["y"], d["ref"] = d["rating"] / top, d["reference"] / top
    roster = Roster.load()
    jf, mf = d["judge"].map(roster.family), d["model"].map(roster.family)
    d["s"] = np.where(d["judge"] == d["model"], d["judge"], "none")
    d["f"] = np.where((jf == mf) & (d["judge"] != d["model"]), jf, "none")
    groups = pd.factorize(d["prompt_id"])[0]
    ref = smf.ols(
        "y ~ 0 + C(judge) + C(judge):ref + C(s, Treatment('none'))"
        " + C(f, Treatment('none')) + C(dimension)",
        data=d,
    ).fit(cov_type="cluster", cov_kwds={"groups": groups}, use_t=True)
    # t on the prompts holding the term's ratings less one (statsmodels' use_t: on all G)
    q = 0.5 + main_fit["level"] / 2
    rows = [(f"C(s, Treatment('none'))[T.{r['judge']}]", d["s"] == r["judge"], r)
            for r in main_fit["self_bias"]]  # fmt: skip
    rows += [(f"C(f, Treatment('none'))[T.{r['family']}]", d["f"] == r["family"], r)
             for r in main_fit["family_bias"]]  # fmt: skip
    assert len(rows) == 9 + 4
    for name, on, r in rows:
        df = d.loc[on, "prompt_id"].nunique() - 1
        half = stats.t.ppf(q, df) * ref.bse[name]
        assert r["estimate"] == pytest.approx(ref.params[name], abs=1e-10), name
        assert r["df"] == df, name
        assert (r["lower"], r["upper"]) == pytest.approx(
            (ref.params[name] - half, ref.params[name] + half), abs=1e-9
        ), name


def test_an_inspect_log_with_a_reference_scorer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An Inspect log (README: read as ratings) with --reference-scorer is read as recuse
    audit reads it: its grader graded only the model itself, so Eq. 1 is not identified,
    and that is the one-line error; before, favoritism read it as a plain table
    ('expected a JSON array of objects, found a JSON object')."""
    log = Path(__file__).resolve().parents[1] / "data/importers/capitals.json"
    out = tmp_path / "out"
    code = main(["favoritism", str(log), "--reference-scorer", "includes", "--out", str(out)])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and not out.exists()
    assert err.startswith(f"recuse: error: {log}: the model is not identified")
    assert "rates only its own completions" in err
    # without the reference scorer the log's ratings have no reference: said so
    code = main(["favoritism", str(log), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "JSON array" not in err and "reference" in err


def test_a_term_without_a_standard_error_reads_as_the_audit_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Seven ratings on two prompts: claude-2.1's γ has no finite standard error. The
    table printed '+0.2000 nan +nan +nan' (and numpy's RuntimeWarning on stderr) where
    the audit of the same file reports it not estimated; gpt-4o's interval came without
    the few-prompts warning the audit gives it; the header said '0 families' above notes
    naming the claude and gpt families. Now: '—', the note why, the warning, and the
    header counts the family-bias terms, as it means."""
    from regression.conftest import seven_ratings

    path = tmp_path / "r.csv"
    seven_ratings().to_csv(path, index=False)
    code = main(["favoritism", str(path), "--out", str(tmp_path / "out")])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    assert "nan" not in stdout.lower() and "RuntimeWarning" not in err, (stdout, err)
    claude = next(line for line in stdout.splitlines() if line.startswith("│ claude-2.1"))
    assert claude.count("—") == 4, claude
    gpt = next(line for line in stdout.splitlines() if line.startswith("│ gpt-4o"))
    # by hand, scores ÷ 5: its own 1.0, 0.8 at references 0.8, 0.6 (slope 1), the others
    # 0.6 and 0.8 at 0.8 (mean 0.7): γ = 1.0 − 0.7
    assert "+0.30" in gpt
    said = " ".join(stdout.split())
    assert "7 ratings, 2 judges with a self-bias term γ_j, 0 family-bias terms λ_F (fam" in said
    assert "warning: only 2 prompts: cluster-robust errors with so few clusters" in said
    assert "γ_j of claude-2.1: no finite standard error" in said
    # the correction leaves out what the fit does not report (it subtracted claude's
    # 0.2): claude's mean judge score stays (0.6 + 1.0) / 2 = 0.8; gpt-4o's own 1.0 and
    # 0.8 lose γ = 0.3 beside 0.6 and 0.8 from claude: (0.7 + 0.5 + 0.6 + 0.8) / 4
    assert "γ_j of claude-2.1 not subtracted (not estimated)" in said
    effect = pd.read_csv(tmp_path / "out" / "debiased.csv").set_index("model")
    assert effect.loc["claude-2.1", "after"] == pytest.approx(0.8)
    assert effect.loc["gpt-4o", "after"] == pytest.approx(0.65)
    # both judge means are 0.8 before (one reads 0.7999999999999999): one rank, not two
    assert effect["rank_before"].tolist() == [1, 1]
    assert (
        "ranking changes; Kendall's tau to the reference ranking undefined (fewer than two "
        "models, or all tied) before the correction → 1.00 after (1 = the reference's "
        "order, 0 = unrelated); γ_j of claude-2.1 not subtracted (not estimated)"
    ) in said


def test_means_equal_but_for_rounding_on_a_raw_scale_are_one_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seven ratings on a raw scale of 11,111.7 points per unit (--normalize none):
    both models' mean scores are 4 × 11,111.7, one summed to 44446.80000000001. At 12
    decimals they were ranks 1 and 2, and the line said the ranking does not change;
    ranked at 12 significant digits they tie before the correction, as on the
    normalised scale, and gpt-4o falls below claude-2.1 after it."""
    from regression.conftest import seven_ratings

    big = seven_ratings()
    big[["rating", "reference"]] *= 11111.7
    before = big.groupby("model")["rating"].mean()
    assert before["gpt-4o"] != before["claude-2.1"]  # the sums' rounding
    assert before["gpt-4o"] == pytest.approx(before["claude-2.1"], rel=1e-15)
    path = tmp_path / "r.csv"
    big.to_csv(path, index=False)
    assert main(["favoritism", str(path), "--normalize", "none", "--out", str(tmp_path)]) == 0
    said = " ".join(capsys.readouterr().out.split())
    effect = pd.read_csv(tmp_path / "debiased.csv").set_index("model")
    assert effect["rank_before"].tolist() == [1, 1]
    assert effect.loc[["claude-2.1", "gpt-4o"], "rank_after"].tolist() == [1, 2]
    assert "correction (debiased.csv): the judges' model ranking changes" in said


def test_the_command_says_nothing_is_corrected_when_no_term_has_a_standard_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Both γ fit their judge's one own rating exactly (no standard error), the third
    judge never rates itself: the correction subtracts nothing. The line read 'the
    judges' model ranking does not change; Kendall's tau … 1.00 → 1.00', a correction
    that held the ranking; the audit of the file says there is nothing to correct."""
    from regression.conftest import exact_selves

    path = tmp_path / "r.csv"
    exact_selves().to_csv(path, index=False)
    assert main(["favoritism", str(path), "--out", str(tmp_path / "out")]) == 0
    said = " ".join(capsys.readouterr().out.split())
    assert (
        "correction (debiased.csv): no self- or family-bias term was estimated, so there is "
        "nothing to correct (its scores after equal those before); γ_j of claude-2.1 not "
        "subtracted (not estimated); γ_j of gpt-4o not subtracted (not estimated)"
    ) in said
    effect = pd.read_csv(tmp_path / "out" / "debiased.csv")
    assert (effect["after"] == effect["before"]).all()


def test_scores_on_an_extreme_scale_print_readable_tables_and_exact_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--normalize none on scores of 1e49 printed each γ in fifty digits; the tables
    now say their unit (a power of ten) in the title and write two decimals of it, while
    coefficients.csv and favoritism.json keep every digit of the fit."""
    roster = _roster(tmp_path)
    ratings = pd.read_csv(tmp_path / "ratings.csv")
    ratings[["rating", "reference"]] *= 1e49
    ratings.to_csv(tmp_path / "huge.csv", index=False)
    out = tmp_path / "out"
    args = ["--roster", str(roster), "favoritism", str(tmp_path / "huge.csv")]
    assert main([*args, "--normalize", "none", "--out", str(out)]) == 0
    stdout = capsys.readouterr().out
    payload = json.loads((out / "favoritism.json").read_text())
    gamma = pd.DataFrame(payload["main"]["self_bias"])
    numbers = gamma[["estimate", "se", "lower", "upper"]].to_numpy(float)
    power = int(np.floor(np.log10(np.abs(numbers).max())))
    assert power >= 47
    sup = str(power).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    assert f"in units of 10{sup}" in " ".join(stdout.split())
    for _, r in gamma.iterrows():
        line = next(x for x in stdout.splitlines() if x.startswith(f"│ {r['judge']} "))
        cells = [c.strip() for c in line.strip("│").split("│")]
        e = r["estimate"] / 10.0**power
        assert cells[1] == f"{e:+.2f}".replace("-", "\u2212"), (cells, e)
        assert max(map(len, cells)) < 10
    coef = pd.read_csv(out / "coefficients.csv")
    fit = pd.DataFrame(payload["main"]["coefficients"])
    assert (coef["estimate"].to_numpy() == fit["estimate"].to_numpy()).all()
    assert np.abs(coef["estimate"]).max() > 1e46  # the numbers, not the units


def test_the_robustness_line_says_its_list_holds_the_sign_changes_only(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """play-favorites with the length and by-dimension checks: the line named two
    coefficients after "share of variants with the main fit's sign:", as if those were
    all that was checked; it now says the list holds those under 100%, and the names are
    exactly the coefficients a variant of robustness.csv gives the other sign."""
    out = tmp_path / "fav"
    args = ["favoritism", "play-favorites", "--robustness", "length,by-dimension"]
    assert main([*args, "--data-dir", str(shared_data), "--out", str(out)]) == 0
    words = " ".join(capsys.readouterr().out.split())
    rob = pd.read_csv(out / "robustness.csv")
    main_sign = {
        (r.kind, r.label): np.sign(r.estimate) for r in rob[rob["variant"] == "main"].itertuples()
    }
    others = rob[rob["variant"] != "main"]
    assert others["variant"].nunique() == 3  # length control, one fit per dimension
    changed = {
        f"{r.kind} {r.label}"
        for r in others.itertuples()
        if np.sign(r.estimate) != main_sign[(r.kind, r.label)]
    }
    assert changed  # on the shared data some coefficient changes sign
    head = (
        "share of variants with the main fit's sign, where under 100% (every other "
        "coefficient keeps its sign in all): "
    )
    assert head in words
    listed = words.split(head, 1)[1].split(" correction", 1)[0].split(", ")
    # each changes sign in one of the three variants: 2 of 3 keep it
    assert sorted(listed) == sorted(f"{c} (67%)" for c in changed)


def test_ratings_of_one_model_count_no_self_bias_term(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Five judges rating one model: none has a γ_j (each rates only its own answers or
    none of them). The first line said '0 judges' of a file of five, beside the notes
    naming all five (the τ warning: tests/mitigation/test_debias.py)."""
    roster = _roster(tmp_path)
    ratings = pd.read_csv(tmp_path / "ratings.csv")
    ratings[ratings["model"] == "j0"].to_csv(tmp_path / "one.csv", index=False)
    args = ["--roster", str(roster), "favoritism", str(tmp_path / "one.csv")]
    assert main([*args, "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert ", 0 judges with a self-bias term γ_j, 0 family-bias terms λ_F" in printed
    assert "self-bias of j0 not estimable: it rates only its own completions" in printed
    # no empty tables (a header and a caption defining rows that are not there)
    assert "Self-bias γ_j: none in this fit (no judge rates its own model's answers)" in printed
    assert "Family-bias λ_F: none in this fit" in printed and "┃ judge" not in printed


def test_one_dimension_in_two_spellings_is_one_dimension(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Play Favorites' first 150 prompts, 'faithfulness' written 'Faithfulness ' in every
    other row: read as written, the two spellings were two dimensions, each normalised to
    its own top score and given its own intercept, with nothing said. They are one, in the
    first spelling, with a note; every coefficient is the one-spelling file's."""
    d = load("play-favorites", data_dir=shared_data)
    d = d[d["prompt_id"].isin(d["prompt_id"].unique()[:150])].drop(columns="prompt")
    plain, spelled = tmp_path / "plain.csv", tmp_path / "spelled.csv"
    d.to_csv(plain, index=False)
    odd = (d["dimension"] == "faithfulness") & (np.arange(len(d)) % 2 == 1)
    d.assign(dimension=d["dimension"].where(~odd, "Faithfulness ")).to_csv(spelled, index=False)
    fits = {}
    for path in (plain, spelled):
        assert main(["favoritism", str(path), "--out", str(tmp_path / path.stem)]) == 0
        fits[path.stem] = json.loads((tmp_path / path.stem / "favoritism.json").read_text())
    err = capsys.readouterr().err
    assert "dimension names that differ only in case or spacing are read as one" in err
    assert "'faithfulness', 'Faithfulness' as 'faithfulness'" in err
    for term in ("self_bias", "family_bias"):
        got = [(r["estimate"], r["lower"], r["upper"]) for r in fits["spelled"]["main"][term]]
        want = [(r["estimate"], r["lower"], r["upper"]) for r in fits["plain"]["main"][term]]
        assert got == pytest.approx(want, abs=1e-12) and len(want) > 2


def test_the_table_says_the_audit_writes_its_three_decimal_row_with_two(
    tmp_path: Path, shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """play-favorites: the self-bias table writes llama-3.1-8b-instruct's γ to the
    table's one precision, −0.113 [−0.134, −0.092], where recuse audit's summary writes
    the same finding −0.11 [−0.13, −0.09] (its own interval's two decimals), and nothing
    said so. Now the caption names the row both ways, the second the audit's own text
    (Finding.text of an audit run here); the family table, whose rows agree, says
    nothing of it."""
    import recuse

    out = tmp_path / "out"
    code = main(["favoritism", "play-favorites", "--data-dir", str(shared_data), "--out", str(out)])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    report = recuse.audit("play-favorites", only=["favoritism"], robustness="none",
                          data_dir=shared_data)  # fmt: skip
    (found,) = [f for f in report.result.findings
                if f.bias.key == "self_bias" and f.judge == "llama-3.1-8b-instruct"]  # fmt: skip
    assert found.text == "−0.11 [−0.13, −0.09]"
    row = next(line for line in stdout.splitlines() if "│ llama-3.1-8b-instruct " in line)
    assert "−0.113 │ 0.013 │ −0.134 │ −0.092" in row
    said = (
        "numbers to the table's one precision, the finest any row needs (recuse audit's "
        "summary writes each finding to its own interval's: llama-3.1-8b-instruct −0.113 "
        f"[−0.134, −0.092] reads {found.text} there)"
    )
    flat = " ".join(stdout.split())
    assert said in flat
    assert flat.count("numbers to the table's one precision") == 1


def test_se_level_and_self_scope_come_from_recuse_toml_unless_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The [audit] se, level and self-scope of ./recuse.toml are the command's where its
    line does not give them (they were read by recuse audit only); the line wins."""
    roster = _roster(tmp_path)
    (tmp_path / "recuse.toml").write_text('[audit]\nse = "HC3"\nlevel = 0.8\nself-scope = "line"\n')
    monkeypatch.chdir(tmp_path)
    head = ["--roster", str(roster), "favoritism", "ratings.csv"]
    assert main([*head, "--out", "a"]) == 0
    err = capsys.readouterr().err
    assert "recuse.toml" in err  # the note names the file the options came from
    said = json.loads((tmp_path / "a" / "favoritism.json").read_text())
    assert said["main"]["se_type"] == "HC3" and said["main"]["level"] == 0.8
    assert said["settings"]["self_scope"] == "line"
    assert main([*head, "--out", "b", "--level", "0.95", "--se", "HC1"]) == 0
    said = json.loads((tmp_path / "b" / "favoritism.json").read_text())
    assert said["main"]["se_type"] == "HC1" and said["main"]["level"] == 0.95
    assert said["settings"]["self_scope"] == "line"  # the file's, not given


def test_a_stop_during_the_cleanup_says_the_files_are_complete(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A Ctrl-C once every file had moved in, while the staging folder was removed, said
    "interrupted; run the same command again to start it over" over whole files. It
    says they are complete and what cleanup is left; the exit stays 130 (the command was
    stopped before it ended), and the next run removes the staging folder."""
    import shutil

    from recuse import outputs

    roster = _roster(tmp_path)
    out = tmp_path / "out"
    rmtree = shutil.rmtree

    def stopped(path: str | Path, *args: object, **kwargs: object) -> None:
        if Path(path).name.startswith(".recuse-staging-"):
            raise KeyboardInterrupt
        rmtree(path, *args, **kwargs)  # type: ignore[arg-type]

    argv = ["--roster", str(roster), "favoritism", str(tmp_path / "ratings.csv")]
    monkeypatch.setattr(outputs.shutil, "rmtree", stopped)
    code = main([*argv, "--out", str(out)])
    err = " ".join(capsys.readouterr().err.split())
    assert code == 130
    assert f"the 7 files written in {out} are complete and in place" in err
    assert "the staging folder .recuse-staging-" in err and "the next write into" in err
    assert "start it over" not in err and "run the same command again to finish" in err
    # the files are whole: the JSON reads, every CSV is there
    assert json.loads((out / "favoritism.json").read_text())["main"]["n"] > 0
    assert all((out / name).is_file() for name in ("coefficients.csv", "debiased.csv"))
    assert len(list(out.glob(".recuse-staging-*"))) == 1
    monkeypatch.setattr(outputs.shutil, "rmtree", rmtree)
    # the next run (another process: the stopped one's pid is gone) removes the leftover
    monkeypatch.setattr(outputs, "_owner_alive", lambda folder: False)
    assert main([*argv, "--out", str(out)]) == 0
    assert not list(out.glob(".recuse-staging-*"))


def test_an_earlier_stops_complete_words_are_not_said_over_the_next_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The words of a stop over whole files wait for the CLI to say them: a Python
    caller that caught such a stop (``recuse.audit`` stopped in its cleanup) and then ran
    a command stopped mid-fit heard the first stop's folder named as complete."""
    from recuse import interrupt
    from recuse.regression import favoritism

    interrupt.output_complete("the 7 files written in /elsewhere are complete and in place")

    def stopped(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(favoritism, "prepare", stopped)
    argv = ["--roster", str(_roster(tmp_path)), "favoritism", str(tmp_path / "ratings.csv")]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "/elsewhere" not in err


def test_an_earlier_stops_complete_words_are_not_said_over_a_stop_as_commands_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The command's start forgot an earlier stop's complete-output words only after the
    commands had loaded: a Python caller that caught a stop in a write's cleanup, then
    ran the command line and pressed Ctrl-C as its commands loaded (their first import,
    a second or so), heard that first folder named as complete."""
    import recuse.cli as cli
    from recuse import interrupt

    interrupt.output_complete("the 7 files written in /elsewhere are complete and in place")

    def stopped() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "_register", stopped)
    argv = ["--roster", str(_roster(tmp_path)), "favoritism", str(tmp_path / "ratings.csv")]
    assert main([*argv, "--out", str(tmp_path / "out")]) == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "/elsewhere" not in err
    assert "start it over" in err  # the words of a stop before any command began


def test_a_term_on_few_prompts_shows_its_df_in_the_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Model j0's answers on 3 of 40 prompts: γ_j0's interval reads Student's t on 2 df
    (those prompts less one), the other γs' on 39, and the table said only "Student t on
    39 df" in its title (the 2 was in the CSV and JSON alone). Each row now shows its df,
    which reads the row's interval (scipy's t quantile on it, redone here); a fit whose
    terms all read the title's df shows no df column. The correction line, which
    subtracts γ_j0, ends with its few-prompts warning (it said nothing of it)."""
    sim = simulate_ratings(n_prompts=40, dimensions=("a", "b"), seed=1)
    r = sim.ratings
    few = r["prompt_id"].isin(["p1", "p5", "p9"])
    r[(r["model"] != "j0") | few].to_csv(tmp_path / "few.csv", index=False)
    r.to_csv(tmp_path / "all.csv", index=False)
    text = "".join(f'[[model]]\nid = "{j}"\nfamily = "{f}"\n\n' for j, f in sim.families.items())
    (tmp_path / "roster.toml").write_text(text)
    head = ["--roster", str(tmp_path / "roster.toml"), "favoritism"]
    assert main([*head, str(tmp_path / "few.csv"), "--out", str(tmp_path / "o1")]) == 0
    stdout = capsys.readouterr().out
    coef = pd.read_csv(tmp_path / "o1" / "coefficients.csv").set_index("term")
    rows = {j: next(s for s in stdout.splitlines() if f"│ {j} " in s) for j in ("j0", "j1")}
    for judge, df in (("j0", 2), ("j1", 39)):
        cells = [c.strip() for c in rows[judge].split("│")]
        est, _se, low, high = (float(c.replace("−", "-")) for c in cells[2:6])
        assert cells[6] == str(df)  # the df column, after the interval
        half = stats.t.ppf(0.95, df) * coef.loc[f"self[{judge}]", "se"]
        assert (low, high) == pytest.approx((est - half, est + half), abs=0.002)
    flat = " ".join(stdout.split())
    assert "df: the degrees of freedom of the Student t that reads the row's interval" in flat
    warning = "γ_j of j0: its 6 ratings lie on only 3 prompts, which its standard error rests on"
    assert flat.count(warning) == 2  # the fit's note, and the correction's line
    correction = flat[flat.index("correction (debiased.csv)") :]
    assert f"; subtracted, resting on few prompts — {warning}" in correction
    assert main([*head, str(tmp_path / "all.csv"), "--out", str(tmp_path / "o2")]) == 0
    stdout = capsys.readouterr().out
    assert "│ df" not in stdout and "df: the degrees" not in " ".join(stdout.split())


def test_ratings_that_cannot_be_fitted_name_the_file_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every rating 3: "recuse: error: every rating is the same (3): the judge scores
    carry no information to estimate from" named no file and no fix."""
    roster = _roster(tmp_path)
    path = tmp_path / "ratings.csv"
    pd.read_csv(path).assign(rating=3).to_csv(path, index=False)
    out = tmp_path / "out"
    code = main(["--roster", str(roster), "favoritism", str(path), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith(f"recuse: error: {path}: every rating is the same (3): ")
    assert "check the column read as the rating (--map FILE_COLUMN=rating)" in err
    assert not out.exists()

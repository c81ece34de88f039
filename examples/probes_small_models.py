"""Probes and the self-preference ladder with real small judges on real data.

Two parts, each resumable (the judgments live in ``--work``'s SQLite store; only numbers
are written to ``examples/output/``):

1. **Probes** (no labels): MT-Bench human pairs and JudgeBench pairs, ``--pairs`` base
   pairs from each (a seeded sample spread over prompts), every probe of
   :mod:`recuse.probes` plus the placebo, judged in both orders by each small judge
   (SmolLM2-135M-Instruct, Gemma-3-270M, Qwen2.5-Coder-0.5B-Instruct where installed).
   The concise and verbose rewrites (Saito §4) are written by ``--rewriter`` (default
   Qwen2.5-Coder-0.5B-Instruct, the best instruction follower here; greedy, at most
   ``--rewrite-tokens``). Output: each probe's placebo-controlled effect with its 90%
   prompt-clustered interval, the flip rates of the probe and of the placebo, the
   verbose − concise contrast and the rewrites' mean words.
2. **Ladder** (objective labels): the two instruction-tuned judges answer
   ``--questions`` JudgeBench MMLU-Pro questions (greedy); each answer is paired with a
   JudgeBench response to the same question (the incorrect one when the own answer is
   right, the correct one when it is wrong; as in ``familiarity_judgebench.py``), the
   label being which is correct. Every judge judges every pair in both orders, so each
   judge sees its own answers and the other generator's. Output: the ladder of
   :mod:`recuse.metrics.ladder` per judge. Then each generator is asked, on the pairs
   holding its own answer, which of the two it wrote (self-recognition), set beside
   its own-win rate and EO.

The ladder part also writes ``ladder_judgebench_pairs.csv``: every judged row the ladder
and self-recognition read (judge, ids, models, label, both orders' P(a) and their mean,
the probe columns of the self-recognition rows), at full precision. ``--from-pairs``
redoes the ladder and self-recognition from it with the JSON's generators and settings,
in seconds and without the models: ``ladder_judgebench.csv``, ``recognition_judgebench.csv``
and the ladder's analysis fields in the JSON are rewritten, the rest is kept and
``analyses_redone`` says so (run it after a change to the metrics).

Tiny judges are dominated by position (they prefer a slot whatever the texts): the
placebo control is what makes their probe effects interpretable — an effect is the
move beyond what a trailing newline causes.

The committed output (``examples/output/probes_small_models.*``, ``ladder_judgebench.csv``,
``recognition_judgebench.csv``) came from these two runs, on 2 CPU cores (about 35 and
30 minutes; Qwen's 490 probe judgments took 15 of the 33, so SmolLM2 wrote the rewrites):

    python examples/probes_small_models.py --part probes --pairs 20 --max-words 250 \
        --judges smollm2-135m-instruct,gemma-3-270m,qwen2.5-coder-0.5b-instruct \
        --rewriter smollm2-135m-instruct --rewrite-tokens 400
    python examples/probes_small_models.py --part ladder --questions 60 --wrong 15
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
from familiarity_judgebench import ASK, build_pairs, mmlu_pro_questions, stated_option
from helpers import (
    OUT,
    gemma_model,
    own_answers,
    parser,
    qwen_model,
    read_pairs_file,
    redone_note,
    refuse,
)

import recuse
from recuse.data.registry import load
from recuse.errors import RecuseError
from recuse.judging import PairwiseProtocol, Runner, Store
from recuse.judging.backends.local import DType, LocalBackend
from recuse.judging.models import cache_dir, default_judge
from recuse.metrics import MetricResult, Skipped
from recuse.metrics.bootstrap import Resampling
from recuse.metrics.ladder import RUNGS, self_preference_ladder
from recuse.metrics.probes import COMPONENTS, probe_effects
from recuse.metrics.recognition import COMPONENTS as RECOGNITION_COMPONENTS
from recuse.metrics.recognition import recognition_vs_preference, self_recognition
from recuse.probes import PROBES, RECOGNITION, build_probe_table, build_recognition_table
from recuse.probes.rewrite import REWRITES, RunnerRewriter
from recuse.probes.run import judge_probes
from recuse.roster import Roster

QWEN = "qwen2.5-coder-0.5b-instruct"
GEMMA = "gemma-3-270m"
# bfloat16 ran 4.5 times slower than float32 here (2 CPU cores without bf16 matmuls)
DTYPES: dict[str, DType] = {}
# the ladder's judged rows, committed at full precision (``--from-pairs`` reads only these):
# the ladder pairs and the self-recognition rows, whose probe columns say so
LADDER_PAIRS = "ladder_judgebench_pairs.csv"
LADDER_COLUMNS = [
    "judge", "item_id", "prompt_id", "model_a", "model_b", "human",
    "p_a_first", "p_a_second", "p_a", "probe", "base_item", "treated",
]  # fmt: skip
PROBE_COLUMNS = ["probe", "base_item", "treated"]
# the options each part reads, recorded beside its numbers
SETTINGS = {
    "probes": ("pairs", "max-words", "rewriter", "rewrite-tokens", "seed", "n-boot"),
    "ladder": ("questions", "wrong", "seed", "n-boot"),
}


def judges() -> dict[str, tuple[Path, str]]:
    smol = default_judge()
    out = {smol.model_id: (smol.path, smol.revision)}
    try:
        out[GEMMA] = gemma_model(cache_dir())
    except ImportError as exc:
        print(f"Gemma-3-270M left out: {exc}")
    qwen = qwen_model(cache_dir())
    if isinstance(qwen, str):
        print(f"Qwen2.5-Coder-0.5B left out: {qwen}")
    else:
        out[QWEN] = qwen
    return out


def backend(name: str, where: tuple[Path, str], batch_size: int = 8) -> LocalBackend:
    path, rev = where
    return LocalBackend.load(
        path, model_id=name, revision=rev, batch_size=batch_size, dtype=DTYPES.get(name, "float32")
    )


def probe_part(args: argparse.Namespace, models: dict[str, tuple[Path, str]]) -> dict[str, Any]:
    def short(pairs: pd.DataFrame) -> pd.DataFrame:  # CPU time grows with the prompt
        words = pairs[["prompt", "response_a", "response_b"]].map(lambda t: len(str(t).split()))
        return pairs[words.sum(axis=1) <= args.max_words]

    sources = {
        "mt-bench-human": short(load("mt-bench-human")),
        "judgebench": short(load("judgebench")),
    }
    rows: list[dict[str, Any]] = []
    runs: dict[str, Any] = {}
    everyone = judges()
    writer = args.rewriter if args.rewriter in everyone else next(iter(everyone))
    runs["rewriter"] = writer
    with Store(args.work / "probes.sqlite") as store:
        rewrite = RunnerRewriter(
            Runner(backend(writer, everyone[writer], 4), store, judge=writer, progress=False),
            max_new_tokens=args.rewrite_tokens,
        )
        for name, where in models.items():
            tables = []
            for source, pairs in sources.items():
                t = build_probe_table(
                    pairs, probes=[*[p for p in PROBES if p != "placebo"], *REWRITES],
                    author=name, limit=args.pairs, seed=args.seed, rewriter=rewrite,
                )  # fmt: skip
                runs[f"unusable_rewrites_{source}"] = t.attrs["unusable_rewrites"]
                t["item_id"] = source + ":" + t["item_id"].astype(str)
                t["base_item"] = source + ":" + t["base_item"].astype(str)
                t["prompt_id"] = source + ":" + t["prompt_id"].astype(str)
                t["source"] = source
                tables.append(t)
            table = pd.concat(tables, ignore_index=True)
            t0 = time.perf_counter()
            summary = judge_probes(
                Runner(backend(name, where), store, judge=name, progress=False), table
            )
            runs[name] = {"judging": summary.line(), "seconds": round(time.perf_counter() - t0, 1)}
            print(name, runs[name], flush=True)
        runs["rewriting"] = [s.line() for s in rewrite.summaries]
        judged = store.export_pairs()
    judged = judged[judged["judge"].isin(list(models))]
    for source in sources:
        part = judged[judged["source"] == source]
        results, skipped = probe_effects(
            part, boot=Resampling(n_boot=args.n_boot, seed=args.seed), min_n=5
        )
        for r in results:
            rows.append(
                {
                    "data": source,
                    "judge": r.judge,
                    "probe": r.metric.removeprefix("probe_"),
                    "definition": r.method,
                    "effect": r.estimate,
                    "ci_low": r.ci_low,
                    "ci_high": r.ci_high,
                    "base_pairs": r.n,
                    "prompts": r.n_clusters,
                    "flip_rate": r.components.get("flip_rate"),
                    "placebo_flip_rate": r.components.get("placebo_flip_rate"),
                    "words_concise": r.components.get("words_concise"),
                    "words_verbose": r.components.get("words_verbose"),
                }
            )
        runs[f"skipped_{source}"] = [s.to_dict() for s in skipped]
    # how position-bound each judge is, on the unedited pairs
    orig = judged[judged["probe"] == "original"]
    runs["first_slot_rate_original"] = {
        "definition": "mean over the original pairs of the share of the win the judge gives "
        "the answer shown first, both orders averaged; 0.5 = no position preference",
        "by_judge": (orig["p_a_first"] + (1 - orig["p_a_second"])).div(2)
        .groupby(orig["judge"]).mean().round(3).to_dict(),
    }  # fmt: skip
    pd.DataFrame(rows).to_csv(OUT / "probes_small_models.csv", index=False)
    runs["columns"] = {  # the CSV's numbers besides the effect (defined in its rows)
        **COMPONENTS,
        "base_pairs": "base pairs with every version the probe needs judged",
        "prompts": "prompts among them (the bootstrap resamples prompts)",
    }
    return runs


def ladder_part(args: argparse.Namespace, models: dict[str, tuple[Path, str]]) -> dict[str, Any]:
    rng = np.random.default_rng(args.seed)
    roster = Roster.load()
    questions, dropped = mmlu_pro_questions(args.data / "judgebench", roster)
    qids = sorted(questions["question_id"].unique(), key=int)
    chosen = sorted(rng.choice(qids, size=min(args.questions, len(qids)), replace=False), key=int)
    asked = questions[questions["question_id"].isin(chosen)].drop_duplicates("question_id")
    generators = [m for m in models if m != GEMMA]  # Gemma-3-270M is a base model
    graded = []
    for name in generators:
        texts, _ = own_answers(
            backend(name, models[name]),
            [q + ASK for q in asked["question"]],
            args.work / f"own_{name}_{args.questions}.json",
            64,
        )
        graded.append(
            pd.DataFrame(
                {
                    "generator": name,
                    "question_id": asked["question_id"].to_numpy(),
                    "question": asked["question"].to_numpy(),
                    "answer": texts,
                    "stated": [stated_option(t) for t in texts],
                    "right": asked["right"].to_numpy(),
                }
            )
        )
    g = pd.concat(graded, ignore_index=True)
    g = g[g["answer"].notna()].reset_index(drop=True)
    g["correct"] = g["stated"] == g["right"]
    pairs = build_pairs(questions, g, n_wrong=args.wrong, rng=rng)
    runs: dict[str, Any] = {
        "questions": len(asked),
        "dropped_questions": dropped,
        "own_answers_right": g.groupby("generator")["correct"].sum().astype(int).to_dict(),
        "pairs": pairs.groupby("model_a").size().add(pairs.groupby("model_b").size(), fill_value=0)
        .astype(int).to_dict(),
    }  # fmt: skip
    with Store(args.work / "ladder.sqlite") as store:
        for name, where in models.items():
            summary = Runner(backend(name, where, 4), store, judge=name, progress=False).pairwise(
                pairs, PairwiseProtocol(mode="direct")
            )
            runs[name] = summary.line()
            print(name, runs[name], flush=True)
        recognition: dict[str, Any] = {}
        for name in generators:  # each generator asked which of the two answers it wrote
            table = build_recognition_table(pairs, judge=name)
            summary = judge_probes(
                Runner(backend(name, models[name], 4), store, judge=name, progress=False), table
            )
            recognition[name] = summary.line()
            print(name, "self-recognition", recognition[name], flush=True)
        judged = store.export_pairs()
    judged = judged.reindex(columns=list(dict.fromkeys([*LADDER_COLUMNS, *judged.columns])))
    ladder_rows = judged["item_id"].isin(pairs["item_id"]) & judged["judge"].isin(list(models))
    ladder_rows &= judged["probe"].isna()
    asked_rows = judged["judge"].isin(generators) & (judged["probe"] == RECOGNITION)
    rows = judged[ladder_rows | asked_rows][LADDER_COLUMNS].reset_index(drop=True)
    # full precision, so the analyses can be redone from it (--from-pairs)
    rows.to_csv(OUT / LADDER_PAIRS, index=False)
    runs.update(generators=generators, judged_rows=rows.groupby("judge").size().to_dict())
    runs["recognition"] = recognition
    done = analyse_ladder(rows, generators, Resampling(n_boot=args.n_boot, seed=args.seed))
    done.write(runs)
    return runs


@dataclass(frozen=True)
class LadderAnalyses:
    """The ladder and self-recognition, computed from the judged rows alone (verdicts,
    labels, models), so ``--from-pairs`` can redo them from the committed per-pair file."""

    ladder: list[MetricResult]
    skipped: list[Skipped]
    recognition_skipped: list[Skipped]
    recognition: pd.DataFrame
    correlations: dict[str, Any]

    def write(self, runs: dict[str, Any]) -> None:
        """Into the ladder part's record ``runs`` and the two CSV files in ``OUT``."""
        runs["skipped"] = [s.to_dict() for s in self.skipped]
        runs["recognition"].update(
            skipped=[s.to_dict() for s in self.recognition_skipped],
            **self.correlations,
            columns=dict(RECOGNITION_COMPONENTS),  # the CSV's number besides the estimates
        )
        pd.DataFrame(
            [
                {"judge": r.judge, "rung": r.metric, "definition": RUNGS[r.metric],
                 "estimate": r.estimate, "ci_low": r.ci_low, "ci_high": r.ci_high, "n": r.n,
                 "prompts": r.n_clusters}
                for r in self.ladder
            ]
        ).to_csv(OUT / "ladder_judgebench.csv", index=False)  # fmt: skip
        self.recognition.to_csv(OUT / "recognition_judgebench.csv", index=False)


def analyse_ladder(rows: pd.DataFrame, generators: list[str], boot: Resampling) -> LadderAnalyses:
    """Every rung of the ladder per judge on the ladder pairs (rows without a probe), and
    each generator's self-recognition (its ``self-recognition`` rows) beside its own-win
    rate and EO."""
    plain = rows[rows["probe"].isna()].drop(columns=PROBE_COLUMNS).reset_index(drop=True)
    ladder, skipped = self_preference_ladder(plain, boot=boot, min_n=5)
    asked = rows[rows["judge"].isin(generators) & (rows["probe"] == RECOGNITION)]
    results, recognition_skipped = self_recognition(
        asked.reset_index(drop=True), boot=boot, min_n=5
    )
    tables, correlations = [], {}
    of = {r.judge: r for r in results}
    for rung in ("own_win_rate", "eo"):
        table, corr = recognition_vs_preference(results, [r for r in ladder if r.metric == rung])
        tables.append(table.assign(
            recognition_definition=[of[j].method for j in table["judge"]],
            preference_definition=RUNGS[rung],
            pick_rate=[of[j].components["pick_rate"] for j in table["judge"]],
        ))  # fmt: skip
        correlations[f"correlation_with_{rung}"] = corr
    return LadderAnalyses(
        ladder, skipped, recognition_skipped, pd.concat(tables, ignore_index=True), correlations
    )


def redo_ladder() -> None:
    """The ladder and self-recognition again from the committed ``ladder_judgebench_pairs.csv``
    with the committed JSON's generators and settings: the two CSV files and the ladder
    part's analysis fields are replaced, everything else (settings, runs, timings, the
    probe part) is kept. A missing or damaged file (or one that does not match the JSON's
    rows per judge) is refused with one line, exit 2, and nothing written."""
    path = OUT / "probes_small_models.json"
    fix = "restore the committed files (git checkout examples/output) or rerun the ladder part"
    try:
        out = json.loads(path.read_text())
        runs = out["ladder"]
        generators = [str(g) for g in runs["generators"]]
        boot = Resampling(
            n_boot=int(runs["settings"]["n-boot"]), seed=int(runs["settings"]["seed"])
        )
        counts = {str(k): int(v) for k, v in runs["judged_rows"].items()}
        if not isinstance(runs["recognition"], dict):
            raise TypeError("ladder/recognition is not an object")
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecuseError) as exc:
        refuse(f"{path}: not a complete ladder run ({type(exc).__name__}: {exc}) — {fix}")
    rows = read_pairs_file(OUT / LADDER_PAIRS, LADDER_COLUMNS, counts, fix)
    done = analyse_ladder(rows, generators, boot)
    done.write(runs)
    runs["analyses_redone"] = redone_note(
        f"ladder and self-recognition redone from {LADDER_PAIRS}", "settings, runs and seconds"
    )
    write_record(path, out)


def _plain(v: object) -> object:
    """Strict-JSON-ready: numpy scalars to Python, NaN/inf to None, recursively."""
    if isinstance(v, dict):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_plain(x) for x in v]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not np.isfinite(v):
        return None
    return v if v is None or isinstance(v, str | int | float | bool) else str(v)


def main() -> None:
    ap = parser(__doc__ or "", work=Path("/tmp/recuse-probes"))
    ap.add_argument("--pairs", type=int, default=40, help="base pairs per dataset")
    ap.add_argument("--questions", type=int, default=120, help="JudgeBench questions")
    ap.add_argument("--max-words", type=int, default=300, help="longest pair (question + answers)")
    ap.add_argument("--wrong", type=int, default=30, help="pairs with a wrong own answer")
    ap.add_argument(
        "--part", choices=["probes", "ladder", "both"], default="both", help="which part to run"
    )
    ap.add_argument("--judges", default="", help="comma list of judge ids (empty: all)")
    ap.add_argument("--rewriter", default=QWEN, help="the model writing the rewrites")
    ap.add_argument("--rewrite-tokens", type=int, default=384, help="longest rewrite (tokens)")
    ap.add_argument(
        "--from-pairs",
        action="store_true",
        help=f"the ladder and self-recognition only, from the committed {LADDER_PAIRS} and the "
        "JSON's settings (no model runs): rewrites their CSV files and JSON fields",
    )
    args = ap.parse_args()
    if args.from_pairs:
        redo_ladder()
        return
    args.work.mkdir(parents=True, exist_ok=True)
    OUT.mkdir(exist_ok=True)
    models = judges()
    if args.judges:
        models = {k: v for k, v in models.items() if k in args.judges.split(",")}
    # each part keeps its own record, so the parts can be run (and re-run) separately
    path = OUT / "probes_small_models.json"
    out: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
    out.update(recuse=recuse.__version__, python=platform.python_version())
    for part, run in (("probes", probe_part), ("ladder", ladder_part)):
        if args.part in (part, "both"):
            start = time.perf_counter()
            out[part] = run(args, models)
            settings = {k: str(getattr(args, k.replace("-", "_"))) for k in SETTINGS[part]}
            out[part].update(judges=list(models), settings=settings,
                             seconds=round(time.perf_counter() - start, 1))  # fmt: skip
    for stale in ("judges", "settings", "seconds"):  # from the single-record layout
        out.pop(stale, None)
    write_record(path, out)
    print(json.dumps(out, indent=2, default=str)[:4000])


def write_record(path: Path, out: dict[str, Any]) -> None:
    """The JSON record, strict (NaN as null), keys sorted; refused with one line where
    the folder is not writable."""
    try:
        path.write_text(json.dumps(_plain(out), indent=2, sort_keys=True, allow_nan=False) + "\n")
    except OSError as exc:
        refuse(f"{path}: cannot write the results ({exc}) — run it where the folder is writable")


if __name__ == "__main__":
    main()

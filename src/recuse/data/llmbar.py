"""LLMBar (Zeng et al. 2024): pairwise sets with gold/human labels and judge verdicts.

Layout (upstream, see the data README): ``Dataset/<set>/dataset.json`` is a JSON
array of ``{input, output_1, output_2, label}`` (label 1 or 2 = the better output)
and ``Dataset/<set>/evaluators/<judge>/Vanilla_NoRules/result.json`` repeats those
rows with ``results[0]["swap = False" | "swap = True"]["winner"]`` — ``"1"``,
``"2"`` (always in the ORIGINAL output indexing, also when swapped) or null when
the judge's reply could not be parsed.

Mapping to ``pairs`` (a = output_1, b = output_2):

    human      = 1 if label == 1 else 0
    p_a_first  = 1 if winner(swap = False) == "1" else 0    (a shown first)
    p_a_second = 1 if winner(swap = True)  == "1" else 0    (a shown second)

a null winner gives NaN with ``status_* = "unparsed"``. One row per (item, judge);
sets without judges (``CaseStudy/*``) give one human-only row per item.
``item_id = "llmbar:<set>:<index in dataset.json, from 0>"``; ``prompt_id`` is shared
by the items with identical input (``"llmbar:<set>:p<index of the first>"``), across
sets too in dataset ``llmbar``: an input that two sets hold (one of GPTInst's is one of
Neighbor's, two of FairEval's are MT-Bench's) is one prompt, one cluster of the
bootstrap, named by the first set (in path order) that holds it.

``Processed/MT-Bench`` outputs are MT-Bench turn-1 answers: their generators are
recovered by exact text match against ``../mt_bench/model_answer`` (same question);
a text that several models produced is ambiguous and its model stays missing.
Dataset ``llmbar-mtbench`` is that set alone with ``prompt_id`` = MT-Bench question id.
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from recuse.data.mt_bench import read_mt_bench_answers
from recuse.data.registry import Dataset, register
from recuse.errors import DatasetNotFoundError, InputError
from recuse.files import check_text, read_json, require_keys, word_count
from recuse.roster import Roster
from recuse.tables import validate_pairs

__all__ = [
    "MT_BENCH_SET",
    "ModelRecovery",
    "read_llmbar",
    "read_llmbar_mtbench",
    "read_llmbar_set",
    "recover_mt_bench_models",
]

SOURCE = "llmbar"
MT_BENCH_SET = "Processed/MT-Bench"
PROMPTING = "Vanilla_NoRules"
FIELDS = ("input", "output_1", "output_2", "label")
ORDERS = {"first": "swap = False", "second": "swap = True"}
WINNER_P_A: dict[Any, float] = {"1": 1.0, "2": 0.0, 1: 1.0, 2: 0.0}
COLUMNS = [
    "item_id", "prompt_id", "model_a", "model_b", "human", "judge", "p_a_first",
    "p_a_second", "p_a", "prompt", "response_a", "response_b", "source", "task", "category",
    "len_a", "len_b", "status_first", "status_second",
]  # fmt: skip


@dataclass(frozen=True)
class ModelRecovery:
    """How many responses (item x side) got a generator by exact text match.

    ``matched``: the text is one model's answer to that question; ``ambiguous``:
    several models gave that exact text; ``unmatched``: no model did (or the prompt
    is no MT-Bench turn-1 question, also counted in ``prompts_unmatched``, per item).
    """

    matched: int
    ambiguous: int
    unmatched: int
    prompts_unmatched: int


def _read_items(set_dir: Path, set_name: str) -> pd.DataFrame:
    """The items of one set: ids, texts, human label, lengths (no judge columns)."""
    dfile = set_dir / "dataset.json"
    records = require_keys(read_json(dfile), FIELDS, file=dfile)
    if not records:
        raise InputError("the set has no items", file=dfile)
    raw = pd.DataFrame.from_records(records, columns=list(FIELDS))
    check_text(raw, FIELDS[:3], file=dfile)
    label = raw["label"].map({1: 1.0, 2: 0.0, "1": 1.0, "2": 0.0})
    if label.isna().any():
        i = int(np.flatnonzero(label.isna().to_numpy())[0])
        raise InputError(
            f"label {records[i]['label']!r} is not 1 or 2",
            file=dfile,
            row=i + 1,
            column="label",
            fix="label names the better output: 1 or 2",
        )
    index = pd.Series(np.arange(len(raw)), index=raw.index)
    first = index.groupby(raw["input"], sort=False).transform("min")
    prefix = f"{SOURCE}:{set_name}:"
    return pd.DataFrame(
        {
            "item_id": prefix + index.astype(str),
            "prompt_id": prefix + "p" + first.astype(str),
            "model_a": None,
            "model_b": None,
            "human": label.astype(float),
            "prompt": raw["input"],
            "response_a": raw["output_1"],
            "response_b": raw["output_2"],
            "source": SOURCE,
            "task": set_name,
            "category": None,
            "len_a": word_count(raw["output_1"]),
            "len_b": word_count(raw["output_2"]),
        }
    )


def _winner(value: Any, *, file: Path, row: int, order: str) -> float:
    if value is None:
        return np.nan
    try:
        return WINNER_P_A[value]
    except (KeyError, TypeError):
        raise InputError(
            f"winner {value!r} is not '1', '2' or null",
            file=file,
            row=row,
            column=f"results[0].{ORDERS[order]}.winner",
        ) from None


def _read_judge(items: pd.DataFrame, rfile: Path, judge: str) -> pd.DataFrame:
    """Rows of ``items`` with one judge's verdicts in both orders from its result.json."""
    records = require_keys(read_json(rfile), (*FIELDS, "results"), file=rfile)
    if len(records) != len(items):
        raise InputError(
            f"{len(records)} results for {len(items)} items in dataset.json",
            file=rfile,
            fix="result.json must have the rows of its dataset.json, in order",
        )
    for col, mine in zip(FIELDS[:3], ("prompt", "response_a", "response_b"), strict=True):
        expected = items[mine].tolist()
        differs = [i for i, rec in enumerate(records) if rec[col] != expected[i]]
        if differs:
            i = differs[0]
            raise InputError(
                f"{col} differs from element {i + 1} of dataset.json",
                file=rfile,
                row=i + 1,
                column=col,
                fix="result.json must have the rows of its dataset.json, in order",
            )
    verdicts: dict[str, list[float]] = {"first": [], "second": []}
    for row, rec in enumerate(records, start=1):
        results = rec["results"]
        if not (isinstance(results, list) and results and isinstance(results[0], dict)):
            raise InputError(
                "results must be a list holding one object", file=rfile, row=row, column="results"
            )
        for order, key in ORDERS.items():
            verdict = results[0].get(key)
            if not isinstance(verdict, dict) or "winner" not in verdict:
                raise InputError(
                    f"results[0] lacks {key!r} with a 'winner'",
                    file=rfile,
                    row=row,
                    column="results",
                )
            verdicts[order].append(_winner(verdict["winner"], file=rfile, row=row, order=order))
    out = items.copy()
    out["judge"] = judge
    for order, values in verdicts.items():
        p = np.asarray(values, dtype=float)
        out[f"p_a_{order}"] = p
        out[f"status_{order}"] = np.where(np.isnan(p), "unparsed", "ok")
    out["p_a"] = np.nan  # filled by validate_pairs from the two orders
    return out


def read_llmbar_set(set_dir: Path, set_name: str, roster: Roster) -> pd.DataFrame:
    """One LLMBar set as unvalidated ``pairs`` rows: items x judges, or human-only rows."""
    items = _read_items(set_dir, set_name)
    result_files = sorted((set_dir / "evaluators").glob(f"*/{PROMPTING}/result.json"))
    if not result_files:
        out = items.copy()
        out["judge"] = None
        for order in ORDERS:
            out[f"p_a_{order}"] = np.nan
            out[f"status_{order}"] = None
        out["p_a"] = np.nan
        return out[COLUMNS]
    frames = [
        _read_judge(
            items, rfile, roster.canonical(rfile.parents[1].name, file=str(rfile), column="judge")
        )
        for rfile in result_files
    ]
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def recover_mt_bench_models(
    items: pd.DataFrame, answers: pd.DataFrame
) -> tuple[pd.DataFrame, ModelRecovery]:
    """Generators of MT-Bench responses by exact text match to turn-1 answers.

    ``items`` has ``prompt, response_a, response_b`` (one row per item); ``answers``
    is :func:`recuse.data.mt_bench.read_mt_bench_answers`. Returns, aligned with
    ``items``: ``question_id`` (nullable int), ``category``, ``model_a``, ``model_b``
    (missing where ambiguous or unmatched), and the counts.
    """
    turn1 = answers[answers["turn"] == 1]
    questions = turn1.drop_duplicates("question_id").set_index("question")
    qid = items["prompt"].map(questions["question_id"]).astype("Int64")
    out = pd.DataFrame(
        {"question_id": qid, "category": items["prompt"].map(questions["category"])},
        index=items.index,
    )
    by_text = turn1.groupby(["question_id", "answer"])["model"].agg(["nunique", "first"])
    n_models = np.zeros(2 * len(items), dtype=int)
    for k, side in enumerate(("a", "b")):
        key = pd.MultiIndex.from_arrays([qid, items[f"response_{side}"]])
        found = by_text.reindex(key)
        n = found["nunique"].fillna(0).astype(int).to_numpy()
        first = found["first"].to_numpy(dtype=object)
        models = [m if k == 1 else None for m, k in zip(first, n, strict=True)]
        out[f"model_{side}"] = pd.Series(models, index=items.index, dtype=object)
        n_models[k * len(items) : (k + 1) * len(items)] = n
    counts = ModelRecovery(
        matched=int((n_models == 1).sum()),
        ambiguous=int((n_models > 1).sum()),
        unmatched=int((n_models == 0).sum()),
        prompts_unmatched=int(qid.isna().sum()),
    )
    return out, counts


def _with_mt_bench_models(
    rows: pd.DataFrame, mt_bench_dir: Path, roster: Roster, *, question_prompt_ids: bool
) -> tuple[pd.DataFrame, ModelRecovery]:
    """``rows`` (one set, many judges) with models and categories recovered per item."""
    answers = read_mt_bench_answers(mt_bench_dir, roster=roster)
    items = rows.drop_duplicates("item_id").set_index("item_id")
    found, counts = recover_mt_bench_models(items, answers)
    out = rows.copy()
    for col in ("model_a", "model_b", "category"):
        out[col] = out["item_id"].map(found[col]).astype(object)
        out[col] = out[col].where(out[col].notna(), None)
    if question_prompt_ids:
        qid = out["item_id"].map(found["question_id"])
        out["prompt_id"] = qid.astype(str).where(qid.notna(), out["prompt_id"])
    return out, counts


def _sets(folder: Path) -> list[tuple[Path, str]]:
    root = folder / "Dataset"
    found = sorted(p.parent for p in root.rglob("dataset.json"))
    if not found:
        raise DatasetNotFoundError(
            f"no LLMBar sets in {root} (expected Dataset/<set>/dataset.json) — "
            "fetch the dataset again"
        )
    return [(p, p.relative_to(root).as_posix()) for p in found]


def _shared_prompts(rows: pd.DataFrame) -> pd.DataFrame:
    """``rows`` (every set, in set order) with one ``prompt_id`` per distinct input: the
    id of its first item, so an input two sets hold is one prompt (one bootstrap cluster),
    as it is within a set."""
    first = rows.drop_duplicates("prompt").set_index("prompt")["prompt_id"]
    return rows.assign(prompt_id=rows["prompt"].map(first))


def read_llmbar(folder: Path, roster: Roster) -> pd.DataFrame:
    """Dataset ``llmbar``: every set under ``folder/Dataset`` (see the module docstring).

    Generators of ``Processed/MT-Bench`` are recovered when ``../mt_bench`` exists;
    without it they stay missing and a warning says so.
    """
    frames = []
    recovery = None
    for set_dir, name in _sets(folder):
        rows = read_llmbar_set(set_dir, name, roster)
        if name == MT_BENCH_SET:
            mt_bench_dir = folder.parent / "mt_bench"
            if (mt_bench_dir / "question.jsonl").is_file():
                rows, recovery = _with_mt_bench_models(
                    rows, mt_bench_dir, roster, question_prompt_ids=False
                )
            else:
                warnings.warn(
                    f"{mt_bench_dir} not found: generators of LLMBar {MT_BENCH_SET} stay unknown",
                    stacklevel=2,
                )
        frames.append(rows)
    out = validate_pairs(_shared_prompts(pd.concat(frames, ignore_index=True)), file=folder)
    if recovery is not None:
        out.attrs["mt_bench_models"] = asdict(recovery)
    return out


def read_llmbar_mtbench(folder: Path, roster: Roster) -> pd.DataFrame:
    """Dataset ``llmbar-mtbench``: LLMBar's MT-Bench set with generators recovered.

    ``prompt_id`` is the MT-Bench question id; ``df.attrs["mt_bench_models"]`` holds
    the :class:`ModelRecovery` counts.
    """
    set_dir = folder / "Dataset" / MT_BENCH_SET
    if not (set_dir / "dataset.json").is_file():
        raise DatasetNotFoundError(f"LLMBar's {MT_BENCH_SET} set is not in {folder / 'Dataset'}")
    rows = read_llmbar_set(set_dir, MT_BENCH_SET, roster)
    rows, recovery = _with_mt_bench_models(
        rows, folder.parent / "mt_bench", roster, question_prompt_ids=True
    )
    out = validate_pairs(rows, file=set_dir / "dataset.json")
    out.attrs["mt_bench_models"] = asdict(recovery)
    return out


register(
    Dataset(
        name="llmbar",
        folder="llmbar",
        table="pairs",
        summary="LLMBar: 15 pairwise sets with gold/human labels; GPT-4, ChatGPT, LLaMA2, PaLM2 "
        "(+ ChatGPT-0301, Falcon) verdicts in both orders",
        reader=read_llmbar,
    )
)
register(
    Dataset(
        name="llmbar-mtbench",
        folder="llmbar",
        table="pairs",
        summary="LLMBar's MT-Bench set (200 human-labelled pairs) with generators recovered "
        "from MT-Bench answers; GPT-4, ChatGPT, LLaMA2, PaLM2 verdicts in both orders",
        reader=read_llmbar_mtbench,
    )
)

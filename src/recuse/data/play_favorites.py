"""Play Favorites (Spiliopoulou et al. 2025): human and LLM-judge absolute ratings.

Dataset ``play-favorites`` -> a ``ratings`` table, one row per rating-file row:

=============  ===============================================================
``dimension``  from the file name, lower case: ``Faithfulness.csv`` ->
               ``"faithfulness"`` (scale 0–4), ``Logical correctness.csv`` ->
               ``"logical correctness"`` (scale 0–2). The paper's other four
               dimension files (Completeness, Conciseness, Helpfulness, Logical
               robustness) are read the same way if they are in the folder.
``judge``      ``judge`` through the roster (9 judges, families claude, gpt,
               llama, mistral)
``model``      ``model`` (the generator) through the roster
``rating``     ``rating`` (the judge's score)
``reference``  ``gt`` (mean of the human annotators' ratings)
``dataset``    ``dataset`` as is (chatbotarena, cnn, helm-instruct, mtbench,
               stanford, xsum)
``task``       the paper's task type (§4.2): ``"summarization"`` for cnn and xsum,
               ``"open-ended qa"`` for the other sources; an unknown source keeps its
               own name
``length``     ``pred_length`` (completion length; unit not documented upstream)
``prompt``     the prompt text from ``prompt_ids.csv`` (quoted fields span lines)
=============  ===============================================================
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from recuse.data.delimited import read_csv
from recuse.data.model_names import canonical_ids
from recuse.data.registry import Dataset, register
from recuse.errors import InputError
from recuse.roster import Roster
from recuse.tables import validate_ratings

NAME = "play-favorites"
FOLDER = "play_favorites"

# file -> dimension; the first two are the files released upstream
DIMENSION_FILES: dict[str, str] = {
    "Faithfulness.csv": "faithfulness",
    "Logical correctness.csv": "logical correctness",
    "Completeness.csv": "completeness",
    "Conciseness.csv": "conciseness",
    "Helpfulness.csv": "helpfulness",
    "Logical robustness.csv": "logical robustness",
}
REQUIRED_FILES = ("Faithfulness.csv", "Logical correctness.csv")
PROMPTS_FILE = "prompt_ids.csv"
COLUMNS = ("judge", "model", "gt", "dataset", "prompt_id", "rating", "pred_length")

# prompt source -> task type (the paper splits open-ended QA and summarization)
TASKS: dict[str, str] = {
    "cnn": "summarization",
    "xsum": "summarization",
    "chatbotarena": "open-ended qa",
    "mtbench": "open-ended qa",
    "helm-instruct": "open-ended qa",
    "stanford": "open-ended qa",
}


def _read_dimension(path: Path, dimension: str, roster: Roster) -> pd.DataFrame:
    raw = read_csv(path, required=COLUMNS, as_str=False)
    out = pd.DataFrame(
        {
            "prompt_id": raw["prompt_id"],
            "model": canonical_ids(raw["model"], roster, file=path, column="model"),
            "dimension": dimension,
            "judge": canonical_ids(raw["judge"], roster, file=path, column="judge"),
            "rating": raw["rating"],
            "reference": raw["gt"],
            "task": raw["dataset"].map(TASKS).fillna(raw["dataset"]),
            "dataset": raw["dataset"],
            "length": raw["pred_length"],
        }
    )
    # validate per file so that row numbers point into this file
    return validate_ratings(out, file=path)


def read_prompts(folder: Path) -> pd.Series:
    """``prompt_id`` -> prompt text from ``prompt_ids.csv``."""
    path = folder / PROMPTS_FILE
    raw = read_csv(path, required=("prompt_id", "prompt"))
    dup = raw["prompt_id"].duplicated()
    if dup.any():
        i = int(dup.to_numpy().nonzero()[0][0])
        raise InputError(
            f"prompt_id {raw['prompt_id'].iloc[i]!r} appears twice",
            file=path,
            row=i + 1,
            column="prompt_id",
            fix="fetch the dataset again",
        )
    return pd.Series(raw["prompt"].to_numpy(), index=raw["prompt_id"].to_numpy(), name="prompt")


def read_play_favorites(folder: Path, roster: Roster) -> pd.DataFrame:
    """Read the Play Favorites rating files in ``folder`` into one ``ratings`` table."""
    folder = Path(folder)
    for name in (*REQUIRED_FILES, PROMPTS_FILE):
        if not (folder / name).is_file():
            raise InputError(
                "file not found",
                file=folder / name,
                fix=f"run `recuse data fetch {NAME}`",
            )
    prompts = read_prompts(folder)
    parts = [
        _read_dimension(folder / file, dimension, roster)
        for file, dimension in DIMENSION_FILES.items()
        if (folder / file).is_file()
    ]
    table = pd.concat(parts, ignore_index=True)
    table["prompt"] = table["prompt_id"].map(prompts)
    unknown = table["prompt"].isna()
    if unknown.any():
        i = int(unknown.to_numpy().nonzero()[0][0])
        raise InputError(
            f"prompt_id {table['prompt_id'].iloc[i]!r} is not in {PROMPTS_FILE}",
            file=folder / PROMPTS_FILE,
            fix="fetch the dataset again",
        )
    return table  # each part was validated with its own file


register(
    Dataset(
        name=NAME,
        folder=FOLDER,
        table="ratings",
        summary="Play Favorites: 9 LLM judges rate 9 models' completions on 596 prompts "
        "(faithfulness, logical correctness) next to the mean human rating",
        reader=read_play_favorites,
    )
)

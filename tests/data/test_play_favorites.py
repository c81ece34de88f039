"""Play Favorites reader against the real files: row counts, spot checks, errors."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import pandas as pd
import pytest

from recuse.data import registry
from recuse.data.play_favorites import TASKS, read_play_favorites
from recuse.errors import InputError
from recuse.roster import ModelsNotInRoster, Roster


@pytest.fixture(scope="module")
def table(shared_data: Path) -> pd.DataFrame:
    return registry.load("play-favorites", data_dir=shared_data)


def _raw_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_row_counts_per_dimension(table: pd.DataFrame) -> None:
    assert len(table) == 16_137 + 47_085
    counts = table["dimension"].value_counts().to_dict()
    assert counts == {"logical correctness": 47_085, "faithfulness": 16_137}


def test_judges_models_and_families(table: pd.DataFrame) -> None:
    roster = Roster.builtin()
    assert table["judge"].nunique() == 9
    assert set(table["judge"]) == set(table["model"])
    assert set(roster.families(table["judge"])) == {"claude", "gpt", "llama", "mistral"}
    assert "gpt-4o" in set(table["judge"])
    assert "llama-3.1-70b-instruct" in set(table["judge"])


def test_prompts_and_sources(table: pd.DataFrame) -> None:
    faith = table[table["dimension"] == "faithfulness"]
    logic = table[table["dimension"] == "logical correctness"]
    assert faith["prompt_id"].nunique() == 200
    assert logic["prompt_id"].nunique() == 596
    assert set(faith["dataset"]) == {"cnn", "xsum"}
    assert set(logic["dataset"]) == set(TASKS)
    assert set(table.loc[table["dataset"].isin(["cnn", "xsum"]), "task"]) == {"summarization"}
    assert (table["task"] == "summarization").sum() == 8077 + 8060 + 7947 + 7863
    assert table["prompt"].notna().all()
    assert (table["status"] == "ok").all()


def test_spot_rows_match_the_csv_files(table: pd.DataFrame, shared_data: Path) -> None:
    roster = Roster.builtin()
    folder = shared_data / "play_favorites"
    indexed = table.set_index(["dimension", "prompt_id", "model", "judge"])
    for file, dimension in [
        ("Faithfulness.csv", "faithfulness"),
        ("Logical correctness.csv", "logical correctness"),
    ]:
        rows = _raw_rows(folder / file)
        for raw in (rows[0], rows[len(rows) // 2], rows[-1]):
            key = (
                dimension,
                raw["prompt_id"],
                roster.canonical(raw["model"]),
                roster.canonical(raw["judge"]),
            )
            got = indexed.loc[key]
            assert got["rating"] == float(raw["rating"])
            assert got["reference"] == pytest.approx(float(raw["gt"]))
            assert got["length"] == float(raw["pred_length"])
            assert got["dataset"] == raw["dataset"]


def test_first_row_by_hand(table: pd.DataFrame) -> None:
    # Faithfulness.csv line 2:
    # meta.llama3-1-70b-instruct-v1:0,anthropic.claude-v2:1,4,cnn,cnn_0,3,218
    row = table.iloc[0]
    assert (row["judge"], row["model"], row["prompt_id"]) == (
        "llama-3.1-70b-instruct",
        "claude-2.1",
        "cnn_0",
    )
    assert (row["reference"], row["rating"], row["length"]) == (4.0, 3.0, 218.0)
    assert row["dimension"] == "faithfulness" and row["task"] == "summarization"
    assert row["prompt"].startswith("Provide a summary for the following article:\n\n")


def test_multiline_prompt_text(table: pd.DataFrame, shared_data: Path) -> None:
    with (shared_data / "play_favorites" / "prompt_ids.csv").open(newline="") as f:
        prompts = {r["prompt_id"]: r["prompt"] for r in csv.DictReader(f)}
    assert len(prompts) == 596
    by_id = table.drop_duplicates("prompt_id").set_index("prompt_id")["prompt"]
    assert by_id["chatbotarena_3"] == (
        "Explain to me as a 12 year old person how semiconductors work."
    )
    multiline = [k for k, v in prompts.items() if "\n" in v]
    assert len(multiline) == 243
    for k in multiline[:20]:
        assert by_id[k] == prompts[k]


def _copy(shared_data: Path, tmp_path: Path) -> Path:
    folder = tmp_path / "play_favorites"
    shutil.copytree(shared_data / "play_favorites", folder)
    return folder


def test_missing_file_says_fetch(shared_data: Path, tmp_path: Path) -> None:
    folder = _copy(shared_data, tmp_path)
    (folder / "prompt_ids.csv").unlink()
    with pytest.raises(InputError, match="recuse data fetch play-favorites"):
        read_play_favorites(folder, Roster.builtin())


def test_unknown_judge_is_its_own_model_with_a_note_naming_the_file(
    shared_data: Path, tmp_path: Path
) -> None:
    folder = _copy(shared_data, tmp_path)
    path = folder / "Faithfulness.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[3] = lines[3].replace("meta.llama3-1-70b-instruct-v1:0", "mystery-judge", 1)
    path.write_text("".join(lines), encoding="utf-8")
    # its own model and family, one note naming the file (it stopped the read before)
    with pytest.warns(ModelsNotInRoster, match="Faithfulness.csv: model 'mystery-judge'"):
        table = read_play_favorites(folder, Roster.builtin())
    assert (table["judge"] == "mystery-judge").sum() == 1


def test_text_rating_names_row(shared_data: Path, tmp_path: Path) -> None:
    folder = _copy(shared_data, tmp_path)
    path = folder / "Logical correctness.csv"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    head, _, tail = lines[5].rstrip("\n").rpartition(",")
    fields = head.split(",")
    fields[-1] = "good"  # the rating cell
    lines[5] = ",".join(fields) + "," + tail + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_play_favorites(folder, Roster.builtin())
    assert (err.value.row, err.value.column) == (5, "rating")

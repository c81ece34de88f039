"""Folders as the tools write them: Arena-Hard-Auto's ``model_judgment/`` root (one
subfolder per judge), FastChat's ``model_judgment/`` with pair and single-answer files
side by side, AlpacaEval's ``results/`` root (``<model>/<annotator>/annotations.json``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from recuse.data.importers import folder_formats, read_import, sniff_folder
from recuse.data.inputs import load_inputs
from recuse.errors import InputError

HERE = Path(__file__).parent / "importers"
UP = HERE / "upstream"


def _arena_root(tmp_path: Path) -> Path:
    root = tmp_path / "model_judgment"
    for judge, files in {
        "gpt-4-1106-preview": [
            "arena-hard-v0.1_claude-3-haiku-20240307.jsonl",
            "arena-hard-v0.1_gpt-4-0613.jsonl",
        ],
        "gpt-4.1": ["arena-hard-v2.0_qwq-32b.jsonl"],
    }.items():
        (root / judge).mkdir(parents=True)
        for name in files:
            shutil.copy(HERE / name, root / judge / name.split("_", 1)[1])
    return root


def test_arena_hard_model_judgment_root_reads_every_judge(tmp_path: Path) -> None:
    root = _arena_root(tmp_path)
    assert sniff_folder(root) == "arena-hard"
    imported = read_import(root, "arena-hard", unknown_models="keep")
    lines = {
        name: len((HERE / name).read_text("utf-8").splitlines())
        for name in (
            "arena-hard-v0.1_claude-3-haiku-20240307.jsonl",
            "arena-hard-v0.1_gpt-4-0613.jsonl",
            "arena-hard-v2.0_qwq-32b.jsonl",
        )
    }
    assert len(imported.frame) == sum(lines.values()) == 11
    assert imported.frame.groupby("judge").size().to_dict() == {
        "gpt-4-1106-preview": 7,
        "gpt-4.1": 4,
    }
    assert "gpt-4-1106-preview/claude-3-haiku-20240307.jsonl" in imported.notes[0]
    # one judge's subfolder still reads alone
    alone = read_import(root / "gpt-4.1", "arena-hard", unknown_models="keep")
    assert len(alone.frame) == 4


def test_fastchat_folder_with_pair_and_single_files_reads_both(tmp_path: Path) -> None:
    folder = tmp_path / "model_judgment"
    folder.mkdir()
    shutil.copy(HERE / "gpt-4_pair.jsonl", folder / "gpt-4_pair.jsonl")
    shutil.copy(UP / "fastchat" / "gpt-4_single.jsonl", folder / "gpt-4_single.jsonl")
    singles = len((folder / "gpt-4_single.jsonl").read_text("utf-8").splitlines())
    assert folder_formats(folder) == ["fastchat-pair", "fastchat-single"]
    inputs = load_inputs(folder)
    assert [(i.name, i.table, len(i.frame)) for i in inputs] == [
        ("model_judgment (fastchat-pair)", "pairs", 6),
        ("model_judgment (fastchat-single)", "ratings", singles),
    ]
    assert inputs[0].source.name == "model_judgment (fastchat-pair)"
    # asked for one table, the folder says how to get both or either
    with pytest.raises(InputError, match=r"audit the folder \(both are read"):
        sniff_folder(folder)
    # --format picks one
    assert len(load_inputs(folder, format="fastchat-single")) == 1


def test_alpaca_eval_results_root_reads_every_annotator(tmp_path: Path) -> None:
    root = tmp_path / "results"
    shutil.copytree(UP / "alpaca_eval" / "results", root)
    assert sniff_folder(root) == "alpaca-eval"
    frame = read_import(root, "alpaca-eval").frame
    turbo = [
        read_import(UP / "alpaca_eval" / "results" / model / annotator / "annotations.json",
                    "alpaca-eval").frame
        for model, annotator in (
            ("claude", "weighted_alpaca_eval_gpt4_turbo"),
            ("cohere", "alpaca_eval_gpt4_turbo_fn"),
            ("cohere", "alpaca_eval_cot_gpt4_turbo_fn"),
            ("Samba-CoE-v0.1", "alpaca_eval_gpt4_turbo_fn"),
        )
    ]  # fmt: skip
    # the three GPT-4-turbo annotators (one by log-probs, two by function call) are one
    # judge; cohere's two function-call templates are not pooled: the first by name
    # (cot, 13 rows) is kept, the other's 12 rows left out with a note
    assert set(frame["judge"]) == {"gpt-4", "gpt-4-1106-preview", "claude-v1"}
    kept = [turbo[0], turbo[2], turbo[3]]
    assert (frame["judge"] == "gpt-4-1106-preview").sum() == sum(map(len, kept)) == 49 - 12
    assert not frame["item_id"].str.contains("/cohere/alpaca_eval_gpt4_turbo_fn/").any()

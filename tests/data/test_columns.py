"""recuse.data.columns: the prompt id a file without one gets from its prompt texts."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from recuse.data.plain_tables import read_table
from recuse.errors import InputError


def _pairs(prompts: list[str]) -> pd.DataFrame:
    n = len(prompts)
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            "question": prompts,
            "response_a": ["one"] * n,
            "response_b": ["two"] * n,
        }
    )


def test_identical_prompt_texts_are_one_prompt(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    _pairs(["Why?", "How?", "Why?"]).to_csv(path, index=False)
    got = read_table(path, table="pairs", mapping={"question": "prompt"})
    ids = got["prompt_id"].tolist()
    assert ids[0] == ids[2] != ids[1]


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_row_without_its_prompt_text_is_named(tmp_path: Path, suffix: str) -> None:
    """Row 3 has no prompt text (empty in a CSV; null in a JSONL) and the file has no
    prompt_id: the error names the row and the file's column. It said the file lacked
    the column prompt_id and listed as the file's own columns those the reader adds."""
    frame = _pairs(["Why?", "How?", "", "What?"])
    path = tmp_path / f"p{suffix}"
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.assign(question=frame["question"].replace("", None)).to_json(
            path, orient="records", lines=True
        )
    with pytest.raises(InputError) as err:
        read_table(path, table="pairs", mapping={"question": "prompt"})
    e = err.value
    assert (e.row, e.column) == (3, "question")
    assert "prompt text is missing" in e.reason and "prompt_id" in (e.fix or "")


def _two_judges(first: list[str], second: list[str]) -> pd.DataFrame:
    """Each item judged by two judges (one row each), the prompt as each row wrote it."""
    n = len(first)
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)] * 2,
            "question": first + second,
            "judge": ["gpt-4"] * n + ["claude-v1"] * n,
            "p_a_first": ["A"] * n + ["B"] * n,
        }
    )


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_prompt_written_with_other_line_ends_or_spaces_is_one_prompt(
    tmp_path: Path, suffix: str
) -> None:
    """One item's rows from two tools (CRLF and LF, a trailing newline) hold one prompt:
    it was refused as 'item 'i0' has prompt_id 'prompt-…' in row 1 and 'prompt-…'
    here', naming ids the file does not hold, and the same prompt in two items was two
    clusters of the bootstrap."""
    lf = ["Why?\nSay it.", "How?", "Why?\nSay it."]
    other = ["Why?\r\nSay it.", " How?\n", "Why?\rSay it.\r\n"]
    path = tmp_path / f"p{suffix}"
    frame = _two_judges(lf, other)
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True)
    got = read_table(path, table="pairs", mapping={"question": "prompt"})
    ids = got["prompt_id"].tolist()
    assert ids[:3] == ids[3:]
    assert ids[0] == ids[2] != ids[1]
    assert got["prompt"].tolist() == lf + other  # the texts are kept as written


def test_two_prompts_in_one_item_are_named_by_the_file_column(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    _two_judges(["Why?", "How?"], ["Why?", "How now?"]).to_csv(path, index=False)
    with pytest.raises(InputError) as err:
        read_table(path, table="pairs", mapping={"question": "prompt"})
    e = err.value
    assert (e.row, e.column) == (4, "question")
    assert e.reason.startswith("item 'i1' has prompt 'How?' in row 2 and 'How now?' here")
    assert "prompt_id" not in e.reason


def test_a_mapping_error_names_the_flag_and_the_recuse_toml_section() -> None:
    """A recuse.toml's [map] is read by every command, and the user may not have it in
    mind: its errors said 'the column mapping' as of a --map never given. From Python the
    mapping is the caller's ``mapping=`` (it said '--map, or [map] in recuse.toml' there
    too, options a notebook user never gave)."""
    from recuse.data.columns import apply_mapping
    from recuse.tables import renaming_by

    df = pd.DataFrame({"w": ["A"], "p_a": [1.0]})
    for mapping, said in (
        ({"w": "p_a", "p_a": "p_a"}, "{} gives 'p_a' twice"),
        ({"x": "p_a"}, "{} names 'x', which is not in the file"),
        ({"w": "wnner"}, "{} renames 'w' to 'wnner'"),
    ):
        for door, words in (
            ("flag", "the column mapping (--map, or [map] in recuse.toml)"),
            ("keyword", "the column mapping (mapping=)"),
        ):
            with renaming_by(door), pytest.raises(InputError) as err:  # type: ignore[arg-type]
                apply_mapping(df, mapping, "pairs", Path("t.csv"))
            assert said.format(words) in str(err.value), (door, str(err.value))

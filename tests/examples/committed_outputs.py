"""Checks the example-output tests share: the committed files copied where ``--from-pairs``
may rewrite them, a per-pair file damaged on purpose, JSON compared to the last bits a
summation order moves, and a rewritten JSON that keeps the model run's record."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

OUTPUT = Path(__file__).resolve().parents[2] / "examples" / "output"


def committed_copy(names: Iterable[str], folder: Path) -> Path:
    """The committed ``names`` copied into ``folder`` (returned)."""
    for name in names:
        (folder / name).write_bytes((OUTPUT / name).read_bytes())
    return folder


def damage_csv(path: Path, how: str, column: int) -> None:
    """``path`` damaged ``how``: "truncated" (a half-copied file: valid rows, too few of
    them), "wrong columns", "bad value" ("banana" in row 5's ``column``, a number the
    analyses read) or, otherwise, gone."""
    lines = path.read_text().splitlines(keepends=True)
    if how == "truncated":
        path.write_text("".join(lines[:40]))
    elif how == "wrong columns":
        path.write_text("a,b\n1,2\n")
    elif how == "bad value":
        cells = lines[5].split(",")
        cells[column] = "banana"
        path.write_text("".join([*lines[:5], ",".join(cells), *lines[6:]]))
    else:
        path.unlink()


def same_json(committed: Any, again: Any, where: str = "") -> None:
    """Equal JSON values: the same keys in the same order, the same texts, and numbers
    equal up to the last bits a different summation order moves."""
    if isinstance(again, dict):
        assert isinstance(committed, dict), where
        assert list(committed) == list(again), f"{where}: keys {list(committed)} != {list(again)}"
        for key in again:
            same_json(committed[key], again[key], f"{where}/{key}")
    elif isinstance(again, list):
        assert isinstance(committed, list) and len(committed) == len(again), where
        for k, (c, a) in enumerate(zip(committed, again, strict=True)):
            same_json(c, a, f"{where}[{k}]")
    elif isinstance(again, float) and not isinstance(committed, bool):
        assert committed == pytest.approx(again, rel=1e-9, abs=1e-12), where
    else:
        assert committed == again, f"{where}: {committed!r} != {again!r}"


def assert_run_record_kept(
    before: dict[str, Any], after: dict[str, Any], sections: Iterable[str]
) -> list[str]:
    """The JSON ``--from-pairs`` rewrote keeps every key but the redone ``sections`` as
    it was, in its order, and says what was redone; the kept keys are returned."""
    redone = set(sections)
    kept = [k for k in before if k not in redone]
    assert [k for k in after if k in before] == list(before)
    assert {k: after[k] for k in kept} == {k: before[k] for k in kept}
    assert set(after) - set(before) <= {"analyses_redone"}
    assert "--from-pairs" in after["analyses_redone"]
    return kept


def assert_analyses_redone(
    folder: Path, before: dict[str, Any], after: dict[str, Any], done: Any
) -> tuple[dict[str, Any], list[str]]:
    """A familiarity example's ``--from-pairs`` in ``folder``, run with 20 resamples
    (``done``: what its ``analyse`` returned): the JSON's analysis sections are replaced
    by ``done``'s (20 resamples, not the JSON's), its tables are the CSV files written,
    and the model run's record is kept (:func:`assert_run_record_kept`). Returns the
    sections and the kept keys."""
    sections = json.loads(json.dumps(done.sections(), default=str))
    assert sections["familiarity_bias"][0]["n_boot"] == 20 != before["settings"]["n_boot"]
    assert {k: after[k] for k in sections} == sections
    for name, table in done.tables().items():
        assert (folder / name).read_text() == table.to_csv(index=False, float_format="%.4f")
    return sections, assert_run_record_kept(before, after, sections)

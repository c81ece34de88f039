"""Hostile options to `recuse audit`: refused before any data is read or analysed."""

from __future__ import annotations

from pathlib import Path

import pytest

from recuse.cli import main


def test_an_unknown_material_key_is_refused_before_reading_the_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: the key was checked after every analysis had run (minutes on a large
    table, progress lines printed); a missing input was reported first."""
    code = main(["audit", str(tmp_path / "missing.csv"), "--material", "nosuch=0.1",
                 "--out", str(tmp_path / "out")])  # fmt: skip
    text = capsys.readouterr().err
    assert code == 2, text
    assert "--material: unknown bias 'nosuch'" in text and "missing.csv" not in text
    assert not (tmp_path / "out").exists()

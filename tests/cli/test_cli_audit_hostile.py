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


def test_control_characters_in_judge_names_reach_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge named in a file with ESC sequences (clear the screen, recolour) or a
    right-to-left override: the terminal gets their escapes, never the characters, which
    it would act on; the report's JSON keeps the name as read."""
    import json

    from recuse.simulate.pairs import PlantedBias, simulate_pairs

    evil = "judge\x1b[2J\x1b[31m\u202eevil"
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.2)}, n_prompts=30, seed=3)
    pairs = sim.pairs.assign(judge=evil)
    path = tmp_path / "p.csv"
    pairs.to_csv(path, index=False)
    out = tmp_path / "out"
    assert main(["audit", str(path), "--out", str(out), "--n-boot", "200"]) == 0
    shown = capsys.readouterr().out
    assert "judge\\x1b[2J\\x1b[31m\\u202eevil" in shown
    assert "\x1b" not in shown and "\u202e" not in shown
    judges = {r["judge"] for r in json.loads((out / "report.json").read_text("utf-8"))["summary"]}
    assert evil in judges

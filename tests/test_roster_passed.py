"""Identity is passed, never global: the CLI and the API build one roster and pass it
down; no library function reads ``RECUSE_ROSTER`` or loads a roster file itself."""

from __future__ import annotations

import io
import json
import os
import re
import tokenize
from pathlib import Path

import pandas as pd
import pytest

import recuse
from recuse.cli import main
from recuse.data.inputs import load_input
from recuse.roster import ROSTER_ENV, Roster

SRC = Path(recuse.__file__).parent
# where a run builds its context: api.context_roster (recuse.audit, recuse.certify and,
# through cli/app.cli_context and cli_roster, every CLI command)
LOADS_ALLOWED = {"api.py"}
ENV_ALLOWED = {"choices.py", "roster.py", "cli/app.py"}  # the constant, its re-export, --roster


def _code(path: Path) -> str:
    """The module's code without its strings and comments: an error message telling the
    user to call ``Roster.load(path)`` loads nothing."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text("utf-8")).readline)
    # an f-string is one STRING token before Python 3.12, FSTRING_MIDDLE parts after
    skip = {tokenize.STRING, tokenize.COMMENT, getattr(tokenize, "FSTRING_MIDDLE", -1)}
    return "".join(t.string for t in tokens if t.type not in skip)


def _uses(pattern: str, *, strings: bool = False) -> set[str]:
    """The modules whose code (``strings``: whose text, quotes included) matches."""
    found = set()
    for path in SRC.rglob("*.py"):
        text = path.read_text("utf-8") if strings else _code(path)
        if re.search(pattern, text):
            found.add(path.relative_to(SRC).as_posix())
    return found


def test_roster_files_are_loaded_only_where_the_context_is_built() -> None:
    """Before: ``Roster.load()`` in 24 places, each reading ``$RECUSE_ROSTER``."""
    assert _uses(r"Roster\.load\(") == LOADS_ALLOWED


def test_the_environment_variable_is_read_only_as_the_cli_default() -> None:
    assert _uses(r"RECUSE_ROSTER\"|ROSTER_ENV\b", strings=True) == ENV_ALLOWED
    assert _uses(r"os\.environ\[[^\]]*ROSTER") == set()  # nobody sets it


def _roster_file(tmp_path: Path) -> Path:
    path = tmp_path / "roster.toml"
    path.write_text('[[model]]\nid = "judge-x"\nfamily = "house-x"\naliases = ["jx"]\n')
    return path


def test_a_library_reader_ignores_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before: a library call read the alias ``jx`` as ``judge-x`` only because the
    variable was set (and a missing file there broke every reader)."""
    monkeypatch.setenv(ROSTER_ENV, str(_roster_file(tmp_path)))
    table = tmp_path / "pairs.csv"
    pd.DataFrame(
        {"item_id": ["1"], "prompt_id": ["p"], "model_a": ["a"], "model_b": ["b"],
         "judge": ["jx"], "p_a": [0.7]}
    ).to_csv(table, index=False)  # fmt: skip
    assert "jx" not in Roster.load()  # the built-ins only: the variable is not read
    with pytest.warns(recuse.errors.ReaderNote):
        assert list(load_input(str(table), table="pairs").frame["judge"]) == ["jx"]
    given = Roster.load(_roster_file(tmp_path))
    assert list(load_input(str(table), table="pairs", roster=given).frame["judge"]) == ["judge-x"]


def test_the_cli_passes_its_roster_down_and_sets_no_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ROSTER_ENV, raising=False)
    table = tmp_path / "pairs.csv"
    pd.DataFrame(
        {"item_id": ["1", "2"], "prompt_id": ["p", "q"], "model_a": ["judge-x", "b"],
         "model_b": ["b", "jx"], "judge": ["jx", "jx"], "p_a": [0.7, 0.4]}
    ).to_csv(table, index=False)  # fmt: skip
    roster = _roster_file(tmp_path)

    def models(*args: str) -> int:
        assert main(["validate", str(table), "--json", *args]) == 0
        counts: dict[str, int] = json.loads(capsys.readouterr().out)["counts"]
        return counts["models"]

    assert models() == 3  # built-ins only: judge-x, jx and b are three models
    assert models("--roster", str(roster)) == 2  # jx is judge-x
    assert ROSTER_ENV not in os.environ
    monkeypatch.setenv(ROSTER_ENV, str(roster))  # the documented default of --roster
    assert models() == 2

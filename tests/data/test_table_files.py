"""Reading a table file by its name: a judge store given where a table belongs."""

from __future__ import annotations

from pathlib import Path

import pytest

from recuse.cli import main
from recuse.data.table_files import read_frame
from recuse.errors import InputError
from recuse.judging import Store


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "smol.sqlite"
    Store(path).close()  # the schema `recuse judge` writes, no judgment yet
    return path


def test_a_judge_store_is_named_as_one_with_the_export_command(store: Path) -> None:
    with pytest.raises(InputError) as info:
        read_frame(store)
    message = str(info.value)
    assert "a SQLite database, not a table" in message
    assert f"`recuse judge export {store} --out pairs.csv`" in message
    # any other unknown file is still an unknown file type
    other = store.with_suffix(".xlsx")
    other.write_bytes(b"PK\x03\x04 not a table")
    with pytest.raises(InputError, match="unknown file type"):
        read_frame(other)


@pytest.mark.parametrize("command", ["audit", "certify", "validate"])
def test_commands_reading_pairs_refuse_a_store_with_the_fix(
    store: Path, tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    args = [command, str(store)] + (["--out", str(out)] if command == "audit" else [])
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "recuse judge export" in err and "Traceback" not in err
    assert not out.exists()

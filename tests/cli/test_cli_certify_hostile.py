"""Hostile input to `recuse certify` and `recuse certify apply`: a clear error (exit 2)
and nothing written, never a traceback or a file that looks valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from recuse.cli import main
from recuse.simulate.selective import simulate_selective


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    cap = capsys.readouterr()
    return code, cap.out + cap.err


def _pairs(tmp_path: Path) -> Path:
    path = tmp_path / "pairs.csv"
    simulate_selective(200, seed=3).pairs.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("price", ["inf", "1e400", "-inf"])
def test_an_infinite_price_is_refused_before_any_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], price: str
) -> None:
    """Before: `--cost gpt-4=inf` certified, then the JSON writer raised ValueError."""
    src, out = _pairs(tmp_path), tmp_path / "full.json"
    code, text = _run(["certify", str(src), "--cascade", "gpt-4", "--cost", f"gpt-4={price}",
                       "--out", str(out), "--json"], capsys)  # fmt: skip
    assert code == 2, text
    assert "--cost" in text and "Traceback" not in text
    assert not out.exists()

"""The benchmarks' targets: each printed with its value, a missed one exits 1."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCH))

from _targets import SCALE_ENV, Targets  # noqa: E402


def test_a_missed_target_exits_1_and_names_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SCALE_ENV, raising=False)
    t = Targets()
    assert t.at_least("speed-up", 25.0, 20.0, "x")
    assert not t.at_most("wall time", 5.5, 5.0, " s")
    assert t.within("coverage", 0.88, 0.85, 0.95)
    assert not t.at_least("ratio", float("nan"), 0.9)  # a NaN never passes
    printed = capsys.readouterr().out
    assert "target: wall time 5.5 s <= 5 s — MISSED" in printed
    assert "target: speed-up 25x >= 20x — met" in printed
    with pytest.raises(SystemExit) as exc:
        t.finish()
    assert str(exc.value).startswith("FAILED: 2 of 4 targets missed: wall time 5.5 s")


def test_all_met_exits_normally(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(SCALE_ENV, raising=False)
    t = Targets()
    t.at_least("ratio", 0.95, 0.9)
    t.finish()
    assert "all 1 targets met" in capsys.readouterr().out


def test_the_scale_makes_every_target_harder(monkeypatch: pytest.MonkeyPatch) -> None:
    """RECUSE_BENCH_TARGET_SCALE=10: at least x10, at most /10, a range 10x narrower —
    the same measurements that pass at scale 1 fail."""
    monkeypatch.setenv(SCALE_ENV, "10")
    t = Targets()
    assert not t.at_least("speed-up", 25.0, 20.0)  # needs 200
    assert not t.at_most("wall time", 4.0, 5.0)  # needs 0.5
    assert not t.within("coverage", 0.88, 0.85, 0.95)  # needs 0.895-0.905
    assert t.within("coverage", 0.9, 0.85, 0.95)
    with pytest.raises(SystemExit, match=r"3 of 4 targets missed \(targets scaled by 10\)"):
        t.finish()
    monkeypatch.setenv(SCALE_ENV, "fast")
    with pytest.raises(SystemExit, match="must be a positive number, got 'fast'"):
        Targets()


def test_every_benchmark_checks_its_targets() -> None:
    """Each script in benchmarks/ builds Targets and ends with finish(): none can print a
    missed target and exit 0."""
    scripts = sorted(p for p in BENCH.glob("*.py") if not p.name.startswith("_"))
    assert len(scripts) >= 11
    for path in scripts:
        tree = ast.parse(path.read_text("utf-8"))
        calls = {
            node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
        }
        assert {"Targets", "finish"} <= calls, path.name
        assert "(target >=" not in path.read_text("utf-8"), path.name  # printed, unchecked

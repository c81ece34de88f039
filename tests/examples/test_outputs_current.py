"""The committed example outputs (``examples/output/``) against the current code, without
the model runs: every file has the script that writes it, and every result and skip
recorded in a JSON has the fields the library writes today (``n_boot_unfit``, ``null``,
``p_value``, ...). A field added to :class:`recuse.metrics.MetricResult` makes this fail
until the examples are regenerated (``--from-pairs`` does it in seconds where a script has
it and its per-pair file is committed; otherwise they need their models, see each
script's docstring).

The numbers, definitions and skip reasons themselves are compared where they can be
recomputed: tests/examples/test_familiarity_judgebench_output.py (all of the JudgeBench
analyses, from the committed per-pair file), test_familiarity_mtbench.py (all of the
MT-Bench analyses, from its per-pair and per-answer files) and test_probes_small_models.py
(each row's definition; the ladder and self-recognition from their per-pair file)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from recuse.metrics import MetricResult, Skipped

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
OUTPUT = EXAMPLES / "output"
SCRIPTS = sorted(EXAMPLES.glob("*.py"))

#: the fields of a result and of a skip, as the library writes them now
RESULT_FIELDS = list(
    MetricResult(
        metric="m", estimate=0.0, ci_low=0.0, ci_high=0.0, level=0.9, n=1, n_clusters=1, method=""
    ).to_dict()
)
SKIP_FIELDS = list(Skipped("m", None, "why").to_dict())

STALE: dict[str, str] = {}  # output name -> why it is behind (strict xfail until rerun)


def _records(value: Any, where: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every JSON object in ``value`` with its path."""
    if isinstance(value, dict):
        yield where, value
        for key, item in value.items():
            yield from _records(item, f"{where}/{key}")
    elif isinstance(value, list):
        for k, item in enumerate(value):
            yield from _records(item, f"{where}[{k}]")


def _is_result(record: dict[str, Any]) -> bool:
    return {"metric", "estimate", "ci_low", "ci_high", "method"} <= set(record)


def _is_skip(record: dict[str, Any]) -> bool:
    return {"metric", "reason"} <= set(record)


def test_every_committed_output_has_one_script_that_writes_it() -> None:
    texts = {script.name: script.read_text("utf-8") for script in SCRIPTS}
    committed = sorted(p.name for p in OUTPUT.iterdir())
    assert committed
    for name in committed:
        writers = [s for s, text in texts.items() if f'"{name}"' in text]
        assert len(writers) == 1, (name, writers)
    # and every file a script writes (OUT / "name") is committed
    written = {m for text in texts.values() for m in re.findall(r'OUT / "([^"]+)"', text)}
    assert written and written <= set(committed), sorted(written - set(committed))


JSONS = sorted(p.name for p in OUTPUT.glob("*.json"))


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=STALE[n])) if n in STALE else n
        for n in JSONS
    ],
)
def test_every_result_and_skip_has_the_current_fields(name: str) -> None:
    record = json.loads((OUTPUT / name).read_text("utf-8"))
    results = [(w, r) for w, r in _records(record) if _is_result(r)]
    skips = [(w, r) for w, r in _records(record) if _is_skip(r) and not _is_result(r)]
    assert results or skips, f"{name}: no result or skip found (has the layout changed?)"
    for where, r in results:
        assert sorted(r) == sorted(RESULT_FIELDS), (where, set(RESULT_FIELDS) ^ set(r))
    for where, s in skips:
        assert sorted(s) == sorted(SKIP_FIELDS), (where, set(SKIP_FIELDS) ^ set(s))


def test_the_field_check_finds_what_it_checks() -> None:
    """The JudgeBench JSON (regenerated with the current code) holds results and skips
    the check reads, and one without ``n_boot_unfit`` would be caught."""
    record = json.loads((OUTPUT / "familiarity_judgebench.json").read_text("utf-8"))
    results = [r for _, r in _records(record) if _is_result(r)]
    assert len(results) >= 10 and all(list(r) == RESULT_FIELDS for r in results)
    assert "n_boot_unfit" in RESULT_FIELDS and "null" in RESULT_FIELDS
    assert any(_is_skip(s) for _, s in _records(record))
    old = {k: v for k, v in results[0].items() if k != "n_boot_unfit"}
    assert sorted(old) != sorted(RESULT_FIELDS)

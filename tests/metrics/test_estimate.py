"""A metric's own caveats (``MetricSpec.warnings``) reach its results, per group, from
that group's totals and after the interval's warnings."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from recuse.errors import InputError
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, ratio
from recuse.metrics.estimate import MetricSpec, run_specs


def test_spec_warnings_see_each_groups_totals_after_the_interval_warnings() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0])
    group = np.array([0, 0, 0, 0, 1, 1, 1, 1], dtype=np.intp)
    clusters = pd.Series(["p1", "p2", "p3", "p1", "p1", "p2", "p3", "p2"])  # 3 prompts
    values = np.column_stack([y, np.ones_like(y)])
    stat = GroupedStatistic("r", values, group, ("g0", "g1"), ratio)
    seen: list[tuple[float, float]] = []

    def caveat(t: np.ndarray) -> tuple[str, ...]:
        seen.append((float(t[0]), float(t[1])))
        return (f"own caveat: {t[0]:.0f} of {t[1]:.0f}",) if t[0] > 2 else ()

    results, skipped = run_specs(
        [MetricSpec("r", stat, "m", warnings=caveat), MetricSpec("plain", stat, "m")],
        clusters,
        boot=Resampling(level=0.9, n_boot=50, seed=0),
        min_n=1,
    )
    assert not skipped
    assert seen == [(3.0, 4.0), (1.0, 4.0)]  # each group's totals, by hand
    by = {(r.metric, r.judge): r.warnings for r in results}
    assert by[("r", "g0")][-1] == "own caveat: 3 of 4"
    assert by[("r", "g0")][0].startswith("only 3 prompts")  # the interval's come first
    assert not [w for w in by[("r", "g1")] if w.startswith("own caveat")]
    assert by[("plain", "g0")] == by[("r", "g0")][:-1]  # a spec without one adds nothing


def _special_tables() -> dict[str, tuple[Callable[[pd.DataFrame], object], pd.DataFrame]]:
    """The metric functions of special tables (recalibration, probes, perplexities,
    tool files, AlpacaEval's length control), each with a table it accepts."""
    from pathlib import Path

    from recuse.data.importers import read_import
    from recuse.metrics.calibration import recalibrate
    from recuse.metrics.familiarity import log_perplexity_by_model
    from recuse.metrics.length_controlled import length_controlled_win_rates
    from recuse.metrics.probes import probe_effects
    from recuse.metrics.tool_scores import arena_hard_battles
    from recuse.simulate.familiarity import PlantedFamiliarity, simulate_familiarity
    from recuse.simulate.length_controlled import JUDGE, simulate_length_controlled
    from recuse.simulate.pairs import simulate_pairs

    boot = Resampling(n_boot=50)
    probe = pd.DataFrame([
        {"item_id": f"i{i}#{v}", "prompt_id": f"q{i}", "judge": "j", "base_item": f"i{i}",
         "probe": v, "treated": "a", "human": np.nan, "p_a_first": 0.6, "p_a_second": 0.4}
        for i in range(6) for v in ("original", "padding")
    ])  # fmt: skip
    fam = simulate_familiarity({"j": PlantedFamiliarity(judge_slope=-1.0)}, n_prompts=40,
                               seed=1).pairs  # fmt: skip
    ae = simulate_length_controlled(systems=2, n_instructions=40, seed=1).pairs
    arena = read_import(
        Path(__file__).parents[1]
        / "data"
        / "importers"
        / "arena-hard-v0.1_claude-3-haiku-20240307.jsonl",
        "arena-hard",
    ).frame
    return {
        "recalibrate": (recalibrate, simulate_pairs(n_prompts=30, verdicts="prob", seed=1).pairs),
        "probe_effects": (lambda t: probe_effects(t, boot=boot), probe),
        "log_perplexity_by_model": (lambda t: log_perplexity_by_model(t, boot=boot), fam),
        "length_controlled_win_rates": (
            lambda t: length_controlled_win_rates(t, judge=JUDGE, boot=boot), ae),
        "arena_hard_battles": (
            lambda t: arena_hard_battles(t, judge="gpt-4-1106-preview"), arena),
    }  # fmt: skip


@pytest.mark.parametrize("name", sorted(_special_tables()))
def test_a_special_table_without_prompt_id_is_an_input_error(name: str) -> None:
    """Each takes its table as given (it runs), and the same table without prompt_id
    is the InputError that says to add it; these read ``table["prompt_id"]`` and raised
    pandas' KeyError: 'prompt_id' from inside (recalibrate, probe_effects, the
    perplexity and tool-file metrics), where the pairwise metrics said what to add."""
    function, table = _special_tables()[name]
    function(table)
    with pytest.raises(InputError, match="no prompt_id column") as caught:
        function(table.drop(columns=["prompt_id"]))
    assert caught.value.fix and "prompt_id" in caught.value.fix


@pytest.mark.parametrize(
    "name", [*sorted(set(_special_tables()) - {"length_controlled_win_rates"}), "pairwise_bias"]
)
def test_a_table_whose_prompt_id_is_missing_is_an_input_error(name: str) -> None:
    """prompt_id present but empty (NaN) in a table passed from Python (a file's reader
    refuses it): recalibrate raised pandas' InvalidIndexError, pairwise_bias an
    IndexError 'index -1 is out of bounds' (all missing) or a bare ValueError (some),
    and the perplexity metric read every row as one prompt ('all 27 usable pairs come
    from one prompt'). Each now says which rows and what to fill. (AlpacaEval's length
    control gives a row without an id an instruction of its own, by design.)"""
    if name == "pairwise_bias":
        from recuse.metrics import pairwise_bias
        from recuse.roster import Roster
        from recuse.simulate.pairs import simulate_pairs

        table = simulate_pairs(n_prompts=30, seed=1).pairs

        def bias(t: pd.DataFrame) -> object:
            return pairwise_bias(t, Roster.builtin(), boot=Resampling(n_boot=50))

        function: Callable[[pd.DataFrame], object] = bias
    else:
        function, table = _special_tables()[name]
    function(table)  # it runs with every id
    some = table.copy()
    some.loc[some.index[[1, 2]], "prompt_id"] = np.nan
    with pytest.raises(
        InputError, match=r"[12] of [\d,]+ rows have no prompt_id \(the first at index "
    ):
        function(some)
    with pytest.raises(InputError, match="rows have no prompt_id") as caught:
        function(table.assign(prompt_id=np.nan))
    assert caught.value.fix and "fill prompt_id" in caught.value.fix

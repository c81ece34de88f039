"""`recuse plan`: the recommended size reaches the power in a fresh simulation."""

from __future__ import annotations

import json
import math
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest, norm

from recuse.cli import main
from recuse.errors import ConfigError, InputError
from recuse.metrics.bootstrap import Resampling, SettingError
from recuse.simulate.position import simulate_position
from recuse.simulate.power import PLAN_N_BOOT, _achieved, _first_guess, noise_like, plan


def test_first_guess_by_hand() -> None:
    # z_0.95 + z_0.8 = 1.6449 + 0.8416; sigma^2 = 4 * 0.7 * 0.3 = 0.84; deff = 1 + 2 * 0.05
    n = (1.6448536 + 0.8416212) ** 2 * 0.84 * 1.1 / 0.2**2
    guess = _first_guess("self-preference", 0.2, power=0.8, level=0.9, k=3, accuracy=0.7, rho=0.05)
    assert guess == math.ceil(n)


@pytest.mark.slow
def test_recommended_size_reaches_the_power_in_a_fresh_simulation() -> None:
    p = plan("self-preference", 0.3, runs=60, boot=Resampling(n_boot=200, seed=0))
    # the reported power is a fresh simulation: within Monte-Carlo error of the target
    assert p.achieved >= 0.8 - 2 * math.sqrt(0.16 / 60) and p.pairs == p.prompts * 3
    assert p.achieved_low <= p.achieved <= p.achieved_high
    opts = {"k": 3, "accuracy": 0.7, "runs": 80}
    fresh = _achieved(
        "self-preference", 0.3, prompts=p.prompts, boot=Resampling(n_boot=200, seed=1000), **opts
    )  # type: ignore[arg-type]
    margin = 2 * math.sqrt(0.8 * 0.2 / 80)  # two Monte-Carlo standard errors
    assert fresh >= 0.8 - margin
    half = _achieved(
        "self-preference", 0.3, prompts=max(2, p.prompts // 2),
        boot=Resampling(n_boot=200, seed=2000), **opts,  # type: ignore[arg-type]
    )  # fmt: skip
    assert half < fresh  # half the data: less power


def test_cli_answers_in_json_and_refuses_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plan", "--bias", "position", "--effect", "0.15", "--runs", "40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bias"] == "position" and out["pairs"] >= 3 and "You need about" in out["sentence"]
    assert main(["plan", "--effect", "1.5"]) == 2
    assert "--effect" in capsys.readouterr().err
    # a level or seed out of range names its flag: the audit's rule for --level, the
    # bootstrap's for --seed, said of the flag, by the one shared way (named_settings)
    for flag, value, rule in (
        # one rule for the flag, as its help and the audit say (1.5 read 'must be
        # between 0 and 1', 0.3 'must be in [0.5, 1)')
        ("--level", "1.5", "must be in [0.5, 1), e.g. 0.9"),
        ("--level", "1", "must be in [0.5, 1), e.g. 0.9"),
        ("--level", "0.3", "must be in [0.5, 1), e.g. 0.9"),
        ("--seed", "-1", "must be 0 or more"),
    ):
        assert main(["plan", flag, value]) == 2
        err = capsys.readouterr().err
        assert (
            err
            == f"recuse: error: {flag} = {float(value) if flag == '--level' else value}: {rule}\n"
        )


@pytest.mark.parametrize(
    ("args", "said"),
    [
        # 0.7 + 0.9/2 + 0.05 = 1.2: at 0.7 an effect of 2·(1 − 0.05 − 0.7) = 0.5 fits
        (["--effect", "0.9"], "--effect 0.9 with --accuracy 0.7 cannot be simulated: the "
         "judge would agree with the human with probability up to 1.200 (accuracy + "
         "effect/2 + 0.05 of prompt-to-prompt variation), above 1 — at --accuracy 0.7 plan "
         "for an --effect of at most 0.50, or lower --accuracy"),
        (["--bias", "verbosity", "--effect", "-0.6", "--accuracy", "0.8"],
         "up to 1.150 (accuracy + effect/2 + 0.05 of prompt-to-prompt variation), above 1 "
         "— at --accuracy 0.8 plan for an --effect of at most 0.30, or lower --accuracy"),
        (["--effect", "0.1", "--accuracy", "0.97"],
         "at --accuracy 0.95 or more no effect fits: lower --accuracy"),
    ],
)  # fmt: skip
def test_an_effect_beyond_the_accuracy_names_the_options_given(
    capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    """A self-preference or verbosity effect whose simulated agreement passes 1 read
    "judge 'gpt-4': agreement probabilities reach [0.200, 1.200] ... — lower the biases
    or move accuracy toward 0.5": a judge and biases the user never named. It names
    --effect and --accuracy and the largest effect that fits; the edge itself plans."""
    assert main(["plan", *args, "--quiet"]) == 2
    err = capsys.readouterr().err
    assert said in err and "gpt-4" not in err
    p = plan("self-preference", 0.5, runs=20, boot=Resampling(n_boot=50))  # 0.7 + 0.25 + 0.05
    assert p.effect == 0.5


def test_a_level_out_of_range_is_one_error_from_the_library_too() -> None:
    """plan() checked its bootstrap's level again (check_level, least 0.5), which the
    Resampling had checked as it was made, by the same rule: removed. The Python call
    still fails with the one error the Resampling gives, and a level of 0.5 (the
    least) is planned."""
    with pytest.raises(SettingError) as raised:
        plan("position", 0.15, runs=20, boot=Resampling(level=0.3, n_boot=PLAN_N_BOOT))
    assert str(raised.value) == "level must be in [0.5, 1) (e.g. 0.9), got 0.3"
    p = plan("position", 0.15, runs=20, boot=Resampling(level=0.5, n_boot=PLAN_N_BOOT))
    assert p.level == 0.5 and p.pairs >= 3


@pytest.mark.parametrize(
    ("flag", "value"),
    [(f, v) for f in ("--max-seconds", "--effect", "--power", "--level", "--accuracy")
     for v in ("nan", "inf", "-inf", "-1", "0")]
    + [(f, v) for f in ("--flip-rate", "--ties", "--icc") for v in ("nan", "inf", "-inf", "-1")],
)  # fmt: skip
def test_plan_float_flags_refuse_nan_inf_negative_and_zero(
    capsys: pytest.CaptureFixture[str], flag: str, value: str
) -> None:
    """Before: `recuse plan --max-seconds nan` (or inf) was accepted and planned with no
    time limit. Every float flag of plan refuses a value outside its range with one line
    naming the flag and never a traceback (0 is a valid --flip-rate, --ties and --icc)."""
    bias = ["--bias", "position"] if flag in ("--flip-rate", "--ties", "--icc") else []
    assert main(["plan", *bias, f"{flag}={value}", "--runs", "20", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"recuse: error: {flag}") and err.count("\n") == 1, err


def test_plan_with_no_ties_solves_the_flip_rate_at_the_end_of_its_range(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Before: `recuse plan --bias position --effect 0.2 --ties 0` ended in scipy's
    "f(a) and f(b) must have different signs": the least flip rate the effect allows
    (0.40) sat at the end of the solver's range, where rounding left no sign change.
    With no ties and no spread the model picks by slot with probability w = 2 * effect
    and flips iff it does (c = 0 at the end): the flip rate is w = 0.4."""
    args = ["plan", "--bias", "position", "--effect", "0.2", "--ties", "0", "--runs", "20"]
    assert main([*args, "--quiet", "--max-seconds", "30", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["noise"]["flip_rate"] == pytest.approx(0.4)
    assert out["noise"]["tie_rate"] == 0.0


# --- position: the realistic noise of real judges -------------------------------------


def _independent_power(pairs: int, k: int, *, effect: float, flip: float, tie: float,
                       icc: float, level: float, runs: int, seed: int) -> float:  # fmt: skip
    """Power of a prompt-clustered z test of the first-position rate, by a simulation that
    shares nothing with recuse: each pair's statistic y = (f1 + f2)/2 is drawn by its
    category (two ties / one tie / two picks, which reverse with probability
    flip/(1-tie)²), the side a reversal or a single tie favours drawn per prompt from a
    Beta whose spread gives the within-prompt correlation ``icc``."""
    rng = np.random.default_rng(seed)
    m = pairs // k
    p1 = 2 * tie * (1 - tie)  # exactly one order tied: y = 0.25 or 0.75
    lever = flip + p1 / 2  # E[y | prompt] - 0.5 = (pi - 0.5) * lever
    mu = 0.5 + effect / lever
    var_y = flip / 4 + p1 / 16 - effect**2
    v_pi = icc * var_y / lever**2
    kappa = mu * (1 - mu) / v_pi - 1
    assert kappa > 0
    pi = rng.beta(mu * kappa, (1 - mu) * kappa, size=(runs, m, 1))
    u = rng.random((runs, m, k))
    ties = rng.binomial(2, tie, size=(runs, m, k))
    side = rng.random((runs, m, k)) < pi  # toward the first slot
    flipped = u < flip / (1 - tie) ** 2
    y = np.where(ties == 1, np.where(side, 0.75, 0.25), 0.5)
    y = np.where((ties == 0) & flipped, side.astype(float), y)
    means = y.mean(axis=2)
    est = means.mean(axis=1)
    se = means.std(axis=1, ddof=1) / np.sqrt(m)
    z = norm.ppf(1 - (1 - level) / 2)
    return float(np.mean(np.abs(est - 0.5) / se > z))


def test_position_plan_at_002_reaches_the_power_with_realistic_flips() -> None:
    # the old planner (no order flips in its simulation) recommended 276 pairs for 0.02
    p = plan("position", 0.02, runs=100, boot=Resampling(seed=0))
    assert p.noise == {"flip_rate": 0.25, "tie_rate": 0.05, "icc": 0.2}
    assert "flip rate of 0.25" in p.sentence() and "LLMBar" in p.sentence()
    opts = {"effect": 0.02, "flip": 0.25, "tie": 0.05, "icc": 0.2, "level": 0.9, "runs": 4000}
    got = _independent_power(p.pairs, 3, seed=7, **opts)  # type: ignore[arg-type]
    se = math.sqrt(0.8 * 0.2 / 4000)
    assert got >= 0.8 - 2 * se, (p.pairs, got)
    # the control: the old recommendation has little power under the same noise
    assert _independent_power(276, 3, seed=8, **opts) < 0.3  # type: ignore[arg-type]
    # and the normal first guess (1,063 pairs) ignored the within-prompt correlation
    assert p.pairs > 1_063


def test_position_noise_from_a_users_own_table() -> None:
    table = simulate_position(effect=0.03, flip_rate=0.35, tie_rate=0.1, icc=0.15,
                              n_prompts=3000, pairs_per_prompt=3, seed=4)  # fmt: skip
    got, note = noise_like(table)
    assert got["flip_rate"] == pytest.approx(0.35, abs=0.015)
    assert got["tie_rate"] == pytest.approx(0.1, abs=0.01)
    assert got["icc"] == pytest.approx(0.15, abs=0.04)
    assert "9,000 both-order rows" in note
    p = plan("position", 0.1, runs=20, like=table)
    assert p.noise["flip_rate"] == pytest.approx(got["flip_rate"]) and "measured" in p.noise_source


def test_like_without_both_orders_says_none_not_only_0() -> None:
    """Before: "--like: only 0 rows are judged in both orders"."""
    table = simulate_position(effect=0.0, n_prompts=20, pairs_per_prompt=2, seed=1)
    with pytest.raises(InputError) as err:
        noise_like(table.assign(p_a_second=np.nan))
    assert str(err.value).startswith("--like: no rows are judged in both orders; 20 or more")
    with pytest.raises(InputError, match="--like: only 1 row is judged in both orders"):
        noise_like(table.assign(p_a_second=[0.5] + [np.nan] * (len(table) - 1)))


def test_position_plan_refuses_what_it_cannot_plan_quickly() -> None:
    t0 = time.monotonic()
    with pytest.raises(ConfigError, match="more than plan simulates"):
        plan("position", 1e-5)
    assert time.monotonic() - t0 < 2  # refused before allocating anything
    # too many pairs per prompt is said to be so, not blamed on an effect of 0.4: by
    # hand, at 1 pair per prompt (z = 1.645 + 0.842, σ² = 4 · 0.7 · 0.3) ⌈z² σ² / 0.4²⌉
    one = math.ceil((norm.ppf(0.95) + norm.ppf(0.8)) ** 2 * 0.84 / 0.4**2)
    with pytest.raises(ConfigError) as err:
        plan("self-preference", 0.4, pairs_per_prompt=60_000)
    assert str(err.value).startswith(
        "a self-preference effect of 0.4 at --pairs-per-prompt 60,000 needs about 240,000 "
    )
    assert f"at 1 pair per prompt it needs about {one:,}; plan for fewer --pairs-per-prompt" in (
        str(err.value)
    )
    with pytest.raises(ConfigError, match="--bias position only"):
        plan("self-preference", 0.1, flip_rate=0.2)
    # a --like table (a DataFrame: no truth value) is refused alike, not a ValueError
    with pytest.raises(ConfigError, match="--bias position only"):
        plan("verbosity", 0.1, like=simulate_position(effect=0.0, n_prompts=10, seed=1))
    with pytest.raises(ConfigError, match=r"--flip-rate 0\.01 cannot go"):
        plan("position", 0.05, flip_rate=0.01)
    lines: list[str] = []
    p = plan("position", 0.01, runs=400, max_seconds=0.5, progress=lines.append)
    assert "stopped at its time limit" in p.sentence() and p.runs < 400
    assert any("simulating" in x for x in lines)


def test_cli_plan_like_file_and_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = simulate_position(effect=0.0, n_prompts=100, pairs_per_prompt=2, seed=1)
    path = tmp_path / "mine.csv"
    table.to_csv(path, index=False)
    args = ["plan", "--bias", "position", "--effect", "0.1", "--runs", "20", "--like", str(path)]
    assert main([*args, "--json"]) == 0
    captured = capsys.readouterr()
    out = json.loads(captured.out)
    assert out["noise_source"].startswith("measured in 200 both-order rows")
    assert "recuse plan: first guess" in captured.err
    assert main(["plan", "--bias", "position", "--effect", "1e-5"]) == 2
    assert "more than plan simulates" in capsys.readouterr().err
    # --like without --bias position (the default is self-preference): one error, exit 2
    assert main(["plan", "--like", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--bias position only" in err and "Traceback" not in err


def test_cli_plan_like_reads_a_peer_file_with_map_and_swapped_frame(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--like FILE takes --map, --values and --swapped-frame as the audit does: another
    tool's columns, its swapped verdict written as the judge saw it, give the same flip
    rate, ties and plan as recuse's columns. plan had none of them (and the error for
    such a file advised --map)."""
    table = simulate_position(effect=0.05, flip_rate=0.3, n_prompts=60, pairs_per_prompt=2,
                              seed=2)  # fmt: skip
    ours, peer = tmp_path / "ours.csv", tmp_path / "peer.csv"
    table.to_csv(ours, index=False)
    table.assign(p_a_second=1 - table["p_a_second"]).rename(
        columns={"item_id": "id", "p_a_first": "first", "p_a_second": "second"}
    ).to_csv(peer, index=False)
    args = ["plan", "--bias", "position", "--effect", "0.1", "--runs", "20", "--json", "--quiet"]
    reading = ["--map", "id=item_id,first=p_a_first,second=p_a_second", "--swapped-frame",
               "presented"]  # fmt: skip
    got = []
    for path, extra in ((ours, []), (peer, reading)):
        assert main([*args, "--like", str(path), *extra]) == 0
        got.append(json.loads(capsys.readouterr().out))
    assert got[0]["noise"] == got[1]["noise"] and got[0]["pairs"] == got[1]["pairs"]
    assert got[0]["noise"]["flip_rate"] > 0.1
    assert main([*args, "--map", "id=item_id"]) == 2  # no --like: nothing to read them
    assert "give --like or drop them" in capsys.readouterr().err


def test_like_values_that_do_not_fit_say_they_are_the_tables(
    shared_data: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A judge that flips nine in ten winners (a tiny local judge picking the first slot)
    cannot show a first-position effect of only 0.1: the error read "--flip-rate 0.95
    cannot go with this effect", an option the user never typed. And --like took a file
    only: a dataset name was "file not found — … or give a dataset name"."""
    table = simulate_position(effect=0.0, n_prompts=40, pairs_per_prompt=1, seed=1)
    flips = table.assign(p_a_first=1.0, p_a_second=0.0)  # the first-shown answer wins
    flips.loc[flips.index[:2], "p_a_second"] = 1.0  # 38 of 40 winners reverse
    with pytest.raises(ConfigError) as err:
        plan("position", 0.1, runs=20, like=flips)
    message = str(err.value)
    assert message.startswith("--like: the table's flip rate 0.95, tie share 0.00, correlation")
    assert "do not fit this effect: --flip-rate 0.95 cannot go" in message
    # one measured value overridden: only the others are the table's
    with pytest.raises(ConfigError, match=r"^--like: the table's flip rate 0\.95 \("):
        plan("position", 0.1, runs=20, like=flips, tie_rate=0.0, icc=0.2)
    args = ["plan", "--bias", "position", "--effect", "0.1", "--runs", "20", "--json"]
    assert main([*args, "--like", "llmbar-mtbench", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["noise_source"].startswith("measured in 792 both-order rows")


def test_like_says_its_flip_rate_pools_the_judges_the_audit_gives_apart(
    shared_data: Path,
) -> None:
    """``recuse plan --like llmbar-mtbench`` simulated "a flip rate of 0.29" where the
    audit reads 0.42, 0.13, 0.33 and 0.27 for its four judges, with nothing said: the
    plan's is all judges' rows pooled, their flip rates weighted by rows. The note says
    so now; the number is that weighted mean of the audit's."""
    from recuse.data.inputs import load_input
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.summary import pairwise_bias
    from recuse.roster import Roster

    table = load_input("llmbar-mtbench", data_dir=shared_data).frame
    got, note = noise_like(table)
    audit = pairwise_bias(table, Roster.builtin(), metrics=["flip_rate"],
                          boot=Resampling(n_boot=50)).results  # fmt: skip
    assert len(audit) == 4
    pooled = sum(r.estimate * r.n for r in audit) / sum(r.n for r in audit)
    assert got["flip_rate"] == pytest.approx(pooled, abs=1e-12)
    assert note.startswith(
        "measured in 792 both-order rows of 4 judges, pooled (recuse audit gives each "
        "judge's flip rate)"
    )
    one, single = noise_like(table[table["judge"] == "gpt-4"])
    assert "pooled" not in single
    assert one["flip_rate"] == pytest.approx(next(r.estimate for r in audit if r.judge == "gpt-4"))


def test_like_with_verdicts_that_never_vary_says_why_the_correlation_is_the_default() -> None:
    """A judge that always gives the first answer the win: every prompt has three pairs,
    but the verdicts do not vary, so the correlation is undefined and the default is
    used. Before, the note said 'no prompt has two pairs', which was false."""
    table = simulate_position(effect=0.03, flip_rate=0.35, tie_rate=0.1, icc=0.15,
                              n_prompts=20, pairs_per_prompt=3, seed=4)  # fmt: skip
    table = table.assign(p_a_first=1.0, p_a_second=0.0)  # first shown wins, both orders
    got, note = noise_like(table)
    assert got["icc"] == 0.2 and got["flip_rate"] == 1.0
    assert "no prompt has two pairs" not in note
    assert "do not vary" in note
    _, note = noise_like(table.assign(prompt_id=[f"p{i}" for i in range(len(table))]))
    assert "no prompt has two pairs" in note


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("pairs_per_prompt", 0, "--pairs-per-prompt must be 1 or more; got 0"),
        ("runs", 5, "--runs must be 20 or more; got 5"),
        ("accuracy", 1.2, "--accuracy must be in (0.5, 1), e.g. 0.7; got 1.2"),
        ("power", 1.5, "--power must be in [0.5, 1), e.g. 0.8; got 1.5"),
        # as given: ``:g`` wrote 0.4999999 as the 0.5 the range holds
        ("power", 0.4999999, "--power must be in [0.5, 1), e.g. 0.8; got 0.4999999"),
    ],
)
def test_each_bad_option_is_named_with_its_value(option: str, value: object, message: str) -> None:
    """Before, one message listed three rules ('--pairs-per-prompt ≥ 1, --runs ≥ 20 and
    --accuracy in (0.5, 1)') without saying which value broke one."""
    with pytest.raises(ConfigError) as err:
        plan("self-preference", 0.1, **{option: value})  # type: ignore[arg-type]
    assert str(err.value) == message


def test_the_answer_names_the_estimator_it_planned_for() -> None:
    """`recuse plan --bias self-preference` plans for equal opportunity, and `--bias
    verbosity` for Saito's recall gap, while the audit's (and the gate's)
    'self-preference' and 'verbosity' are the calibrated and prefer-longer headlines:
    the answer said only 'a self-preference bias of 0.1'."""
    from recuse.simulate.power import Plan

    def said(bias: str) -> str:
        return Plan(bias=bias, effect=0.1, pairs=600, prompts=200, pairs_per_prompt=3,
                    power=0.8, achieved=0.81, achieved_low=0.76, achieved_high=0.86,
                    runs=200, level=0.9, first_guess_pairs=572, seed=0).sentence()  # fmt: skip

    assert "self-preference bias of 0.1 (measured as equal opportunity (self_preference_eo" in (
        said("self-preference")
    )
    assert "not the audit's competence-calibrated headline" in said("self-preference")
    assert "(measured as Saito's recall gap (verbosity_recall_gap" in said("verbosity")
    assert "not the audit's prefer-longer headline" in said("verbosity")
    assert "(measured as the first-position rate's distance from 0.5)" in said("position")


def test_power_counts_what_the_report_would_flag_not_a_zero_width_interval() -> None:
    """A planted truth: a judge that picks the first slot with probability 0.95 in each
    order (first-position rate 0.95, no ties, no spread across prompts), so a pair's
    statistic is 1 with probability 0.95² = 0.9025 and three prompts all read 1 with
    probability 0.735. Such a data set's interval is 1.00 [1.00, 1.00], zero width from
    3 prompts: the report does not flag it (the exact sign test's p = 2 · 2⁻³ = 0.25 >
    0.1), yet the power counted it as a detection (0.875 of 40 runs). Power now counts
    what the report's flag counts (before false-discovery adjustment), so it is at most
    the share of runs whose prompts are not all alike; with 8 prompts all alike is p =
    2 · 2⁻⁸ ≈ 0.008 and every run detects."""
    from recuse.metrics.result import MetricResult
    from recuse.simulate.position import solve_noise
    from recuse.simulate.power import _simulated

    noise = solve_noise(effect=0.45, flip_rate=0.9, tie_rate=0.0, icc=0.0)
    boot = Resampling(level=0.9, n_boot=PLAN_N_BOOT, seed=0)
    runs, prompts = 40, 3
    alike = 0
    for r in range(runs):  # the tables _simulated analyses (its seeds)
        t = simulate_position(
            effect=0.45, n_prompts=prompts, pairs_per_prompt=1, judge="gpt-4", seed=r, noise=noise
        )
        stat = (t.p_a_first + 1 - t.p_a_second) / 2
        alike += bool((stat == stat.iloc[0]).all() and stat.iloc[0] != 0.5)
    assert abs(alike / runs - 0.9025**3) < 3 * math.sqrt(0.735 * 0.265 / runs)
    got, done = _simulated(
        "position", 0.45, prompts=prompts, k=1, accuracy=0.8, boot=boot, runs=runs, noise=noise
    )
    assert done == runs and got <= 1 - alike / runs
    many, _ = _simulated(
        "position", 0.45, prompts=8, k=1, accuracy=0.8, boot=boot, runs=runs, noise=noise
    )
    assert many == 1.0
    # the rule itself: a zero-width interval off the null detects by its p-value
    from recuse.simulate.power import detected

    flat = MetricResult("first_position_rate", 1.0, 1.0, 1.0, 0.9, 3, 3, "m", p_value=0.25)
    assert not detected(flat, null=0.5)
    assert detected(replace(flat, n=8, n_clusters=8, p_value=2 * 2**-8), null=0.5)
    # an interval with width from enough prompts detects by itself; from fewer than 5
    # its p-value decides too (the report's rule: such an interval rules nothing out)
    assert detected(replace(flat, ci_low=0.7, n=8, n_clusters=8, p_value=0.01), null=0.5)
    assert not detected(replace(flat, ci_low=0.7), null=0.5)


def test_the_plan_says_what_detected_means() -> None:
    p = plan("self-preference", 0.5, runs=20, boot=Resampling(n_boot=100, seed=0))
    assert "the share of runs the audit flags before its false-discovery adjustment" in (
        p.sentence()
    )


def test_the_answer_says_its_power_interval_is_95_percent_monte_carlo_not_the_level() -> None:
    """The simulated power's interval is a normal 95% interval over the runs, printed
    right after "at the 90% level" with no level of its own: it read as a 90% interval.
    Planted: 150 of 200 runs detect, so the 95% half-width is 1.96 · sqrt(0.75 · 0.25 /
    200) = 0.0600 (a 90% one would be 0.0504)."""
    from recuse.simulate.power import MC_LEVEL, Plan

    half = 1.959964 * math.sqrt(0.75 * 0.25 / 200)
    p = Plan(bias="position", effect=0.05, pairs=252, prompts=84, pairs_per_prompt=3,
             power=0.8, achieved=0.75, achieved_low=0.75 - half, achieved_high=0.75 + half,
             runs=200, level=0.9, first_guess_pairs=252, seed=0)  # fmt: skip
    assert MC_LEVEL == 0.95 and p.to_dict()["achieved_level"] == 0.95
    assert "0.75 [0.69, 0.81] (95% Monte-Carlo interval over 200 runs, seed 0; " in p.sentence()
    # a simulation's own interval carries that level: Clopper–Pearson's 95% over its runs
    q = plan("self-preference", 0.5, runs=20, boot=Resampling(n_boot=100, seed=0))
    hits = round(q.achieved * q.runs)
    exact = binomtest(hits, q.runs).proportion_ci(0.95, method="exact")
    assert (q.achieved_low, q.achieved_high) == pytest.approx((exact.low, exact.high))


def test_a_power_of_every_run_is_not_certain() -> None:
    """20 of 20 simulated runs detecting read "1.00 [1.00, 1.00] (95% Monte-Carlo
    interval over 20 runs)": a normal interval has zero width at 0 or at all runs, and
    claimed a 99.9% power proven by 20 data sets. Clopper–Pearson's 95% interval of 20
    of 20 is [0.025^(1/20), 1] = [0.832, 1]; 0 of 20 mirrors it."""
    from recuse.simulate.power import power_interval

    assert power_interval(20, 20) == pytest.approx((0.025 ** (1 / 20), 1.0))
    assert power_interval(0, 20) == pytest.approx((0.0, 1 - 0.025 ** (1 / 20)))
    q = plan("self-preference", 0.5, power=0.999, runs=20, boot=Resampling(n_boot=100))
    assert q.achieved == 1.0 and q.achieved_low == pytest.approx(0.025 ** (1 / 20))
    assert "1.00 [0.83, 1.00] (95% Monte-Carlo interval over 20 runs" in q.sentence()


def test_the_first_guess_says_the_size_it_was_simulated_at() -> None:
    """The normal approximation's 572 pairs are simulated as 191 whole prompts of 3 = 573
    pairs (the progress line's "first guess: simulating 200 data sets of 573 pairs"),
    while the answer said only "first guess ...: 572 pairs"."""
    from recuse.simulate.power import Plan

    def said(guess: int, k: int) -> str:
        return Plan(bias="self-preference", effect=0.1, pairs=573, prompts=191,
                    pairs_per_prompt=k, power=0.8, achieved=0.81, achieved_low=0.76,
                    achieved_high=0.86, runs=200, level=0.9, first_guess_pairs=guess,
                    seed=0).sentence()  # fmt: skip

    assert "normal approximation: 572 pairs, simulated as 573 (191 whole prompts of 3))" in (
        said(572, 3)
    )
    assert "normal approximation: 573 pairs)." in said(573, 3)
    # at least 2 prompts: a guess of 1 pair with 1 per prompt is simulated as 2
    assert "1 pairs, simulated as 2 (2 whole prompts of 1))" in said(1, 1)


@pytest.mark.parametrize("bias", ["self-preference", "verbosity"])
def test_the_answer_says_what_a_pair_is_as_the_simulation_draws_it(
    bias: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """'You need about 573 pairs' did not say which pairs: every simulated one holds the
    judge's own answer and a human label (10% ties, which equal opportunity leaves
    out), so a table holding the judge's answer in a third of its pairs needs three times
    as many. The words are checked against the pairs the simulation draws."""
    import recuse.simulate.power as pw
    from recuse.simulate.power import Plan

    seen: list[pd.DataFrame] = []
    real = pw.pairwise_bias

    def spy(table: pd.DataFrame, **kw: Any) -> Any:
        seen.append(table)
        return real(table, **kw)

    monkeypatch.setattr(pw, "pairwise_bias", spy)
    _achieved(bias, 0.2, prompts=700, k=3, accuracy=0.7, runs=1,
              boot=Resampling(n_boot=20, seed=0))  # fmt: skip
    table = seen[0]
    ties = float((table["human"] == 0.5).mean())  # 2,100 pairs: SE 0.007
    untied = table[table["human"] != 0.5]
    if bias == "self-preference":
        assert ((table["model_a"] == "gpt-4") | (table["model_b"] == "gpt-4")).all()
        share = np.where(untied["model_a"] == "gpt-4", untied["human"], 1 - untied["human"])
        words = "holds the judge's own answer beside another model's and a human label " \
            "(10% of them ties, which the estimate leaves out; the human prefers the " \
            "judge's answer in half of the rest)"  # fmt: skip
        expected = 0.5
    else:
        untied = untied[untied["len_a"] != untied["len_b"]]
        share = np.where(untied["len_a"] > untied["len_b"], untied["human"], 1 - untied["human"])
        words = "holds two answers of unequal length and a human label (10% of them ties, " \
            "which the estimate leaves out; the human prefers the longer answer in 65% of " \
            "the rest)"  # fmt: skip
        expected = 0.65
    assert ties == pytest.approx(0.1, abs=0.025)
    assert float(share.mean()) == pytest.approx(expected, abs=0.04)  # SE 0.011
    p = Plan(bias=bias, effect=0.2, pairs=573, prompts=191, pairs_per_prompt=3, power=0.8,
             achieved=0.8, achieved_low=0.7, achieved_high=0.9, runs=200, level=0.9,
             first_guess_pairs=572, seed=0)  # fmt: skip
    assert f"Each pair counted {words}." in p.sentence()


@pytest.mark.parametrize("accuracy", [0.777, 0.7, 0.8, 0.9483, 0.94996])
def test_the_largest_effect_named_fits(accuracy: float) -> None:
    """The largest effect that fits an accuracy, 2 · (1 − 0.05 − accuracy), was written
    rounded to nearest: 0.346 at --accuracy 0.777 read "at most 0.35", an effect refused
    in its turn (0.777 + 0.35/2 + 0.05 = 1.002 > 1), and 0.0034 at 0.9483 read "at most
    0.00", no effect at all. It is rounded down, with the decimals that show it: the
    effect named is accepted, and one a hundredth (or a last digit) larger is not."""
    with pytest.raises(ConfigError) as info:
        plan("self-preference", 0.9, accuracy=accuracy, runs=20, boot=Resampling(n_boot=50))
    said = str(info.value).split("effect of at most ")[1].split(",")[0]
    most = 2 * (1 - 0.05 - accuracy)
    step = 10.0 ** -len(said.partition(".")[2])
    assert float(said) > 0 and most - step < float(said) <= most + 1e-12, (said, most)
    fits = float(said)
    try:  # planned (or refused for its size, as a tiny effect is), never for the accuracy
        plan("self-preference", fits, accuracy=accuracy, runs=10, boot=Resampling(n_boot=20),
             max_pairs=400)  # fmt: skip
    except ConfigError as error:
        assert "cannot be simulated" not in str(error)
    with pytest.raises(ConfigError, match="cannot be simulated"):
        plan("self-preference", fits + step, accuracy=accuracy, runs=20,
             boot=Resampling(n_boot=50))  # fmt: skip


def test_a_simulated_power_beside_its_target_is_written_on_its_side(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """159 of 200 runs is a power of 0.795, under the 80% asked for: two decimals wrote
    it 0.80, in the answer beside "with 80% power" and in the progress line after which
    the search went on for a larger size, as if 0.80 had not reached 0.8. Beside the
    target it is written with the decimals that put it below (planted simulations)."""
    from recuse.simulate import power as power_module
    from recuse.simulate.power import Plan

    p = Plan(bias="position", effect=0.05, pairs=252, prompts=84, pairs_per_prompt=3,
             power=0.8, achieved=159 / 200, achieved_low=0.73, achieved_high=0.85,
             runs=200, level=0.9, first_guess_pairs=252, seed=0)  # fmt: skip
    assert "with 80% power" in p.sentence() and ": 0.795 [0.73, 0.85] (95%" in p.sentence()
    assert ": 0.81 [" in replace(p, achieved=0.81).sentence()  # clear of it: two decimals
    planted = iter([159 / 200, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85, 0.85])
    monkeypatch.setattr(power_module, "_simulated", lambda *a, **k: (next(planted), 200))
    lines: list[str] = []
    plan("self-preference", 0.3, runs=200, progress=lines.append)
    first = next(line for line in lines if line.startswith("first guess:") and "->" in line)
    assert first.split("simulated power ")[1].startswith("0.795 (200 runs")
    assert any(line.startswith("more:") for line in lines)  # the search went on, as it says


def test_the_plan_says_its_runs_resample_less_than_the_audit() -> None:
    """The simulated power is "the share of runs the audit flags", but each run's
    interval came from 200 resamples (PLAN_N_BOOT) where the audit draws 2,000, with
    nothing said. The sentence and the JSON say it now, and nothing where the plan
    resamples as the audit does."""
    from recuse.metrics.bootstrap import N_BOOT
    from recuse.simulate.power import PLAN_N_BOOT, Plan

    kw = dict(bias="position", effect=0.05, pairs=252, prompts=84, pairs_per_prompt=3,
              power=0.8, achieved=0.75, achieved_low=0.69, achieved_high=0.81, runs=200,
              level=0.9, first_guess_pairs=252, seed=0)  # fmt: skip
    assert (PLAN_N_BOOT, N_BOOT) == (200, 2000)
    said = "seed 0; each run's interval from 200 resamples, where the audit draws 2,000 by "
    assert said + "default; first guess" in Plan(**kw).sentence()  # type: ignore[arg-type]
    same = Plan(**kw, n_boot=N_BOOT)  # type: ignore[arg-type]
    assert "seed 0; first guess" in same.sentence() and "resamples" not in same.sentence()
    q = plan("position", 0.2, runs=20, boot=Resampling(n_boot=150, seed=0))
    assert q.to_dict()["n_boot"] == 150 and "from 150 resamples" in q.sentence()


@pytest.mark.parametrize("bias", ["self_preference", "verbosity"])
def test_the_tables_a_plan_simulates_are_as_the_readers_read_them(bias: str) -> None:
    """A plan analyses hundreds of simulated tables and reads each as validation would
    (:func:`recuse.simulate.power.as_read`), without validating it: validation gives
    the same frame (values, dtypes, columns, index), and says nothing (no note), for
    the tables a plan makes: its judge, models and human labels, a few sizes, pairs per
    prompt and seeds."""
    import warnings

    from recuse.simulate.pairs import PlantedBias, simulate_pairs
    from recuse.simulate.power import HUMAN_LONGER, HUMAN_TIE_RATE, MODELS, as_read
    from recuse.tables import validate_pairs

    for seed, (prompts, k, accuracy, effect) in enumerate(
        [(2, 1, 0.7, 0.1), (40, 3, 0.7, 0.1), (191, 2, 0.8, 0.2), (333, 5, 0.6, 0.05)]
    ):
        raw = simulate_pairs(
            judges={"gpt-4": PlantedBias(accuracy=accuracy, **{bias: effect})},
            models=MODELS,
            n_prompts=prompts,
            pairs_per_prompt=k,
            seed=seed,
            human_tie_rate=HUMAN_TIE_RATE,
            human_length_preference=HUMAN_LONGER,
            validated=False,
        ).pairs
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a note would be a difference
            read = validate_pairs(raw)
        mine = as_read(raw)
        pd.testing.assert_frame_equal(mine, read, check_exact=True)
        assert mine.attrs == read.attrs
        assert mine["p_a"].notna().all() and raw["p_a"].isna().all()  # filled, not given

"""The bootstrap's settings travel as one value, :class:`Resampling` (``boot=``).

* every public function of ``recuse.metrics``, ``recuse.mitigation`` and
  ``recuse.simulate`` that resamples takes ``boot``, never ``level`` / ``n_boot`` /
  ``seed`` of its own beside or instead of it (a scan of the signatures);
* a ``Resampling`` that exists is valid: bad values are refused as it is made;
* the value reaches the bootstrap: a metric called with ``boot=Resampling(...)`` gives
  the interval worked out by hand from the same draws at that level and seed.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm
from scipy.stats import t as student_t

import recuse.metrics
import recuse.mitigation
import recuse.simulate
from recuse import options
from recuse.analyses.base import AuditOptions, check_interval_level
from recuse.errors import ConfigError
from recuse.metrics import bootstrap
from recuse.metrics.bootstrap import (
    MAX_N_BOOT,
    N_BOOT,
    Resampling,
    SettingError,
    named_settings,
    resample_counts,
)
from recuse.metrics.position import first_position_rate
from recuse.options import read_options

BOOT_KEYS = ("level", "n_boot", "seed")

#: public functions that take a resampling value on its own, on purpose: the checks of
#: the values themselves, and the primitive that draws the counts from a generator
TAKES_THE_VALUES = {
    "recuse.metrics.bootstrap.check_options",
    "recuse.metrics.bootstrap.check_resamples",
    "recuse.metrics.bootstrap.resample_counts",
}

#: public functions with a ``seed`` that is not a bootstrap's (and no interval level or
#: resamples): what it seeds is named. A new one is added here only when its seed does
#: not draw bootstrap resamples; one that does takes ``boot``.
OTHER_SEEDS = {
    # the chance outcomes of a perfectly calibrated judge (the ECE's reference)
    "recuse.metrics.calibration.debiased_ece": "calibrated judge's outcomes",
    # the random split of prompts into cross-fitting folds
    "recuse.metrics.calibration.recalibrate": "folds",
}


def _public_functions() -> Iterator[tuple[str, Callable[..., Any]]]:
    for package in (recuse.metrics, recuse.mitigation, recuse.simulate):
        names = [package.__name__] + [
            m.name for m in pkgutil.walk_packages(package.__path__, package.__name__ + ".")
        ]
        for name in names:
            module = importlib.import_module(name)
            for attr, obj in vars(module).items():
                if attr.startswith("_") or not inspect.isfunction(obj):
                    continue
                if obj.__module__ != module.__name__:  # imported, not defined here
                    continue
                yield f"{module.__name__}.{attr}", obj


FUNCTIONS = dict(_public_functions())


def test_the_scan_sees_the_metric_functions() -> None:
    """The scan below is only as good as what it reads: it must see the package's
    metric functions, the mitigations and the simulators."""
    assert "recuse.metrics.self_preference.self_preference" in FUNCTIONS
    assert "recuse.metrics.summary.pairwise_bias" in FUNCTIONS
    assert "recuse.mitigation.familiarity_ensemble.compare_ensembles" in FUNCTIONS
    assert "recuse.simulate.power.plan" in FUNCTIONS
    assert "recuse.simulate.pairs.simulate_pairs" in FUNCTIONS
    assert len(FUNCTIONS) > 100


def test_no_function_takes_the_bootstrap_settings_one_by_one() -> None:
    wrong = []
    for name, fn in FUNCTIONS.items():
        params = inspect.signature(fn).parameters
        own = [k for k in BOOT_KEYS if k in params]
        if name in TAKES_THE_VALUES:
            continue
        if "boot" in params and own:
            wrong.append(f"{name}: takes {', '.join(own)} beside boot")
        elif "n_boot" in params:
            wrong.append(f"{name}: takes n_boot instead of boot")
        elif "seed" in params and "level" in params:
            wrong.append(f"{name}: takes level and seed instead of boot")
        elif (
            "seed" in params
            and name not in OTHER_SEEDS
            and not name.split(".")[-1].startswith("simulate_")
        ):
            wrong.append(f"{name}: takes a seed; a bootstrap's goes in boot (else OTHER_SEEDS)")
    assert not wrong, "\n".join(wrong)


def test_boot_is_keyword_only_with_a_resampling_default() -> None:
    """``boot`` is keyword-only wherever it is public; its default is a valid value
    with the package's resamples (the Arena-Hard tool scores' default is None: the level
    the file's version prints, 95% for v0.1, 90% for v2.0; the power search's resamples
    are fewer: each says why in its docstring)."""
    own_level: dict[str, float | None] = {
        "recuse.metrics.tool_scores.arena_hard_scores": None,
        "recuse.metrics.tool_scores.arena_hard_style_scores": None,
    }
    own_resamples = {
        "recuse.simulate.power.plan": 200,
        "recuse.simulate.self_preference.calibration_cell": 500,
    }
    seen = 0
    for name, fn in FUNCTIONS.items():
        p = inspect.signature(fn).parameters.get("boot")
        if p is None or name.endswith("interval_method"):
            continue
        seen += 1
        assert p.kind is inspect.Parameter.KEYWORD_ONLY, name
        if p.default is inspect.Parameter.empty:
            continue  # a building block that is always handed one
        if name in own_level and own_level[name] is None:
            assert p.default is None, name  # the level by the data's version
            continue
        assert isinstance(p.default, Resampling), name
        assert p.default.level == own_level.get(name, 0.9), name
        assert p.default.n_boot == own_resamples.get(name, N_BOOT), name
        assert p.default.seed == 0, name
    assert seen > 40


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"level": 0.0}, "level must be in \\[0.5, 1\\)"),
        ({"level": 1.0}, "level must be in \\[0.5, 1\\)"),
        ({"level": 90}, "level must be in \\[0.5, 1\\)"),
        ({"n_boot": 9}, "n_boot must be an integer of at least 10"),
        ({"n_boot": 200.5}, "n_boot must be an integer of at least 10"),
        ({"seed": -1}, "seed must be 0 or more"),
        ({"seed": 1.5}, "seed must be an integer"),
        ({"seed": True}, "seed must be an integer"),
        # not numbers: a ConfigError too, not the TypeError / ValueError of comparing them
        ({"level": "0.9"}, "level must be in \\[0.5, 1\\)"),
        ({"level": None}, "level must be in \\[0.5, 1\\)"),
        ({"level": float("nan")}, "level must be in \\[0.5, 1\\)"),
        ({"level": np.bool_(True)}, "level must be in \\[0.5, 1\\)"),
        ({"n_boot": float("nan")}, "n_boot must be an integer of at least 10"),
        ({"n_boot": float("inf")}, "n_boot must be an integer of at least 10"),
        ({"n_boot": None}, "n_boot must be an integer of at least 10"),
        ({"n_boot": "100"}, "n_boot must be an integer of at least 10"),
        ({"n_boot": True}, "n_boot must be an integer of at least 10"),
    ],
)
def test_a_bad_value_is_refused_as_it_is_made(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Resampling(**kwargs)


@pytest.mark.parametrize("level", [95, 0.3, 0.0])
def test_the_library_and_the_command_line_say_one_rule_for_a_level(level: float) -> None:
    """Before, ``Resampling(level=95)`` said "level must be between 0 and 1" and took 0.3,
    while ``--level`` (and ``recuse.toml``, ``check_interval_level``) refused both with
    "must be in [0.5, 1)": one setting, two rules. Now the one rule, said the same way."""
    with pytest.raises(SettingError) as lib:
        Resampling(level=level)
    assert str(lib.value) == f"level must be in [0.5, 1) (e.g. 0.9), got {level!r}"
    with pytest.raises(ConfigError) as cli:
        check_interval_level(level)
    assert str(cli.value) == lib.value.named("--level").args[0]
    assert Resampling(level=0.5).level == 0.5  # the bound itself is kept


def test_the_bounds_are_accepted_and_the_value_is_frozen() -> None:
    r = Resampling(level=0.999, n_boot=10, seed=np.int64(3))  # type: ignore[arg-type]
    assert (r.level, r.n_boot, r.seed) == (0.999, 10, 3)
    with pytest.raises(AttributeError):
        r.level = 0.5  # type: ignore[misc]
    assert Resampling() == Resampling(level=0.9, n_boot=N_BOOT, seed=0)


def test_one_bound_on_resamples_for_the_library_the_cli_and_the_audit() -> None:
    """Before: ``Resampling(n_boot=10**9)`` was accepted (the bootstrap would then ask for
    tens of GB per estimate) while ``recuse audit`` and ``recuse metrics pairs`` refused
    more than 1,000,000, each with its own check. One constant, checked in one place
    (``check_n_boot``): the same bound and the same memory arithmetic (32 bytes a
    resample: 10**9 resamples are about 30 GiB) everywhere."""
    assert options.MAX_N_BOOT is bootstrap.MAX_N_BOOT == 1_000_000
    assert Resampling(n_boot=MAX_N_BOOT).n_boot == MAX_N_BOOT  # the bound itself is kept
    with pytest.raises(SettingError) as err:
        Resampling(n_boot=10**9)
    assert str(err.value).startswith("n_boot must be at most 1,000,000: the bootstrap would "
                                     f"need about {10**9 * 32 / 2**30:,.0f} GiB")  # fmt: skip
    assert f"{10**9 * 32 / 2**30:,.0f}" == "30"
    with pytest.raises(ConfigError, match=r"^n_boot \(--n-boot\) = 1000000000: must be at most"):
        read_options({"n_boot": 10**9}, "api")
    with pytest.raises(ConfigError, match=r"^--n-boot = 1000001: must be at most 1,000,000"):
        AuditOptions(n_boot=MAX_N_BOOT + 1)


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"level": 1.5}, "--level = 1.5: must be in [0.5, 1), e.g. 0.9"),
        ({"n_boot": 5}, "--n-boot = 5: must be an integer of at least 10, e.g. 2000"),
        ({"seed": -2}, "--seed = -2: must be 0 or more"),
        ({"seed": 0.5}, "--seed = 0.5: must be an integer, e.g. 0"),
    ],
)
def test_a_bad_setting_is_said_of_its_flag_the_one_way(kwargs: dict[str, Any], said: str) -> None:
    """``named_settings``: the library's rule, said of the flag (or of a file's key); the
    library's own sentence is unchanged outside it."""
    with pytest.raises(SettingError) as plain:
        Resampling(**kwargs)
    assert str(plain.value).startswith(f"{next(iter(kwargs))} must be")
    with pytest.raises(ConfigError) as named, named_settings():
        Resampling(**kwargs)
    assert str(named.value) == said and not isinstance(named.value, SettingError)
    with pytest.raises(ConfigError) as keyed, named_settings(lambda s: f"recuse.toml: [audit] {s}"):
        Resampling(**kwargs)
    assert str(keyed.value) == said.replace(
        said.split(" = ")[0], f"recuse.toml: [audit] {next(iter(kwargs))}"
    )


def test_audit_options_hand_their_settings_on() -> None:
    o = AuditOptions(level=0.8, n_boot=300, seed=7)
    assert o.resampling == Resampling(level=0.8, n_boot=300, seed=7)


def _both_orders(n_prompts: int = 30, per_prompt: int = 2, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = n_prompts * per_prompt
    return pd.DataFrame(
        {
            "item_id": [f"i{k}" for k in range(n)],
            # labels that do not sort as they were made: the bootstrap sorts them
            "prompt_id": [f"p{(7 * (k // per_prompt)) % n_prompts}" for k in range(n)],
            "model_a": "a",
            "model_b": "b",
            "judge": "j",
            "human": np.nan,
            "p_a_first": rng.uniform(0.3, 1.0, n),
            "p_a_second": rng.uniform(0.0, 0.7, n),
            "p_a": np.nan,
        }
    )


def test_a_metric_draws_the_resamples_its_boot_names() -> None:
    """The first-position rate at ``boot=Resampling(level=0.8, n_boot=300, seed=11)``
    equals the BCa interval worked out here from the same draws: the counts of the
    sorted prompts from ``default_rng(11)``, each replicate the weighted mean of
    ``(p_a_first + 1 - p_a_second) / 2``, the jackknife over prompts for ``a``."""
    t = _both_orders()
    boot = Resampling(level=0.8, n_boot=300, seed=11)
    r = first_position_rate(t, boot=boot, min_n=1)

    hit = ((t["p_a_first"] + 1.0 - t["p_a_second"]) / 2.0).to_numpy()
    labels = t["prompt_id"].to_numpy()
    prompts = np.unique(labels)  # sorted
    code = np.searchsorted(prompts, labels)
    w = resample_counts(len(prompts), 300, np.random.default_rng(11))[:, code]
    reps = (w * hit).sum(axis=1) / w.sum(axis=1)
    theta = hit.mean()
    jack = np.array([hit[labels != p].mean() for p in prompts])
    d = jack.mean() - jack
    a = (d**3).sum() / (6 * (d**2).sum() ** 1.5)
    z0 = norm.ppf(np.mean(reps < theta))  # continuous probabilities: no ties
    # the tails' normal quantiles expanded for the 30 prompts (Hesterberg): √(30/29) t_29
    lo, hi = (
        np.quantile(reps, norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z))))
        for z in np.sqrt(30 / 29) * student_t.ppf([0.1, 0.9], 29)
    )
    assert r.estimate == pytest.approx(theta, abs=1e-12)
    assert (r.ci_low, r.ci_high) == pytest.approx((lo, hi), abs=1e-12)
    # the standard error the expanded interval implies: the spread times its factor
    factor = np.sqrt(30 / 29) * student_t.ppf(0.9, 29) / norm.ppf(0.9)
    assert r.std_error == pytest.approx(reps.std(ddof=1) * factor, abs=1e-12)
    assert (r.level, r.n_boot, r.n_clusters) == (0.8, 300, 30)
    assert "80% BCa interval" in r.method and "(300 resamples)" in r.method
    assert "Hesterberg" in r.method

    # each field is used: another seed draws other resamples, another level other ends
    other_seed = first_position_rate(t, boot=Resampling(level=0.8, n_boot=300, seed=12), min_n=1)
    assert (other_seed.ci_low, other_seed.ci_high) != (r.ci_low, r.ci_high)
    wider = first_position_rate(t, boot=Resampling(level=0.95, n_boot=300, seed=11), min_n=1)
    assert wider.ci_low < r.ci_low and wider.ci_high > r.ci_high


def test_numbers_are_kept_as_python_numbers() -> None:
    """``Resampling(n_boot=100.0)`` was accepted and then failed inside the bootstrap
    ('float' object cannot be interpreted as an integer); NumPy numbers were kept as
    given (a level of np.float32 reached the results). Whole floats and NumPy numbers
    are stored as Python ones, and the bootstrap runs with them."""
    r = Resampling(level=np.float64(0.8), n_boot=100.0, seed=np.uint64(5))  # type: ignore[arg-type]
    assert (r.level, r.n_boot, r.seed) == (0.8, 100, 5)
    assert (type(r.level), type(r.n_boot), type(r.seed)) == (float, int, int)
    t = _both_orders()
    given = first_position_rate(t, boot=r, min_n=1)
    plain = first_position_rate(t, boot=Resampling(level=0.8, n_boot=100, seed=5), min_n=1)
    assert (given.ci_low, given.ci_high) == (plain.ci_low, plain.ci_high)
    assert type(given.level) is float and type(given.n_boot) is int

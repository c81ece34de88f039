"""Probe effects: how far an edit moves the judge toward the treated answer, beyond
what a no-op edit (the placebo) moves it.

Per judge, probe and base pair: ``s_x`` = the judge's share of the win given to the
treated answer in version ``x`` (``p_a``, or ``1 − p_a`` when b is treated), averaged
over the presentation orders judged in *every* version the comparison reads (the
original, the placebo and the edit): a version whose verdict in one order is unparsed
or failed would otherwise be read in the other order alone and compared with versions
read in both, so a position-bound judge's slot preference would pass for an effect.
A ``p_a`` given without its orders counts as one order of its own. The effect is

    effect = mean over base pairs of (s_probe − s_placebo)

(= the shift from the original minus the placebo's shift from the original: the
original cancels); 0 = the probe moves the judge no more than a no-op edit. The
components give the flip rates — the share of base pairs whose pick (s ≷ ½) differs
from the original's — for the probe and for the placebo. The interval is the
project's prompt-clustered bootstrap, paired (both versions of a pair resampled
together), BCa. The effect is a sparse rate: only the base pairs whose share differs
between the two versions compared move it off 0; where none does, the resamples cannot
vary (the bootstrap read [0, 0]) and the interval is the exact bound on the share of
prompts holding such a pair (:func:`~recuse.metrics.estimate.unseen_span` with span 2: a
pair's difference lies in −1..+1). So where pairs move but cancel on each prompt holding
one (+1 and −1: the bootstrap read 0 [0, 0] with "no variation"): the interval is the
exact bound for the ``k`` of ``G`` prompts that hold one
(:func:`~recuse.metrics.estimate.moved_span`, ``interval_rule`` "widened", as a
position rate's whose flips balance on each prompt). The bootstrap's interval alone held
a planted effect of 0.048 (a pick judge; an edit that wins, on a prompt, a share drawn
from U(0, 0.2) of the pairs lost in the original; 2 base pairs a prompt) in 0.79 of 300
tables at 20 prompts — of zero width at 0 in 12% of them, where no pair moved; with the
exact bound there, 0.91 (0.96 at 30 prompts, 0.91 at 40; at an effect of 0.14, 0.87,
0.92 and 0.91). The position rates' widening by Student's t on the moving prompts
(:func:`~recuse.metrics.estimate.moved_span`) held it 0.99 at 2.4 times the width, so it
is not used (``MetricSpec.widens``); the expanded BCa ends held it 0.94 / 0.91 at 20
prompts (``benchmarks/metric_coverage.py``, section ``probes``).

Where the edit moves pairs both ways (some toward the treated answer, some away) on few
prompts, the effect is a difference of two sparse counts, and the BCa interval held a
planted truth 0.81–0.91 of the time at 10–40 prompts (0.861 pooled; section
``probes-twoway``). So wherever some prompts hold a moved pair and the interval has
width, it is the BCa interval expanded for the prompts (a share ``τ = min(1, 2 (1 − m /
G))`` of the way where more than half of them move: 0 where all do,
:func:`~recuse.metrics.estimate.expansion_share`) and, as the pairs moved both ways
(some base pair's share rose, another's fell), padded by up to two more effective
prompts' variance (:func:`~recuse.metrics.estimate.padded_span`: each end's distance
from the estimate times ``√(1 + 2 w τ / ν)``, ``ν`` the prompts' effective number, ``w
= min(1, 8 r)`` with ``r`` the share of the moved pairs' squared moves that the fewer
way carries: :func:`~recuse.metrics.estimate.padding_weight`; ``interval_rule``
"widened", the method naming it), so one small pair moved back, or one more prompt
moving past half, changes the interval a little, not by a leap; its p-value inverts the
ends it shows (:func:`~recuse.metrics.estimate.padded_p_value`). Fully padded (``w`` = 1
wherever a pair moved back): 0.887–0.940 there, 0.904 pooled, and 0.894 pooled on 12
designs it was not tuned on (``benchmarks/probe_heldout.py``); weighted, the same tables
(150 a cell) 0.911 / 0.894 against the full padding's 0.909 / 0.893. An effect moved one
way only on at most half the prompts is expanded, not padded (section ``probes``: 0.927
/ 0.893).

With both model rewrites (:mod:`recuse.probes.rewrite`), the verbosity contrast
(metric ``probe_verbosity``, Saito et al. §4's same-source comparison) is

    verbosity = mean over base pairs of (s_verbose − s_concise)

0 = the judge gives a verbose rewrite of an answer the same share as a concise one;
its components are the share of base pairs whose pick differs between the two, the
placebo's flip rate, and the mean words of the two rewrites (so a reader sees that
the rewrites do differ in length).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import InputError
from recuse.files import words_in
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, ratio
from recuse.metrics.estimate import MetricSpec, clusters_of, run_specs
from recuse.metrics.result import MetricResult, Skipped
from recuse.metrics.verdicts import TIE_TOL, require_pairs
from recuse.probe_edits import DESCRIPTIONS as DESCRIPTIONS
from recuse.probe_edits import PROBES, REWRITES
from recuse.probe_edits import VERBOSITY as VERBOSITY
from recuse.probe_tables import ORIGINAL, PROBE_COLUMNS, check_probe_table

__all__ = ["COMPONENTS", "PROBE_COLUMNS", "VERBOSITY", "probe_effects"]


#: what the components of a probe result are (the report's table columns)
COMPONENTS = {
    "flip_rate": "share of base pairs whose pick (share of the win above or below ½) "
    "differs with the edit from the original's (verbose vs concise: between the two "
    "rewrites)",
    "placebo_flip_rate": "the same share for the placebo (a trailing newline)",
    "words_concise": "mean words of the concise rewrites",
    "words_verbose": "mean words of the verbose rewrites",
}


def _pick(s: NDArray[np.float64]) -> NDArray[np.float64]:
    return np.where(s > 0.5 + TIE_TOL, 1.0, np.where(s < 0.5 - TIE_TOL, 0.0, 0.5))


#: what the prompts that could move a probe's effect hold (``MetricSpec.movers``)
MOVERS = (
    "holding a base pair whose treated answer's share differs between the two versions compared"
)


def _unmoved(t: NDArray[np.float64]) -> str | None:
    """Why the resamples of a probe's effect cannot vary, from a group's totals (the last:
    the base pairs whose share differs between the two versions compared), or None."""
    pairs, moved = int(t[1]), t[-1]
    if pairs == 0 or moved > 0:
        return None
    return (
        f"the treated answer's share is the same in the two versions compared on all "
        f"{pairs:,} base pairs: the resamples cannot vary, so the interval is the one the "
        "prompts allow — the share of them holding a pair the edit could move, none seen "
        "(its exact bound at the interval's level); more prompts narrow it"
    )


def _back_share(t: NDArray[np.float64]) -> float:
    """The share of a group's moving variance that the way fewer of its pairs moved
    carries, ``r = min(S₊, S₋) / (S₊ + S₋)``, from its totals (the fifth and fourth last:
    the sums of squared moves of the base pairs whose share rose with the edit, and of
    those whose share fell); 0 where they moved one way only or not at all. The effect's
    interval is padded by :func:`~recuse.metrics.estimate.padding_weight` of it
    (:func:`~recuse.metrics.estimate.padded_span`).

    >>> t = np.array([0.0, 8.0, 4.0, 0.0025, 4, 1, 5])  # 4 moves of 1, one of −0.05
    >>> round(_back_share(t), 6)  # 0.0025 / 4.0025
    0.000625
    """
    up, down = float(t[-5]), float(t[-4])
    if not (up > 0 and down > 0):
        return 0.0
    return min(up, down) / (up + down)


def _components(t: NDArray[np.float64]) -> dict[str, float]:
    t = t[:-5]  # the last five: the squared moves toward, away; the base pairs moved
    # toward, away, either (sparse rate)
    n = t[1]
    names = ("flip_rate", "placebo_flip_rate", "words_verbose", "words_concise")
    return {k: float(t[i] / n) if n else float("nan") for i, k in enumerate(names[: len(t) - 2], 2)}


def probe_effects(
    table: pd.DataFrame,
    *,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> tuple[list[MetricResult], list[Skipped]]:
    """The effect of every probe in ``table`` for every judge (metric ``probe_<name>``)."""
    check_min_n(min_n)
    missing = [c for c in PROBE_COLUMNS if c not in table.columns]
    if missing:
        raise InputError(
            f"not a probe table: no {', '.join(missing)} column",
            fix="run `recuse probe` to make one",
        )
    clusters_of(table)  # no prompt_id, or a row without one: the error that says so
    t = check_probe_table(require_pairs(table))
    t = t[t["judge"].notna() & t["probe"].notna()].copy()  # plain pairs are not probed
    on_a = t["treated"].astype(str).to_numpy() == "a"
    orders = _order_verdicts(t)
    has_texts = {"response_a", "response_b"} <= set(t.columns)
    if has_texts:
        treated_text = t["response_a"].where(on_a, t["response_b"])
        t["_words"] = treated_text.map(lambda x: words_in(x) if isinstance(x, str) else np.nan)
    rows, row_of, version_of, version_names = _base_pairs(t)

    def wide(values: NDArray[np.float64]) -> NDArray[np.float64]:
        """(base pairs × versions): each row's value in its cell (one row a cell:
        :func:`check_probe_table`), NaN where a version has no row."""
        out = np.full((len(rows), len(version_names)), np.nan)
        out[row_of, version_of] = values
        return out

    per_order = [wide(np.where(on_a, p, 1.0 - p)) for p in orders]
    words = wide(t["_words"].to_numpy(float)) if has_texts else None
    clusters = t["prompt_id"].iloc[rows].reset_index(drop=True)
    judges = t["judge"].iloc[rows].astype(str)
    labels = tuple(sorted(set(judges)))
    codes = pd.Categorical(judges, categories=labels).codes.astype(np.intp)
    where = {str(v): i for i, v in enumerate(version_names)}
    cols = set(where)

    def col(name: str, frame: NDArray[np.float64] | None) -> NDArray[np.float64]:
        if frame is not None and name in where:
            return frame[:, where[name]]
        return np.full(len(rows), np.nan)

    def by_order(name: str) -> NDArray[np.float64]:
        """(base pairs × orders): the treated answer's share in version ``name``."""
        return np.column_stack([col(name, frame) for frame in per_order])

    specs = []

    def add(name: str, treat: str, control: str,
            extra: list[NDArray[np.float64]], method: str) -> None:  # fmt: skip
        versions_read = (treat, control, "placebo", ORIGINAL)
        share = _same_orders({v: by_order(v) for v in versions_read})
        treat_s, control_s, s_0, s_o = (share[v] for v in versions_read)
        ok = np.isfinite(treat_s)  # the versions share at least one judged order
        used = ["concise", "verbose"] if name == VERBOSITY else [name]
        versions = ", ".join([ORIGINAL, "placebo", *used[:-1]]) + f" and {used[-1]}"
        values = np.column_stack(
            [
                np.where(ok, treat_s - control_s, 0.0),
                ok.astype(float),
                np.where(ok, _pick(treat_s) != _pick(control_s if name == VERBOSITY else s_o), 0.0),
                np.where(ok, (_pick(s_0) != _pick(s_o)).astype(float), 0.0),
                *[np.where(ok, np.nan_to_num(x), 0.0) for x in extra],
                np.where(ok & (treat_s - control_s > TIE_TOL), (treat_s - control_s) ** 2, 0.0),
                np.where(ok & (treat_s - control_s < -TIE_TOL), (treat_s - control_s) ** 2, 0.0),
                np.where(ok, treat_s - control_s > TIE_TOL, False).astype(float),
                np.where(ok, treat_s - control_s < -TIE_TOL, False).astype(float),
                np.where(ok, np.abs(treat_s - control_s) > TIE_TOL, False).astype(float),
            ]
        )
        stat = GroupedStatistic(
            name=f"probe_{name}", values=values, group=np.where(ok, codes, -1), labels=labels,
            combine=ratio, required=((1, f"base pairs judged in the {versions} versions"),),
            boot_k=2, sparse=True,
        )  # fmt: skip
        specs.append(
            MetricSpec(
                f"probe_{name}",
                stat,
                method,
                _components,
                constant=_unmoved,
                unseen=True,
                span=2.0,
                movers=MOVERS,
                widens=False,
                padded=_back_share,
            )
        )

    for name in [n for n in {**PROBES, **REWRITES} if n != "placebo" and n in cols]:
        add(name, name, "placebo", [], (
            f"probe {name} ({DESCRIPTIONS[name]}): mean over base pairs of the treated "
            "answer's share of the win with the edit minus with the placebo edit"
        ))  # fmt: skip
    if {"concise", "verbose"} <= cols:
        extra = [col("verbose", words), col("concise", words)] if has_texts else []
        add(VERBOSITY, "verbose", "concise", extra, (
            f"probe {VERBOSITY} ({DESCRIPTIONS[VERBOSITY]}): mean over base pairs of the "
            "treated answer's share of the win as the verbose rewrite minus as the concise "
            "rewrite of the same source (Saito et al. §4)"
        ))  # fmt: skip
    if not specs:
        raise InputError("the probe table holds no probe besides the placebo and the original")
    results, skipped = run_specs(specs, clusters, boot=boot, min_n=min_n)
    return results, [_why(s, t) for s in skipped]


def _base_pairs(
    t: pd.DataFrame,
) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.intp], pd.Index]:
    """The (judge, base pair)s of ``t`` sorted by judge then base pair: the position of
    each one's first row, then each row's (judge, base pair) and version as positions in
    those and in the sorted versions, and the sorted versions.

    >>> t = pd.DataFrame({"judge": ["j", "i", "j"], "base_item": ["x", "y", "x"],
    ...                   "probe": ["original", "placebo", "placebo"]})
    >>> first, row_of, version_of, versions = _base_pairs(t)
    >>> first.tolist(), row_of.tolist(), version_of.tolist(), list(versions)
    ([1, 0], [1, 0, 1], [0, 1, 1], ['original', 'placebo'])
    """
    judge, _ = pd.factorize(t["judge"], sort=True)
    base, bases = pd.factorize(t["base_item"], sort=True)
    _, first, row_of = np.unique(
        judge.astype(np.int64) * len(bases) + base, return_index=True, return_inverse=True
    )
    version_of, versions = pd.factorize(t["probe"], sort=True)
    return first, row_of.astype(np.intp), version_of.astype(np.intp), pd.Index(versions)


def _order_verdicts(t: pd.DataFrame) -> list[NDArray[np.float64]]:
    """P(a better) per presentation order: ``p_a_first``, ``p_a_second``, and ``p_a``
    for rows that give a verdict without its orders (an order of its own)."""
    present = [c for c in ("p_a_first", "p_a_second") if c in t.columns]
    unordered = t[present].isna().all(axis=1)
    return [t[c].to_numpy(float) for c in present] + [t["p_a"].where(unordered).to_numpy(float)]


def _same_orders(versions: dict[str, NDArray[np.float64]]) -> dict[str, NDArray[np.float64]]:
    """Each version's share averaged over the orders judged in all ``versions`` (NaN
    for a base pair where they share none).

    >>> both, one = np.array([[1.0, 0.0]]), np.array([[np.nan, 0.0]])
    >>> {k: v.tolist() for k, v in _same_orders({"x": both, "y": one}).items()}
    {'x': [0.0], 'y': [0.0]}
    """
    common = np.logical_and.reduce([np.isfinite(v) for v in versions.values()])
    n = common.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            k: np.where(n > 0, np.where(common, v, 0.0).sum(axis=1) / n, np.nan)
            for k, v in versions.items()
        }


def _why(skip: Skipped, t: pd.DataFrame) -> Skipped:
    """``skip`` with the versions behind it named: those the judge has no rows of, or
    no verdict in (every one unparsed or failed)."""
    name = skip.metric.removeprefix("probe_")
    needed = [ORIGINAL, "placebo", *(["concise", "verbose"] if name == VERBOSITY else [name])]
    rows = t[t["judge"].astype(str) == skip.judge]
    gaps = []
    for version in needed:
        have = rows[rows["probe"] == version]
        if have.empty:
            gaps.append(f"no {version} rows")
        elif not np.isfinite(have["p_a"].to_numpy(float)).any():
            gaps.append(f"no verdict in its {len(have)} {version} row(s): unparsed or failed")
    return replace(skip, reason=f"{skip.reason} ({'; '.join(gaps)})") if gaps else skip

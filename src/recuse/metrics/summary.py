"""Every pairwise bias metric for every judge at once, from one shared bootstrap.

:func:`pairwise_bias` computes self-preference (EO and DP), family preference (EO
and DP, when a roster or family mapping is given), verbosity (Eq. 6, Eq. 5 and the
prefer-longer gap), position consistency, flip rate and first-position rate for each
judge, plus the verbosity curves (Figures 3–5). All statistics are reduced to per-prompt sums and
resampled together (:mod:`recuse.metrics.bootstrap`), so the whole set costs one
matrix product per chunk of resamples. Results equal those of the single-metric
functions with the same options and seed when every judge judged the same prompts.

A (metric, judge) that cannot be estimated (a group under ``min_n`` pairs, no
length information, no family mapping) is listed in ``skipped`` with the reason,
never given a number.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.choices import METRICS as METRICS
from recuse.errors import ConfigError, InputError, RecuseError
from recuse.metrics.bootstrap import GroupedStatistic, Resampling, check_min_n, cluster_bootstrap
from recuse.metrics.competence import (
    CALIBRATED,
    CALIBRATED_RUNGS,
    FAMILY_CALIBRATED,
    calibrated_specs,
)
from recuse.metrics.estimate import (
    MetricSpec,
    clusters_of,
    items_of,
    to_results,
    unlabelled_judges,
    unusable_verdicts,
)
from recuse.metrics.position import consistency_spec, first_position_spec, flip_spec
from recuse.metrics.result import MetricResult, Skipped, results_frame
from recuse.metrics.self_preference import (
    Criterion,
    Families,
    Relation,
    check_families,
    favored_side,
    preference_spec,
)
from recuse.metrics.verbosity import (
    Tokenizer,
    Unit,
    VerbosityKind,
    alignment_xy,
    bin_edges,
    both_orders_score,
    curve_statistic,
    curve_table,
    longer_gap_spec,
    relative_ab,
    response_lengths,
    same_source,
    verbosity_spec,
)
from recuse.metrics.verdicts import (
    HumanTies,
    JudgeTies,
    Orders,
    Verdict,
    check_modes,
    judge_codes,
    orders_as_set,
    require_pairs,
    use_orders,
)
from recuse.reference import ReferenceKind, reword

__all__ = ["CURVES", "METRICS", "PairwiseBias", "pairwise_bias"]

FloatArray = NDArray[np.float64]
CURVES = ("human_alignment_curve", "judge_verbosity_curve", "human_verbosity_curve")


def _json_value(v: Any) -> Any:
    """NaN (no value) and inf (an open bin edge) become None; numpy scalars plain Python."""
    if isinstance(v, float | np.floating):
        return float(v) if np.isfinite(v) else None
    if isinstance(v, np.integer):
        return int(v)
    return v


@dataclass(frozen=True)
class PairwiseBias:
    """Results of :func:`pairwise_bias`: estimates, skipped (metric, judge) pairs, curves."""

    results: tuple[MetricResult, ...]
    skipped: tuple[Skipped, ...]
    curves: Mapping[str, pd.DataFrame] = field(default_factory=dict)
    #: seconds spent on each metric and curve (building its per-row terms, and its share
    #: of the bootstrap: see :func:`~recuse.metrics.bootstrap.cluster_bootstrap`)
    seconds: Mapping[str, float] = field(default_factory=dict)

    def get(self, metric: str, judge: str | None) -> MetricResult:
        """The result of ``metric`` for ``judge``; a skipped or unknown one raises KeyError."""
        for r in self.results:
            if r.metric == metric and r.judge == judge:
                return r
        for s in self.skipped:
            if s.metric == metric and s.judge == judge:
                raise KeyError(f"{metric} for {judge!r} was skipped: {s.reason}")
        raise KeyError(f"no {metric} result for {judge!r}")

    def for_reference(self, kind: ReferenceKind) -> PairwiseBias:
        """These results in the words of ``kind``'s labels (:func:`recuse.reference.reword`):
        each method, warning, count's name and skip reason, which the metrics write for
        human labels; the numbers, metric names and components' keys as they are.
        Itself for human labels."""
        if kind == "human":
            return self

        def said(text: str) -> str:
            return reword(text, kind)

        results = tuple(
            replace(
                r,
                method=said(r.method),
                warnings=tuple(said(w) for w in r.warnings),
                counts={said(k): v for k, v in r.counts.items()},
            )
            for r in self.results
        )
        skipped = tuple(replace(k, reason=said(k.reason)) for k in self.skipped)
        return replace(self, results=results, skipped=skipped)

    def to_frame(self) -> pd.DataFrame:
        return results_frame(self.results)

    def to_dict(self) -> dict[str, Any]:
        curves = {
            name: [
                {k: _json_value(v) for k, v in row.items()}
                for row in frame.to_dict(orient="records")
            ]
            for name, frame in self.curves.items()
        }
        return {
            "results": [r.to_dict() for r in self.results],
            "skipped": [s.to_dict() for s in self.skipped],
            "curves": curves,
        }


@contextmanager
def _timed(into: dict[str, float], name: str) -> Iterator[None]:
    """Add the seconds the block takes to ``into[name]``."""
    start = time.perf_counter()
    try:
        yield
    finally:
        into[name] = into.get(name, 0.0) + time.perf_counter() - start


def pairwise_bias(
    pairs: pd.DataFrame,
    families: Families | None = None,
    *,
    judges: str | Sequence[str] | None = None,
    metrics: Sequence[str] | None = None,
    curves: bool = True,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    bin_width: float = 0.2,
    max_rel: float = 2.0,
    boot: Resampling = Resampling(),
    min_n: int = 5,
    orders: Orders = "both",
    selves: Mapping[str, str] | None = None,
    orders_said: str | None = None,
) -> PairwiseBias:
    """All pairwise bias metrics (``metrics``, default :data:`METRICS`) for ``judges``.

    ``self_preference_calibrated`` is
    :func:`~recuse.metrics.competence.calibrated_self_preference` (it reads both
    orders' verdicts as they are, whatever ``verdict``); with ``families`` its
    competence model has a family term beside the own term, and
    ``family_preference_calibrated`` is that model's family preference. The metrics of
    :data:`~recuse.metrics.competence.CALIBRATED_RUNGS` are the calibrated
    estimate's parts by the human label of the judge's own pairs (they add up to it).

    ``orders``: the verdicts of both presentation orders averaged (default), or of the
    first or the second only (:func:`~recuse.metrics.verdicts.use_orders`); the
    position metrics compare the two orders, so they need ``"both"``. ``orders_said``:
    ``orders`` as the user set it (:func:`recuse.options.option_as_set`), in the
    position metrics' skip reason and the status column (default
    :func:`~recuse.metrics.verdicts.orders_as_set`'s).

    Options mean what they mean in the single-metric functions
    (:func:`~recuse.metrics.self_preference.self_preference`,
    :func:`~recuse.metrics.verbosity.verbosity_bias`,
    :func:`~recuse.metrics.position.position_consistency`, ...); the curves use the
    same ``verdict``. ``families`` (a roster or ``{model: family}``) enables the
    family metrics; ``selves`` (:meth:`~recuse.roster.Roster.self_map`) says what
    counts as the judge itself (default: the same id).
    """
    check_min_n(min_n)
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    wanted = list(METRICS if metrics is None else metrics)
    unknown = [m for m in wanted if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown metric {unknown[0]!r} — choose from {', '.join(METRICS)}")
    check_families(families)
    pairs = use_orders(require_pairs(pairs), orders, said=orders_said)
    codes, labels = judge_codes(pairs, judges)
    specs: list[MetricSpec] = []
    skipped: list[Skipped] = []
    built: dict[str, float] = {}  # seconds building each metric's terms
    unfit: dict[str, str] = {}  # calibrated: judges that could not be fitted, and why
    relations: tuple[tuple[Relation, Criterion], ...] = (
        ("self", "eo"), ("self", "dp"), ("family", "eo"), ("family", "dp"),
    )  # fmt: skip
    sides: dict[str, NDArray[np.int8]] = {}
    for relation, kind in relations:
        name = f"{relation}_preference_{kind}"
        if name not in wanted:
            continue
        if relation == "family" and families is None:
            skipped += [Skipped(name, j, "no roster or family mapping given") for j in labels]
            continue
        if relation not in sides:
            try:
                sides[relation] = favored_side(
                    pairs, relation=relation, families=families, selves=selves
                )
            except InputError as exc:  # a model without a family: skip, say why
                skipped += [Skipped(name, j, str(exc)) for j in labels]
                continue
        with _timed(built, name):
            spec = preference_spec(
                pairs, codes, labels, relation=relation, kind=kind, families=families,
                verdict=verdict, human_ties=human_ties, judge_ties=judge_ties,
                side=sides[relation],
            )  # fmt: skip
        specs.append(spec)

    if {CALIBRATED, FAMILY_CALIBRATED, *CALIBRATED_RUNGS} & set(wanted):
        if "self" not in sides:
            sides["self"] = favored_side(pairs, relation="self", selves=selves)
        fam_side = sides.get("family")
        family_problem = "no roster or family mapping given"
        if fam_side is None and families is not None:
            try:
                fam_side = favored_side(pairs, relation="family", families=families, selves=selves)
            except InputError as exc:
                family_problem = str(exc)
        with _timed(built, CALIBRATED):
            cal_specs, problems = calibrated_specs(
                pairs, codes, labels, side=sides["self"], family_side=fam_side,
                rungs=any(r in wanted for r in CALIBRATED_RUNGS),
            )  # fmt: skip
        cal_specs = [s for s in cal_specs if s.metric in wanted]
        specs += cal_specs
        no_verdicts = unusable_verdicts(pairs, codes, labels)
        no_labels = unlabelled_judges(pairs, codes, labels)
        unfit = {j: no_verdicts.get(j) or no_labels.get(j, why) for j, why in problems.items()}
        skipped += [Skipped(s.metric, j, why) for s in cal_specs for j, why in unfit.items()]
        if FAMILY_CALIBRATED in wanted and fam_side is None:
            skipped += [Skipped(FAMILY_CALIBRATED, j, family_problem) for j in labels]

    lengths: tuple[FloatArray, FloatArray, str] | None = None
    length_problem = ""
    try:
        lengths = response_lengths(pairs, unit=unit, tokenizer=tokenizer)
    except RecuseError as exc:
        length_problem = str(exc)
    kinds: tuple[tuple[str, VerbosityKind], ...] = (
        ("verbosity_bias", "signed"), ("verbosity_deviation", "absolute"),
    )  # fmt: skip
    for name, vkind in kinds:
        if name not in wanted:
            continue
        if lengths is None:
            skipped += [Skipped(name, j, length_problem) for j in labels]
            continue
        la, lb, how = lengths
        specs.append(
            verbosity_spec(
                pairs, codes, labels, la, lb, kind=vkind, length_note=how, verdict=verdict,
                human_ties=human_ties, judge_ties=judge_ties,
            )
        )  # fmt: skip
    if "verbosity_longer_gap" in wanted:
        if lengths is None:
            skipped += [Skipped("verbosity_longer_gap", j, length_problem) for j in labels]
        else:
            la, lb, how = lengths
            specs.append(
                longer_gap_spec(
                    pairs, codes, labels, la, lb, length_note=how, verdict=verdict,
                    human_ties=human_ties, judge_ties=judge_ties,
                )
            )  # fmt: skip
    position = ("position_consistency", "flip_rate", "first_position_rate")
    if orders != "both":
        why = f"compares the two presentation orders; {orders_as_set(orders, orders_said)} uses one"
        skipped += [Skipped(m, j, why) for m in position if m in wanted for j in labels]
    else:
        if "position_consistency" in wanted:
            specs.append(consistency_spec(pairs, codes, labels))
        if "flip_rate" in wanted:
            specs.append(flip_spec(pairs, codes, labels))
        if "first_position_rate" in wanted:
            specs.append(first_position_spec(pairs, codes, labels, verdict=verdict))

    curve_stats: list[tuple[str, GroupedStatistic, bool]] = []
    edges = bin_edges(bin_width, max_rel)
    if curves and lengths is not None:
        la, lb, _how = lengths
        x, v = alignment_xy(pairs, la, lb, verdict=verdict, judge_ties=judge_ties)
        stat = curve_statistic("human_alignment_curve", x, v, codes, labels, edges)
        curve_stats.append(("human_alignment_curve", stat, True))
        same = np.where(same_source(pairs), codes, -1)
        if (same >= 0).any():
            stat = curve_statistic(
                "judge_verbosity_curve", relative_ab(la, lb), both_orders_score(pairs), same,
                labels, edges,
            )  # fmt: skip
            curve_stats.append(("judge_verbosity_curve", stat, True))
        # Figure 4: each labelled item once (its first row), whatever the judges.
        labelled = pairs["human"].notna().to_numpy()
        item = items_of(pairs).where(pd.Series(labelled, index=pairs.index))
        first_labelled = labelled & ~item.duplicated(keep="first").to_numpy()
        y = 2.0 * pairs["human"].to_numpy(float) - 1.0
        hcodes = np.where(first_labelled, 0, -1).astype(np.intp)
        stat = curve_statistic(
            "human_verbosity_curve", relative_ab(la, lb), y, hcodes, (None,), edges
        )
        if (stat.group >= 0).any():
            curve_stats.append(("human_verbosity_curve", stat, False))

    seconds = dict(built)
    estimates = cluster_bootstrap(
        [s.stat for s in specs] + [c[1] for c in curve_stats],
        clusters_of(pairs),
        boot=boot,
        min_n=min_n,
        seconds=seconds,
    )
    results, more_skipped = to_results(
        specs,
        estimates[: len(specs)],
        boot=boot,
        unusable=unusable_verdicts(pairs, codes, labels),
        unlabelled=unlabelled_judges(pairs, codes, labels),
    )
    # a judge the calibrated model could not be fitted for has its one reason above
    more_skipped = [
        x
        for x in more_skipped
        if not (x.metric in (CALIBRATED, FAMILY_CALIBRATED, *CALIBRATED_RUNGS) and x.judge in unfit)
    ]
    curve_frames = {
        name: curve_table(stat, est, edges, with_judge=with_judge, level=boot.level)
        for (name, stat, with_judge), est in zip(curve_stats, estimates[len(specs) :], strict=True)
    }
    order = {m: i for i, m in enumerate(METRICS)}
    jorder = {j: i for i, j in enumerate(labels)}
    all_skipped = sorted(
        skipped + more_skipped, key=lambda s: (jorder.get(s.judge or "", 0), order[s.metric])
    )
    results.sort(key=lambda r: (jorder.get(r.judge or "", 0), order[r.metric]))
    return PairwiseBias(tuple(results), tuple(all_skipped), curve_frames, seconds)

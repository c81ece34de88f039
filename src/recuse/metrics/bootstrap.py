"""Cluster bootstrap for ratio-of-sums statistics, vectorised over resamples.

Every pairwise metric in this package is a smooth function of a few sums over
comparisons: a rate is ``sum(y) / sum(1)``, the Equal-Opportunity bias is a
difference of two such ratios, and so on. That makes a clustered bootstrap cheap:

1. reduce the rows to per-cluster sums, ``C[c, j] = sum of column j over the rows
   of cluster c`` (one matrix, every statistic and group side by side);
2. draw the resamples once: ``W[b, c]`` = how often cluster ``c`` is drawn in
   resample ``b`` (``n_clusters`` draws with replacement, i.e. multinomial counts);
3. every replicate's sums are one matrix product, ``R = W @ C``; each statistic's
   ``combine`` turns its columns of ``R`` into replicate values;
4. the interval is the BCa interval (bias-corrected and accelerated, Efron 1987) of
   the replicates: with ``G`` the share of replicates below the estimate (ties count
   half), ``z0 = Phi^-1(G)``, and the acceleration ``a`` from the jackknife over
   clusters (``theta_(i)`` = the statistic with cluster ``i`` left out, ``d_i =
   mean(theta_()) - theta_(i)``, ``a = sum d^3 / (6 (sum d^2)^1.5)``), the ends are
   the replicate quantiles at ``Phi(z0 + (z0 + z_q) / (1 - a (z0 + z_q)))`` for
   ``z_q = Phi^-1((1 -+ level) / 2)``. ``interval="percentile"`` gives the plain
   percentile interval ``[q_{(1-level)/2}, q_{(1+level)/2}]`` (``z0 = a = 0``).
   The leave-one-cluster-out sums are ``total - C[c]``: the jackknife costs one
   ``combine`` over ``n_clusters`` rows, nothing next to the resamples.
5. the standard error is the standard deviation of the kept replicates, and the
   p-value against a null value is the BCa interval inverted (:func:`p_value`).

Coverage of the BCa and percentile intervals at the sizes real data have (50 pairs
with 7 in the minority class, clustered by prompt) is measured by
``benchmarks/interval_coverage.py``.

A replicate in which a statistic is undefined (a denominator is zero because no
cluster of that group was drawn) is dropped and counted, never read as 0; when more
than ``max_dropped`` of the resamples are dropped the group is refused.

>>> import numpy as np
>>> stat = GroupedStatistic(
...     name="rate", values=np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 1.0], [1.0, 1.0]]),
...     group=np.array([0, 0, 0, 0]), labels=("j",), combine=ratio,
...     required=((1, "pairs"),))
>>> est = cluster_bootstrap([stat], np.array(["p1", "p1", "p2", "p3"]),
...                         boot=Resampling(n_boot=200), min_n=1)[0][0]
>>> est.estimate, est.n, est.n_clusters
(0.75, 4, 3)
"""

from __future__ import annotations

import contextlib
import functools
import math
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd
import threadpoolctl
from numpy.typing import NDArray
from scipy import sparse
from scipy.special import ndtr, ndtri
from threadpoolctl import ThreadpoolController

from recuse.bootstrap_rules import (
    FLAGS,
    LEAST_LEVEL,
    MAX_N_BOOT,
    N_BOOT,
    Extrapolation,
    SettingError,
    beyond_fix,
    beyond_warning,
    check_level,
    check_min_n,
    check_n_boot,
    check_seed,
    named_settings,
    resolved_tail,
)
from recuse.borrowed import Borrowed
from recuse.errors import ConfigError

__all__ = [
    "FLAGS",
    "INTERVALS",
    "LEAST_LEVEL",
    "MAX_N_BOOT",
    "N_BOOT",
    "Combine",
    "Extrapolation",
    "GroupEstimate",
    "GroupedStatistic",
    "Interval",
    "Resampling",
    "SettingError",
    "as_array",
    "beyond_fix",
    "beyond_side",
    "beyond_warning",
    "check_level",
    "check_min_n",
    "check_n_boot",
    "check_options",
    "check_seed",
    "cluster_bootstrap",
    "counted",
    "difference_of_ratios",
    "end_tails",
    "expanded_beyond",
    "expanded_interval",
    "expanded_level",
    "expanded_quantile",
    "moved_number",
    "named_settings",
    "p_value",
    "pooled_ratio",
    "ratio",
    "resample_counts",
    "resolved_tail",
    "share_interval",
    "signed_share",
    "sparse_counts",
    "tail_end",
]


FloatArray = NDArray[np.float64]
#: a statistic's per-row terms or per-cluster sums: dense, or a scipy sparse matrix/array
#: (for wide statistics whose rows each touch a few columns)
Sums: TypeAlias = FloatArray | sparse.sparray | sparse.spmatrix
Combine = Callable[[FloatArray], FloatArray]
Interval = Literal["bca", "percentile"]
INTERVALS: tuple[Interval, ...] = ("bca", "percentile")
INTERVAL_NAMES: dict[str, str] = {
    "bca": "BCa interval (bias-corrected, jackknife acceleration)",
    "percentile": "percentile interval",
}

# Entries of one resample-count chunk (B_chunk x n_clusters); bounds memory to ~100 MB.
_CHUNK_ENTRIES = 4_000_000
# Multiply-adds below which the replicate product runs on one BLAS thread.
_SMALL_PRODUCT = 50_000_000
#: clusters per block of the jackknife of sparse sums (:func:`_jackknife`): a multiple of
#: the 256 resamples a competence model refits at once, so the blocks split its rows as
#: the whole would
_JACK_BLOCK = 4096
# Half-integer sums below this are exact in float32 (24-bit significand, one bit for halves).
_EXACT_FLOAT32 = 2.0**22
_USE_FLOAT32 = True


#: the BLAS libraries loaded as the first block began, found once for the blocks open
#: (finding them reads the process's loaded files: ~2 ms, which five times a block made
#: a small bootstrap 4x slower); forgotten as the last block ends (as their threads are
#: put back, or found changed by the caller). A library loaded within the blocks is none
#: of theirs: its threads are neither set nor put back
_LIBRARIES: list[Any] = []


def _blas_libraries() -> list[Any]:
    """The BLAS libraries of the blocks open (:data:`_LIBRARIES`), found if not yet."""
    if not _LIBRARIES:
        _LIBRARIES.append(ThreadpoolController().select(user_api="blas").lib_controllers)
    return list(_LIBRARIES[0])


def _blas_threads() -> tuple[tuple[str, int], ...]:
    """Each BLAS library of the blocks (its file) and its threads now."""
    return tuple((str(lib.filepath), int(lib.num_threads)) for lib in _blas_libraries())


def _blas_as_made(now: tuple[tuple[str, int], ...], made: tuple[tuple[str, int], ...]) -> bool:
    """Each library the block set (``made``) still on the threads it set: a library
    loaded since (another thread's import while an audit runs) is no change of the
    caller's (compared whole, its arrival kept BLAS on one thread for good)."""
    threads = dict(now)
    kept = all(threads.get(lib) == n for lib, n in made)
    if not kept:  # the last block's end, nothing put back: the next finds them afresh
        _LIBRARIES.clear()
    return kept


def _blas_on_one_thread(_found: object) -> None:
    _release_openblas()
    try:
        for lib in _blas_libraries():
            lib.set_num_threads(1)
    finally:
        _release_openblas()


def _put_back_blas_threads(found: tuple[tuple[str, int], ...]) -> None:
    """Each library's threads as found, whatever is raised on the way (a Ctrl-C in a
    notebook as they are put back left BLAS on one thread for the rest of the process,
    and the next audit saved that 1 as the threads to put back)."""
    threads = dict(found)
    try:
        _release_openblas()  # the last block to end may not be in the first's thread
    finally:
        try:
            for lib in _blas_libraries():
                if str(lib.filepath) in threads:
                    lib.set_num_threads(threads[str(lib.filepath)])
        finally:
            _LIBRARIES.clear()
            _release_openblas()


def _release_openblas() -> None:
    """Let any thread set OpenBLAS's threads next: threadpoolctl 3.8 lets only the
    thread that last set them (until a ``with`` block of its ends) set them again and
    ignores the others, so the first audit's thread would keep them from the last one's,
    and a caller's thread holding a limit would keep an audit in another thread on its
    threads (called within :data:`_ONE_BLAS_THREAD`'s lock, a
    :class:`~recuse.borrowed.Borrowed`'s: no other recuse caller sets them)."""
    clear = getattr(
        getattr(threadpoolctl, "OpenBLASController", None), "clear_controlling_thread", None
    )
    if clear is not None:
        clear(force=True)


#: BLAS's threads (the process's), one while any :func:`one_blas_thread` block is open:
#: one count for the process, where each caller had its own ``threadpool_limits``
#: (which saves the threads it finds and puts them back as it leaves): two audits run
#: in threads, the second entering while the first ran (1 thread) and leaving after it,
#: saved 1 and put it back, so every BLAS call of the process ran on one thread after
_ONE_BLAS_THREAD = Borrowed(
    _blas_threads, _blas_on_one_thread, _put_back_blas_threads, as_made=_blas_as_made
)


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS limited to one thread inside the block, safe to nest and to enter from
    several threads at once: the threads BLAS had before the first block began are
    back when the last block ends, whatever the order they end in, unless the caller
    set a library's threads while a block was open (kept as the caller set them:
    :class:`~recuse.borrowed.Borrowed`)."""
    with _ONE_BLAS_THREAD.held():
        yield


def _div(num: FloatArray, den: FloatArray) -> FloatArray:
    """``num / den`` with NaN (not 0, not inf) where ``den == 0``."""
    out = np.full(np.broadcast(num, den).shape, np.nan)
    np.divide(num, den, out=out, where=den != 0)
    return out


def ratio(s: FloatArray) -> FloatArray:
    """``s0 / s1`` over the last axis: a rate."""
    return _div(s[..., 0], s[..., 1])


def difference_of_ratios(s: FloatArray) -> FloatArray:
    """``s0 / s1 - s2 / s3``: e.g. recall in one group minus recall in another."""
    return _div(s[..., 0], s[..., 1]) - _div(s[..., 2], s[..., 3])


def pooled_ratio(s: FloatArray) -> FloatArray:
    """``(s0 + s2) / (s1 + s3)``: one rate over two groups' numerators and denominators."""
    return _div(s[..., 0] + s[..., 2], s[..., 1] + s[..., 3])


def difference_of_means(s: FloatArray) -> FloatArray:
    """``(s0 - s1) / s2``: the mean of one value minus the mean of another over s2 rows."""
    return _div(s[..., 0] - s[..., 1], s[..., 2])


def signed_share(s: FloatArray) -> FloatArray:
    """``2 * s0 / s1 - 1``: a share in [0, 1] mapped to [-1, 1]."""
    return 2.0 * _div(s[..., 0], s[..., 1]) - 1.0


@dataclass(frozen=True)
class GroupedStatistic:
    """Per-row contributions to one statistic, computed separately for each group.

    ``values`` (rows x k) are the per-row terms whose sums ``combine`` turns into the
    statistic (``combine`` maps ``(..., k)`` to ``(...)`` and returns NaN where it is
    undefined); a numpy array, or a scipy sparse matrix when each row touches a few of
    many columns (then the per-cluster sums stay sparse and each resample costs one
    product over their non-zero entries). ``group`` gives each row's group code (an
    index into ``labels``) or -1 for rows that do not enter. ``required`` lists
    ``(column, description)``: a group needs at least ``min_n`` rows with a non-zero
    entry in that column.
    ``boot_k`` is how many leading columns ``combine`` reads (default all); later
    columns are summed for the point estimate only (e.g. parts reported alongside).
    ``interval`` is the statistic's own interval method (None: the one the bootstrap
    is called with). ``unfit`` maps the same ``(..., k)`` sums to ``(...)`` booleans:
    whether a replicate's fit has no finite estimate although ``combine`` gives it a
    value (kept, and counted in :attr:`GroupEstimate.n_unfit`; e.g. human labels in
    which a model never lost, where a refit stops at an arbitrary, large gap).
    ``empty`` says, per group, what it has none of when none of its rows enters (None,
    or no entry: the first ``required`` description): "pairs with the judge's own
    response" for a judge that never saw its own answer, where the first requirement
    ("pairs where the human prefers ...") would read as if its answers had all lost.
    ``sparse``: the statistic is a rate ``Σ c0 / Σ c1`` that only the rows with a non-zero
    last column move off its no-bias value (position: the pairs whose verdict changes
    with the order); each group's estimate then carries the prompts holding such a row
    (:attr:`GroupEstimate.moving`), the prompts' effective number
    (:attr:`GroupEstimate.effective`) and :attr:`GroupEstimate.heaviest`
    (:func:`sparse_counts`).
    """

    name: str
    values: Sums
    group: NDArray[np.intp]
    labels: tuple[Hashable, ...]
    combine: Combine
    required: tuple[tuple[int, str], ...] = ()
    boot_k: int | None = None
    interval: Interval | None = None
    unfit: Callable[[FloatArray], NDArray[np.bool_]] | None = None
    empty: tuple[str | None, ...] = ()
    sparse: bool = False

    def __post_init__(self) -> None:
        if self.values.ndim != 2 or self.values.shape[0] != self.group.shape[0]:
            raise ValueError("values must be (rows x k) with one group code per row")

    @property
    def k_boot(self) -> int:
        return self.values.shape[1] if self.boot_k is None else self.boot_k


@dataclass(frozen=True)
class GroupEstimate:
    """Point estimate and bootstrap interval of one statistic in one group.

    ``problem`` is None when the estimate is usable, else the reason it is not
    (then ``estimate`` and the interval are NaN). ``std_error`` is the standard
    deviation of the kept replicates; ``replicates`` (sorted), ``z0`` and
    ``accel`` are what :func:`p_value` needs to invert the interval. ``n_unfit``: the
    kept replicates whose fit has no finite estimate (:attr:`GroupedStatistic.unfit`).
    """

    estimate: float
    ci_low: float
    ci_high: float
    n: int
    n_clusters: int
    n_boot: int
    n_dropped: int
    totals: FloatArray
    counts: dict[str, int] = field(default_factory=dict)
    problem: str | None = None
    std_error: float = np.nan
    z0: float = 0.0
    accel: float = 0.0
    replicates: FloatArray = field(default_factory=lambda: np.empty(0))
    n_unfit: int = 0
    #: for a statistic with two required columns (two rates' denominators, as the
    #: difference of two recalls has), the prompts holding a non-zero entry of each: a
    #: prompt holding both counts half to each (:func:`two_sided_sides`); None otherwise
    sides: tuple[float, float] | None = None
    #: the largest prompt's sum of the first required column over the mean prompt's
    #: (``max / mean``; 1 when every prompt holds as many pairs): the most a share of
    #: prompts can weigh as a share of pairs (:func:`heaviest_prompt`)
    heaviest: float = 1.0
    #: for a :attr:`GroupedStatistic.sparse` rate, the prompts holding a row that moves it
    #: (a pair whose verdict changes with the order); -1 otherwise
    moving: int = -1
    #: for a :attr:`GroupedStatistic.sparse` rate, the prompts' effective number
    #: (Satterthwaite's, :func:`sparse_counts`); infinite otherwise
    effective: float = math.inf
    #: for a :attr:`GroupedStatistic.sparse` rate, the prompts that move it counted by the
    #: size of their net moves (:func:`moved_number`: ``moving`` where all move it alike,
    #: about none for one moved 1e-6); NaN otherwise
    moved: float = math.nan


@dataclass(frozen=True)
class Resampling:
    """How an estimate is resampled: the settings every bootstrapped metric shares.

    * ``level`` — the interval's confidence level, in ``[LEAST_LEVEL, 1)`` = [0.5, 1), the
      one rule of the library, the command line and ``recuse.toml``: 0.9 gives a 90% interval
      (the ends are the replicates' 5% and 95% points, moved by the BCa correction);
    * ``n_boot`` — how many bootstrap resamples are drawn (an integer from 10 to
      :data:`MAX_N_BOOT`, a million):
      each draws the clusters — the prompts — with replacement, as many as there are;
    * ``seed`` — the seed of the random generator that draws them (an integer, 0 or
      more): the same data, settings and seed give the same interval.

    The bootstrap is a cluster bootstrap over prompts (the module docstring): the rows
    of one prompt are resampled together. A ``Resampling`` that exists is valid (checked
    as it is made, :class:`SettingError` otherwise), and it is frozen, so one value can
    be shared as a default. The smallest group an estimator accepts (``min_n``) is not a
    resampling setting: each metric function takes its own.

    >>> Resampling()
    Resampling(level=0.9, n_boot=2000, seed=0)
    >>> Resampling(n_boot=5)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    recuse.bootstrap_rules.SettingError: n_boot must be an integer of at least 10 ..., got 5
    """

    level: float = 0.9
    n_boot: int = N_BOOT
    seed: int = 0

    def __post_init__(self) -> None:
        check_level(self.level)
        check_n_boot(self.n_boot)
        check_seed(self.seed)
        # kept as Python numbers (n_boot=200.0 counts draws, np.float32 is written to JSON)
        object.__setattr__(self, "level", float(self.level))
        object.__setattr__(self, "n_boot", int(self.n_boot))
        object.__setattr__(self, "seed", int(self.seed))


def check_options(*, level: float, n_boot: int, min_n: int) -> None:
    """Raise :class:`SettingError` for a level, resample count or ``min_n`` out of range
    (or not a number at all)."""
    check_level(level)
    check_n_boot(n_boot)
    check_min_n(min_n)


def min_resamples(level: float) -> int:
    """The fewest resamples whose percentile interval at ``level`` has an end inside
    the replicates rather than at their extremes, ``⌈2 / (1 − level)⌉``: each tail then
    holds at least one replicate (20 at 90%, 200 at 99%, 2,000 at 99.9%).

    >>> min_resamples(0.9), min_resamples(0.99), min_resamples(0.999)
    (20, 200, 2000)
    """
    return math.ceil(round(2.0 / (1.0 - level), 6))


def check_resamples(*, level: float, n_boot: int) -> None:
    """The command line's rule: refuse a level whose interval ``n_boot`` resamples cannot
    place (the library allows fewer for quick internal estimates)."""
    need = min_resamples(level)
    if n_boot < need:
        raise ConfigError(
            f"--level {level:g} needs at least {need} bootstrap resamples (--n-boot) to place "
            f"the ends of its interval; got {n_boot} — raise --n-boot or lower --level"
        )


def resample_counts(n_clusters: int, n_boot: int, rng: np.random.Generator) -> NDArray[np.float64]:
    """``(n_boot, n_clusters)`` matrix: how often each cluster is drawn per resample.

    Each row is ``n_clusters`` draws with replacement (multinomial counts summing to
    ``n_clusters``).
    """
    return _counts(n_clusters, n_boot, rng).astype(np.float64)


def _counts(n_clusters: int, n_boot: int, rng: np.random.Generator) -> NDArray[np.intp]:
    """:func:`resample_counts` as integers (the same draws from ``rng``)."""
    return _draw_counts(rng, np.empty((n_boot, n_clusters), dtype=np.intp))


# Draws (resamples x clusters) made at once by _draw_counts.
_DRAW_ENTRIES = 500_000


def _draw_counts(rng: np.random.Generator, out: NDArray[np.intp]) -> NDArray[np.intp]:
    """Fill ``out`` (resamples x clusters) with :func:`_counts`: the draws of
    ``rng.integers(0, clusters, size=out.shape)``, made a few resamples at a time (the
    generator gives the same numbers in the same order however they are split) and
    counted one resample at a time, so that no draw array as large as ``out`` is made."""
    n_boot, n_clusters = out.shape
    step = max(1, _DRAW_ENTRIES // max(n_clusters, 1))
    for start in range(0, n_boot, step):
        idx = rng.integers(0, n_clusters, size=(min(step, n_boot - start), n_clusters))
        for i, row in enumerate(idx):
            out[start + i] = np.bincount(row, minlength=n_clusters)
    return out


def _cluster_sums(
    stat: GroupedStatistic, codes: NDArray[np.intp], n_clusters: int
) -> tuple[Sums, NDArray[np.int64], NDArray[np.int64]]:
    """Per-cluster sums ``(n_clusters, G * k)``, rows per group, clusters per group.

    One sparse product: ``onto @ values`` with ``onto[c * G + g, i] = 1`` where row ``i``
    is in cluster ``c`` and group ``g`` (each row's whole ``k`` columns at once). Sparse
    ``values`` give sparse sums (only the clusters' non-zero entries are kept).
    """
    n_groups = len(stat.labels)
    k = stat.values.shape[1]
    inside = stat.group >= 0
    used = np.flatnonzero(inside)
    key = codes[used] * n_groups + stat.group[used]
    size = n_clusters * n_groups
    if sparse.issparse(stat.values):
        onto = sparse.csr_array((np.ones(len(used)), (key, used)), shape=(size, len(inside)))
        sums: Sums = sparse.csr_array(onto @ stat.values).reshape((n_clusters, n_groups * k))
    else:
        # by columns (one per row, empty where the row does not enter): each row's terms
        # are added to its cluster's in row order, as by rows, without sorting the rows
        indptr = np.zeros(len(inside) + 1, dtype=np.int64)
        np.cumsum(inside, out=indptr[1:])
        onto_c = sparse.csc_array((np.ones(len(used)), key, indptr), shape=(size, len(inside)))
        sums = np.asarray(onto_c @ stat.values).reshape(n_clusters, n_groups * k)
    rows = np.bincount(stat.group[used], minlength=n_groups).astype(np.int64)
    present = np.bincount(key, minlength=size).reshape(n_clusters, n_groups) > 0
    clusters = present.sum(axis=0).astype(np.int64)
    return sums, rows, clusters


def cluster_bootstrap(
    stats: Sequence[GroupedStatistic],
    clusters: NDArray[np.generic] | pd.Series,
    *,
    boot: Resampling,
    min_n: int,
    max_dropped: float = 0.1,
    interval: Interval = "bca",
    seconds: dict[str, float] | None = None,
) -> list[list[GroupEstimate]]:
    """Point estimates and intervals (``interval``: BCa or percentile, see the module
    docstring; a statistic's own :attr:`GroupedStatistic.interval` wins) of every
    statistic in every group, resampled as ``boot`` says (:class:`Resampling`).

    All statistics share one set of resamples of the clusters (``clusters`` gives
    the cluster of each row; every statistic has the same rows), so intervals of
    different metrics and judges come from the same bootstrap world. Cluster labels
    are sorted before resampling, so the draw depends only on the set of clusters
    and ``boot.seed``. Returns one list per statistic with one :class:`GroupEstimate`
    per group label.

    ``seconds`` (a dict, filled in when given): each statistic's name with the seconds
    spent on it — its cluster sums, its replicates' ``combine`` and intervals, and its
    share of the one resampling product (the dense product's time split by the
    statistic's share of the resampled columns, the sparse one's by its share of the
    non-zero entries), so that a slow bootstrap names the statistic that makes it slow.
    """
    check_min_n(min_n)
    level, n_boot, seed = boot.level, boot.n_boot, boot.seed
    for how in (interval, *(s.interval for s in stats if s.interval is not None)):
        if how not in INTERVALS:
            raise ConfigError(f"interval must be one of {', '.join(INTERVALS)}; got {how!r}")
    codes_raw, _uniques = pd.factorize(
        clusters if isinstance(clusters, pd.Series) else np.asarray(clusters), sort=True
    )
    codes = codes_raw.astype(np.intp)
    if (codes < 0).any():
        raise ValueError("cluster labels must not be missing")
    n_c = int(codes.max()) + 1 if codes.size else 0
    for s in stats:
        if s.values.shape[0] != codes.shape[0]:
            raise ValueError(
                f"statistic {s.name}: {s.values.shape[0]} rows, {codes.shape[0]} clusters"
            )

    spent = [0.0] * len(stats)
    blocks = []
    # statistics of one values matrix and grouping (the calibrated self-preference, its
    # family preference and its rungs share one: 600,000 rows x 739 columns) share its
    # cluster sums, each computed and held once
    summed: dict[tuple[int, int, int], tuple[Sums, NDArray[np.int64], NDArray[np.int64]]] = {}
    for i, stat in enumerate(stats):
        start = time.perf_counter()
        key = (id(stat.values), id(stat.group), len(stat.labels))
        if key not in summed:
            summed[key] = _cluster_sums(stat, codes, max(n_c, 1))
        blocks.append(summed[key])
        spent[i] += time.perf_counter() - start
    # resample only the columns the statistics read: dense ones side by side, each
    # distinct column once (a part two statistics share is put in once); sparse ones
    # side by side as they are
    dense_parts: list[FloatArray] = []
    part_at: dict[tuple[int, int], int] = {}  # (sums, columns read) -> its first column
    layout: list[NDArray[np.intp]] = []  # each dense statistic's columns in big
    sparse_parts: list[Sums] = []
    sparse_at: dict[tuple[int, int], int] = {}  # likewise, into wide
    sparse_layout: dict[int, NDArray[np.intp]] = {}  # each sparse statistic's columns in wide
    work = np.zeros((len(stats), 2))  # resampled dense columns, sparse non-zeros
    for i, (stat, (sums, _rows, _clust)) in enumerate(zip(stats, blocks, strict=True)):
        k, kb = stat.values.shape[1], stat.k_boot
        cols = (np.arange(len(stat.labels))[:, None] * k + np.arange(kb)[None, :]).ravel()
        if sparse.issparse(sums):
            part = sparse.csc_array(sums)[:, cols]
            if (id(sums), kb) not in sparse_at:  # a part two statistics share, put in once
                sparse_at[id(sums), kb] = sum(p.shape[1] for p in sparse_parts)
                sparse_parts.append(part)
            sparse_layout[i] = sparse_at[id(sums), kb] + np.arange(len(cols), dtype=np.intp)
            work[i, 1] = part.nnz
        else:
            if (id(sums), kb) not in part_at:
                part_at[id(sums), kb] = sum(p.shape[1] for p in dense_parts)
                dense_parts.append(sums if kb == k else sums[:, cols])
            layout.append(part_at[id(sums), kb] + np.arange(len(cols), dtype=np.intp))
            work[i, 0] = len(cols)
    # one part (statistics sharing one values matrix) is resampled as it is, uncopied
    # (_replicate_sums reads it); the copies of the columns read (boot_k < k) go with
    # the parts' list
    big = (
        dense_parts[0]
        if len(dense_parts) == 1
        else np.concatenate(dense_parts, axis=1)
        if dense_parts
        else np.empty((max(n_c, 1), 0))
    )
    dense_parts.clear()
    wide = sparse.hstack(sparse_parts, format="csc") if sparse_parts else None
    distinct, inverse = _distinct_columns(big)
    # its distinct columns alone are held while they are resampled (all of them: itself)
    resampled = big if len(distinct) == big.shape[1] else big[:, distinct]
    del big
    product = np.zeros(2)  # seconds of the dense and the sparse products
    dense_reps, sparse_reps = _replicate_sums(
        resampled, wide, n_c, n_boot=n_boot, seed=seed, seconds=product
    )
    del resampled
    dense_reps = dense_reps[:, inverse[np.concatenate(layout)] if layout else inverse]
    shares = work / np.maximum(work.sum(axis=0), 1.0)
    for i in range(len(stats)):
        spent[i] += float(shares[i] @ product)

    out: list[list[GroupEstimate]] = []
    offset = 0  # into the dense replicate sums
    for i, (stat, (sums, rows, n_clust)) in enumerate(zip(stats, blocks, strict=True)):
        start = time.perf_counter()
        n_groups, k, kb = len(stat.labels), stat.values.shape[1], stat.k_boot
        is_sparse = sparse.issparse(sums)
        tot = np.asarray(sums.sum(axis=0)).reshape(n_groups, k)
        if is_sparse:
            rep = sparse_reps[:, sparse_layout[i]].reshape(n_boot, n_groups, kb)
        else:
            rep = dense_reps[:, offset : offset + n_groups * kb].reshape(n_boot, n_groups, kb)
            offset += n_groups * kb
        used = bool(rows.sum())
        if used:
            point = stat.combine(tot)
            rep_vals = stat.combine(rep)  # (n_boot, n_groups)
        else:  # no row enters: nothing to combine (each group gets its reason below)
            point, rep_vals = np.full(n_groups, np.nan), np.full((n_boot, n_groups), np.nan)
        ok = np.isfinite(rep_vals)
        n_ok = ok.sum(axis=0)
        if used and stat.unfit is not None:
            n_unfit = (ok & np.asarray(stat.unfit(rep), dtype=bool)).sum(axis=0)
        else:
            n_unfit = np.zeros(n_groups, dtype=np.int64)
        bca = (stat.interval or interval) == "bca"
        if bca and used:
            # leave-one-cluster-out sums: total minus the cluster's own sums (of the
            # columns combine reads)
            jack = _jackknife(stat, sums, tot)
            accel = _acceleration(jack)
        else:
            accel = np.zeros(n_groups)
        required_counts = _required_counts(stat)
        sides = two_sided_sides(stat, sums)
        heaviest: list[float] | None = None  # read by a zero-width interval only
        group_out = []
        for g in range(n_groups):
            counts = {desc: int(c[g]) for desc, c in required_counts}
            problem = _problem(stat, g, counts, int(rows[g]), int(n_clust[g]), min_n)
            dropped = n_boot - int(n_ok[g])
            if problem is None and not np.isfinite(point[g]):
                problem = "the statistic is undefined on these data"
            if problem is None and dropped > max_dropped * n_boot:
                problem = (
                    f"{dropped} of {n_boot} bootstrap resamples left a group empty — "
                    f"too few prompts ({int(n_clust[g])}) for a stable interval"
                )
            col = np.sort(rep_vals[ok[:, g], g])
            z0, a, lo, hi, se = 0.0, 0.0, np.nan, np.nan, np.nan
            if problem is None and col.size:
                if bca:
                    z0, a = _bias_correction(col, float(point[g])), float(accel[g])
                lo, hi = _quantiles(col, [_bca_level(q, z0, a) for q in _tails(level)])
                se = float(col.std(ddof=1)) if col.size > 1 else 0.0
            if problem is None and (lo == hi or stat.sparse) and heaviest is None:
                heaviest = heaviest_prompt(stat, sums, n_clust)  # O(nnz): only when read
            moving, effective, moved = -1, math.inf, math.nan
            if problem is None and stat.sparse:
                mine = _columns(sums, range(g * k, (g + 1) * k))
                moving, effective = sparse_counts(mine)
                moved = moved_number(mine)
            if problem is None:
                est = (float(point[g]), float(lo), float(hi))
            else:
                est = (np.nan, np.nan, np.nan)
            group_out.append(
                GroupEstimate(
                    estimate=est[0],
                    ci_low=est[1],
                    ci_high=est[2],
                    n=int(rows[g]),
                    n_clusters=int(n_clust[g]),
                    n_boot=n_boot,
                    n_dropped=dropped,
                    totals=tot[g].copy(),
                    counts=counts,
                    problem=problem,
                    std_error=se if problem is None else np.nan,
                    z0=z0,
                    accel=a,
                    replicates=col if problem is None else np.empty(0),
                    n_unfit=int(n_unfit[g]) if problem is None else 0,
                    sides=None if sides is None else sides[g],
                    heaviest=heaviest[g]
                    if heaviest is not None and (lo == hi or stat.sparse)
                    else 1.0,
                    moving=moving,
                    effective=effective,
                    moved=moved,
                )
            )
        out.append(group_out)
        spent[i] += time.perf_counter() - start
    if seconds is not None:
        for stat, t in zip(stats, spent, strict=True):
            seconds[stat.name] = seconds.get(stat.name, 0.0) + t
    return out


def _jackknife(stat: GroupedStatistic, sums: Sums, tot: FloatArray) -> FloatArray:
    """``combine`` of the leave-one-cluster-out sums (total minus each cluster's own sums,
    of the columns combine reads), ``(clusters, groups)``. Sparse ``sums`` are made dense
    a block of :data:`_JACK_BLOCK` clusters at a time (the whole block of 100,000 prompts
    × 1,478 columns is 1.2 GB, and its differences as much again); ``combine`` maps each
    row of sums on its own, so the blocks give the values of the whole."""
    n_groups, k, kb = len(stat.labels), stat.values.shape[1], stat.k_boot
    if not sparse.issparse(sums):
        dense = sums.reshape(-1, n_groups, k)[:, :, :kb]
        return np.asarray(stat.combine(tot[None, :, :kb] - dense))
    rows = sparse.csr_array(sums)
    out = np.empty((rows.shape[0], n_groups))
    for start in range(0, rows.shape[0], _JACK_BLOCK):
        block = rows[start : start + _JACK_BLOCK].toarray().reshape(-1, n_groups, k)[:, :, :kb]
        out[start : start + len(block)] = stat.combine(tot[None, :, :kb] - block)
    return out


def _distinct_columns(big: FloatArray) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """Indices of the first copy of each distinct column, and where each column maps.

    Columns are equal when their bytes are (NaN in the same places too). Each column's
    bits get one integer hash (a fixed odd multiple of each entry, summed modulo 2**64:
    exact, whatever the column's place); columns with the hash of an earlier column are
    compared with it (and with any other column of that hash) entry by entry.
    """
    n_rows, n_cols = big.shape
    if n_cols == 0 or n_rows == 0:
        return np.arange(min(n_cols, 1), dtype=np.intp), np.zeros(n_cols, dtype=np.intp)
    bits = np.ascontiguousarray(big, dtype=np.float64).view(np.uint64)
    mult = np.random.default_rng(0x5EED).integers(0, 2**63, size=n_rows, dtype=np.uint64)
    mult = mult * np.uint64(2) + np.uint64(1)
    hashes = np.einsum("i,ij->j", mult, bits)  # wraps modulo 2**64
    _, first_of_hash, which = np.unique(hashes, return_index=True, return_inverse=True)
    first = first_of_hash[which.reshape(-1)].astype(np.intp)  # first column of its hash
    same_hash: dict[int, list[int]] = {}  # hash group -> its distinct columns so far
    for j in np.flatnonzero(first != np.arange(n_cols)).tolist():
        group = same_hash.setdefault(int(first[j]), [int(first[j])])
        for k in group:
            if np.array_equal(bits[:, j], bits[:, k]):
                first[j] = k
                break
        else:  # same hash, other bytes: a distinct column
            group.append(j)
            first[j] = j
    distinct = np.unique(first).astype(np.intp)
    return distinct, np.searchsorted(distinct, first).astype(np.intp)


class _WideProduct:
    """``W @ wide`` for a sparse ``wide`` (clusters x columns), one chunk ``W`` at a time.

    Stored as columns x clusters: each non-zero adds a multiple of one cluster's counts
    (a contiguous row of ``W^T``) to its column's replicates, over blocks of resamples
    small enough for those rows to stay in cache. Columns of whole or half numbers whose
    sums stay below 2**22 are multiplied in single precision (exact, as for the dense
    columns), the others in double precision.
    """

    _BLOCK = 128  # resamples per block

    def __init__(self, wide: Sums) -> None:
        cols = sparse.csc_array(wide)
        data = cols.data
        halves_nz = (2.0 * data) == np.round(2.0 * data)
        col_of = np.repeat(np.arange(cols.shape[1]), np.diff(cols.indptr))
        bad = np.bincount(col_of, weights=~halves_nz, minlength=cols.shape[1]) > 0
        self.bound = np.bincount(col_of, weights=np.abs(data), minlength=cols.shape[1])
        self.halves = ~bad
        self.t = sparse.csr_array(cols.T)
        self.n_cols = cols.shape[1]
        self._split: tuple[bytes, Sums, Sums] | None = None

    def times(self, counts: NDArray[np.intp]) -> FloatArray:
        exact = self.halves & (float(counts.max()) * self.bound < _EXACT_FLOAT32) & _USE_FLOAT32
        key = exact.tobytes()
        if self._split is None or self._split[0] != key:
            single = sparse.csr_array(self.t[np.flatnonzero(exact)], dtype=np.float32)
            self._split = (key, single, sparse.csr_array(self.t[np.flatnonzero(~exact)]))
        _, single, double = self._split
        out = np.empty((counts.shape[0], self.n_cols))
        for start in range(0, counts.shape[0], self._BLOCK):
            block = counts[start : start + self._BLOCK]
            rows = slice(start, start + len(block))
            if single.shape[0]:
                w32 = np.ascontiguousarray(block.T, dtype=np.float32)
                out[rows, exact] = (single @ w32).T
            if double.shape[0]:
                w64 = np.ascontiguousarray(block.T, dtype=np.float64)
                out[rows, ~exact] = (double @ w64).T
        return out


def _replicate_sums(
    big: FloatArray,
    wide: Sums | None,
    n_c: int,
    *,
    n_boot: int,
    seed: int | None,
    seconds: FloatArray | None = None,
) -> tuple[FloatArray, FloatArray]:
    """``W @ big`` and ``W @ wide`` for ``n_boot`` resamples ``W`` of the ``n_c``
    clusters, drawn in chunks (the same ``W`` for both).

    Columns of whole or half numbers (counts, picks, ties) of the dense ``big`` are
    multiplied in single precision when every partial sum stays below 2**22: then every
    product and sum is exactly representable, so the result is exact and the product
    twice as fast. Other columns use double precision. The sparse ``wide`` (clusters x
    columns) costs one product over its non-zero entries per resample. ``seconds``
    (2 entries), when given, gets the seconds of the dense and the sparse products added.
    """
    timer = np.zeros(2) if seconds is None else seconds
    reps = np.empty((n_boot, big.shape[1]))
    n_wide = 0 if wide is None else wide.shape[1]
    wide_reps = np.empty((n_boot, n_wide))
    if n_c == 0 or (big.shape[1] == 0 and n_wide == 0):
        reps.fill(np.nan)
        wide_reps.fill(np.nan)
        return reps, wide_reps
    halves, bound = _halves(big)
    wide_t = None if wide is None or not n_wide else _WideProduct(wide)
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_ENTRIES // n_c)
    # Small products run faster on one BLAS thread (no thread start-up or spinning).
    cache: dict[bytes, tuple[NDArray[np.float32], FloatArray]] = {}
    # one buffer each for the chunks' counts and their single and double copies
    buffers: dict[np.dtype[Any], NDArray[Any]] = {
        np.dtype(np.intp): np.empty((min(chunk, n_boot), n_c), dtype=np.intp)
    }

    def counts_as(counts: NDArray[np.intp], dtype: type) -> NDArray[Any]:
        buf = buffers.get(np.dtype(dtype))
        if buf is None:
            buf = buffers[np.dtype(dtype)] = np.empty(buffers[np.dtype(np.intp)].shape, dtype)
        view = buf[: len(counts)]
        np.copyto(view, counts)
        return view

    small = n_boot * n_c * big.shape[1] < _SMALL_PRODUCT
    with one_blas_thread() if small else contextlib.nullcontext():
        for start in range(0, n_boot, chunk):
            b = min(chunk, n_boot - start)
            counts = _draw_counts(rng, buffers[np.dtype(np.intp)][:b])
            rows = slice(start, start + b)
            if wide_t is not None:
                t0 = time.perf_counter()
                wide_reps[rows] = wide_t.times(counts)
                timer[1] += time.perf_counter() - t0
            if not big.shape[1]:
                continue
            exact = halves & (float(counts.max()) * bound < _EXACT_FLOAT32) & _USE_FLOAT32
            key = exact.tobytes()
            if key not in cache:  # the split is the same in (almost) every chunk
                cache = {key: (big[:, exact].astype(np.float32), big[:, ~exact])}
            single, double = cache[key]
            t0 = time.perf_counter()
            if single.shape[1]:
                reps[rows, exact] = counts_as(counts, np.float32) @ single
            if double.shape[1]:
                reps[rows, ~exact] = counts_as(counts, np.float64) @ double
            timer[0] += time.perf_counter() - t0
    return reps, wide_reps


def _halves(big: FloatArray, block: int = 256) -> tuple[NDArray[np.bool_], FloatArray]:
    """Per column: whether every entry is a whole or half number (``2x`` integral), and
    the sum of the absolute values (exact for such columns, whatever the order of the
    additions; the bound only matters for them), a block of rows at a time (the block's
    copies stay in cache)."""
    halves = np.ones(big.shape[1], dtype=bool)
    bound = np.zeros(big.shape[1])
    for start in range(0, big.shape[0], block):
        rows = big[start : start + block]
        twice = 2.0 * rows
        halves &= np.all(twice == np.rint(twice), axis=0)
        bound += np.abs(rows).sum(axis=0)
    return halves, bound


def _tails(level: float) -> tuple[float, float]:
    return (1.0 - level) / 2.0, (1.0 + level) / 2.0


def _quantiles(sorted_col: FloatArray, qs: list[float]) -> tuple[float, ...]:
    """The ``qs`` quantiles of sorted replicates (numpy's default, linear interpolation),
    in one call."""
    if not sorted_col.size:
        return tuple(np.nan for _ in qs)
    return tuple(float(v) for v in np.quantile(sorted_col, qs))


def _share_below(sorted_col: FloatArray, value: float) -> float:
    """Share of replicates below ``value``, ties (to 1e-12, relative) counting half."""
    tol = 1e-12 * max(1.0, abs(value))
    below = np.searchsorted(sorted_col, value - tol, side="left")
    upto = np.searchsorted(sorted_col, value + tol, side="right")
    return float(below + 0.5 * (upto - below)) / sorted_col.size


def _bias_correction(sorted_col: FloatArray, estimate: float) -> float:
    """``z0 = Phi^-1(share of replicates below the estimate)``, the share kept in
    ``[1/(2B), 1 - 1/(2B)]`` so that ``z0`` stays finite."""
    b = sorted_col.size
    share = min(max(_share_below(sorted_col, estimate), 0.5 / b), 1.0 - 0.5 / b)
    return float(ndtri(share))


def _acceleration(jack: FloatArray) -> FloatArray:
    """BCa acceleration per column from leave-one-cluster-out values (rows = clusters).

    ``a = sum d^3 / (6 (sum d^2)^(3/2))`` with ``d = mean(jack) - jack`` over the
    finite values; 0 when they do not vary (or fewer than two are finite).
    """
    finite = np.isfinite(jack)
    n = finite.sum(axis=0)
    mean = np.where(finite, jack, 0.0).sum(axis=0) / np.maximum(n, 1)
    d = np.where(finite, mean[None, :] - jack, 0.0)
    ss = (d * d).sum(axis=0)
    cubes = (d * d * d).sum(axis=0)
    out = np.zeros(jack.shape[1])
    ok = (n >= 2) & (ss > 1e-24)
    out[ok] = cubes[ok] / (6.0 * ss[ok] ** 1.5)
    return out


def _bca_level(q: float, z0: float, a: float) -> float:
    """Replicate quantile level of the BCa end at nominal level ``q``."""
    return _bca_level_at(float(ndtri(q)), z0, a)


def _bca_level_at(zq: float, z0: float, a: float) -> float:
    """Replicate quantile level of the BCa end whose nominal normal quantile is ``zq``:
    ``Φ(z0 + (z0 + zq) / (1 − a (z0 + zq)))``. Taking the quantile rather than its level
    keeps an expanded end from 2 prompts (``zq = √2 · t_1(0.95) = 8.929``, whose level
    rounds to 1) where its bias correction puts it: ``Φ(z0 + (z0 + 8.929))``, not the
    largest replicate whatever ``z0``."""
    z = z0 + zq
    if not math.isfinite(z):  # a nominal level of 0 or 1: the extreme
        return 1.0 if zq > 0 else 0.0
    den = 1.0 - a * z
    if den <= 0:  # past the acceleration's range: the end is the extreme replicate
        return 1.0 if zq > 0 else 0.0
    return float(ndtr(z0 + z / den))


def expanded_level(q: float, clusters: int) -> float:
    """The nominal level that replaces ``q`` in a BCa end from ``clusters`` prompts:
    Hesterberg's expanded interval (Hesterberg 2015, "What teachers should know about the
    bootstrap", *The American Statistician* 69(4), §"expanded percentile interval"), its
    normal quantile ``z_q`` replaced by ``√(G / (G − 1)) · t_{G−1}(q)``::

        q' = Φ(√(G / (G − 1)) · t_{G−1}(q))      (t_{G−1}(q): Student's q quantile)

    — the bootstrap's variance of a mean over ``G`` prompts is ``(G − 1) / G`` of the
    unbiased one, and its ends are normal quantiles where the mean over few prompts is
    Student's. ``q`` itself where ``G < 2`` (nothing to correct: one prompt's resamples
    are all alike). The factor ``√(G/(G−1)) · t_{G−1}(0.95) / z(0.95)`` is 1.108 at
    ``G = 15``, 1.037 at 40 and 1.015 at 100: it vanishes as ``G`` grows.

    >>> round(expanded_level(0.95, 15), 4), round(expanded_level(0.05, 15), 4)
    (0.9659, 0.0341)
    >>> expanded_level(0.95, 1)
    0.95
    """
    if clusters < 2:
        return q
    return float(ndtr(expanded_quantile(q, clusters)))


@functools.lru_cache(maxsize=4096)
def expanded_quantile(q: float, clusters: int) -> float:
    """The normal quantile of :func:`expanded_level`, ``√(G / (G − 1)) · t_{G−1}(q)``
    (``Φ⁻¹(q)`` where ``G < 2``), kept as a quantile: its level rounds to 1 from 2
    prompts at 90% (``√2 · t_1(0.95) = 8.929``). Remembered: an audit asks it for the
    same few levels and prompt counts for every estimate, and SciPy's ``t.ppf`` costs
    about 0.1 ms a call.

    >>> round(expanded_quantile(0.95, 2), 3), round(expanded_quantile(0.05, 15), 4)
    (8.929, -1.8231)
    """
    if clusters < 2:
        return float(ndtri(q))
    from scipy.stats import t

    return math.sqrt(clusters / (clusters - 1)) * float(t.ppf(q, clusters - 1))


def share_interval(
    mean: float,
    *,
    n: int,
    std_error: float,
    clusters: int,
    level: float,
    span: tuple[float, float] = (0.0, 1.0),
) -> tuple[float, float]:
    """The interval of a mean of per-pair values within ``span = (lo, hi)`` (a share: 0
    to 1) from ``clusters`` prompts: a Wilson score interval at the effective number of
    pairs the cluster bootstrap measures, which keeps its ends within the span and has
    width where every pair reads the same (the bootstrap's interval then has none).

    With ``p = (mean − lo) / (hi − lo)``, ``s`` the bootstrap's standard error on that
    scale times ``√(G / (G − 1))`` (the bootstrap's variance of a mean over ``G`` prompts
    is ``(G − 1) / G`` of the unbiased one) and ``z = Φ⁻¹((1 + level) / 2)``::

        m = p (1 − p) / s²          (the effective pairs; G, the prompts, where s = 0)
        ends = (p + z²/(2m) ± z √(p (1 − p)/m + z²/(4m²))) / (1 + z²/m)

    mapped back to ``lo + (hi − lo) · end``. ``n`` (the pairs) is not read: where every
    pair reads the same the prompts are the sample's independent units. Measured: the
    verbosity curves' bins (:func:`recuse.metrics.verbosity.curve_table`) and the
    ladder's rates (:mod:`recuse.metrics.ladder`).

    Wilson's interval holds ``p`` and is closed at 0 for ``p = 0`` (1 for ``p = 1``): the
    ends are kept so, where the formula's rounding read 0 [1.4e-17, 0.15] for 0 of 15
    prompts (the ladder's ``harmful_own_both`` on JudgeBench, an interval without its
    estimate) and 0.99999999999999989 for 5 of 5. One prompt (``G = 1``) is Wilson's
    interval for one pair (``m = 1``; it read ``m = 2``). A standard error that is not a
    number gives no interval (NaN ends), not one read as "no variation"; one of rounding
    (at most 1e-12 on the 0–1 scale, as replicates that all read 0.4 have: 2·10⁻¹⁷) is
    none, where it read ``m`` = 10³² effective pairs and an interval of no width.

    >>> [round(x, 4) for x in share_interval(0.0, n=9, std_error=0.0, clusters=9, level=0.9)]
    [0.0, 0.2311]
    """
    lo, hi = span
    width = hi - lo
    if not (math.isfinite(mean) and math.isfinite(std_error)):
        return math.nan, math.nan
    value = min(max(mean, lo), hi)
    p = min(max((value - lo) / width, 0.0), 1.0)
    g = max(clusters, 1)
    s = std_error / width * (math.sqrt(g / (g - 1)) if g > 1 else 1.0)
    var = p * (1 - p)
    # a standard error of rounding is none (interval_rules.zero_width's rule, on the 0–1
    # scale): replicates that all read 0.4 from pairs that all do have one of 1e-17
    m = var / (s * s) if s > 1e-12 and var > 0 else float(g)
    z = float(ndtri((1 + level) / 2))
    centre = (p + z * z / (2 * m)) / (1 + z * z / m)
    half = z * math.sqrt(var / m + z * z / (4 * m * m)) / (1 + z * z / m)
    low = 0.0 if p == 0 else max(centre - half, 0.0)
    high = 1.0 if p == 1 else min(centre + half, 1.0)
    return min(lo + width * low, value), max(lo + width * high, value)


def expanded_probability(z: float, clusters: int) -> float:
    """The inverse of :func:`expanded_quantile`: the tail probability ``q`` whose
    expanded quantile is ``z``, ``T_{G−1}(z / √(G / (G − 1)))`` (``Φ(z)`` where
    ``G < 2``); :func:`p_value` reads an expanded end's level with it.

    >>> round(expanded_probability(expanded_quantile(0.05, 15), 15), 10)
    0.05
    >>> round(expanded_probability(-1.6449, 1), 4)
    0.05
    """
    if clusters < 2:
        return float(ndtr(z))
    from scipy.stats import t

    return float(t.cdf(z / math.sqrt(clusters / (clusters - 1)), clusters - 1))


def tail_end(
    sorted_col: FloatArray, zq: float, *, center: float, z0: float = 0.0, accel: float = 0.0
) -> tuple[float, bool]:
    """The end of a BCa interval (percentile: ``z0 = accel = 0``) at nominal normal
    quantile ``zq``, and whether it had to be extrapolated. Its replicate level is
    ``Φ(w)``, ``w = z0 + (z0 + zq) / (1 − a (z0 + zq))``; where that level (or one less
    it) is at least :func:`resolved_tail` the end is the sorted resamples' quantile there
    (numpy's default). Deeper it is no resample: with ``x_r`` their quantile at the
    deepest level they read on that side, ``Φ(w_r)``, and ``z_r`` the nominal quantile
    the BCa map sends there (``z_r = (w_r − z0) / (1 + a (w_r − z0)) − z0``)::

        end = center + (x_r − center) · zq / z_r

    (never nearer ``center`` than the resamples' own quantile at ``Φ(w)``, which stands,
    not called extrapolated, where it is as far or further; nor used where
    the map does not reach back to ``w_r`` from the side of ``zq``: a bias correction
    ``z0`` of −3 sends every nominal lower end past the resamples' smallest; the end
    is then that quantile, as before): the interval's distance from the estimate
    ``center`` stretched as the nominal
    quantile grows, as Student's interval ``θ̂ ± t se`` stretches with ``t`` (a normal
    tail; the BCa map is not followed past the resamples, where its acceleration makes
    ``w`` run away). Read off the resamples it was their smallest or largest (a level
    under ``1/B``): 99% ends expanded for 5 prompts ask for ``zq = √(5/4) · t_4(0.995)
    = −5.15``, and 2,000 resamples' smallest is about their ``−3.5`` point, so the
    interval was some ``3.5 / 5.15`` of its width.

    >>> reps = ndtri((np.arange(2000) + 0.5) / 2000)  # 2,000 evenly spread normal points
    >>> end, far = tail_end(reps, -5.147, center=0.0)
    >>> far, round(end, 2), round(float(reps[0]), 2)  # N(0, 1)'s −5.15 point; the smallest
    (True, -5.09, -3.48)
    >>> end, far = tail_end(reps, -1.6449, center=0.0)  # within reach: the 5% quantile
    >>> far, round(end, 4) == round(float(np.quantile(reps, ndtr(-1.6449))), 4)
    (False, True)
    """
    b = sorted_col.size
    if not b or not math.isfinite(zq):
        return _extreme(sorted_col, zq), False
    r = resolved_tail(b)
    w = _bca_z_at(zq, z0, accel)
    if math.isfinite(w) and r <= float(ndtr(w)) <= 1.0 - r:
        return float(np.quantile(sorted_col, float(ndtr(w)))), False
    # the resamples' own end, as before: their quantile at Φ(w), the extreme past the
    # acceleration's range; the extrapolated end is never nearer the centre than it
    own = (
        _extreme(sorted_col, zq)
        if not math.isfinite(w)
        else float(np.quantile(sorted_col, float(ndtr(w))))
    )
    w_r = abs(float(ndtri(r))) * (1.0 if zq > 0 else -1.0)
    den = 1.0 + accel * (w_r - z0)
    z_r = (w_r - z0) / den - z0 if den > 0 else math.nan
    if not (z_r * zq > 0 and abs(z_r) < abs(zq)):  # the map does not reach back
        return own, False
    x_r = float(np.quantile(sorted_col, float(ndtr(w_r))))
    end = center + (x_r - center) * zq / z_r
    # extrapolated only where that lies past the resamples' own end: resamples all
    # alike (x_r on the estimate) or reaching further on their own keep their end, and
    # no word says it was extrapolated
    if end < own if zq < 0 else end > own:
        return end, True
    return own, False


def _extreme(sorted_col: FloatArray, zq: float) -> float:
    if not sorted_col.size:
        return math.nan
    return float(sorted_col[0] if zq < 0 else sorted_col[-1])


def _bca_z_at(zq: float, z0: float, a: float) -> float:
    """The normal quantile of :func:`_bca_level_at`'s level, ``z0 + (z0 + zq) / (1 − a (z0
    + zq))`` (±inf past the acceleration's range)."""
    z = z0 + zq
    den = 1.0 - a * z
    if den <= 0:
        return math.inf if zq > 0 else -math.inf
    return z0 + z / den


def blended_quantile(q: float, clusters: int, *, share: float = 1.0) -> float:
    """The normal quantile ``Φ⁻¹(q)`` moved a ``share`` of the way to
    :func:`expanded_quantile`'s, ``z + share · (z' − z)``: the expanded interval's at
    ``share`` 1 (exactly), the plain BCa's at 0.

    >>> round(blended_quantile(0.95, 20, share=0.5), 4)  # (1.64485 + 1.77405) / 2
    1.7095
    """
    if share == 1.0:
        return expanded_quantile(q, clusters)
    z = float(ndtri(q))
    return z + share * (expanded_quantile(q, clusters) - z)


def expanded_interval(
    est: GroupEstimate, level: float, *, share: float = 1.0
) -> tuple[float, float]:
    """The BCa interval of ``est`` at ``level`` with each tail's nominal level expanded
    for its ``n_clusters`` prompts (:func:`expanded_level`): the replicate quantiles at
    ``Φ(z0 + (z0 + z') / (1 − a (z0 + z')))`` with ``z' = √(G / (G − 1)) · t_{G−1}(q)``
    (:func:`expanded_quantile`, not read back from its level, which rounds to 1), each
    read by :func:`tail_end`: beyond what the resamples resolve (99% from 10 prompts or
    fewer at 2,000 resamples, 90% from 3 or fewer) extrapolated from the deepest
    quantile they read, where it was their smallest or largest (:func:`expanded_beyond`
    says whether). NaN ends where ``est`` has no replicates. ``share`` below 1: each
    quantile only that share of the way from the normal one (:func:`blended_quantile`;
    0: the plain BCa ends, read by :func:`tail_end`)."""
    low, high = (
        tail_end(est.replicates, blended_quantile(q, est.n_clusters, share=share),
                 center=est.estimate, z0=est.z0, accel=est.accel)[0]
        for q in _tails(level)
    )  # fmt: skip
    return low, high


def expanded_beyond(est: GroupEstimate, level: float) -> float:
    """Where :func:`expanded_interval` extrapolated an end of ``est`` (its resamples do
    not reach it), the tail it asked of them: the smaller of the two ends'
    :func:`end_tails`; NaN where neither end is extrapolated. A result's warning says it
    (:func:`beyond_warning`).

    >>> e = GroupEstimate(0.5, 0.4, 0.6, 15, 5, 2000, 0, np.zeros(1),
    ...                   replicates=np.linspace(0.3, 0.7, 2000))
    >>> f"{expanded_beyond(e, 0.99):.1e}", expanded_beyond(e, 0.9)
    ('1.3e-07', nan)
    """
    return min((x for x in end_tails(est, level) if not math.isnan(x)), default=math.nan)


def end_tails(est: GroupEstimate, level: float, *, share: float = 1.0) -> tuple[float, float]:
    """The tail each end of :func:`expanded_interval` asked of ``est``'s resamples where
    :func:`tail_end` extrapolated it, low end then high: the replicate level of its BCa
    end, ``Φ(w)`` or ``1 − Φ(w)`` (0 past the acceleration's range); NaN for an end
    read off the resamples. ``share``: of :func:`expanded_interval` at that share.

    >>> e = GroupEstimate(0.5, 0.4, 0.6, 15, 5, 2000, 0, np.zeros(1),
    ...                   replicates=np.linspace(0.3, 0.7, 2000))
    >>> [f"{x:.1e}" for x in end_tails(e, 0.99)], end_tails(e, 0.9)
    (['1.3e-07', '1.3e-07'], (nan, nan))
    """
    tails = []
    for q in _tails(level):
        zq = blended_quantile(q, est.n_clusters, share=share)
        kw = {"center": est.estimate, "z0": est.z0, "accel": est.accel}
        far = bool(est.replicates.size) and tail_end(est.replicates, zq, **kw)[1]
        tails.append(float(ndtr(-abs(_bca_z_at(zq, est.z0, est.accel)))) if far else math.nan)
    return tails[0], tails[1]


def beyond_side(est: GroupEstimate, level: float) -> str:
    """Which ends of ``est``'s expanded interval :func:`expanded_interval` extrapolated:
    ``"ends"`` (both), ``"low end"``, ``"high end"`` or ``""``, for
    :func:`beyond_warning` (a bias correction sends one end past the resamples' reach
    at 99% from 75 prompts, the other not).

    >>> e = GroupEstimate(0.5, 0.4, 0.6, 15, 5, 2000, 0, np.zeros(1),
    ...                   replicates=np.linspace(0.3, 0.7, 2000))
    >>> beyond_side(e, 0.99), beyond_side(e, 0.9)
    ('ends', '')
    """
    kw = {"center": est.estimate, "z0": est.z0, "accel": est.accel}
    low, high = (
        bool(est.replicates.size)
        and tail_end(est.replicates, expanded_quantile(q, est.n_clusters), **kw)[1]
        for q in _tails(level)
    )
    return "ends" if low and high else "low end" if low else "high end" if high else ""


def p_value(est: GroupEstimate, null: float, *, expanded: bool = False) -> float:
    """Two-sided bootstrap p-value of ``null``: the interval of ``est`` inverted.

    With ``G`` the replicate level at which ``null`` lies (below),
    ``w = Phi^-1(G) - z0`` and ``z_q = w / (1 + a w) - z0`` (the nominal level whose
    BCa end falls on ``null``; ``B`` kept replicates, and a smaller p than the floor
    cannot be resolved)::

        p = max(2 / (B + 1), 2 * min(Phi(z_q), 1 - Phi(z_q)))

    so the ``1 - p`` interval has ``null`` at one end: ``null`` lies outside every
    interval of level above ``1 - p``. With ``z0 = a = 0`` (percentile interval)
    this is ``2 * min(G, 1 - G)``. NaN when ``est`` has no replicates.

    ``G`` is the level at which the interval's own quantile (numpy's, linear between
    the sorted replicates at levels ``i / (B − 1)``) lies on ``null``: ``(i + f) / (B − 1)``
    for ``null`` a share ``f`` of the way from replicate ``i`` to ``i + 1`` (from 0).
    Counting the replicates below it (``G = m / B``) read a level up to ``1 / B`` away
    from the interval's, which a steep BCa map turns into much more: at 200 resamples a
    95% BCa interval [0.038, 1.53] of 10 prompts read p = 0.060 by count. Read at the
    interval's own level, the interval excludes ``null`` exactly when ``p < 1 − level``
    (above the floor). ``G`` is not kept in ``[1/(B+1), B/(B+1)]`` before the BCa map:
    the interval's ends read numpy's quantile at levels nearer 0 and 1, and a ``null``
    between the two largest of 200 replicates read one p wherever it lay, 0.116 beside a
    95% interval [−1.35, −0.026] of 10 skewed prompts (``z0``, ``a`` > 0).

    Replicates tied on ``null`` (``k`` of them, after ``m`` below it; to 1e-12,
    relative) put an end on it at every replicate level from ``m / (B − 1)`` to
    ``(m + k − 1) / (B − 1)`` (where numpy's quantile puts them): the lower tail reads
    ``G = (m + k − 1) / (B − 1)``, the upper ``G = m / (B − 1)``, and ``p`` is the
    smaller tail's twice, so an interval whose end lies on ``null`` holds it at every
    level above ``1 − p``. Counting the ties half, an end on ``null`` from 7 prompts'
    DP self-preference, ``[0.00, 0.86]``, read p = 0.088 beside its 90% interval.

    A ``null`` beyond every replicate (``G`` = 0 or 1) lies outside every interval
    the replicates give, whatever ``z0`` and ``a``: ``p`` is the floor ``2 / (B + 1)``.
    Clamping ``G`` to ``1/(B+1)`` first and then correcting it made ``p`` depend on
    ``z0``: on llmbar-mtbench, gpt-4's Eq. 6 verbosity difference, every one of its 300
    replicates above 0, read p = 0.016 instead of 0.0066 (a negative ``z0``), and more
    resamples could not bring it to the floor that the audit's resolution note
    promises.

    ``expanded``: the p-value of :func:`expanded_interval` instead, the level at whose
    expanded end ``null`` falls: with ``z_q`` as above and ``G`` the prompts,
    ``p = 2 · T_{G−1}(−|z_q| / √(G / (G − 1)))`` (same floor), so that interval excludes
    ``null`` exactly when ``p < 1 − level``.

    >>> e = GroupEstimate(0.3, 0.1, 0.5, 10, 10, 4, 0, np.zeros(0),
    ...                   replicates=np.array([0.1, 0.2, 0.3, 0.4]))
    >>> p_value(e, 0.15), p_value(e, 0.25)  # G = 0.5 / 3 (2 G under the floor 2/5), 1.5 / 3
    (0.4, 1.0)
    >>> round(p_value(e, 0.3), 4)  # on the third of 4: level 2/3, upper tail 1/3
    0.6667
    >>> round(p_value(e, 0.175, expanded=True), 4)  # z = −0.6745 (G 0.75 / 3), 10 prompts
    0.5382
    """
    col = est.replicates
    b = col.size
    if b == 0 or not np.isfinite(null):
        return np.nan
    tol = 1e-12 * max(1.0, abs(null))
    below = int(np.searchsorted(col, null - tol, side="left"))
    tied = int(np.searchsorted(col, null + tol, side="right")) - below
    # an expanded end extrapolated past the resamples (tail_end) meets a null beyond
    # them at a finite level: the null is outside the interval only while it is outside
    # both the extrapolated end and the resamples' own, so |z| is the lesser of the two
    far = _extrapolated_z(est, null) if expanded else math.nan
    if not tied and below in (0, b):  # no replicate on the null's side: the floor
        if math.isnan(far):
            return 2.0 / (b + 1)
        return float(
            min(1.0, max(2.0 / (b + 1), 2.0 * expanded_probability(-abs(far), est.n_clusters)))
        )
    if tied:  # an end on null from level m / (B − 1) to (m + k − 1) / (B − 1)
        low_share, high_share = (below + tied - 1) / max(b - 1, 1), below / max(b - 1, 1)
    else:  # the level whose quantile (numpy's, linear between replicates) is null
        step = float(col[below] - col[below - 1])
        low_share = high_share = (below - 1 + float(null - col[below - 1]) / step) / (b - 1)
    z_low = _nominal_z(low_share, est.z0, est.accel)
    z_high = _nominal_z(high_share, est.z0, est.accel)
    if far < 0:
        z_low = max(z_low, far)
    elif far > 0:
        z_high = min(z_high, far)
    g = est.n_clusters if expanded else 1
    tails = expanded_probability(z_low, g), expanded_probability(-z_high, g)
    return float(min(1.0, max(2.0 / (b + 1), 2.0 * min(tails))))


def _extrapolated_z(est: GroupEstimate, null: float) -> float:
    """The nominal quantile at which :func:`tail_end`'s extrapolated end of ``est`` lies
    on ``null``, where ``null`` is past the deepest quantile the resamples read on its
    side of the estimate: ``z_r · (null − θ̂) / (x_r − θ̂)``; NaN where it is not (or
    that side's end is never extrapolated)."""
    col = est.replicates
    b = col.size
    r = resolved_tail(b)
    if not b or r >= 0.5 or null == est.estimate:
        return math.nan
    sign = 1.0 if null > est.estimate else -1.0
    w_r = abs(float(ndtri(r))) * sign
    x_r = float(np.quantile(col, float(ndtr(w_r))))
    if not (null - x_r) * sign > 0 or not (x_r - est.estimate) * sign > 0:
        return math.nan
    den = 1.0 + est.accel * (w_r - est.z0)
    if den <= 0:
        return math.nan
    z_r = (w_r - est.z0) / den - est.z0
    if not z_r * sign > 0:
        return math.nan
    return z_r * (null - est.estimate) / (x_r - est.estimate)


def _nominal_z(share: float, z0: float, a: float) -> float:
    """The nominal normal quantile ``z_q`` whose BCa end lies at replicate level
    ``share`` (in ``[0, 1]``, not kept from its ends: the interval reads numpy's quantile
    at any level, and the p-value's floor ``2 / (B + 1)`` is its resolution): ``w / (1 +
    a w) − z0`` with ``w = Φ⁻¹(share) − z0``; ∓inf at a share of 0 or 1; past the
    acceleration's range (``1 + a w ≤ 0``: no BCa end reaches it) ``Φ⁻¹(share)``. Kept as
    a quantile, not a level, which rounds to 1 past ``z ≈ 8.3`` (an expanded p-value from
    2 prompts reads ``T_1(z / √2)`` there)."""
    if not 0.0 < share < 1.0:
        return -math.inf if share <= 0.0 else math.inf
    w = float(ndtri(share)) - z0
    den = 1.0 + a * w
    return w / den - z0 if den > 0 else float(ndtri(share))


def as_array(values: Sums) -> FloatArray:
    """``values`` as a numpy array."""
    if isinstance(values, np.ndarray):
        return values
    return np.asarray(sparse.csr_array(values).toarray())


def _column(values: Sums, col: int) -> FloatArray:
    """Column ``col`` of dense or sparse ``values`` as a 1-d array."""
    return _columns(values, [col]).ravel()


def _columns(values: Sums, cols: Sequence[int]) -> FloatArray:
    """Columns ``cols`` of dense or sparse ``values`` as a numpy array (a sparse matrix
    sliced before it is made dense: its other columns are never written out)."""
    if sparse.issparse(values):
        return np.asarray(sparse.csc_array(values)[:, list(cols)].toarray())
    return np.asarray(values[:, list(cols)])


def two_sided_sides(stat: GroupedStatistic, sums: Sums) -> list[tuple[float, float]] | None:
    """Per group, for a statistic with two required columns (``stat.required``: the
    denominators of the two rates a difference of recalls compares), the prompts on each
    side: those with a non-zero cluster sum in the first column only, plus half of those
    with both; likewise the second. None for any other statistic. ``sums``: the
    per-cluster sums of :func:`_cluster_sums`."""
    n_groups, k = len(stat.labels), stat.values.shape[1]
    if len(stat.required) != 2 or not (stat.group >= 0).any():
        return None  # (no row enters: the columns are not read)
    cols = [g * k + c for c, _ in stat.required for g in range(n_groups)]
    part = sums[:, cols] if isinstance(sums, np.ndarray) else sparse.csc_array(sums)[:, cols]
    nonzero = as_array(part) != 0
    first, second = nonzero[:, :n_groups], nonzero[:, n_groups:]
    both = (first & second).sum(axis=0)
    only_first, only_second = (first & ~second).sum(axis=0), (second & ~first).sum(axis=0)
    return [
        (float(only_first[g] + both[g] / 2), float(only_second[g] + both[g] / 2))
        for g in range(n_groups)
    ]


def heaviest_prompt(stat: GroupedStatistic, sums: Sums, clusters: NDArray[np.int64]) -> list[float]:
    """Per group, the largest prompt's sum of the first required column (``stat.required``:
    a rate's denominator, its pairs) over the mean prompt's, ``max_i m_i / (Σ m_i / n)``:
    a share ``u`` of the prompts holds at most a share ``u · max / mean`` of the pairs. 1
    where there is no required column or no row enters; ``sums`` and ``clusters`` (the
    prompts per group) as in :func:`two_sided_sides`."""
    n_groups, k = len(stat.labels), stat.values.shape[1]
    if not stat.required or not (stat.group >= 0).any():
        return [1.0] * n_groups
    part = _columns(sums, [g * k + stat.required[0][0] for g in range(n_groups)])
    out = []
    for g in range(n_groups):
        total, n = float(part[:, g].sum()), int(clusters[g])
        out.append(float(part[:, g].max()) * n / total if total > 0 and n > 0 else 1.0)
    return out


def moved_number(sums: FloatArray) -> float:
    """From one group's per-prompt sums (prompts × k) of a rate whose no-bias value is 0
    (a probe's effect: the first column sums each pair's move), the prompts that move it
    counted by the size of their net moves ``c0_p``::

        m* = (Σ |c0_p|)² / Σ c0_p²

    ``m`` where ``m`` prompts move it by the same amount, fewer where some move it less,
    and continuous in the moves: a prompt moved 1e-6 beside others moved 0.5 adds about
    nothing (the count of moving prompts, :func:`sparse_counts`, adds 1), and one whose
    moves cancel (+1 and −1: ``c0_p`` = 0, as the resamples see it) adds none. 0 where no
    prompt moves it.

    >>> moved_number(np.array([[0.5, 2, 1], [0.5, 2, 1], [0.0, 2, 0]]))
    2.0
    >>> round(moved_number(np.array([[0.5, 2, 1], [0.5, 2, 1], [1e-6, 2, 1]])), 4)
    2.0
    >>> moved_number(np.array([[1.0, 2, 1], [0.0, 2, 1], [0.0, 2, 0]]))  # 2nd: +1 and −1
    1.0
    """
    c0 = np.abs(np.asarray(sums, dtype=float)[:, 0])
    square = float((c0**2).sum())
    return float(c0.sum()) ** 2 / square if square > 0 else 0.0


def sparse_counts(sums: FloatArray) -> tuple[int, float]:
    """From one group's per-prompt sums (prompts × k) of a rate ``Σ c0 / Σ c1``
    (:attr:`GroupedStatistic.sparse`): the prompts whose last column is non-zero (those
    holding a row that moves the rate) and the prompts' effective number, Satterthwaite's
    degrees of freedom of the rate's variance ``Σ r_p²`` (``r_p = c0_p − θ̂ · c1_p``, the
    prompt's residual, over the prompts with ``c1_p > 0``)::

        ν = (Σ r_p²)² / Σ r_p⁴

    ``ν`` is the number of prompts when every residual has one size and about the
    number of moving prompts when only they carry one: a rate moved by 4 prompts' flips
    rests on about 4, not on all of them (infinite where every residual is 0). One flip
    among 30 one-pair prompts:

    >>> one = np.array([[1.0, 1, 1]] + [[0.5, 1, 0]] * 29)
    >>> m, nu = sparse_counts(one); m, round(nu, 4)
    (1, 1.0701)
    >>> m, nu = sparse_counts(np.array([[1.0, 1, 1], [0.0, 1, 1]] * 3)); m, round(nu, 6)
    (6, 6.0)
    """
    used = sums[:, 1] > 0
    part = sums[used]
    if not part.size:
        return 0, math.inf
    theta = part[:, 0].sum() / part[:, 1].sum()
    r2 = (part[:, 0] - theta * part[:, 1]) ** 2
    moving = int((part[:, -1] != 0).sum())
    s4 = float((r2**2).sum())
    return moving, (float(r2.sum()) ** 2 / s4 if s4 > 0 else math.inf)


def _required_counts(stat: GroupedStatistic) -> list[tuple[str, NDArray[np.int64]]]:
    """Per group, the rows with a non-zero entry in each required column."""
    n_groups = len(stat.labels)
    shifted = stat.group + 1  # unused rows (-1) count in bin 0, dropped
    result = []
    enters = bool(stat.required) and bool((stat.group >= 0).any())
    for col, desc in stat.required:
        if not enters:  # no row enters: none counts (columns unread)
            result.append((desc, np.zeros(n_groups, dtype=np.int64)))
            continue
        nonzero = _column(stat.values, col) != 0
        c = np.bincount(shifted[nonzero], minlength=n_groups + 1)[1:]
        result.append((desc, c.astype(np.int64)))
    return result


_SINGULAR = {"pairs": "pair", "responses": "response", "items": "item", "prompts": "prompt"}


def counted(count: int, desc: str) -> str:
    """``count`` with ``desc`` in the right number: ``counted(1, "pairs where ...")`` is
    ``"1 pair where ..."`` (the first plural noun of ``desc`` made singular for one).

    >>> counted(1, "judged pairs with its own response"), counted(3, "pairs")
    ('1 judged pair with its own response', '3 pairs')
    """
    if count == 1:
        words = desc.split(" ")
        for i, w in enumerate(words):
            if w in _SINGULAR:
                words[i] = _SINGULAR[w]
                desc = " ".join(words)
                break
    return f"{count} {desc}"


def _problem(
    stat: GroupedStatistic, g: int, counts: dict[str, int], rows: int, n_clust: int, min_n: int
) -> str | None:
    if rows == 0:
        if g < len(stat.empty) and stat.empty[g] is not None:
            return f"no {stat.empty[g]}"
        return f"no {stat.required[0][1]}" if stat.required else "no usable pairs"
    for desc, c in counts.items():
        if c == 0:  # nothing of the kind: said as none, not as "only 0 (need at least n)"
            return f"no {desc}"
        if c < min_n:
            return f"only {counted(c, desc)} (need at least {min_n})"
    if n_clust < 2:
        what = "the only usable pair comes" if rows == 1 else f"all {rows} usable pairs come"
        return f"{what} from one prompt; a clustered interval needs two or more"
    return None

"""The report's figures, drawn with matplotlib (its Figure objects, not pyplot: no display
needed, and the caller's backend left as it is).

Each function takes plain numbers and labels and returns a
:class:`~recuse.report.model.Figure` holding a base64 PNG (default) or SVG text, so
the HTML page embeds it and needs no other file. Labels may come from datasets
(model and judge names); they are drawn as plain text (no mathtext, no TeX: a name
with ``$`` signs is shown as written) and never reach the HTML as markup.
"""

from __future__ import annotations

import base64
import functools
import io
import os
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ParamSpec

import numpy as np

from recuse.errors import ConfigError, MissingDependencyError
from recuse.numbers import count, decimal, estimate_digits, estimate_parts, general
from recuse.report.model import Figure, FigureFormat
from recuse.terminal import shown

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

DPI = 96
LABEL_MAX = 40  # characters of a name drawn on an axis or in a legend (the alt text has all)
TITLE_MAX = 90  # characters of a title or axis label
_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#17becf")
#: the line style and marker of each round through the palette: the eighth series
#: had the first's colour, line and marker, so the legend named two judges for one look
_ROUNDS = (("-", "o"), ("--", "s"), (":", "^"), ("-.", "D"))
#: held while a figure is drawn: matplotlib's settings are one per process, and two
#: threads each inside ``rc_context`` put back each other's values (the second to
#: leave restored the first's "no formulas" for good, and the first's exit switched
#: formulas back on under the second's labels)
_DRAWING = threading.RLock()


def _look(k: int) -> tuple[str, str, str]:
    """Series ``k``'s colour, line style and marker: the palette's colours, then again
    with the next line style and marker, so no two of the first 28 series look alike."""
    ls, marker = _ROUNDS[(k // len(_PALETTE)) % len(_ROUNDS)]
    return _PALETTE[k % len(_PALETTE)], ls, marker


def _mpl() -> None:
    """Check that matplotlib is installed. Figures are built as ``Figure`` objects and
    saved through their own canvas, never through pyplot, so no backend is chosen
    here: a caller's (a notebook's inline backend) is left as it is."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise MissingDependencyError("matplotlib", "plots") from None
    except ValueError as exc:  # matplotlib checks $MPLBACKEND as it is imported
        if "MPLBACKEND" not in os.environ:
            raise
        raise ConfigError(
            f"the environment variable MPLBACKEND={os.environ['MPLBACKEND']!r} names no "
            f"matplotlib backend ({exc}) — unset it, or set it to agg"
        ) from None


_P = ParamSpec("_P")


def _plain_text(draw: Callable[_P, Figure]) -> Callable[_P, Figure]:
    """Run a figure function with every label drawn as plain text: labels come from
    data, and a ``$`` in a judge name must not start a formula (nor fail to parse).
    One figure at a time in a process (:data:`_DRAWING`)."""

    @functools.wraps(draw)
    def plain(*args: _P.args, **kwargs: _P.kwargs) -> Figure:
        _mpl()
        import matplotlib

        # every text artist (titles, tick labels, legends) is built and drawn so
        with _DRAWING, matplotlib.rc_context({"text.usetex": False, "text.parse_math": False}):
            return draw(*args, **kwargs)

    return plain


def _legend(ax: Any, lines: Sequence[Any], labels: Sequence[str], **options: Any) -> None:
    """A legend naming each of ``lines`` (each label shortened, :func:`_short`), given
    explicitly: from the lines' own labels matplotlib leaves out every one starting with
    '_', so a judge named '_internal' was drawn but named nowhere."""
    ax.legend(lines, _shorts(labels), **{"fontsize": 7, **options})


def _new(width: float, height: float) -> tuple[MplFigure, Any]:
    from matplotlib.figure import Figure as MplFigure

    _mpl()
    fig = MplFigure(figsize=(width, height), dpi=DPI, layout="constrained")
    return fig, fig.add_subplot()


def _short(text: object, limit: int = LABEL_MAX) -> str:
    """``text`` on one line, at most ``limit`` characters (the middle replaced by an
    ellipsis, so names that differ at the end stay apart): a long name from data must
    not push the plot out of its figure. Characters a terminal acts on are written as
    :func:`recuse.terminal.shown` writes them: no font draws them, and matplotlib's
    warning about the missing glyph printed the raw character to the terminal.

    >>> _short("gpt-4"), _short("a\\nb"), _short("abcdefghijklmnop", 9)
    ('gpt-4', 'a b', 'abcd…mnop')
    """
    line = " ".join(shown(text).split())
    if len(line) <= limit:
        return line
    head = limit // 2
    return line[:head] + "…" + line[len(line) - (limit - head - 1) :]


def _shorts(labels: Sequence[object]) -> list[str]:
    return [_short(v) for v in labels]


def _label_rows(ax: Any, ys: np.ndarray, labels: Sequence[str], *, xlabel: str, title: str) -> None:
    """Axis labels of a horizontal one-row-per-label chart."""
    ax.set_yticks(ys, _shorts(labels), fontsize=7)
    ax.set_xlabel(_short(xlabel, TITLE_MAX), fontsize=8)
    ax.tick_params(axis="x", labelsize=7)
    ax.set_title(_short(title, TITLE_MAX), fontsize=9)
    ax.grid(axis="x", alpha=0.3)


def _render(
    fig: MplFigure, *, id: str, title: str, alt: str, caption: str, format: FigureFormat
) -> Figure:
    buf = io.BytesIO()
    if format == "png":
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
        data = base64.b64encode(buf.getvalue()).decode("ascii")
    else:
        import matplotlib

        # the SVG's element ids (clip paths, glyphs) are hashed with a salt: matplotlib's
        # default is random per process, so the same report differed from run to run;
        # the figure's id is fixed and unique on its page, so two inline SVGs of one
        # page still never share an element id
        with matplotlib.rc_context({"svg.hashsalt": f"recuse-{id}"}):
            fig.savefig(buf, format="svg", metadata={"Date": None})
        data = buf.getvalue().decode("utf-8")
    return Figure(id=id, title=title, format=format, data=data, alt=alt, caption=caption)


@_plain_text
def confusion_matrix(
    counts: np.ndarray | Sequence[Sequence[float]],
    *,
    rows: Sequence[str],
    cols: Sequence[str],
    id: str,
    title: str,
    row_label: str = "human label",
    col_label: str = "judge verdict",
    caption: str = "",
    format: FigureFormat = "png",
) -> Figure:
    """Counts of (row, column) outcomes as an annotated grid (share of the row in colour).

    A count is written as it is (:func:`recuse.numbers.general`): a tie counted half in
    each column is ``39.5``, never rounded to a whole number — rounding (to even) wrote
    ``4`` and ``4`` beside shares of 56% and 44%, and cells that did not add up to the
    table's n.
    """
    m = np.asarray(counts, dtype=float)
    if m.shape != (len(rows), len(cols)):
        raise ValueError(f"counts shape {m.shape} does not match {len(rows)}x{len(cols)} labels")
    totals = m.sum(axis=1, keepdims=True)
    share = np.divide(m, totals, out=np.zeros_like(m), where=totals > 0)
    fig, ax = _new(1.4 + 1.1 * len(cols), 1.1 + 0.8 * len(rows))
    ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            ax.text(
                j,
                i,
                f"{general(m[i, j])}\n{share[i, j]:.0%}",
                ha="center",
                va="center",
                fontsize=8,
                color="white" if share[i, j] > 0.6 else "black",
            )
    ax.set_xticks(range(len(cols)), _shorts(cols), fontsize=8)
    ax.set_yticks(range(len(rows)), _shorts(rows), fontsize=8)
    ax.set_xlabel(_short(col_label, TITLE_MAX), fontsize=8)
    ax.set_ylabel(_short(row_label, TITLE_MAX), fontsize=8)
    ax.set_title(_short(title, TITLE_MAX), fontsize=9)
    alt = f"{title}: " + "; ".join(
        f"{r} → {c}: {general(m[i, j])}" for i, r in enumerate(rows) for j, c in enumerate(cols)
    )
    return _render(fig, id=id, title=title, alt=alt, caption=caption, format=format)


@dataclass(frozen=True)
class Series:
    """One line of a curve plot, with an optional interval band and, optionally, the
    sample size of each point (``n``, written in a row under the plot, as Saito et al.'s
    Figure 5 prints each bin's)."""

    label: str
    y: Sequence[float]
    low: Sequence[float] | None = None
    high: Sequence[float] | None = None
    n: Sequence[int] | None = None

    def __post_init__(self) -> None:
        """A band or a count for each point, and each count a whole number ≥ 0: a
        shorter ``n`` labelled the first points only, and a NaN was a traceback."""
        for name in ("low", "high", "n"):
            values = getattr(self, name)
            if values is not None and len(values) != len(self.y):
                raise ValueError(f"Series {name}: {len(values)} values for {len(self.y)} points")
        bad = [v for v in self.n or () if not (np.isfinite(v) and v >= 0 and float(v).is_integer())]
        if bad:
            raise ValueError(f"Series n: a count of pairs is a whole number >= 0, got {bad[0]!r}")


#: the height of one row of counts under a curve plot (:func:`_count_rows`), in inches
N_ROW_INCHES = 0.14


def _count_rows(
    fig: MplFigure, ax: Any, xs: np.ndarray, series: Sequence[Series], counted: Sequence[int]
) -> None:
    """Each counted series' n under the plot: a row per series (labelled ``n``, or ``n``
    and the series' name where there are several, in its colour), each count under its
    point's x, where the point is drawn (a finite y). The text's id (gid ``n-K-I``)
    names its series and point. One row per series keeps every count apart however the
    curves lie; the plot above keeps its height."""
    rows = len(counted)
    spec = fig.add_gridspec(2, 1, height_ratios=[3.2, N_ROW_INCHES * (rows + 1)])
    ax.set_subplotspec(spec[0])
    nax = fig.add_subplot(spec[1], sharex=ax)
    nax.set_ylim(rows - 0.5, -0.5)
    for side in ("top", "right", "bottom", "left"):
        nax.spines[side].set_visible(False)
    nax.tick_params(axis="x", which="both", bottom=False, labelbottom=False)
    names = _count_names(series, counted)
    nax.set_yticks(range(rows), names, fontsize=6)
    nax.tick_params(axis="y", length=0)
    for row, (k, tick) in enumerate(zip(counted, nax.get_yticklabels(), strict=True)):
        colour = _look(k)[0]  # its curve's colour
        tick.set_color(colour)
        y = np.asarray(series[k].y, dtype=float)
        for i, (xi, yi, ni) in enumerate(zip(xs, y, series[k].n or (), strict=False)):
            if np.isfinite(yi):
                nax.text(xi, row, count(int(ni)), ha="center", va="center", fontsize=6,
                         color=colour, gid=f"n-{k}-{i}")  # fmt: skip


#: a digit's (or a comma's, at most) width in the counts' font, in ems (DejaVu Sans)
_DIGIT_EM = 0.64


def _count_names(series: Sequence[Series], counted: Sequence[int]) -> list[str]:
    """The label of each row of counts: ``n``, or ``n`` and the series' name as the
    legend writes it where there are several (cut at 18 characters, the rows of
    meta-llama/Llama-3.1-8B-Instruct and …-70B-Instruct both read "n meta-llam…Instruct",
    told apart by colour alone, which repeats from the eighth series on: the curves
    change line and marker there, :func:`_look`)."""
    if len(counted) == 1:
        return ["n"]
    return [f"n {_short(series[k].label)}" for k in counted]


def _counted_width(xs: np.ndarray, series: Sequence[Series], counted: Sequence[int]) -> float:
    """The width (inches) of a curve plot with rows of counts: 5.2, or more where the
    widest count would not fit between two neighbouring points (counts in the thousands
    over a dozen bins ran into each other: "98,760111,105") or the rows' labels take
    more of the width than the plot's own y labels. The counts are at 6 points."""
    size = 6 / 72  # inches per em
    texts = [count(int(n)) for k in counted for n in series[k].n or ()]
    widest = max((len(t) for t in texts), default=1) * _DIGIT_EM * size + 0.06
    labels = max(len(t) for t in _count_names(series, counted)) * _DIGIT_EM * size + 0.15
    xs = np.unique(xs[np.isfinite(xs)]) if len(xs) else xs
    axis = 4.3
    if len(xs) > 1:
        span = float(xs[-1] - xs[0]) * 1.1  # matplotlib's 5% margin on each side
        axis = max(axis, widest * span / float(np.diff(xs).min()))
    return max(5.2, axis + max(labels, 0.6) + 0.3)


@_plain_text
def curves(
    x: Sequence[float] | Sequence[str],
    series: Sequence[Series],
    *,
    id: str,
    title: str,
    xlabel: str,
    ylabel: str,
    caption: str = "",
    reference: float | None = None,
    format: FigureFormat = "png",
) -> Figure:
    """Lines over bins (alignment by length, perplexity bins) with interval bands, and
    each point's sample size where its series has one (:attr:`Series.n`), in a row under
    the plot, one row per such series in its colour (:func:`_count_rows`): written above
    their points, the counts of several judges sat on each other where their curves met,
    and a point at the top ran into the title."""
    counted = [k for k, s in enumerate(series) if s.n is not None]
    categorical = any(isinstance(v, str) for v in x)
    xs = np.arange(len(x)) if categorical else np.asarray(x, dtype=float)
    width = _counted_width(xs, series, counted) if counted else 5.2
    fig, ax = _new(width, 3.2 + N_ROW_INCHES * (len(counted) + 1) if counted else 3.2)
    lines = []
    for k, s in enumerate(series):
        colour, ls, marker = _look(k)
        y = np.asarray(s.y, dtype=float)
        lines += ax.plot(xs, y, marker=marker, ms=3, lw=1.4, ls=ls, color=colour)
        if s.low is not None and s.high is not None:
            lo = np.asarray(s.low, dtype=float)
            hi = np.asarray(s.high, dtype=float)
            ax.fill_between(xs, lo, hi, color=colour, alpha=0.18, lw=0)
    if counted:
        _count_rows(fig, ax, xs, series, counted)
    if reference is not None:
        ax.axhline(reference, color="grey", lw=0.8, ls="--")
    if categorical:
        ax.set_xticks(xs, _shorts(x), fontsize=7, rotation=30, ha="right")
    ax.set_xlabel(_short(xlabel, TITLE_MAX), fontsize=8)
    ax.set_ylabel(_short(ylabel, TITLE_MAX), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.set_title(_short(title, TITLE_MAX), fontsize=9)
    if len(series) > 1:
        _legend(ax, lines, [s.label for s in series], fontsize=7, frameon=False)
    ax.grid(alpha=0.3)
    alt = f"{title}: {', '.join(s.label for s in series)} against {xlabel}"
    return _render(fig, id=id, title=title, alt=alt, caption=caption, format=format)


@_plain_text
def coefficients(
    labels: Sequence[str],
    estimate: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    *,
    id: str,
    title: str,
    xlabel: str,
    null: float = 0.0,
    highlight: Sequence[bool] | None = None,
    caption: str = "",
    format: FigureFormat = "png",
    texts: Sequence[str] | None = None,
) -> Figure:
    """Dot-and-whisker plot: one row per label, estimate with its interval; red the rows
    ``highlight`` marks (default: those whose interval excludes ``null``). ``texts``:
    each row's estimate and interval as the findings write them
    (:attr:`~recuse.report.model.Finding.text`: a share as a percentage, an absolute
    value unsigned, a rate near an end of its span with the decimals that keep it off
    it), for the alt text; without them, :func:`recuse.numbers.estimate_parts` writes
    each, signed where ``null`` is 0."""
    est = np.asarray(estimate, dtype=float)
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    if not len(labels) == len(est) == len(lo) == len(hi):
        raise ValueError("labels, estimate, low and high need the same length")
    if texts is not None and len(texts) != len(labels):
        raise ValueError("texts needs one text per label")
    fig, ax = _new(5.2, 0.9 + 0.3 * max(len(labels), 1))
    ys = np.arange(len(labels))[::-1]
    flagged = (lo > null) | (hi < null) if highlight is None else np.asarray(highlight, bool)
    if len(flagged) != len(labels):
        raise ValueError("highlight needs one flag per label")
    colours = [_PALETTE[1] if f else _PALETTE[0] for f in flagged]
    ax.hlines(ys, lo, hi, colors=colours, lw=1.6)
    ax.scatter(est, ys, color=colours, s=18, zorder=3)
    ax.axvline(null, color="grey", lw=0.8, ls="--")
    _label_rows(ax, ys, labels, xlabel=xlabel, title=title)
    # each as the findings' tables and sentences write it (estimate_parts: its decimals,
    # U+2212), signed where the no-bias value is 0
    written = texts or [
        " ".join(estimate_parts(e, a, b, signed=null == 0, null=null))
        for e, a, b in zip(est, lo, hi, strict=True)
    ]
    alt = f"{title}: " + "; ".join(
        f"{lab} {text}" for lab, text in zip(labels, written, strict=True)
    )
    return _render(fig, id=id, title=title, alt=alt, caption=caption, format=format)


def _bar_text(value: float, low: float, high: float) -> str:
    """A bar and its interval as :func:`recuse.numbers.estimate_parts` writes them
    (unsigned: a bar is a level, not a difference), or the value alone at the decimals
    that rule gives it where the interval is not finite (too few for one).

    >>> _bar_text(1.5, 1.4996, 1.5004), _bar_text(2.0, float("nan"), float("nan"))
    ('1.5000 [1.4996, 1.5004]', '2.00')
    """
    if not (np.isfinite(low) and np.isfinite(high)):
        return decimal(value, estimate_digits(value, value, value)) if np.isfinite(value) else ""
    return " ".join(estimate_parts(value, low, high, signed=False))


@_plain_text
def bars(
    labels: Sequence[str],
    values: Sequence[float],
    low: Sequence[float],
    high: Sequence[float],
    *,
    id: str,
    title: str,
    xlabel: str,
    highlight: Sequence[bool] | None = None,
    caption: str = "",
    format: FigureFormat = "png",
) -> Figure:
    """Horizontal bars (one per label) with interval whiskers; ``highlight``ed bars in red.

    A NaN interval end draws no whisker (e.g. a group too small for an interval).
    """
    val = np.asarray(values, dtype=float)
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    if not len(labels) == len(val) == len(lo) == len(hi):
        raise ValueError("labels, values, low and high need the same length")
    mark = np.zeros(len(labels), dtype=bool) if highlight is None else np.asarray(highlight, bool)
    if len(mark) != len(labels):
        raise ValueError("highlight needs one flag per label")
    fig, ax = _new(5.2, 0.9 + 0.3 * max(len(labels), 1))
    ys = np.arange(len(labels))[::-1]
    colours = [_PALETTE[1] if m else _PALETTE[0] for m in mark]
    ax.barh(ys, val, color=colours, alpha=0.75, height=0.6)
    whisker = np.isfinite(lo) & np.isfinite(hi)
    ax.errorbar(
        val[whisker],
        ys[whisker],
        xerr=np.vstack([val[whisker] - lo[whisker], hi[whisker] - val[whisker]]),
        fmt="none",
        ecolor="black",
        elinewidth=1.0,
        capsize=2,
    )
    _label_rows(ax, ys, labels, xlabel=xlabel, title=title)
    # each bar and its whiskers as the terminal writes an estimate and its interval
    # (recuse.numbers.estimate_parts: ends that differ never read alike, U+2212); one
    # precision for the whole figure wrote 1.500 [1.500, 1.500] for [1.4996, 1.5004]
    alt = f"{title}: " + "; ".join(
        f"{lab}{' (highlighted)' if m else ''} {_bar_text(float(v), float(a), float(b))}"
        for lab, v, a, b, m in zip(labels, val, lo, hi, mark, strict=True)
    )
    return _render(fig, id=id, title=title, alt=alt, caption=caption, format=format)


@_plain_text
def heatmap(
    values: np.ndarray | Sequence[Sequence[float]],
    *,
    rows: Sequence[str],
    cols: Sequence[str],
    id: str,
    title: str,
    row_label: str = "judge",
    col_label: str = "model",
    caption: str = "",
    highlight: np.ndarray | None = None,
    annotations: np.ndarray | None = None,
    scale_label: str = "",
    last_row: str = "",
    format: FigureFormat = "png",
) -> Figure:
    """A diverging heat map centred on 0 (e.g. judge × model bias); NaN cells are blank.

    ``highlight`` (same shape, bool) outlines cells, e.g. the self-judging diagonal;
    ``annotations`` (same shape) are the numbers written in the cells (default: values);
    ``scale_label``: the colour's quantity and unit, the colour bar's label;
    ``last_row``: what the last row is when it is not one of ``row_label`` (a
    reference row under the judges): the alt text counts the rows above it as
    ``row_label`` and names it (the play-favorites map read "10 judges" of 9 and its
    human reference row).
    """
    m = np.asarray(values, dtype=float)
    text = m if annotations is None else np.asarray(annotations, dtype=float)
    if m.shape != (len(rows), len(cols)):
        raise ValueError(f"values shape {m.shape} does not match {len(rows)}x{len(cols)} labels")
    finite = m[np.isfinite(m)]
    bound = float(np.max(np.abs(finite))) if finite.size else 1.0
    bound = bound or 1.0
    fig, ax = _new(1.8 + 0.62 * len(cols), 1.3 + 0.42 * len(rows))
    image = ax.imshow(np.ma.masked_invalid(m), cmap="RdBu_r", vmin=-bound, vmax=bound)
    for i in range(m.shape[0]):
        for j in range(m.shape[1]):
            if np.isfinite(text[i, j]):
                ax.text(j, i, decimal(text[i, j], 2), ha="center", va="center", fontsize=6)
            if highlight is not None and highlight[i, j]:
                ax.add_patch(
                    _rect(j - 0.5, i - 0.5)  # outline
                )
    ax.set_xticks(range(len(cols)), _shorts(cols), fontsize=7, rotation=40, ha="right")
    ax.set_yticks(range(len(rows)), _shorts(rows), fontsize=7)
    ax.set_xlabel(_short(col_label, TITLE_MAX), fontsize=8)
    ax.set_ylabel(_short(row_label, TITLE_MAX), fontsize=8)
    ax.set_title(_short(title, TITLE_MAX), fontsize=9)
    bar = fig.colorbar(image, ax=ax, shrink=0.8)
    bar.set_label(_short(scale_label, TITLE_MAX), fontsize=7)
    counted = len(rows) - 1 if last_row else len(rows)
    alt = f"{title}: {counted} {row_label}s × {len(cols)} {col_label}s"
    if last_row:
        alt += f", and a last row: {last_row}"
    return _render(fig, id=id, title=title, alt=alt, caption=caption, format=format)


def _rect(x: float, y: float) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((x, y), 1, 1, fill=False, edgecolor="black", lw=1.2)


@_plain_text
def reliability(
    series: Sequence[tuple[str, Sequence[float], Sequence[float], Sequence[int]]],
    *,
    id: str,
    title: str,
    caption: str = "",
    format: FigureFormat = "png",
) -> Figure:
    """Reliability diagram: per bin, the mean stated probability (x) against the share
    of pairs the humans decided for a (y); the diagonal is perfect calibration.

    ``series``: ``(label, mean_p, observed, n)`` per line, one entry per bin (a bin
    with ``n == 0`` is not drawn); marker area grows with ``n``.
    """
    fig, ax = _new(4.6, 4.0)
    lines = ax.plot([0, 1], [0, 1], color="grey", lw=0.8, ls="--")
    parts = []
    for i, (label, mean_p, observed, n) in enumerate(series):
        x = np.asarray(mean_p, dtype=float)
        y = np.asarray(observed, dtype=float)
        w = np.asarray(n, dtype=float)
        if not len(x) == len(y) == len(w):
            raise ValueError("mean_p, observed and n need one entry per bin")
        ok = (w > 0) & np.isfinite(x) & np.isfinite(y)
        colour, ls, marker = _look(i)
        size = 10 + 60 * w[ok] / max(float(w.max()), 1.0)
        lines += ax.plot(x[ok], y[ok], color=colour, lw=1.2, ls=ls)
        ax.scatter(x[ok], y[ok], s=size, color=colour, marker=marker, zorder=3)
        points = zip(x[ok], y[ok], w[ok], strict=True)
        text = ", ".join(f"{a:.2f}→{b:.2f} (n={int(c):,})" for a, b, c in points)
        parts.append(f"{label}: {text}")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("judge's probability that a is better (bin mean)", fontsize=8)
    ax.set_ylabel("share of pairs the humans decided for a", fontsize=8)
    ax.set_title(_short(title, TITLE_MAX), fontsize=9)
    ax.tick_params(labelsize=7)
    ax.grid(alpha=0.3)
    _legend(ax, lines, ["perfect calibration", *(s[0] for s in series)], loc="upper left")
    alt = f"{title}: " + "; ".join(parts)
    return _render(fig, id=id, title=title, alt=alt, caption=caption, format=format)

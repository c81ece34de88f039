"""Verbosity (Saito et al.): does the judge prefer longer answers more than humans do?"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.analyses.base import (
    Analysis,
    AuditOptions,
    Context,
    Parts,
    add_pairwise_results,
    coef_figure,
    estimate_columns,
    findings_of,
    needs_lengths,
    needs_verdicts,
    slug,
    table_row,
    warnings_texts,
)
from recuse.biases.verbosity import HEADING
from recuse.biases.verbosity import LONGER_GAP as LONGER_GAP
from recuse.biases.verbosity import VERBOSITY as VERBOSITY
from recuse.choices import HumanTies, Orders
from recuse.data.inputs import Input
from recuse.errors import RecuseError
from recuse.metrics.estimate import items_of
from recuse.metrics.summary import PairwiseBias
from recuse.metrics.verbosity import (
    BIN_INTERVAL,
    HUMAN_LONGER_TIES,
    HUMAN_LONGER_UNIT,
    curve_columns_of,
    for_files,
    human_prefers_longer,
    human_verbosity_curve,
    relative_ab,
    response_lengths,
)
from recuse.metrics.verdicts import TIE_TOL, human_ties_noun, orders_as_set
from recuse.numbers import count, counted, general, percent
from recuse.reference import reword
from recuse.report import figures as fig
from recuse.report.model import Baseline, Exclusion, Table
from recuse.roster import Roster

_X_LABEL = "(len human-preferred − len other) / len other"


def _curve_x(frame: pd.DataFrame) -> np.ndarray:
    low = frame["bin_low"].to_numpy(float)
    high = frame["bin_high"].to_numpy(float)
    width = np.nanmin(np.where(np.isfinite(high), high - low, np.nan)) if len(low) else 0.2
    width = width if math.isfinite(width) else 0.2
    return np.where(np.isfinite(high), (low + high) / 2, low + width / 2)


#: how a point of the agreement curve reads a pair: the share of the win its verdict gives
#: the human-preferred answer, the orders' probabilities averaged (it said "a split
#: between the two orders counts ½", true of two firm picks only)
SPLIT = (
    "both orders averaged: 1 = it agrees in both, ½ for two firm picks that disagree, a "
    "probability's share where the judge gives one"
)


def _split(orders: Orders, said: str | None = None) -> str:
    """:data:`SPLIT`, or with ``--orders first`` / ``second`` the one order's verdict the
    points are of (they said "both orders averaged" there too)."""
    if orders == "both":
        return SPLIT
    return (
        f"the {orders} order's verdict alone ({orders_as_set(orders, said)}): 1 = it "
        "agrees, 0 = it "
        "does not, a probability's share where the judge gives one"
    )


def curve_title(
    name: str, *, dataset: str, level: float, orders: Orders, orders_said: str | None = None
) -> str:
    """The title of curve ``name``'s table (a key of
    :attr:`~recuse.metrics.summary.PairwiseBias.curves`): what a row's ``mean`` is the
    mean of and which interval it has, the words its columns
    (:func:`~recuse.metrics.verbosity.curve_columns`) point to. The audit's tables and
    the JSON of ``recuse metrics pairs --out`` both carry it. ``orders_said``: the
    orders option as the user set it (:func:`recuse.options.option_as_set`)."""
    interval = f"{percent(level)} {BIN_INTERVAL}"
    if name == "human_alignment_curve":
        return (
            f"Agreement by length difference — {dataset}: per bin of (len human-preferred − "
            "len other) / len other, the mean share of the win the judge gives the "
            f"human-preferred answer ({_split(orders, orders_said)}), its standard deviation "
            f"and {interval}"
        )
    if name == "human_verbosity_curve":
        return (
            f"Human preference by length difference — {dataset}: {HUMAN_CURVE_TITLE}, "
            f"with its {interval}"
        )
    if name == "judge_verbosity_curve":
        return (
            f"Judge preference by length difference (same-source pairs) — {dataset}: per "
            "bin of (len a − len b) / len b, the mean of +1 (the judge picks a in both "
            f"orders), −1 (b in both) and 0 (otherwise), with its {interval}"
        )
    raise ValueError(f"no curve named {name!r}")


def _align_caption(bins: pd.DataFrame, o: AuditOptions) -> str:
    """What a point, a band and the dashed line of the agreement curve are, and that the
    last point, drawn one bin width past its start, holds every pair from there up (on
    llmbar-mtbench the largest bin, 51 of gpt-3.5-turbo's pairs at x = 2.1). ``bins``:
    the rows drawn (one judge's, or every judge's of a shared figure)."""
    finite = bins[np.isfinite(bins["bin_high"].to_numpy(float))]
    widths = sorted({round(float(w), 9) for w in finite["bin_high"] - finite["bin_low"]})
    wide = f"{general(widths[0])} wide" if len(widths) == 1 else "of the table's widths"
    rows = (
        "the row n under the plot" if bins["judge"].nunique() < 2 else "the rows n, one per judge"
    )
    text = (
        "Each point: the mean share of the win the judge gives the human-preferred answer "
        f"({_split(o.orders, o.said('orders'))}) over "
        f"the pairs of one bin of the length difference, {_X_LABEL} ({wide}; bins of at least "
        f"{count(o.min_n)} pairs; {rows}: each point's pairs); bands: "
        f"{percent(o.level)} intervals, each a {BIN_INTERVAL}; "
        "dashed line: 0.5, as much of the win to the other answer as to the "
        "human-preferred (half of firm picks agree). A judge without verbosity bias has a "
        "flat curve; one that prefers longer answers rises to the right."
    )
    top = bins[~np.isfinite(bins["bin_high"].to_numpy(float))]
    if len(top):
        start = general(float(top["bin_low"].iloc[0]))
        n = ", ".join(
            f"{j} {count(int(k))}" if bins["judge"].nunique() > 1 else count(int(k))
            for j, k in zip(top["judge"], top["n"], strict=True)
        )
        text += f" The last point holds every pair from {start} up ({n} pairs)."
    return text


def _build(ctx: Context, inp: Input, shared: PairwiseBias | None) -> None:
    add_pairwise_results(ctx, ANALYSIS, inp, shared)
    _drop_equal_deviation(ctx)
    with ctx.timed(f"verbosity figures ({inp.name})", ANALYSIS):
        _figures(ctx, inp, shared.curves if shared else {})


def _drop_equal_deviation(ctx: Context) -> None:
    """The section's table keeps a ``verbosity_deviation`` row (Eq. 5, |Eq. 6|) only where
    it differs from ``verbosity_bias``'s: Eq. 6 negative, or an interval that holds 0
    (|Eq. 6|'s is then ``[0, max(−low, high)]``, with its own extrapolated ends: the
    row was dropped on its estimate alone, where the signed row read [−0.05, 0.44] and
    its warning named ends |Eq. 6|'s interval does not have). Elsewhere it repeats it.
    The page's texts of the table (:attr:`~recuse.report.model.Table.texts`) are
    filtered in step with its rows."""
    part = ctx.part(ANALYSIS)
    numbers = ["estimate", "ci_low", "ci_high"]
    for i, t in enumerate(part.tables):
        f = t.frame
        if not {"metric", "judge", *numbers} <= set(f.columns):
            continue
        keys = [c for c in ("dataset", "judge") if c in f.columns]
        signed = f[f["metric"] == "verbosity_bias"].set_index(keys)[numbers]
        signed = signed[~signed.index.duplicated()]
        same = []
        for _, row in f.iterrows():
            key = tuple(row[k] for k in keys) if len(keys) > 1 else row[keys[0]]
            ref = signed.loc[key] if key in signed.index else None
            same.append(
                row["metric"] == "verbosity_deviation"
                and ref is not None
                and all(abs(float(row[c]) - float(ref[c])) < 1e-12 for c in numbers)
            )
        keep = ~np.array(same, dtype=bool)
        texts = {c: [v for v, k in zip(vs, keep, strict=True) if k] for c, vs in t.texts.items()}
        part.tables[i] = replace(t, frame=f[keep].reset_index(drop=True), texts=texts)


def report_curve_table(name: str, frame: pd.DataFrame, dataset: str, o: AuditOptions) -> Table:
    """Curve ``name``'s table of the report, as its files write it
    (:func:`~recuse.metrics.verbosity.for_files`: the open last bin's ``bin_high``
    empty), with its title (:func:`curve_title`) and its columns' words."""
    words = curve_columns_of(frame, level=o.level)
    return Table(
        slug({"human_alignment_curve": "alignment-curve"}.get(name, name), dataset),
        curve_title(
            name, dataset=dataset, level=o.level, orders=o.orders, orders_said=o.said("orders")
        ),
        for_files(frame).reset_index(drop=True),
        show=False,
        columns=words,
    )


def _figures(ctx: Context, inp: Input, curves: Mapping[str, pd.DataFrame]) -> None:
    o = ctx.options
    part = ctx.part(ANALYSIS)
    found = findings_of(ctx, ANALYSIS, inp.name, LONGER_GAP)
    if found:
        part.figures.append(coef_figure(found, inp.name, "prefer-longer gap", o))
    align = curves.get("human_alignment_curve")
    if align is not None and len(align):
        series, drawn = [], []
        for judge, g in align.groupby("judge", sort=True):
            g = g[g["n"] >= o.min_n]
            if len(g) >= 2:
                y, low, high = (g[c].astype(float).tolist() for c in ("mean", "ci_low", "ci_high"))
                n = g["n"].astype(int).tolist()  # the table's counts, as its CSV has them
                series.append((_curve_x(g), fig.Series(str(judge), y, low, high, n)))
                drawn.append(g.assign(judge=str(judge)))
        shown = pd.concat(drawn) if drawn else align.iloc[:0]
        same = bool(series) and all(
            len(x) == len(series[0][0]) and np.allclose(x, series[0][0]) for x, _ in series
        )
        if same:  # the judges share the bins: one figure
            part.figures.append(
                fig.curves(
                    series[0][0].tolist(),
                    [s for _, s in series],
                    id=slug("align", inp.name),
                    title=f"Agreement with humans by length difference — {inp.name}",
                    xlabel=_X_LABEL,
                    ylabel="share of the win to the human-preferred answer",
                    reference=0.5,
                    caption=_align_caption(shown, o),
                    format=o.figure_format,
                )
            )
        else:
            for x, s in series:
                part.figures.append(
                    fig.curves(
                        x.tolist(),
                        [s],
                        id=slug("align", inp.name, s.label),
                        title=f"Agreement by length difference — {s.label}, {inp.name}",
                        xlabel=_X_LABEL,
                        ylabel="share of the win to the human-preferred",
                        reference=0.5,
                        caption=_align_caption(shown[shown["judge"] == s.label], o),
                        format=o.figure_format,
                    )
                )
        part.tables.append(report_curve_table("human_alignment_curve", align, inp.name, o))
    for name in ("human_verbosity_curve", "judge_verbosity_curve"):
        frame = curves.get(name)
        if frame is not None and len(frame):
            part.tables.append(report_curve_table(name, frame, inp.name, o))
            if name == "human_verbosity_curve":
                _curve_exclusions(ctx, inp)


#: the human curve's name in the report's exclusions (a table with judges)
HUMAN_CURVE_EXCLUDED = "verbosity: the human score by length difference (Figure 4, no judge)"


def curve_left_out(frame: pd.DataFrame) -> tuple[int, list[tuple[str, int]]]:
    """The items of a pairs table (one per ``item_id``) and, by reason, those the human
    score by length difference (Figure 4,
    :func:`~recuse.metrics.verbosity.human_verbosity_curve`) leaves out: no human label;
    a length unknown, or both answers empty (``(len a − len b) / len b`` has no value).
    The rest are the curve's pairs (its bins' ``n`` summed).

    >>> t = pd.DataFrame({"item_id": list("abcde"), "human": [1, None, 0, 1, 0.5],
    ...                   "len_a": [9, 9, None, 0, 4], "len_b": [3, 3, 3, 0, 0]})
    >>> total, left = curve_left_out(t)
    >>> total, [k for _, k in left]
    (5, [1, 2])
    """
    items = frame[~items_of(frame).duplicated(keep="first")]
    labelled = np.isfinite(items["human"].to_numpy(float))
    la, lb, _ = response_lengths(items)
    placed = ~np.isnan(relative_ab(la, lb))  # +inf (len b = 0): the last bin holds it
    left = [
        ("no human label", int((~labelled).sum())),
        (
            "a length unknown, or both answers empty: no relative length difference",
            int((labelled & ~placed).sum()),
        ),
    ]
    return len(items), [(why, k) for why, k in left if k]


def _curve_exclusions(ctx: Context, inp: Input) -> None:
    """The items a judged table's human curve leaves out (:func:`curve_left_out`), as
    exclusions of that curve alone: its bins' pairs summed fell short of the table's
    items with nothing said where."""
    _left_out(ctx, inp, HUMAN_CURVE_EXCLUDED, curve_left_out(inp.frame))


def _left_out(
    ctx: Context, inp: Input, analysis: str, counted: tuple[int, list[tuple[str, int]]]
) -> None:
    """``counted`` (the items of ``inp`` and, by reason, those a human baseline leaves
    out) as exclusions of ``analysis`` alone, worded for the table's reference."""
    kind = inp.source.reference
    total, left = counted
    what = reword(analysis, kind)
    for why, k in left:
        ctx.exclusions.append(Exclusion(inp.name, reword(why, kind), k, total, analysis=what))


#: the humans' length preference's name, in the terminal, the page and report.json
HUMAN_LONGER_TITLE = "humans' preference for the longer answer"

#: the title of the human curve's table (Figure 4's data), judged table or not
HUMAN_CURVE_TITLE = (
    # the label as h, not "human": correctness labels reword every "human", and
    # JudgeBench's title read "the mean correctness-label score 2·correctness-label − 1"
    "per bin of (len a − len b) / len b, the mean human score 2h − 1, h the human "
    "label (+1: the human prefers a, −1: b, 0: a tie; a share of votes in between: "
    "0.75 for a reads +0.5)"
)


def _has_lengths(frame: pd.DataFrame) -> bool:
    """Whether the table gives both answers' texts or lengths."""
    cols = set(frame.columns)
    return {"response_a", "response_b"} <= cols or {"len_a", "len_b"} <= cols


def gives_baseline(frame: pd.DataFrame, roster: Roster) -> str | None:
    """What a pairs table without judge verdicts still gives the audit's verbosity
    analysis, in words for ``recuse validate`` (None: nothing, or the table is judged):
    with human labels and the answers' texts or lengths, the humans' own length
    preference (:func:`_unjudged`). hh-rlhf read "verbosity: no — run a judge on it
    first" in ``recuse validate`` while ``recuse audit`` printed its 0.44 [0.42, 0.46]."""
    if (
        needs_verdicts(frame, roster) is None  # judged: the section has it
        or "human" not in frame.columns
        or not frame["human"].notna().any()
        or not _has_lengths(frame)
    ):
        return None
    return (
        f"without one, the audit gives the {HUMAN_LONGER_TITLE} (a baseline of the "
        "labels, no judge's bias)"
    )


#: the words of the humans' length table's ``human_ties`` column, by ``--human-ties``
#: (``{noun}``: :func:`baseline_tie_noun`)
TIES_COLUMN: dict[str, str] = {
    "drop": "the {noun} (labels of 0.5) on pairs of unequal length, left out of n "
    "(--human-ties drop)",
    "split": "the {noun} (labels of 0.5) on pairs of unequal length, counted in n with "
    "½ to each side (--human-ties split)",
}


def baseline_ties(
    tied: int, human_ties: HumanTies, said: str | None = None, *, noun: str = "human ties"
) -> str:
    """How the humans' length preference used its ``tied`` labels of 0.5, beside the
    number: left out of its pairs (``human_ties="drop"``) or counted ½ to each side in
    them (``"split"``); "" where there were none. ``said``: the option as the user set
    it (:func:`recuse.options.option_as_set`; default its flag). ``noun``: what those
    labels are (:func:`baseline_tie_noun`: "tied or evenly split human votes" where a
    label is a share of several votes, as the metric's method says).

    >>> baseline_ties(186, "drop")
    '186 human ties (labels of 0.5) left out: --human-ties drop'
    >>> baseline_ties(186, "split", noun="tied or evenly split human votes")[:71]
    '186 of them tied or evenly split human votes (labels of 0.5), each coun'
    """
    if not tied:
        return ""
    said = said or f"--human-ties {human_ties}"
    if human_ties == "drop":
        return f"{tied:,} {noun} (labels of 0.5) left out: {said}"
    return f"{tied:,} of them {noun} (labels of 0.5), each counted ½ to each side: {said}"


def _baseline_items(
    frame: pd.DataFrame,
) -> tuple[pd.DataFrame, NDArray[np.bool_], NDArray[np.bool_], NDArray[np.bool_]]:
    """A labels-only pairs table's items (one per ``item_id``) with, per item, whether
    it has a label, whether it is labelled with answers of unequal (known) lengths, and
    whether that label is 0.5 (tied)."""
    items = frame[~items_of(frame).duplicated(keep="first")]
    h = items["human"].to_numpy(float)
    la, lb, _ = response_lengths(items)
    labelled = np.isfinite(h)
    differ = labelled & np.isfinite(la) & np.isfinite(lb) & (la != lb)
    return items, labelled, differ, differ & (np.abs(h - 0.5) <= TIE_TOL)


def baseline_tie_noun(frame: pd.DataFrame) -> str:
    """What the labels of 0.5 the humans' length preference meets are, in words
    (:func:`~recuse.metrics.verdicts.human_ties_noun`): "human ties", or "tied or
    evenly split human votes" where one of them is a share of several votes (47 of
    mt-bench-human's 186 are 1–1 splits, not ties)."""
    items, _, _, tied = _baseline_items(frame)
    return human_ties_noun(items, tied)


#: the reasons :func:`baseline_left_out` gives for pairs without a label, and of equal length
NO_LABEL = "no human label"
EQUAL_LENGTH = "the two answers of equal length (or a length unknown): neither is the longer"


def baseline_left_out(
    frame: pd.DataFrame, *, human_ties: HumanTies, said: str | None = None
) -> tuple[int, list[tuple[str, int]]]:
    """The items of a labels-only pairs table (one per ``item_id``) and, by reason, those
    the humans' preference for the longer answer
    (:func:`~recuse.metrics.verbosity.human_prefers_longer`) leaves out, for the
    report's exclusions: no label; the two answers of equal length (or a length
    unknown); with ``human_ties="drop"``, a label of 0.5 on answers of unequal length.
    The rest are its ``n``. The exclusions said every row of mt-bench-human was left out
    of every analysis, "nothing to assess", beside a baseline of 693 of its 910.

    >>> t = pd.DataFrame({"item_id": list("abcde"), "human": [1, 0.5, 0, None, 1],
    ...                   "len_a": [9, 9, 3, 9, 4], "len_b": [3, 3, 3, 3, 8]})
    >>> baseline_left_out(t, human_ties="drop")[0]
    5
    >>> [k for _, k in baseline_left_out(t, human_ties="drop")[1]]
    [1, 1, 1]
    >>> [k for _, k in baseline_left_out(t, human_ties="split")[1]]
    [1, 1]
    """
    items, labelled, differ, tied = _baseline_items(frame)
    left = [(NO_LABEL, int((~labelled).sum())), (EQUAL_LENGTH, int((labelled & ~differ).sum()))]
    if human_ties == "drop":
        noun = human_ties_noun(items, tied)
        said = said or "--human-ties drop"
        left.append((f"{noun} (labels of 0.5) on answers of unequal length: {said}",
                     int(tied.sum())))  # fmt: skip
    return len(items), [(why, k) for why, k in left if k]


def _left_out_words(left: list[tuple[str, int]]) -> str:
    """The pairs :func:`baseline_left_out` gives besides the ties (said by the baseline's
    ties words), in words beside its number: ``31 pairs whose two answers are of equal
    length (or a length unknown) left out``; "" where none."""
    said = {
        NO_LABEL: "without a human label",
        EQUAL_LENGTH: "whose two answers are of equal length (or a length unknown)",
    }
    parts = [f"{counted(k, 'pair')} {said[why]}" for why, k in left if why in said]
    return f"{' and '.join(parts)} left out" if parts else ""


def _unjudged(ctx: Context, inp: Input) -> None:
    """A pairs table with human labels and the answers' texts or lengths but no judge's
    verdicts: the humans' own length preference (Saito et al. §5, Figure 4), the
    baseline a judge's verbosity is read against — the share of pairs of unequal length
    in which the humans preferred the longer answer
    (:func:`~recuse.metrics.verbosity.human_prefers_longer`) and the human score by
    relative length difference (:func:`~recuse.metrics.verbosity.human_verbosity_curve`,
    with its figure). No finding: nothing here is a judge's bias. A table with judges
    has the curve in its section already (from the shared bootstrap)."""
    frame = inp.frame
    if inp.table != "pairs" or gives_baseline(frame, ctx.roster) is None:
        return
    o = ctx.options
    part = ctx.part(ANALYSIS)
    kind = inp.source.reference
    with ctx.timed(f"humans' length preference ({inp.name})", ANALYSIS):
        try:
            r = human_prefers_longer(frame, boot=o.resampling, min_n=o.min_n, human_ties=o.ties)
        except RecuseError as exc:
            part.notes.append(
                reword(f"{inp.name}: {HUMAN_LONGER_TITLE} not estimated — {exc}", kind)
            )
        else:
            r = replace(r, method=reword(r.method, kind))
            noun = baseline_tie_noun(frame)
            left = baseline_left_out(frame, human_ties=o.ties, said=o.ties_said())
            base = Baseline(
                inp.name, reword(HUMAN_LONGER_TITLE, kind), reword(HUMAN_LONGER_UNIT, kind), r,
                ties=reword(
                    baseline_ties(
                        r.counts.get(HUMAN_LONGER_TIES, 0), o.ties, o.ties_said(), noun=noun
                    ),
                    kind,
                ),
                left_out=_left_out_words(left[1]),
            )  # fmt: skip
            part.baselines.append(base)
            # the same items as exclusions of that baseline alone
            _left_out(ctx, inp, f"verbosity: the {HUMAN_LONGER_TITLE} (a baseline, no judge)", left)
            row = pd.DataFrame([table_row(r, inp.name, "")])
            # no judge, no parts, all its pairs: those columns would read empty
            row = row.drop(columns=["method", "bias", "judge", "components", "n_of"])
            row.insert(3, "unit", base.unit)
            tied = r.counts.get(HUMAN_LONGER_TIES, 0)
            row.insert(list(row.columns).index("n") + 1, "human_ties", tied)
            words = estimate_columns(row) | {
                "unit": "what the estimate is, and its no-preference value",
                "n": "the labelled pairs of unequal length the share counts",
                "null": "the no-preference value, 0.5: the longer answer as often as the shorter",
                "human_ties": reword(
                    TIES_COLUMN[o.ties]
                    .format(noun=noun)
                    .replace(f"--human-ties {o.ties}", o.ties_said()),
                    kind,
                ),
            }
            part.tables.append(
                Table(
                    slug("human-length-preference", inp.name),
                    f"{base.title[:1].upper()}{base.title[1:]} — {inp.name}: a baseline "
                    "of the data's labels, no judge's bias",
                    row,
                    columns={c: words[c] for c in row.columns},
                    texts=warnings_texts([r]),
                )
            )
            note = (
                f"{inp.name}: human labels only, no judge verdicts — {base.sentence}. A "
                "baseline of the data, not a bias of any judge (no row of the summary, "
                "nothing for the gate): a judge's prefer-longer gap reads its pick rate "
                "of the longer answer against the humans'; judging these pairs gives it."
            )
            part.notes.append(reword(note, kind))
        try:
            curve = human_verbosity_curve(frame, boot=o.resampling, min_n=o.min_n)
        except RecuseError:
            return
        if len(curve):
            _human_curve_figure(part, curve, inp.name, o)
            # its interval is the judged table's (a Wilson one): it said cluster-bootstrap
            table = report_curve_table("human_verbosity_curve", curve, inp.name, o)
            part.tables.append(replace(table, title=reword(table.title, kind)))


def _human_curve_figure(part: Parts, curve: pd.DataFrame, name: str, o: AuditOptions) -> None:
    """Figure 4: the mean human score by bin of (len a − len b) / len b, bins of at
    least ``min_n`` pairs, with their intervals and each point's pairs."""
    g = curve[curve["n"] >= o.min_n]
    if len(g) < 2:
        return
    y, low, high = (g[c].astype(float).tolist() for c in ("mean", "ci_low", "ci_high"))
    series = fig.Series("humans", y, low, high, g["n"].astype(int).tolist())
    top = g[~np.isfinite(g["bin_high"].to_numpy(float))]
    last = (
        f" The last point holds every pair from {general(float(top['bin_low'].iloc[0]))} up "
        f"({count(int(top['n'].iloc[0]))} pairs)."
        if len(top)
        else ""
    )
    part.figures.append(
        fig.curves(
            _curve_x(g).tolist(),
            [series],
            id=slug("human-length", name),
            title=f"Human preference by length difference — {name}",
            xlabel="(len a − len b) / len b",
            ylabel="mean human score (+1 a, −1 b)",
            reference=0.0,
            caption=(
                "Saito et al.'s Figure 4 on these pairs. Each point: the mean human score "
                "2h − 1 (+1: the humans prefer a, −1: b, 0: a tie) over the pairs of one bin "
                "of the relative length difference (len a − len b) / len b (bins of at "
                f"least {count(o.min_n)} pairs; the row n under the plot: each point's "
                f"pairs); band: {percent(o.level)} intervals, each a {BIN_INTERVAL}; "
                "dashed line: 0, no preference for either answer. Humans who prefer longer "
                "answers give a curve that rises to the right; a flat one, no length "
                f"preference. A baseline of the data, not a judge's bias.{last}"
            ),
            format=o.figure_format,
        )
    )


ANALYSIS = Analysis(
    heading=HEADING,
    intro=(
        "Does the judge prefer longer answers more than the humans do? The headline is "
        "the prefer-longer gap: P(judge picks the longer answer) − P(human picks it), "
        "over the same pairs of unequal length; 0 = as often as the humans (a judge whose "
        "errors are unrelated to length reads below 0, nearer half the time). Beside "
        "it, in its own words, Saito et al.'s Eq. 6: the judge's recall when the human prefers the "
        "longer answer minus its recall when the human prefers the shorter one — whether "
        "the judge is right more often on one side, not how often it picks the longer "
        "answer, so the two can differ in size and even in sign (Eq. 6 moves with the "
        "judge's accuracy, and is above 0 for a judge with no length preference where the "
        "longer answers are the better ones). The table also gives Eq. 5 (|Eq. 6|, "
        "verbosity_deviation) where it differs from Eq. 6: an absolute value "
        "(absolute_value true), never below 0, whose interval is the absolute values over "
        "Eq. 6's and whose p-value is Eq. 6's. The curve shows how often the judge agrees "
        "with the human as a function of how much longer the human-preferred answer is "
        "(Figure 5 of the paper)."
    ),
    requires="pairs with judge verdicts, human labels, and response texts or lengths "
    "(response_a/response_b or len_a/len_b); without verdicts, human labels and lengths "
    f"give the {HUMAN_LONGER_TITLE} alone (a baseline of the labels, no judge's bias)",
    needs=needs_verdicts,
    estimable=needs_lengths,
    metrics={
        "verbosity_bias": VERBOSITY,
        "verbosity_deviation": None,
        "verbosity_longer_gap": LONGER_GAP,
    },
    build=_build,
    unjudged=_unjudged,
    unjudged_gives=gives_baseline,
)

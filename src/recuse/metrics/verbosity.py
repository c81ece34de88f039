"""Verbosity bias (verbosity-bias.txt, §4–6): does the judge prefer longer answers more than humans?

Notation of the paper (§6): ``Y`` is the human-preferred response of a pair, ``Y'``
the judge's pick and ``S`` the index of the LONGER response (pairs of equal length
have no ``S`` and are left out).

* Signed verbosity bias, Eq. 6 — the difference in inaccuracy::

      P(Y' = 1-Y | S = 1-Y) - P(Y' = 1-Y | S = Y)

  = (how often the judge picks the longer response when the human prefers the
  shorter) - (how often it picks the shorter when the human prefers the longer)
  = recall(human prefers longer) - recall(human prefers shorter). Positive = the
  judge is right more often where the human chose the longer answer than where the
  human chose the shorter. That is not a preference for length beyond the humans'
  by itself: where the longer answers are the better ones, a judge with no length
  preference at all is above 0 too (:data:`EQ6_NOT_ZERO`), as the pairs whose human
  chose the shorter answer are the close calls, where any judge errs more. A second
  rater drawn like the humans (the same quality model, no length term, so the
  prefer-longer gap is 0) reads +0.21 where the humans choose the longer answer of
  68% of pairs (``tests/metrics/test_verbosity.py``), +0.12 at 60% and +0.06 at 55%;
  the prefer-longer gap (:func:`prefer_longer_gap`) has no such term.

* Deviation from accuracy parity, Eq. 5: ``|P(Y'=Y | S=Y) - P(Y'=Y | S=1-Y)|``,
  the absolute value of the same difference; its interval is the absolute values over
  Eq. 6's and its p-value Eq. 6's (a bootstrap of the absolute value never holds 0).

Curves (x = relative length difference, in fractions: 0.2 = 20 % longer):

* :func:`human_alignment_curve` (Figure 5): x = (len chosen - len rejected) /
  len rejected, "chosen" = human-preferred; y = the share of the win the judge gives the
  chosen answer (``verdict="prob"``: the orders' probabilities averaged; ``"pick"``: 1, ½
  or 0), its agreement with the human; with the sample size per bin.
* :func:`human_verbosity_curve` (Figure 4): x = (len a - len b) / len b; y = the
  human score, +1 = a, 0 = tie, -1 = b.
* :func:`human_prefers_longer`: the share of pairs of unequal length in which the
  humans preferred the longer answer (0.5 = no preference), each labelled item once;
  no judge enters. The humans' own length preference, the baseline a judge's is read
  against (§5: "humans seem to prefer longer answers too"), not a bias of any judge.
* :func:`judge_verbosity_curve` (Figure 3): for pairs of answers from the same
  source model, x as in Figure 4; y = +1 if the judge picks a in both orders, -1
  if it picks b in both, 0 (draw) otherwise.

Lengths are counted in words (``len(text.split())``, each Chinese or Japanese
character a word: :func:`recuse.files.words_in`) by default, or characters, or
tokens of a tokenizer you pass, from ``response_a`` / ``response_b``; without the
texts the ``len_a`` / ``len_b`` columns are used (readers fill them with word
counts), and ``unit="column"`` always uses those columns.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from recuse.errors import ConfigError, EstimationError, InputError
from recuse.files import words_in
from recuse.metrics.bootstrap import (
    GroupedStatistic,
    Resampling,
    check_min_n,
    cluster_bootstrap,
    difference_of_means,
    difference_of_ratios,
    ratio,
    share_interval,
)
from recuse.metrics.estimate import MetricSpec, clusters_of, items_of, run_one
from recuse.metrics.result import MetricResult
from recuse.metrics.self_preference import (
    SLOT_WHO,
    one_slot_columns,
    one_slot_notes,
    one_slot_warnings,
    single_judge,
)
from recuse.metrics.verdicts import (
    TIE_TOL,
    HumanTies,
    JudgeTies,
    Verdict,
    attribute_gap_values,
    check_modes,
    human_ties_words,
    judge_codes,
    judge_score,
    order_picks,
    orient,
    require_pairs,
    ties_note,
)

__all__ = [
    "BIN_INTERVAL",
    "CURVE_COLUMNS",
    "EQ6_NOT_ZERO",
    "GAP_NOT_ZERO",
    "HUMAN_LONGER",
    "HUMAN_LONGER_TIES",
    "HUMAN_LONGER_UNIT",
    "OPEN_BIN",
    "Tokenizer",
    "Unit",
    "VerbosityKind",
    "bin_edges",
    "curve_columns",
    "curve_columns_of",
    "curve_statistic",
    "curve_table",
    "for_files",
    "human_alignment_curve",
    "human_longer_spec",
    "human_prefers_longer",
    "human_verbosity_curve",
    "judge_verbosity_curve",
    "longer_gap_spec",
    "longer_labelled",
    "prefer_longer_gap",
    "response_lengths",
    "verbosity_bias",
    "verbosity_spec",
]

Unit = Literal["words", "chars", "tokens", "column"]
VerbosityKind = Literal["signed", "absolute"]
Tokenizer = Callable[[str], Sequence[Any]]
FloatArray = NDArray[np.float64]

CURVE_COLUMNS = [
    "judge", "bin_low", "bin_high", "n", "n_clusters", "mean", "sd", "ci_low", "ci_high", "note",
]  # fmt: skip


#: what an empty ``bin_high`` of a curve table's files says (:func:`for_files`)
OPEN_BIN = (
    "empty (null in JSON) for the last bin: no upper edge, the last bin is open — every "
    "pair from bin_low up"
)


def for_files(frame: pd.DataFrame) -> pd.DataFrame:
    """A curve table as its CSV and JSON write it: the open last bin's ``bin_high``
    (``inf`` in the frame, where ``x < bin_high`` holds every pair from ``bin_low`` up)
    empty, said by :data:`OPEN_BIN` in its column's words, and an open first bin's
    ``bin_low`` (``-inf``: the familiarity curves) empty too. The CSV wrote ``inf`` and
    report.json null for the one edge.

    >>> t = for_files(pd.DataFrame({"bin_low": [-np.inf, 2.0], "bin_high": [0.2, np.inf]}))
    >>> t["bin_low"].tolist(), t["bin_high"].tolist()
    ([nan, 2.0], [0.2, nan])
    """
    out = frame
    for col, open_edge in (("bin_low", np.isneginf), ("bin_high", np.isposinf)):
        if col in frame.columns:
            edge = frame[col].astype(float)
            out = out.assign(**{col: edge.where(~open_edge(edge))})
    return out


def curve_columns_of(frame: pd.DataFrame, *, level: float) -> dict[str, str]:
    """:func:`curve_columns` for the columns ``frame`` has (a curve without judges has
    no ``judge``), in its order."""
    words = curve_columns(level)
    return {c: words[c] for c in frame.columns}


def curve_columns(level: float) -> dict[str, str]:
    """What each column of a curve table (:func:`curve_table`) holds, its intervals at
    ``level``: the words under the table, in report.json's ``columns`` and in the JSON of
    ``recuse metrics pairs --out``. The last bin is open: its ``bin_high``, ``inf`` in
    the frame, is written empty in the CSV and null in the JSON (:func:`for_files`),
    one value said by :data:`OPEN_BIN`, where the CSV read ``inf`` and report.json null.

    >>> curve_columns(0.9)["bin_high"].split(";")[0]
    "the bin's upper end, not in it (a share, as bin_low)"
    """
    return {
        "judge": "the judge whose verdicts the row is of",
        "bin_low": "the bin's lower end, in it: a relative length difference, (len one − "
        "len other) / len other, as the title says which (a share: 0.2 = 20% longer)",
        "bin_high": f"the bin's upper end, not in it (a share, as bin_low); {OPEN_BIN}",
        "n": "the pairs in the bin",
        "n_clusters": "the prompts those pairs come from (the interval resamples them)",
        "mean": "the mean of the per-pair value the title names, over the bin's pairs",
        "sd": "the standard deviation of that per-pair value over the bin's pairs "
        "(empty for one pair)",
        "ci_low": f"the low end of the mean's {level:.0%} interval ({BIN_INTERVAL}: "
        "p(1 − p)/se² on the 0–1 scale, the bin's prompts where every pair reads the same; "
        "normal quantile); empty with a note where the bin has too few pairs",
        "ci_high": "the high end",
        "note": "why the bin has no interval (too few pairs or prompts); empty: it has one",
    }


def response_lengths(
    pairs: pd.DataFrame, *, unit: Unit = "words", tokenizer: Tokenizer | None = None
) -> tuple[FloatArray, FloatArray, str]:
    """Lengths of responses a and b (NaN where unknown) and a note on where they came from.

    >>> t = pd.DataFrame({"response_a": ["one two three", "x"], "response_b": ["a  b", None]})
    >>> la, lb, how = response_lengths(t)
    >>> la.tolist(), lb.tolist(), how
    ([3.0, 1.0], [2.0, nan], 'words')
    """
    has_text = "response_a" in pairs.columns and "response_b" in pairs.columns
    has_cols = "len_a" in pairs.columns and "len_b" in pairs.columns
    if unit not in ("words", "chars", "tokens", "column"):
        raise ConfigError(f"unit must be words, chars, tokens or column; got {unit!r}")
    if unit == "column" or (unit == "words" and not has_text):
        if not has_cols and has_text:  # unit column asked for, texts there
            raise InputError(
                "unit 'column' reads the lengths in len_a/len_b, which the table lacks",
                column="len_a",
                fix="add len_a/len_b, or count the response texts with unit words or chars",
            )
        if not has_cols:
            raise InputError(
                "no response lengths: the table has neither response_a/response_b nor len_a/len_b",
                column="len_a",
                fix="add the response texts or their lengths",
            )
        how = "len_a/len_b columns" if unit == "column" else "words (len_a/len_b columns)"
        return pairs["len_a"].to_numpy(float), pairs["len_b"].to_numpy(float), how
    if not has_text:
        raise InputError(
            f"counting {unit} needs the response texts (response_a, response_b)",
            column="response_a",
            fix="add the texts, or use unit='column' with len_a/len_b",
        )
    if unit == "tokens" and tokenizer is None:
        raise ConfigError("unit='tokens' needs a tokenizer (a function text -> list of tokens)")

    def count(texts: pd.Series) -> FloatArray:
        s = texts.astype(object)
        present = s.notna().to_numpy()
        out = np.full(len(s), np.nan)
        strs = s[present].astype(str)
        if unit == "words":  # runs of non-whitespace, a Chinese or Japanese character one
            # each distinct text once: AlpacaEval's baseline answers an instruction for
            # every system and judge (16,568 distinct texts among its 46,676)
            codes, distinct = pd.factorize(strs)
            out[present] = np.array([words_in(t) for t in distinct], float)[codes]
        elif unit == "chars":
            out[present] = strs.str.len().to_numpy(float)
        else:
            assert tokenizer is not None
            out[present] = [float(len(tokenizer(t))) for t in strs]
        return out

    both = count(pd.concat([pairs["response_a"], pairs["response_b"]], ignore_index=True))
    return both[: len(pairs)], both[len(pairs) :], unit


#: what Eq. 6 (and Eq. 5) reads for a judge without a length preference, in the words
#: of its ``method``: not 0 where the longer answers are the better ones
EQ6_NOT_ZERO = (
    "not 0 for a judge with no length preference where the longer answers are the "
    "better ones (the pairs whose human chose the shorter are the close calls, where any "
    "judge errs more: a second rater like the humans reads +0.21 where they choose the "
    "longer answer of 68% of pairs); the prefer-longer gap has no such term"
)

#: what the prefer-longer gap reads for a judge without a length preference, in the
#: words of its ``method``: not 0 where the judge follows the labels less (or more)
#: closely than the humans' choices follow length
GAP_NOT_ZERO = (
    "its 0 is a judge that picks the longer answer as often as the humans, not one with no "
    "length preference: a judge whose errors are unrelated to length picks the longer "
    "answer nearer half the time than the humans do, by -(2·P(human picks longer) - 1)·"
    "(1 - its accuracy) (-0.12 for one right on 60% of pairs where the humans choose the "
    "longer of 65%), and a judge of quality alone that is more consistent than the labels "
    "reads above 0; Eq. 6 has no such term"
)

#: the metric id of :func:`human_prefers_longer`
HUMAN_LONGER = "human_prefers_longer"
#: its ``counts`` key of the labels of 0.5 on pairs of unequal length: left out of ``n``
#: with ``human_ties="drop"``, counted ½ in it with ``"split"``
HUMAN_LONGER_TIES = "human ties (labels of 0.5)"
#: what its number is, in words: its unit and no-preference value
HUMAN_LONGER_UNIT = (
    "a share of pairs, 0 to 1: of the pairs whose two answers differ in length, the share "
    "in which the humans preferred the longer answer (a label's share of votes where it "
    "has one); 0.5 = no preference for either length"
)


def _longer_side(len_a: FloatArray, len_b: FloatArray) -> NDArray[np.int8]:
    side = np.zeros(len(len_a), dtype=np.int8)
    side[len_a > len_b] = 1
    side[len_b > len_a] = -1
    return side


def _for_longer(
    pairs: pd.DataFrame,
    len_a: FloatArray,
    len_b: FloatArray,
    verdict: Verdict,
    human_ties: HumanTies,
    judge_ties: JudgeTies,
) -> tuple[NDArray[np.int8], FloatArray, FloatArray]:
    """The longer side (+1 a, -1 b, 0 equal), and the judge's verdict and the human label
    for the longer response (NaN where the lengths are equal)."""
    check_modes(verdict=verdict, human_ties=human_ties, judge_ties=judge_ties)
    side = _longer_side(len_a, len_b)
    p = judge_score(pairs["p_a"].to_numpy(float), verdict=verdict, judge_ties=judge_ties)
    return side, orient(p, side), orient(pairs["human"].to_numpy(float), side)


def verbosity_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    len_a: FloatArray,
    len_b: FloatArray,
    *,
    kind: VerbosityKind,
    length_note: str,
    verdict: Verdict,
    human_ties: HumanTies,
    judge_ties: JudgeTies,
) -> MetricSpec:
    """Eq. 6 (``kind="signed"``) or Eq. 5 (``"absolute"``) for every judge in ``labels``."""
    side, v, h = _for_longer(pairs, len_a, len_b, verdict, human_ties, judge_ties)
    values, used = attribute_gap_values(h, v, human_ties=human_ties)
    group = np.where(used & (side != 0), codes, -1)
    # beside the statistic, for its warning: the longer answer shown in one order only
    values = np.column_stack([values, one_slot_columns(pairs, side), np.ones(len(values))])
    if kind == "signed":
        name, what = "verbosity_bias", "signed, Eq. 6"
    elif kind == "absolute":
        name, what = "verbosity_deviation", "|.|, Eq. 5"
    else:
        raise ConfigError(f"kind must be 'signed' or 'absolute'; got {kind!r}")
    stat = GroupedStatistic(
        name=name,
        values=values,
        group=group,
        labels=labels,
        combine=difference_of_ratios,
        boot_k=4,
        required=(
            (1, "pairs where the human prefers the longer response"),
            (3, "pairs where the human prefers the shorter response"),
        ),
    )
    ties = ties_note(verdict, judge_ties)
    method = (
        f"verbosity bias ({what}): recall when the human prefers the longer response minus "
        f"recall when the human prefers the shorter"
        + (
            ", in absolute value (never below 0, its interval the absolute values over "
            "Eq. 6's, its p-value Eq. 6's)"
            if kind == "absolute"
            else ""
        )
        + f"; length in {length_note}; {ties}, {_tie_words(pairs, h, side, human_ties)}; "
        f"equal lengths left out; {EQ6_NOT_ZERO}"
    )

    def components(t: FloatArray) -> dict[str, float]:
        return {
            "recall_human_prefers_longer": float(t[0] / t[1]) if t[1] else float("nan"),
            "recall_human_prefers_shorter": float(t[2] / t[3]) if t[3] else float("nan"),
        }

    return MetricSpec(
        name, stat, method, components, labelled=True, folded=kind == "absolute", expanded=True,
        warnings=one_slot_warnings(SLOT_WHO["longer"], (4, 5, 6)),
        notes=one_slot_notes(SLOT_WHO["longer"], (4, 5, 6)),
    )  # fmt: skip


def verbosity_bias(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    kind: VerbosityKind = "signed",
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> MetricResult:
    """Verbosity bias of ``judge``: Eq. 6 (signed, default) or Eq. 5 (``kind="absolute"``).

    With ``v`` the judge's verdict for the longer response and ``w1`` / ``w0`` the
    weights of "the human prefers the longer / the shorter response"::

        Eq. 6 = sum(w1*v)/sum(w1) - sum(w0*(1-v))/sum(w0)
              = P(Y'=longer | Y=longer) - P(Y'=shorter | Y=shorter)
        Eq. 5 = |Eq. 6|

    Eq. 5 is resampled as Eq. 6 and folded (:func:`recuse.metrics.estimate.fold`): its
    interval is the absolute values over Eq. 6's and its p-value Eq. 6's, since every
    resample of ``|Eq. 6|`` lies above 0 even for a judge without verbosity bias.

    Eq. 6 is 0 for a judge whose errors are as frequent whichever answer the human
    chose; a judge with no length preference is not one where the longer answers are
    the better ones (:data:`EQ6_NOT_ZERO`, in the ``method``): read it beside the
    prefer-longer gap.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"),
    ...     "model_a": None, "model_b": None, "judge": ["j"] * 8,
    ...     "human": [1, 1, 1, 1, 0, 0, 0, 0],
    ...     "p_a_first": [1, 1, 1, 0, 1, 1, 1, 0], "p_a_second": None, "p_a": None,
    ...     "len_a": [9] * 8, "len_b": [3] * 8}))
    >>> r = verbosity_bias(t, min_n=4, boot=Resampling(n_boot=200))
    >>> r.estimate  # a is longer: recall 3/4 when the human prefers it, 1/4 otherwise
    0.5
    """
    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    la, lb, how = response_lengths(rows, unit=unit, tokenizer=tokenizer)
    spec = verbosity_spec(
        rows,
        codes,
        labels,
        la,
        lb,
        kind=kind,
        length_note=how,
        verdict=verdict,
        human_ties=human_ties,
        judge_ties=judge_ties,
    )
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def longer_gap_spec(
    pairs: pd.DataFrame,
    codes: NDArray[np.intp],
    labels: tuple[str, ...],
    len_a: FloatArray,
    len_b: FloatArray,
    *,
    length_note: str,
    verdict: Verdict,
    human_ties: HumanTies,
    judge_ties: JudgeTies,
) -> MetricSpec:
    """The prefer-longer gap for every judge in ``labels`` (see :func:`prefer_longer_gap`)."""
    side, v, h = _for_longer(pairs, len_a, len_b, verdict, human_ties, judge_ties)
    used = np.isfinite(v) & longer_labelled(h, side, human_ties=human_ties)
    one = used.astype(float)
    values = np.column_stack(
        [np.where(used, v, 0.0), np.where(used, h, 0.0), one, one_slot_columns(pairs, side)]
    )
    stat = GroupedStatistic(
        name="verbosity_longer_gap",
        values=values,
        group=np.where(used, codes, -1),
        labels=labels,
        combine=difference_of_means,
        boot_k=3,
        required=((2, "pairs of unequal length with a verdict and a human label"),),
    )
    ties = ties_note(verdict, judge_ties)
    method = (
        "prefer-longer gap: P(judge picks the longer response) minus P(human picks it), "
        f"over the same pairs; length in {length_note}; {ties}, "
        f"{_tie_words(pairs, h, side, human_ties)}; equal lengths left out; {GAP_NOT_ZERO}"
    )

    def components(t: FloatArray) -> dict[str, float]:
        return {
            "judge_picks_longer": float(t[0] / t[2]) if t[2] else float("nan"),
            "human_picks_longer": float(t[1] / t[2]) if t[2] else float("nan"),
        }

    return MetricSpec(
        "verbosity_longer_gap", stat, method, components, labelled=True, expanded=True,
        warnings=one_slot_warnings(SLOT_WHO["longer"], (3, 4, 2)),
        notes=one_slot_notes(SLOT_WHO["longer"], (3, 4, 2)),
    )  # fmt: skip


def prefer_longer_gap(
    pairs: pd.DataFrame,
    *,
    judge: str | None = None,
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    verdict: Verdict = "prob",
    human_ties: HumanTies = "drop",
    judge_ties: JudgeTies = "half",
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> MetricResult:
    """How much more often the judge picks the longer response than the humans do.

    Over pairs of unequal length with a verdict and a human label (human ties left
    out with ``human_ties="drop"``, counted as 0.5 with ``"split"``), with ``v`` the
    judge's verdict for the longer response and ``h`` the human P(longer better)::

        gap = mean(v) - mean(h) = P(judge picks longer) - P(human picks longer)

    0 = the judge prefers length exactly as much as the humans. Unlike Eq. 6
    (:func:`verbosity_bias`, a difference of recalls) it mixes in the judge's
    accuracy: a judge that agrees with every label has gap 0 and Eq. 6 of +1 - 1 = 0
    too, but on data where humans prefer longer answers 70 % of the time a judge
    that always picks the longer one has gap +0.3 and Eq. 6 of 1 - 0 = +1. So a
    judge with no length preference is not at 0 (:data:`GAP_NOT_ZERO`, in the
    ``method``): one whose errors are unrelated to length (Eq. 6 = 0) picks the longer
    answer nearer half the time than the humans, ``gap = -(2q - 1)(1 - accuracy)`` with
    ``q`` = P(human picks longer) (:mod:`recuse.simulate.pairs`' planted value;
    ``tests/metrics/test_verbosity.py``), and one that judges quality alone, more
    consistently than the labels, reads above 0 where the longer answers are better.
    ``components``: the two probabilities.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdefgh"), "prompt_id": list("abcdefgh"),
    ...     "model_a": None, "model_b": None, "judge": ["j"] * 8,
    ...     "human": [1, 1, 1, 1, 0, 0, 0, 0],
    ...     "p_a_first": [1, 1, 1, 0, 1, 1, 1, 0], "p_a_second": None, "p_a": None,
    ...     "len_a": [9] * 8, "len_b": [3] * 8}))
    >>> r = prefer_longer_gap(t, min_n=4, boot=Resampling(n_boot=200))
    >>> r.estimate, r.components  # the judge picks a (longer) 6/8, the humans 4/8
    (0.25, {'judge_picks_longer': 0.75, 'human_picks_longer': 0.5})
    """

    check_min_n(min_n)
    rows = single_judge(pairs, judge)
    codes, labels = judge_codes(rows, None)
    la, lb, how = response_lengths(rows, unit=unit, tokenizer=tokenizer)
    spec = longer_gap_spec(
        rows, codes, labels, la, lb, length_note=how, verdict=verdict, human_ties=human_ties,
        judge_ties=judge_ties,
    )  # fmt: skip
    return run_one(spec, clusters_of(rows), boot=boot, min_n=min_n)


def longer_labelled(
    h_longer: FloatArray, side: NDArray[np.int8], *, human_ties: HumanTies
) -> NDArray[np.bool_]:
    """The pairs a share of "the human prefers the longer answer" counts: the two
    lengths differ (``side`` ≠ 0), the human label ``h_longer`` (P(the longer is
    better), :func:`~recuse.metrics.verdicts.orient`) is known and, with
    ``human_ties="drop"``, is no tie (0.5); with ``"split"`` a tie counts ½. The one
    rule of the prefer-longer gap's human side (:func:`longer_gap_spec`) and of
    :func:`human_prefers_longer`.

    >>> longer_labelled(np.array([1.0, 0.5, np.nan, 0.0]), np.array([1, -1, 1, 0], np.int8),
    ...                 human_ties="drop").tolist()
    [True, False, False, False]
    """
    used = np.isfinite(h_longer) & (side != 0)
    if human_ties == "drop":
        used &= np.abs(h_longer - 0.5) > TIE_TOL
    return used


def _tie_words(
    pairs: pd.DataFrame, h_longer: FloatArray, side: NDArray[np.int8], human_ties: HumanTies
) -> str:
    """How the labels of 0.5 on pairs of unequal length were used, for a ``method``:
    "human ties left out" or, where a label is a share of several votes, "tied or
    evenly split human votes left out" (``count ½`` with ``human_ties="split"``)."""
    tied = (side != 0) & (np.abs(h_longer - 0.5) <= TIE_TOL)
    return human_ties_words(pairs, tied, human_ties)


def human_longer_spec(
    items: pd.DataFrame,
    len_a: FloatArray,
    len_b: FloatArray,
    *,
    length_note: str,
    human_ties: HumanTies = "drop",
) -> MetricSpec:
    """:func:`human_prefers_longer` over ``items`` (one row per labelled item)."""
    check_modes(verdict="prob", human_ties=human_ties, judge_ties="half")
    side = _longer_side(len_a, len_b)
    h = orient(items["human"].to_numpy(float), side)
    used = longer_labelled(h, side, human_ties=human_ties)
    stat = GroupedStatistic(
        name=HUMAN_LONGER,
        values=np.column_stack([np.where(used, h, 0.0), used.astype(float)]),
        group=np.where(used, 0, -1).astype(np.intp),
        labels=(None,),
        combine=ratio,
        required=((1, "pairs of unequal length with a human label"),),
    )
    labelled = np.isfinite(items["human"].to_numpy(float))
    tied = labelled & (side != 0) & ~used
    tie_words = _tie_words(items, h, side, human_ties) + (
        f" ({int(tied.sum()):,})" if human_ties == "drop" else ""
    )
    method = (
        "share of pairs of unequal length in which the humans preferred the longer answer "
        f"(no preference = 0.5); each labelled item once, no judge; length in {length_note}; "
        f"{tie_words}; equal lengths left out ({int((labelled & (side == 0)).sum()):,})"
    )
    return MetricSpec(HUMAN_LONGER, stat, method, null=0.5)


def human_prefers_longer(
    pairs: pd.DataFrame,
    *,
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    human_ties: HumanTies = "drop",
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> MetricResult:
    """The humans' own length preference: the share of pairs of unequal length in which
    the humans preferred the longer answer (Saito et al. §5, Figure 4's data in one
    number: "humans seem to prefer longer answers too").

    Each labelled item counts once, whatever the judges (a table without any judge
    gives it too). With ``h`` the human P(the longer answer is better), over the items
    whose two lengths differ and that have a label (human ties left out with
    ``human_ties="drop"``, the audit's rule, or counted ½ with ``"split"``, as in
    :func:`prefer_longer_gap`)::

        share = mean(h) = P(human picks the longer answer)

    0.5 = no preference for either length (the p-value's null); its interval is the
    cluster bootstrap's over prompts. A baseline, not a bias of any judge: a judge's
    own pick rate of the longer answer is read against it
    (:func:`prefer_longer_gap`'s ``human_picks_longer`` is the same share over the
    pairs that judge judged).

    ``counts`` holds, under :data:`HUMAN_LONGER_TIES`, the labels of 0.5 on pairs of
    unequal length (left out of ``n``, or counted ½ in it), for the words beside the
    number (the audit's baseline sentence).

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcdef"), "prompt_id": list("abcdef"),
    ...     "model_a": None, "model_b": None, "judge": None,
    ...     "human": [1, 1, 0, 0.5, 1, 0], "p_a_first": None, "p_a_second": None,
    ...     "p_a": None, "len_a": [9, 9, 9, 9, 3, 4], "len_b": [3, 3, 3, 3, 3, 8]}))
    >>> r = human_prefers_longer(t, min_n=2, boot=Resampling(n_boot=200))
    >>> r.estimate, r.n, r.null  # longer a preferred 2 of 3, longer b 1 of 1; a tie, an equal
    (0.75, 4, 0.5)
    >>> r.counts[HUMAN_LONGER_TIES]
    1
    """
    check_min_n(min_n)
    items = human_items(require_pairs(pairs, judged=False))
    if items.empty:
        raise EstimationError("no human labels in the table")
    la, lb, how = response_lengths(items, unit=unit, tokenizer=tokenizer)
    spec = human_longer_spec(items, la, lb, length_note=how, human_ties=human_ties)
    r = run_one(spec, clusters_of(items), boot=boot, min_n=min_n)
    side = _longer_side(la, lb)
    h = orient(items["human"].to_numpy(float), side)
    tied = int(((side != 0) & (np.abs(h - 0.5) <= TIE_TOL)).sum())
    return replace(r, counts={**r.counts, HUMAN_LONGER_TIES: tied})


# --- curves -----------------------------------------------------------------------------


def bin_edges(bin_width: float = 0.2, max_rel: float = 2.0) -> FloatArray:
    """Bin edges of the relative length difference: -1, -1 + w, ..., >= max_rel, then +inf.

    >>> bin_edges(0.5, 1.0).tolist()
    [-1.0, -0.5, 0.0, 0.5, 1.0, inf]
    """
    if not bin_width > 0 or not max_rel > -1:
        raise ConfigError("bin_width must be > 0 and max_rel > -1")
    k = int(np.ceil(round((max_rel + 1.0) / bin_width, 9)))
    edges = np.round(-1.0 + bin_width * np.arange(k + 1), 10)
    return np.append(edges, np.inf)


def curve_statistic(
    name: str,
    x: FloatArray,
    y: FloatArray,
    codes: NDArray[np.intp],
    labels: tuple[str | None, ...],
    edges: FloatArray,
) -> GroupedStatistic:
    """Mean of ``y`` per (label, bin of ``x``).

    Groups are ``(label, bin)``; values ``[y, 1, y^2]``. An ``x`` of ``+inf`` (a
    relative length difference over an answer of 0 words) is in the last, open bin
    when its edge is ``inf``: it fell past it, and the pair was left out of every bin.
    """
    n_bins = len(edges) - 1
    b = np.searchsorted(edges, x, side="right") - 1
    if n_bins and edges[-1] == np.inf:
        b = np.where(x == np.inf, n_bins - 1, b)
    ok = np.isfinite(y) & ~np.isnan(x) & (b >= 0) & (b < n_bins) & (codes >= 0)
    group = np.where(ok, codes * n_bins + np.clip(b, 0, n_bins - 1), -1)
    yy = np.where(ok, y, 0.0)
    values = np.column_stack([yy, ok.astype(float), yy * yy])
    glabels = tuple((lab, i) for lab in labels for i in range(n_bins))
    return GroupedStatistic(
        name=name,
        values=values,
        group=group.astype(np.intp),
        labels=glabels,
        combine=ratio,
        required=((1, "pairs in this bin"),),
        boot_k=2,  # y^2 only feeds the standard deviation
    )


#: what a curve bin's interval is (:func:`bin_interval`), in the words of its table's
#: columns, title and caption: not the bootstrap's own interval, which had no width where
#: every pair of a bin read the same
BIN_INTERVAL = "Wilson score interval at the effective pairs of the cluster bootstrap over prompts"

#: the range of each curve's per-pair value (agreement 0–1; the scores −1–+1), which
#: :func:`bin_interval` keeps its ends within
CURVE_SPANS: dict[str, tuple[float, float]] = {
    "human_alignment_curve": (0.0, 1.0),
    "judge_verbosity_curve": (-1.0, 1.0),
    "human_verbosity_curve": (-1.0, 1.0),
}


def curve_table(
    stat: GroupedStatistic,
    estimates: Sequence[Any],
    edges: FloatArray,
    *,
    with_judge: bool,
    level: float,
) -> pd.DataFrame:
    """Tidy curve: one row per non-empty (judge, bin) with n, mean, sd and the interval
    (:func:`~recuse.metrics.bootstrap.share_interval` at ``level`` for the curves of
    :data:`CURVE_SPANS`, else the bootstrap's own).

    The bins' interval is that Wilson score interval at the effective number of pairs
    the bootstrap measures, within the curve's span. The bootstrap's own BCa interval of
    a bin of 5–10 pairs held a planted agreement of 0.9 or 0.7 in 0.65 of simulated
    tables of 51 pairs (10–20 pairs: 0.87; 0.53 and 0.76 at 200 pairs): a bin whose pairs
    all agree has resamples that all agree, an interval of zero width at 1. The Wilson
    one held it in 0.95 and 0.96 (0.96 and 0.93 at 200 pairs; 0.90 for bins of 20–50),
    and reads [0.75, 1] for 8 of 8 on 8 prompts (``benchmarks/metric_coverage.py``,
    section ``curve bins``). Student's t for the prompts instead of ``z`` over-covered
    (0.98 for bins of 5–10 pairs).

    >>> [round(x, 4) for x in share_interval(1.0, n=8, std_error=0.0, clusters=8, level=0.9)]
    [0.7473, 1.0]
    """
    span = CURVE_SPANS.get(stat.name)
    rows = []
    for glabel, est in zip(stat.labels, estimates, strict=True):
        label, b = cast(tuple[str | None, int], glabel)
        t = est.totals
        n = int(est.n)
        if n == 0:
            continue
        mean = t[0] / t[1]
        sd = float(np.sqrt(max(t[2] - t[1] * mean * mean, 0.0) / (t[1] - 1))) if n > 1 else np.nan
        low, high = est.ci_low, est.ci_high
        if span is not None and est.problem is None:
            low, high = share_interval(
                float(mean), n=n, std_error=est.std_error, clusters=int(est.n_clusters),
                level=level, span=span,
            )  # fmt: skip
        rows.append(
            {
                "judge": label,
                "bin_low": float(edges[b]),
                "bin_high": float(edges[b + 1]),
                "n": n,
                "n_clusters": int(est.n_clusters),
                "mean": float(mean),
                "sd": sd,
                "ci_low": low,
                "ci_high": high,
                "note": est.problem or "",
            }
        )
    frame = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    return frame if with_judge else frame.drop(columns="judge")


def _run_curve(
    name: str,
    rows: pd.DataFrame,
    x: FloatArray,
    y: FloatArray,
    codes: NDArray[np.intp],
    labels: tuple[str | None, ...],
    *,
    bin_width: float,
    max_rel: float,
    boot: Resampling,
    min_n: int,
    with_judge: bool,
) -> pd.DataFrame:
    edges = bin_edges(bin_width, max_rel)
    stat = curve_statistic(name, x, y, codes, labels, edges)
    if not (stat.group >= 0).any():
        raise EstimationError(f"{name}: no usable pairs (lengths, labels or verdicts are missing)")
    est = cluster_bootstrap([stat], clusters_of(rows), boot=boot, min_n=min_n)[0]
    return curve_table(stat, est, edges, with_judge=with_judge, level=boot.level)


def alignment_xy(
    pairs: pd.DataFrame,
    len_a: FloatArray,
    len_b: FloatArray,
    *,
    verdict: Verdict,
    judge_ties: JudgeTies,
) -> tuple[FloatArray, FloatArray]:
    """Figure 5's x (relative length of the human-chosen response) and y (judge agrees)."""
    h = pairs["human"].to_numpy(float)
    chosen = np.where(h > 0.5, 1, np.where(h < 0.5, -1, 0)).astype(np.int8)
    chosen[np.isnan(h)] = 0
    lc = np.where(chosen > 0, len_a, len_b)
    lr = np.where(chosen > 0, len_b, len_a)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = (lc - lr) / lr
    x[chosen == 0] = np.nan
    v = orient(
        judge_score(pairs["p_a"].to_numpy(float), verdict=verdict, judge_ties=judge_ties), chosen
    )
    return x, v


def human_alignment_curve(
    pairs: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    verdict: Verdict = "pick",
    judge_ties: JudgeTies = "half",
    bin_width: float = 0.2,
    max_rel: float = 2.0,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> pd.DataFrame:
    """Figure 5: the judge's agreement with the human by relative length of the chosen answer.

    x = (len_chosen - len_rejected) / len_rejected (human ties left out); per bin of
    width ``bin_width`` from -1 up to ``max_rel`` (the last bin is open), the mean
    agreement ``mean(v_chosen)`` with its sample size, standard deviation and
    bootstrap interval (NaN, with a ``note``, for bins under ``min_n`` pairs). One
    block of rows per judge (``judge=None``: every judge).

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abcd"), "prompt_id": list("abcd"), "model_a": None, "model_b": None,
    ...     "judge": "j", "human": [1, 1, 0, 0], "p_a_first": [1, 0, 1, 1],
    ...     "p_a_second": None, "p_a": None, "len_a": [15, 10, 10, 10], "len_b": [10, 10, 5, 25]}))
    >>> c = human_alignment_curve(t, bin_width=0.5, max_rel=1.0, min_n=1,
    ...                           boot=Resampling(n_boot=50))
    >>> c[["bin_low", "n", "mean"]].values.tolist()
    [[-0.5, 1.0, 0.0], [0.0, 1.0, 0.0], [0.5, 1.0, 1.0], [1.0, 1.0, 0.0]]
    """
    check_min_n(min_n)
    pairs = require_pairs(pairs)
    codes, labels = judge_codes(pairs, judge)
    la, lb, _how = response_lengths(pairs, unit=unit, tokenizer=tokenizer)
    x, v = alignment_xy(pairs, la, lb, verdict=verdict, judge_ties=judge_ties)
    return _run_curve(
        "human_alignment_curve",
        pairs,
        x,
        v,
        codes,
        labels,
        bin_width=bin_width,
        max_rel=max_rel,
        boot=boot,
        min_n=min_n,
        with_judge=True,
    )


def human_items(pairs: pd.DataFrame) -> pd.DataFrame:
    """One row per item with a human label (the label is repeated on every judge's row)."""
    labelled = pairs[pairs["human"].notna()]
    return labelled[~items_of(labelled).duplicated(keep="first")].reset_index(drop=True)


def relative_ab(len_a: FloatArray, len_b: FloatArray) -> FloatArray:
    """(len_a - len_b) / len_b; NaN where either is missing or both are 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return (len_a - len_b) / len_b


def human_verbosity_curve(
    pairs: pd.DataFrame,
    *,
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    bin_width: float = 0.2,
    max_rel: float = 2.0,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> pd.DataFrame:
    """Figure 4: the human score (+1 = a, 0 = tie, -1 = b) by x = (len_a - len_b) / len_b.

    Each labelled item counts once (whatever the number of judges). Columns as in
    :func:`human_alignment_curve`, without ``judge``.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abc"), "prompt_id": list("abc"), "model_a": None, "model_b": None,
    ...     "judge": None, "human": [1, 0.5, 0], "p_a_first": None, "p_a_second": None,
    ...     "p_a": None, "len_a": [20, 20, 5], "len_b": [10, 10, 10]}))
    >>> c = human_verbosity_curve(t, bin_width=1.0, max_rel=1.0, min_n=1,
    ...                           boot=Resampling(n_boot=50))
    >>> c[["bin_low", "n", "mean"]].values.tolist()
    [[-1.0, 1.0, -1.0], [1.0, 2.0, 0.5]]
    """
    check_min_n(min_n)
    items = human_items(require_pairs(pairs, judged=False))
    if items.empty:
        raise EstimationError("no human labels in the table")
    la, lb, _how = response_lengths(items, unit=unit, tokenizer=tokenizer)
    y = 2.0 * items["human"].to_numpy(float) - 1.0
    codes = np.zeros(len(items), dtype=np.intp)
    return _run_curve(
        "human_verbosity_curve",
        items,
        relative_ab(la, lb),
        y,
        codes,
        (None,),
        bin_width=bin_width,
        max_rel=max_rel,
        boot=boot,
        min_n=min_n,
        with_judge=False,
    )


def both_orders_score(pairs: pd.DataFrame) -> FloatArray:
    """+1 if both orders pick a, -1 if both pick b, 0 otherwise; NaN unless both orders judged."""
    f = order_picks(pairs["p_a_first"].to_numpy(float))
    s = order_picks(pairs["p_a_second"].to_numpy(float))
    out = np.where((f == 1) & (s == 1), 1.0, np.where((f == -1) & (s == -1), -1.0, 0.0))
    out[np.isnan(f) | np.isnan(s)] = np.nan
    return out


def same_source(pairs: pd.DataFrame) -> NDArray[np.bool_]:
    """Rows whose two responses come from the same (known) model."""
    return (pairs["model_a"].notna() & pairs["model_a"].eq(pairs["model_b"])).to_numpy()


def judge_verbosity_curve(
    pairs: pd.DataFrame,
    *,
    judge: str | Sequence[str] | None = None,
    same_source_only: bool = True,
    unit: Unit = "words",
    tokenizer: Tokenizer | None = None,
    bin_width: float = 0.2,
    max_rel: float = 2.0,
    boot: Resampling = Resampling(),
    min_n: int = 5,
) -> pd.DataFrame:
    """Figure 3: the judge's preference by x = (len_a - len_b) / len_b for same-source pairs.

    Score per pair: +1 if the judge picks a in both orders, -1 if b in both, 0 (a
    draw) otherwise; only pairs judged in both orders enter. ``same_source_only``
    keeps pairs whose two responses come from the same model (Figure 3's setting);
    set it to False to use every pair.

    >>> from recuse.tables import validate_pairs
    >>> t = validate_pairs(pd.DataFrame({
    ...     "item_id": list("abc"), "prompt_id": list("abc"), "model_a": "m", "model_b": "m",
    ...     "judge": "j", "human": None, "p_a_first": [1, 1, 0], "p_a_second": [1, 0, 0],
    ...     "p_a": None, "len_a": [20, 20, 5], "len_b": [10, 10, 10]}))
    >>> c = judge_verbosity_curve(t, bin_width=1.0, max_rel=1.0, min_n=1,
    ...                           boot=Resampling(n_boot=50))
    >>> c[["bin_low", "n", "mean"]].values.tolist()
    [[-1.0, 1.0, -1.0], [1.0, 2.0, 0.5]]
    """
    check_min_n(min_n)
    pairs = require_pairs(pairs)
    codes, labels = judge_codes(pairs, judge)
    if same_source_only:
        keep = same_source(pairs)
        if not (keep & (codes >= 0)).any():
            raise EstimationError(
                "no pairs whose two responses come from the same model — "
                "pass same_source_only=False to use every pair"
            )
        codes = np.where(keep, codes, -1)
    la, lb, _how = response_lengths(pairs, unit=unit, tokenizer=tokenizer)
    return _run_curve(
        "judge_verbosity_curve",
        pairs,
        relative_ab(la, lb),
        both_orders_score(pairs),
        codes,
        labels,
        bin_width=bin_width,
        max_rel=max_rel,
        boot=boot,
        min_n=min_n,
        with_judge=True,
    )

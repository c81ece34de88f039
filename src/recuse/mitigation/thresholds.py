"""Certified thresholds applied to new items: ``recuse certify apply``.

A thresholds file (:meth:`recuse.mitigation.selective.Certification.thresholds`) is read
and checked (:func:`read_thresholds`: a hand edit that would change which items are
kept, or what the guarantee names, is refused), then each new item goes to the first
judge of the file (in cascade order) whose certified threshold its confidence reaches,
in its stratum as the certification drew it (the file's ``models``: a roster that draws
them otherwise is refused), or to a person (:func:`apply_thresholds`). With labels, the
agreement the kept verdicts reach is reported beside the guarantee (:func:`observed`).
The confidence, strata and guarantee are :mod:`recuse.mitigation.selective`'s.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from recuse.cells import shown
from recuse.errors import ConfigError, InputError, ReaderNote
from recuse.mitigation.selective import (
    APPROXIMATE,
    CONFIDENCE_WORDS,
    PERSON,
    STRATA,
    THRESHOLDS_VERSION,
    TIES_LEFT_OUT,
    WHOSE,
    Options,
    TiedLabels,
    as_texts,
    confidence_kind,
    is_number,
    items_of,
    judge_rows,
    map_points,
    models_of,
    one_order,
    side_labels,
    thresholds_checksum,
)
from recuse.numbers import complement, exact, general
from recuse.reference import AGREEING_WITH, REFERENCE_NAMES, ReferenceKind
from recuse.roster import SELF_SCOPES, Roster

__all__ = [
    "DECISION_FIELDS",
    "KEPT_FIELDS",
    "READING",
    "Applied",
    "Kept",
    "Observed",
    "OneOrderNotCertified",
    "StrataUnchecked",
    "applied_guarantee",
    "apply_thresholds",
    "certifies_any",
    "chosen_stages",
    "decide",
    "observed",
    "read_thresholds",
    "unchecked_strata",
    "unkept",
]


def _confidence_value(v: Any) -> bool:
    """``v`` is a threshold a confidence ``c = max(p_a, 1 - p_a)`` can reach or miss:
    a finite number (not a boolean) in ``[0.5, 1]``."""
    return isinstance(v, int | float) and not isinstance(v, bool) and 0.5 <= v <= 1


def _points(values: Any) -> bool:
    """``values`` is a non-empty list of numbers in [0, 1], non-decreasing (an isotonic
    map's knots)."""
    return (
        isinstance(values, list) and len(values) > 0
        and all(is_number(v) and 0 <= v <= 1 for v in values)
        and all(a <= b for a, b in pairwise(values))
    )  # fmt: skip


#: the options of how a file's verdicts are read, that a thresholds file keeps: their
#: values (the first is the default; ``confidence`` also takes a column name)
READING: dict[str, tuple[str | None, ...]] = {
    "swapped_frame": ("original", "presented"),
    "confidence": (None,),
    "confidence_of": ("winner", "a"),
}


#: the keys of a thresholds file (:meth:`~recuse.mitigation.selective.Certification.
#: thresholds`), and of each of its judges: another key is a hand edit's typo, whose
#: value would be left unread (``"readng": {"swapped_frame": "presented"}`` read the
#: verdicts in the original frame, a default in its place)
FILE_KEYS = ("recuse_thresholds", "target", "delta", "cascade", "strata", "self_scope",
             "reference", "human_ties", "reading", "judges", "sha256")  # fmt: skip
JUDGE_KEYS = ("judge", "confidence", "thresholds", "recalibration", "models", "orders",
              "coverage", "share")  # fmt: skip
#: the orders a probability certificate's verdicts were judged in (selective.orders_of)
ORDERS = ("both", "one", "mixed")


def _known_keys(
    data: Mapping[str, Any], known: Sequence[str], where: str, bad: Callable[[str], InputError]
) -> None:
    """Raise ``bad(...)`` naming the first key of ``data`` not in ``known``, and the
    known key it is closest to."""
    import difflib

    other = [key for key in data if key not in known]
    if other:
        close = difflib.get_close_matches(str(other[0]), known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise bad(
            f"{where} has the key {shown(other[0])}{hint}, which recuse does not read — "
            f"its keys are {', '.join(known)}"
        )


def read_thresholds(data: Any, *, file: str) -> list[dict[str, Any]]:
    """The judges of a thresholds file (:meth:`~recuse.mitigation.selective.
    Certification.thresholds`), checked: a hand-edited value that would change which
    items are kept, or that the guarantee names (target, delta), is refused, never read
    as something else."""

    def bad(what: str) -> InputError:
        return InputError(f"not a certified thresholds file: {what}", file=file,
                          fix="give the --thresholds file `recuse certify` wrote")  # fmt: skip

    version = data.get("recuse_thresholds") if isinstance(data, dict) else None
    if not isinstance(data, dict) or not is_number(version):
        raise bad(f"no 'recuse_thresholds': {THRESHOLDS_VERSION}")
    if version not in range(1, THRESHOLDS_VERSION + 1) or isinstance(version, bool):
        # only a format past this recuse's is newer (1.5 is none: a damaged file)
        newer = (
            " (written by a newer recuse: upgrade to read it)"
            if version > THRESHOLDS_VERSION
            else ""
        )
        *earlier, last = map(str, range(1, THRESHOLDS_VERSION + 1))
        readable = f"{', '.join(earlier)} or {last}" if earlier else last
        raise bad(f"format {shown(version)}, this recuse reads {readable}{newer}")
    _known_keys(data, FILE_KEYS, "the file", bad)
    for key in ("cascade", "strata"):
        if not isinstance(data.get(key, False), bool):
            raise bad(f"{key!r} must be true or false, not {shown(data[key])}")
    if data.get("self_scope", "snapshot") not in SELF_SCOPES:  # absent: written before it
        scopes = " or ".join(SELF_SCOPES)
        raise bad(f"'self_scope' must be {scopes}, not {shown(data['self_scope'])}")
    for key, low, high in (("target", 0.5, 1.0), ("delta", 0.0, 0.5)):
        v = data.get(key)
        if not (is_number(v) and low <= v < high and (key == "target" or v > 0)):
            edge = "[0.5, 1)" if key == "target" else "(0, 0.5)"
            raise bad(f"{key!r} must be a number in {edge}, not {shown(v)}")
    reference = data.get("reference", "human")  # absent: written before it
    if not isinstance(reference, str) or reference not in REFERENCE_NAMES:
        raise bad(f"'reference' must be {', '.join(REFERENCE_NAMES)}, not "
                  f"{shown(data['reference'])}")  # fmt: skip
    if data.get("human_ties", "exclude") not in ("exclude", "count"):  # absent: before it
        raise bad(f"'human_ties' must be exclude or count, not {shown(data['human_ties'])}")
    how = data.get("reading", {})  # absent: written before it (or from a DataFrame)
    if not (
        isinstance(how, dict) and set(how) <= set(READING)
        and all(how.get(k, READING[k][0]) in READING[k] or (k == "confidence" and
                isinstance(how[k], str) and how[k].strip() != "") for k in READING)
    ):  # fmt: skip
        raise bad(
            "'reading' must map swapped_frame to original or presented, confidence to "
            f"null or a column name, confidence_of to winner or a, not {shown(how)}"
        )
    judges = data.get("judges")
    if not isinstance(judges, list) or not judges:
        raise bad("'judges' must be a non-empty list")
    seen: set[str] = set()
    keys = {"all"} if data.get("strata") is False else set(STRATA)
    for k, j in enumerate(judges):
        if not isinstance(j, dict) or not isinstance(j.get("judge"), str) or not j["judge"]:
            raise bad(f"judges[{k}] has no judge name")
        _known_keys(j, JUDGE_KEYS, f"judges[{k}]", bad)
        if j["judge"] in seen:
            raise bad(f"judges[{k}]: judge {j['judge']!r} is listed twice")
        seen.add(j["judge"])
        if not isinstance(j.get("confidence"), str) or j["confidence"] not in CONFIDENCE_WORDS:
            raise bad(
                f"judges[{k}].confidence must be one of {', '.join(map(repr, CONFIDENCE_WORDS))} "
                f"(how the certified confidence was read), not {shown(j.get('confidence'))}"
            )
        t = j.get("thresholds")
        if not isinstance(t, dict) or not all(
            s in (*STRATA, "all") and (v is None or _confidence_value(v)) for s, v in t.items()
        ):
            raise bad(
                f"judges[{k}].thresholds must map own/family/other/all to null or a "
                "confidence in [0.5, 1] (c = max(p_a, 1 - p_a))"
            )
        if not (set(t) <= keys or set(t) == {"all"}):  # (strata without a roster
            raise bad(  # are all): the items' strata would find no threshold
                f"judges[{k}].thresholds has {', '.join(t) or 'no stratum'}, but 'strata' is "
                f"{str(data.get('strata', True)).lower()}: its thresholds are for "
                f"{'/'.join(s for s in (*STRATA, 'all') if s in keys)}"
            )
        r = j.get("recalibration")
        recalibrated = j["confidence"] == "recalibrated probability"
        if (r is not None) != recalibrated:
            raise bad(
                f"judges[{k}] has confidence {j['confidence']!r} "
                f"{'without' if recalibrated else 'with'} a recalibration map"
            )
        if r is not None and not (
            isinstance(r, dict) and _points(r.get("x")) and _points(r.get("y"))
            and len(r["x"]) == len(r["y"])
        ):  # fmt: skip
            raise bad(
                f"judges[{k}].recalibration must have lists x and y of one length, "
                "non-decreasing numbers in [0, 1] (an isotonic map of p_a)"
            )
        if j.get("orders", "both") not in ORDERS:  # absent: picks, or written before it
            raise bad(f"judges[{k}].orders must be {', '.join(ORDERS)}, not {shown(j['orders'])}")
        _check_coverage(j, k, bad)
        models = j.get("models", {})  # absent: pooled, or written before it
        if not (
            isinstance(models, dict)
            and all(
                isinstance(m, str) and m and isinstance(v, str) and v in WHOSE
                for m, v in models.items()
            )
        ):
            raise bad(
                f"judges[{k}].models must map each generator id to own, family or other "
                f"(whose answers it gives the judge: what drew its strata), not {shown(models)}"
            )
    # last: a file damaged in its form says where; one whose values were edited in range
    # (a target of 0.99, a threshold of 0.5) was read, its guarantee printed as certified
    if version >= 3 and "sha256" not in data:  # format 3 is written with it
        raise bad(
            f"format {version} records the sha256 of its values, and this file has none: its "
            "values were edited, or it was not written by `recuse certify`"
        )
    if "sha256" in data and data["sha256"] != thresholds_checksum(data):
        raise bad(
            "its values were changed after `recuse certify` wrote them (the sha256 of them "
            "it records no longer matches): an edited target, δ or threshold would be "
            "printed as a guarantee the certification never gave"
        )
    return judges


def _share_value(v: Any) -> bool:
    """``v`` is a share a thresholds file may say a judge kept: null (no labelled item)
    or a number in [0, 1]."""
    return v is None or (is_number(v) and 0 <= v <= 1)


def _check_coverage(j: Mapping[str, Any], k: int, bad: Callable[[str], InputError]) -> None:
    """A judge's certified ``coverage`` (per stratum of its ``thresholds``) and ``share``
    (:meth:`~recuse.mitigation.selective.Certification.thresholds`), each absent in a file
    of an earlier recuse: shares in [0, 1] or null, the strata its thresholds name."""
    cover = j.get("coverage", {})
    if not (isinstance(cover, dict) and set(cover) <= set(j["thresholds"])
            and all(_share_value(v) for v in cover.values())):  # fmt: skip
        raise bad(
            f"judges[{k}].coverage must map the strata of its thresholds "
            f"({', '.join(j['thresholds']) or 'none'}) to null or a share in [0, 1], not "
            f"{shown(cover)}"
        )
    if not _share_value(j.get("share")):
        raise bad(f"judges[{k}].share must be null or a share in [0, 1], not {shown(j['share'])}")


def _gives(kind: str) -> str:
    """What verdicts a confidence kind is read from: probabilities or picks."""
    return "probabilities" if kind.endswith("probability") else "picks (0, 0.5 or 1)"


def _same_kind(rows: pd.DataFrame, stage: Mapping[str, Any], file: str) -> None:
    """A judge certified on probabilities is applied to probabilities, one certified on
    picks to picks: a threshold on one scale means nothing on the other (a pick read
    as a probability has confidence 1 and passes any threshold)."""
    if not any(v is not None for v in stage["thresholds"].values()):
        return  # nothing certified keeps nothing, whatever its scale (a cascade stage no
        # item reached was written 'single verdict': its probabilities were refused)
    certified, now = stage["confidence"], confidence_kind(rows)
    if _gives(certified) != _gives(now):
        raise InputError(
            f"{file} certifies {stage['judge']!r} on {_gives(certified)} (confidence: "
            f"{certified}), but this table's verdicts of {stage['judge']!r} are "
            f"{_gives(now)}: a threshold on one does not apply to the other, and no "
            "guarantee would hold",
            column="p_a",
            fix="give verdicts of the kind it was certified on (the same judge, prompt and "
            "reading options), or certify it on labelled verdicts of this kind",
        )


#: the columns of :func:`apply_thresholds`' decisions: meaning and unit (the JSON of
#: ``certify apply --out FILE.json`` carries them)
DECISION_FIELDS: dict[str, str] = {
    "item_id": "the item",
    "decision": f"a, b or tie: the verdict of the certified judge that decided it; "
    f"'{PERSON}': no certified judge's confidence reached its threshold, or no judge of the "
    "file gave the item a verdict",
    "judge": "the judge that decided it (empty: a person)",
    "stratum": "own, family or other (the judge's relation to the answers), or all when "
    "certified pooled; empty: a person",
    "confidence": "the deciding judge's confidence c = max(p_a, 1 - p_a) (or order "
    "consistency: 1 both orders agree, 0.75 one a tie, 0.5 a flip), in [0.5, 1]; null: a "
    "person",
    "threshold": "the certified threshold the confidence reached (keep when c ≥ it), in "
    "[0.5, 1]; null: a person",
}


@dataclass(frozen=True)
class Kept:
    """What one judge of a thresholds file kept of the new items of one stratum
    (:func:`decide`): ``reached`` items of the stratum with its verdict that no earlier
    judge of the file decided, ``kept`` of them decided by it (confidence at its
    threshold). ``certified``: the share of the stratum's labelled calibration items
    (reaching it, in a cascade) it kept when certified — the file's ``coverage``; None
    where the file does not say it (an earlier recuse) or the stratum had no labels."""

    judge: str
    stratum: str
    reached: int
    kept: int
    certified: float | None
    threshold: float | None = None  # the stratum's certified threshold (None: not certified)

    @property
    def share(self) -> float:
        """``kept / reached``: the share of the stratum's items reaching the judge that it
        keeps (NaN: none reach it)."""
        return self.kept / self.reached if self.reached else math.nan


@dataclass(frozen=True)
class Applied:
    """:func:`decide`'s result: one decision per item (:data:`DECISION_FIELDS`), what each
    judge kept per stratum (:class:`Kept`, in the file's order), and the share of the
    labelled calibration items certified judges decided, from the file (each judge's
    ``share``, summed over a cascade's judges: ``1 − person_share``; None where the file
    does not say it). ``unjudged``: items no judge of the file gave a verdict, which go
    to a person unread (the judge was certified on items it judged, so the share of all
    items decided is below the certified one by them alone)."""

    decisions: pd.DataFrame
    kept: tuple[Kept, ...]
    certified_share: float | None
    unjudged: int = 0

    @property
    def share(self) -> float:
        """The share of the new items decided by a certified judge (NaN: no item)."""
        n = len(self.decisions)
        return float((self.decisions["decision"] != PERSON).sum()) / n if n else math.nan

    def to_dict(self) -> dict[str, Any]:
        """What each judge kept and the share decided, beside the certified ones, with
        :data:`KEPT_FIELDS` (``certify apply --out FILE.json``'s ``kept``)."""

        def num(x: float | None) -> float | None:
            return None if x is None or not math.isfinite(x) else float(x)

        return {
            "definitions": dict(KEPT_FIELDS),
            "n_items": len(self.decisions),
            "n_unjudged": self.unjudged,
            "share": num(self.share),
            "certified_share": num(self.certified_share),
            "judges": [
                {"judge": k.judge, "stratum": k.stratum, "reached": k.reached, "kept": k.kept,
                 "share": num(k.share), "certified_coverage": num(k.certified)}
                for k in self.kept
            ],
        }  # fmt: skip


#: what each number of :meth:`Applied.to_dict` means, with its unit
KEPT_FIELDS: dict[str, str] = {
    "n_items": "items of the table decided (each once)",
    "n_unjudged": "of those, items no judge of the file gave a verdict: to a person unread",
    "share": "judges: kept / reached, the share of the stratum's items reaching the judge "
    "(with its verdict, no earlier judge of the file deciding them) it keeps (0 to 1; null: "
    "none reach it); in all: the share of all items decided by a certified judge",
    "certified_share": "the share of the labelled calibration items the file's judges "
    "decided when certified (a cascade's judges summed); null: the file does not say it",
    "reached": "items of the stratum with the judge's verdict that no earlier judge decided",
    "kept": "of those, the items the judge decided (confidence at its stratum's threshold)",
    "certified_coverage": "the share of the stratum's labelled calibration items (reaching "
    "the judge) it kept when certified, the file's coverage; null: not in the file, or no "
    "labelled item",
}


def apply_thresholds(
    pairs: pd.DataFrame,
    spec: Mapping[str, Any],
    roster: Roster | None,
    *,
    file: str = "thresholds",
    judge: str | None = None,
) -> pd.DataFrame:
    """One decision per item of ``pairs`` (no labels needed): the first judge of the
    thresholds file (in cascade order) whose certified threshold the item's confidence
    reaches gives the verdict (``a``, ``b`` or ``tie``); otherwise ``to a person``.

    Columns: ``item_id, decision, judge, stratum, confidence, threshold``
    (:func:`decide` also says what each judge kept)."""
    return decide(pairs, spec, roster, file=file, judge=judge).decisions


def _stratum_order(names: Sequence[str]) -> list[str]:
    return [s for s in (*STRATA, "all") if s in names]


def chosen_stages(
    spec: Mapping[str, Any], *, file: str = "thresholds", judge: str | None = None
) -> list[dict[str, Any]]:
    """The stages of the thresholds file ``spec`` (:func:`read_thresholds`) that decide:
    every one of a cascade, or the one ``judge`` names (as the data names it, or in
    another case) of a file of several judges. A :class:`~recuse.errors.ConfigError`
    where ``judge`` is given for a cascade, missing for several judges, or not in the
    file: `certify apply` checks it before it prints anything (with --run it printed
    its check line first)."""
    stages = read_thresholds(spec, file=file)
    if spec.get("cascade") and judge is not None:  # it was ignored: all judges decided
        raise ConfigError(
            f"--judge {judge}: {file} is a cascade "
            f"({' → '.join(s['judge'] for s in stages)} → person), which decides with its "
            "judges in order: leave --judge out, or certify that judge alone (without --cascade)"
        )
    if not spec.get("cascade"):
        names = [s["judge"] for s in stages]
        if judge is None and len(stages) > 1:
            raise ConfigError(
                f"{file} certifies several judges, not a cascade ({', '.join(names)}): "
                "name one with --judge"
            )
        if judge is not None:  # as the data names it, or in another case (GPT-4)
            folded = {n for n in names if n.casefold() == judge.strip().casefold()}
            named = judge if judge in names else folded.pop() if len(folded) == 1 else None
            stages = [s for s in stages if s["judge"] == named]
            if not stages:
                raise ConfigError(f"--judge {judge!r} is not in {file}: {', '.join(names)}")
    return stages


def decide(
    pairs: pd.DataFrame,
    spec: Mapping[str, Any],
    roster: Roster | None,
    *,
    file: str = "thresholds",
    judge: str | None = None,
) -> Applied:
    """:func:`apply_thresholds`, with what each judge kept of the items of each stratum
    reaching it beside the coverage it was certified at (:class:`Applied`)."""
    stages = chosen_stages(spec, file=file, judge=judge)
    o = Options(strata=bool(spec.get("strata", True)),
                self_scope=str(spec.get("self_scope", "snapshot")))  # fmt: skip
    ids = list(dict.fromkeys(as_texts(pairs["item_id"])))
    out = pd.DataFrame({"item_id": ids, "decision": PERSON, "judge": "", "stratum": "",
                        "confidence": np.nan, "threshold": np.nan})  # fmt: skip
    out = out.set_index("item_id")
    open_ = set(ids)
    present = set(as_texts(pairs["judge"].dropna())) if "judge" in pairs else set()
    if not present & {s["judge"] for s in stages}:
        raise InputError(
            f"the table has no verdicts of {', '.join(s['judge'] for s in stages)} (the "
            f"judge(s) {file} certifies); its judges: {', '.join(sorted(present)) or 'none'}",
            column="judge",
            fix="give the verdicts of a certified judge, or certify this table's judge first",
        )
    kept_rows: list[Kept] = []
    judged: set[str] = set()  # items some judge of the file gave a verdict
    for stage in stages:
        cover = stage.get("coverage", {})
        if stage["judge"] not in present:  # a judge absent from the new table passes every
            kept_rows += [Kept(stage["judge"], s, 0, 0, cover.get(s),  # item on
                               stage["thresholds"].get(s))
                          for s in _stratum_order(list(stage["thresholds"]))]  # fmt: skip
            continue
        rows = judge_rows(pairs, stage["judge"])
        _same_kind(rows, stage, file)
        p = rows["p_a"].to_numpy(float)
        if stage.get("recalibration"):
            r = stage["recalibration"]
            p = map_points(p, (tuple(r["x"]), tuple(r["y"])))
        kind = stage.get("confidence")  # as certified: a one-order item reads as it did
        items = items_of(rows, roster, o, p_a=p, kind=kind if isinstance(kind, str) else None)
        judged.update(items.item_id)
        pooled = set(stage["thresholds"]) == {"all"}
        if stage["thresholds"] and len(items.stratum) and pooled != (items.stratum == "all").all():
            raise ConfigError(
                f"{file} certifies {stage['judge']!r} "
                + ("pooled (no roster's own/family/other strata)" if pooled
                   else "per own/family/other stratum")
                + ", but these items are read "
                + ("with a roster's strata" if pooled else "without a roster (all pooled)")
                + ": no item would find its threshold — "
                + ("apply without a roster" if pooled else "give the roster it was certified with")
            )  # fmt: skip
        certified = any(v is not None for v in stage["thresholds"].values())
        if not pooled and roster is not None and certified:  # (nothing certified keeps nothing)
            _same_strata(rows, stage, roster, o, file)
        lam = np.array([stage["thresholds"].get(s) for s in items.stratum], dtype=object)
        has = np.array([v is not None for v in lam])
        lam_f = np.where(has, lam, np.inf).astype(float)
        # by hash (np.isin of object arrays compares every pair: 4.5 s a stage at 20,000
        # items; an Index of them, a string one, iterates it: 1 s at 200,000)
        undecided = np.fromiter((i in open_ for i in items.item_id), bool, len(items.item_id))
        keep = has & (items.conf >= lam_f) & undecided
        keep &= ~_one_order_beside_both(rows, stage, file, keep, undecided)
        words = np.array(["b", "tie", "a"], dtype=object)[items.verdict[keep] + 1]
        idx = items.item_id[keep]
        out.loc[idx, "decision"] = words
        out.loc[idx, "judge"] = stage["judge"]
        out.loc[idx, "stratum"] = items.stratum[keep]
        out.loc[idx, "confidence"] = items.conf[keep]
        out.loc[idx, "threshold"] = lam_f[keep]
        open_ -= set(idx)
        names = _stratum_order([*stage["thresholds"], *set(items.stratum)])
        kept_rows += [Kept(stage["judge"], s, int((undecided & (items.stratum == s)).sum()),
                           int((keep & (items.stratum == s)).sum()), cover.get(s),
                           stage["thresholds"].get(s))
                      for s in names]  # fmt: skip
    shares = [s.get("share") for s in stages]
    said = None if any(v is None for v in shares) else math.fsum(float(v) for v in shares if v)
    return Applied(out.reset_index(), tuple(kept_rows), said, len(set(ids) - judged))


class OneOrderNotCertified(ReaderNote):
    """Items judged in one order only, of a judge certified on probabilities averaged over
    both orders: they go to a person."""


def _one_order_beside_both(
    rows: pd.DataFrame,
    stage: Mapping[str, Any],
    file: str,
    keep: np.ndarray,
    undecided: np.ndarray,
) -> np.ndarray:
    """The items of ``rows`` judged in one order only, where ``stage`` was certified on
    probabilities each the mean of both orders (its ``orders``: both): a single order's
    probability keeps the judge's position preference that the mean cancels, further
    from 0.5, so it reaches a threshold certified on means more often than it should
    (in a planted test: 2,767 of 4,000 such items kept, 73% agreeing, under a certified
    80%; the same items judged in both orders, 83%). Those items go to a person, and a
    note counts them (:class:`OneOrderNotCertified`): those still ``undecided`` (an
    earlier judge of a cascade decided the others, which stay decided)."""
    one = np.asarray(one_order(rows), dtype=bool) & undecided
    if stage.get("orders") != "both" or not one.any():
        return np.zeros(len(rows), dtype=bool)
    would = int((one & keep).sum())
    warnings.warn(
        OneOrderNotCertified(
            f"{file}: {stage['judge']!r} was certified on probabilities each the mean of its "
            f"two orders; {int(one.sum()):,} of its items here have no verdict in both "
            "orders (p_a_first and p_a_second), and one order's is further from 0.5 than a "
            f"mean, so they go to a person ({would:,} of them would have passed its "
            "threshold) — judge both orders to have them decided"
        ),
        stacklevel=3,
    )
    return one


class StrataUnchecked(ReaderNote):
    """Generators of new items a thresholds file's judge never saw at certification:
    their strata are the roster's, not checked against the certification's."""


def _most(names: Sequence[str], limit: int = 10, sep: str = ", ") -> str:
    """``names`` joined, the first ``limit`` of them and how many more."""
    more = f"{sep}and {len(names) - limit} more" if len(names) > limit else ""
    return sep.join(names[:limit]) + more


def _same_strata(
    rows: pd.DataFrame, stage: Mapping[str, Any], roster: Roster, o: Options, file: str
) -> None:
    """Refuse (:class:`ConfigError`) a roster that draws a certified judge's strata
    otherwise than the certification did: a generator the file says is the judge's own,
    family's or an outsider's (its ``models``) read as another's here would move its
    items to another stratum, kept under a threshold certified for that one. A generator
    the certification never saw is read as this roster says, with a note
    (:class:`StrataUnchecked`); a file without ``models`` (an earlier recuse) is not
    checked (``recuse certify apply`` notes it: :func:`unchecked_strata`)."""
    was = stage.get("models")
    if was is None:
        return
    judge = stage["judge"]

    def as_here(name: str) -> str:  # an id as this roster reads it (an alias: whose)
        return roster.canonical(name) if name in roster else name

    now = {as_here(m): v for m, v in models_of(rows, judge, roster, o) or ()}
    # the file's ids as this roster reads them: one it makes another model's alias (or
    # spells in another case) names that model here, and its items are that model's
    read = {m: as_here(m) for m in was}
    moved: dict[str, str] = {}  # id here -> the file's name for it (its id, else an alias)
    for m in was:
        if read[m] in now and was[m] != now[read[m]] and moved.get(read[m]) != read[m]:
            moved[read[m]] = m
    if moved:
        said = _most([f"{m}{'' if read[m] == m else f' (read as {read[m]} here)'}: "
                      f"{WHOSE[was[m]]} there, {WHOSE[now[read[m]]]} here" for m in moved.values()],
                     sep="; ")  # fmt: skip
        raise ConfigError(
            f"{file} was certified with another roster than this one: the strata "
            f"(own/family/other) of judge {judge!r} are drawn otherwise — {said}; their "
            "items would be kept under a threshold certified for another stratum — give the "
            "roster it was certified with (the same recuse.toml [[model]] entries and "
            "--roster file), or certify again with this one"
        )
    seen = set(read.values())
    unseen = [m for m in now if m not in seen]
    if unseen:
        warnings.warn(
            StrataUnchecked(
                f"{file}: the certification of {judge!r} saw no answers of "
                f"{_most([f'{m} ({now[m]})' for m in unseen])}: their items' strata are drawn "
                "by the roster given here, unchecked, and its guarantee assumes such items "
                "are exchangeable with the calibration items"
            ),
            stacklevel=3,
        )


def unchecked_strata(spec: Mapping[str, Any]) -> list[str]:
    """The judges of a (checked) thresholds file certified per stratum whose file does
    not say what drew their strata (``models``: written by an earlier recuse), so
    :func:`apply_thresholds` cannot check the roster given against them."""
    return [j["judge"] for j in spec["judges"]
            if set(j["thresholds"]) - {"all"} and "models" not in j]  # fmt: skip


#: what a thresholds file keeps that an older recuse's files lack: key, what it says
KEPT_SINCE: dict[str, str] = {
    "reference": "whose labels it was certified on",
    "reading": "how its verdicts were read (--swapped-frame, --confidence, --confidence-of)",
    "human_ties": "whether tied labels were counted",
}


def unkept(spec: Mapping[str, Any]) -> list[str]:
    """What a (checked) thresholds file written by an older recuse does not say: the
    words of :data:`KEPT_SINCE` for each key it lacks."""
    return [words for key, words in KEPT_SINCE.items() if key not in spec]


def certifies_any(spec: Mapping[str, Any]) -> bool:
    """Whether a (checked) thresholds file certifies a threshold for any judge and
    stratum (every one null: each item goes to a person)."""
    return any(v is not None for j in spec["judges"] for v in j["thresholds"].values())


def applied_guarantee(spec: Mapping[str, Any], *, judges: Collection[str] | None = None) -> str:
    """What a checked thresholds file (:func:`read_thresholds`) guarantees on the items
    it decides, in words. ``judges``: those of its judges that decide (``certify apply
    --judge`` picks one of several), where the file's other judges said the guarantee
    of a judge certified on no stratum, and their recalibration made it approximate."""
    every = spec["judges"]
    if judges is not None:
        spec = {**spec, "judges": [j for j in every if j["judge"] in judges]}
    if not certifies_any(spec):  # "agreement ≥ t on the items a judge decides" of none
        who = (
            "no judge of the file was certified on any stratum"
            if len(spec["judges"]) == len(every)
            else f"{' and '.join(j['judge'] for j in spec['judges'])}, the judge applied, was "
            "certified on no stratum"
        )
        return (
            f"none: {who} (its labels did not show agreement ≥ "
            f"{exact(spec['target'], percent=True)} at δ = {general(spec['delta'])}), "
            "so no item is decided by a judge: every one goes to a person"
        )
    ref: ReferenceKind | None = spec.get("reference")  # absent: a file of an older recuse
    whose = "the labels it was certified on" if ref is None else AGREEING_WITH[ref]
    return (
        f"agreement with {whose} ≥ {exact(spec['target'], percent=True)} on the items a "
        "certified judge decides"
        + (
            " (tied labels counted: a tie agrees only with a tie verdict)"
            if spec.get("human_ties") == "count"
            else TIES_LEFT_OUT  # "exclude", and a file of an older recuse (left out)
        )
        + f", with probability ≥ {complement(spec['delta'], least=2)} over the "
        "calibration set, if these items are exchangeable with the calibration items (the "
        "same kind of prompts and models, the same judge, read the same way); a batch's "
        "agreement scatters around that rate"
        + (APPROXIMATE if any(j.get("recalibration") for j in spec.get("judges", [])) else "")
    )


@dataclass(frozen=True)
class Observed:
    """The decisions of :func:`apply_thresholds` checked against labels the new items
    happen to have: ``n`` labelled items (not tied, unless ties are counted), ``kept``
    of them decided by a certified judge, ``agree`` of those equal to the label, ``ties``
    tied labels left out."""

    n: int
    kept: int
    agree: int
    ties: int

    @property
    def agreement(self) -> float:
        return self.agree / self.kept if self.kept else math.nan


def observed(
    decided: pd.DataFrame, pairs: pd.DataFrame, human_ties: TiedLabels = "exclude"
) -> Observed | None:
    """``decided`` (:func:`apply_thresholds`) against the labels of ``pairs`` (``human``:
    a, b or a tie as certification reads them); None when no item has a label. Tied
    labels are counted as the thresholds were certified (``human_ties``): left out, or
    kept, a tie agreeing only with a tie verdict (``ties`` then counts none left out)."""
    if "human" not in pairs.columns:
        return None
    h = pd.to_numeric(pairs["human"], errors="coerce").to_numpy(float)
    labelled = ~np.isnan(h)
    if not labelled.any():
        return None
    # an item's label is its first labelled row's; items are looked up by a hash of the
    # ids (``Index.isin`` of str ids builds a pyarrow scalar per label: 2.6 s of 17 for
    # 480,000 rows), decisions and labels compared as sides (+1 a, -1 b, 0 tie); a missing
    # id is an id of its own (factorize's -1 for it put its label in the next id's place)
    codes, ids = pd.factorize(pairs["item_id"].astype(str)[labelled], use_na_sentinel=False)
    first = np.unique(codes, return_index=True)[1]
    side = side_labels(h[labelled][first])
    at = pd.Index(ids).get_indexer_for(pd.Index(decided["item_id"]))
    label = side[at[at >= 0]]
    decision = decided["decision"].to_numpy(object)[at >= 0]
    counted = human_ties == "count"
    ties = 0 if counted else int((label == 0).sum())
    sided = np.ones(len(label), bool) if counted else label != 0
    kept = sided & (decision != PERSON)
    said = np.select([decision == "a", decision == "b", decision == "tie"], [1, -1, 0], 9)
    agree = kept & (said == label)
    return Observed(int(sided.sum()), int(kept.sum()), int(agree.sum()), ties)

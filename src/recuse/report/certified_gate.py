"""``recuse gate --certified T@C``: the judge must be certified at agreement ``≥ T`` on
at least a share ``C`` of its labelled pairs, at the report's δ.

The gate reads what the audit's Certification section wrote into ``report.json``: the
rows of that section's tables (``tables["certification-…"].rows``), one per dataset,
judge, stratum and target agreement on a 0.01 grid, with the share of labelled pairs
certified (``coverage``) at ``δ = 1 − level``. For each audited judge of a pairs
dataset it takes the ``pooled`` row at the grid target ``T' = ⌈100 T⌉ / 100`` (``T``
itself on the grid; the next one above otherwise, which certifies ``≥ T`` too), and

* PASS when ``coverage ≥ C``; FAIL when below (nothing certified is coverage 0);
* NOT MEASURED when the report has no curve for the judge (the reason the audit gave:
  no labels, no confidence, the analysis not run) or ``T'`` is past the grid.

One target is read, never the best of several: each target's certification is its
own statement at ``1 − δ``. The coverage is the share of the labelled pairs kept; the
guarantee is on the agreement of the kept pairs, assuming labelled and future pairs
are exchangeable (:mod:`recuse.mitigation.selective`). The line also gives the curve's
held-out check (each prompt fold decided by thresholds certified on the others: the
share kept and its agreement), which is said and never gated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from recuse.errors import ConfigError, InputError
from recuse.numbers import count, exact, share_percent, share_percent_beside

__all__ = ["SECTION", "Certified", "certification_rows", "gate_certified", "parse_certified"]

SECTION = "certification"  # the analysis id whose tables hold the curve
KEY = "certified_coverage"  # the bias the gate lines name
_NUMBERS = ("target", "delta", "n_labelled", "n_kept")
#: a row's shares, each null where nothing was kept or held out: the gate reads the
#: coverage and says the held-out ones (a string read as none, 7 as "700.0% kept")
_SHARES = ("coverage", "heldout_coverage", "heldout_agreement")
_FIX = "give the report.json that `recuse audit` wrote, unmodified"


@dataclass(frozen=True)
class Certified:
    """``--certified T@C``: agreement ``target`` certified on ``≥ coverage`` of the pairs."""

    target: float
    coverage: float

    @property
    def text(self) -> str:
        return f"{exact(self.target)}@{exact(self.coverage)}"

    @property
    def grid_target(self) -> float:
        """``⌈100 T⌉ / 100``: the curve's target that certifies ``≥ T``."""
        return math.ceil(round(self.target * 100, 9)) / 100


def parse_certified(texts: Sequence[str]) -> list[Certified]:
    """``["0.85@0.6", "0.8@0.9,0.9@0.3"]`` as rules.

    >>> parse_certified(["0.85@0.6"])
    [Certified(target=0.85, coverage=0.6)]
    """
    out = []
    for text in texts:
        for part in text.split(","):
            if not part.strip():
                continue
            t, sep, c = part.partition("@")
            try:
                target, coverage = float(t), float(c)
            except ValueError:
                target = coverage = math.nan
            if not (sep and 0.5 <= target < 1 and 0 <= coverage <= 1):
                raise ConfigError(
                    f"--certified: cannot read {part.strip()!r} — write AGREEMENT@COVERAGE, "
                    "agreement in [0.5, 1) and coverage in [0, 1], e.g. --certified 0.85@0.6 "
                    "(certified at agreement ≥ 85% on at least 60% of the pairs)"
                )
            out.append(Certified(target + 0.0, coverage + 0.0))  # + 0.0: no "-0%" from -0
    if not out:
        raise ConfigError("--certified: give AGREEMENT@COVERAGE, e.g. --certified 0.85@0.6")
    return out


def _number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def _share(x: Any) -> bool:
    return _number(x) and 0 <= x <= 1


def certification_rows(data: Mapping[str, Any], p: Path) -> tuple[dict[str, Any], ...]:
    """The ``pooled`` and ``own`` rows of the Certification section's tables, checked: a
    damaged row is an :class:`InputError` naming the table and row."""
    names: list[str] = []
    for s in data.get("sections") or []:
        if isinstance(s, dict) and s.get("id") == SECTION and isinstance(s.get("tables"), list):
            names += [n for n in s["tables"] if isinstance(n, str)]
    tables = data.get("tables")
    out: dict[tuple[str, str, str, float], dict[str, Any]] = {}
    for name in names:
        table = tables.get(name) if isinstance(tables, dict) else None
        rows = table.get("rows") if isinstance(table, dict) else None
        if not isinstance(rows, list):
            raise InputError(f"table {name!r} of the certification section is missing",
                             file=str(p), fix=_FIX)  # fmt: skip
        for k, r in enumerate(rows, start=1):
            ok = (
                isinstance(r, dict)
                and all(isinstance(r.get(f), str) for f in ("dataset", "judge", "stratum"))
                and all(_number(r.get(f)) for f in _NUMBERS)
                and all(r.get(f) is None or _share(r[f]) for f in _SHARES)
            )
            if not ok:
                raise InputError(
                    f"table {name!r} row {k}: needs dataset, judge, stratum (texts), "
                    f"{', '.join(_NUMBERS)} (numbers) and {', '.join(_SHARES)} (each a "
                    "share in [0, 1] or null)",
                    file=str(p), fix=_FIX,
                )  # fmt: skip
            if r["stratum"] in ("pooled", "own"):
                out[(r["dataset"], r["judge"], r["stratum"], round(float(r["target"]), 2))] = r
    return tuple(out.values())


def _at(rows: Sequence[Mapping[str, Any]], stratum: str, t: float) -> list[Mapping[str, Any]]:
    return [r for r in rows if r["stratum"] == stratum and abs(float(r["target"]) - t) < 1e-9]


def _held_out(row: Mapping[str, Any], target: float) -> str:
    """The curve's held-out check in words, "" where the report has none: the share kept
    and the agreement of the kept verdicts, each prompt fold decided by thresholds
    certified on the other folds. A check beside the gate's number (the calibration
    coverage), which it may exceed: alone, "certified on 0.0%; held out: 5.0% kept" read
    as a second, contradicting coverage, and hid that those 5% agreed below the target.
    The agreement is written on its side of ``target``, beside which the line names it
    (:func:`~recuse.numbers.share_percent_beside`): 0.7996 read "80.0% of them agree"
    beside "at agreement ≥ 80%", a target the held-out pairs missed."""
    held: Any = row.get("heldout_coverage")
    agree: Any = row.get("heldout_agreement")
    if not _number(held):
        return ""
    agreed = (
        f", {share_percent_beside(float(agree), target)} of them agree{_chance(row, target)}"
        if _number(agree)
        else ""
    )
    return (
        f"; held-out check (not gated: each prompt fold decided by thresholds certified "
        f"on the other folds): {share_percent(held)} kept{agreed}"
    )


def binomial_cdf(k: int, n: int, p: float) -> float:
    """``P(Binomial(n, p) ≤ k)``, summed in logs (the gate imports no statistics library)::

        Σ_{i ≤ k} C(n, i) p^i (1 − p)^(n − i)

    >>> round(binomial_cdf(7, 10, 0.85), 4)
    0.1798
    """
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    head = math.lgamma(n + 1)
    terms = (
        head - math.lgamma(i + 1) - math.lgamma(n - i + 1)
        + i * math.log(p) + (n - i) * math.log1p(-p)
        for i in range(k + 1)
    )  # fmt: skip
    return min(1.0, math.fsum(math.exp(t) for t in terms))


def _chance(row: Mapping[str, Any], target: float) -> str:
    """Where the held-out agreement reads under ``target``, how often a judge agreeing at
    the target would read that low on as many pairs (" (7 of 10; … 0.18 of the time)"):
    a PASS beside "71.4% of them agree" at 80% read as a broken guarantee, with nothing to
    tell 10 of 14 (0.30 of the time) from a shortfall beyond chance. "" where it reads at
    the target or more, or the report gives no count (an older one)."""
    kept: Any = row.get("heldout_kept")
    agree: Any = row.get("heldout_agreement")
    if not (_number(kept) and _number(agree)) or not kept >= 1 or agree >= target:
        return ""
    n = round(float(kept))
    k = round(float(agree) * n)
    p = binomial_cdf(k, n, target)
    delta: Any = row.get("delta")
    beyond = _number(delta) and p < float(delta)
    return (
        f" ({k:,} of {n:,}: a judge agreeing at {exact(target, percent=True)} reads this low "
        f"or lower on {n:,} pairs {p:.2g} of the time"
        + ("; below the target beyond chance" if beyond else "")
        + ")"
    )


def _line(rule: Certified, rows: Sequence[Mapping[str, Any]]) -> tuple[str, str, float | None]:
    """The outcome, its sentence and the coverage it compares (None: not measured) for
    one judge's curve. The sentence's target agreement is a percentage, as its coverage,
    held-out shares and required share are ("at agreement ≥ 0.85 … 90.5% of them agree"
    wrote one quantity in two units); the rule before it (``certified 0.85@0.6``)
    names the option's shares as typed."""
    t = rule.grid_target
    # the target as given; the grid's beside it where they differ
    read = (
        ""
        if abs(t - rule.target) < 1e-9
        else f"read at {exact(t, percent=True)}, the grid's next target"
    )
    at = _at(rows, "pooled", t)
    if not at:  # it read "(< 100%)" of 0.991, the grid's target for the 99.1% given
        top = max(float(r["target"]) for r in rows)
        return (
            "not measured",
            f"the report's curve stops at agreement {exact(top, percent=True)} "
            f"(< {exact(rule.target, percent=True)}{', ' + read if read else ''})",
            None,
        )
    r = at[0]
    cov = float(r["coverage"]) if r["coverage"] is not None else 0.0
    outcome = "pass" if cov >= rule.coverage else "fail"
    grid = f" ({read})" if read else ""
    held_text = _held_out(r, rule.target)
    own = ""
    for o in _at(rows, "own", t):
        share = float(o["coverage"]) if o["coverage"] is not None else 0.0
        own = f" (own-answer pairs: {share_percent(share)} of {count(o['n_labelled'])})"
    # the required share as given, never rounded: rounded to six significant digits, a
    # share written on its own side read as it (0.1299952 "below the required 12.9995%")
    required = exact(rule.coverage, percent=True)
    return (
        outcome,
        (
            f"at agreement ≥ {exact(rule.target, percent=True)}{grid}, "
            f"δ = {float(r['delta']):g}: certified on "
            f"{share_percent_beside(cov, rule.coverage)} of {count(r['n_labelled'])} labelled "
            f"pairs{own}"
            f"{held_text}; "
            f"{'meets' if outcome == 'pass' else 'below'} the required {required}"
        ),
        cov,
    )


def gate_certified(
    report: Any, rules: Sequence[Certified], *, reason: Any, skip: bool
) -> list[tuple[str, str, str, str, float | None, float]]:
    """``(judge, dataset, outcome, text, coverage, required)`` per rule, audited pairs
    dataset and judge (module docstring), for :func:`recuse.report.gate.gate_report` to
    make its lines: ``coverage`` the certified share the line compares (None where not
    measured), ``required`` the rule's. ``reason(dataset, judge)`` says why a judge has
    no curve."""
    audited = {d.name: d.judges for d in report.datasets if d.table == "pairs"}
    if not report.datasets:  # a report without provenance: the judges with a curve
        for r in report.certification:
            audited.setdefault(r["dataset"], ())
            if r["judge"] not in audited[r["dataset"]]:
                audited[r["dataset"]] += (r["judge"],)
    lines: list[tuple[str, str, str, str, float | None, float]] = []
    tail = " — skipped (--skip-unmeasured)" if skip else ""
    for rule in rules:
        if not any(audited.values()):  # no judge to name: said, not a silent gate
            lines.append(("", "", "not measured", f"NOT MEASURED: certified {rule.text}: no "
                          "dataset of the report is a pairs table with a judge, which the "
                          f"Certification analysis reads{tail}", None, rule.coverage))  # fmt: skip
        for dataset, judges in audited.items():
            for judge in sorted(judges):
                rows = [r for r in report.certification
                        if r["dataset"] == dataset and r["judge"] == judge]  # fmt: skip
                who = f"certified {rule.text} of {judge} ({dataset})"
                if rows:
                    outcome, text, cov = _line(rule, rows)
                else:
                    outcome, text, cov = "not measured", str(reason(dataset, judge)), None
                said = tail if outcome == "not measured" else ""
                lines.append((judge, dataset, outcome, f"{outcome.upper()}: {who}: {text}{said}",
                              cov, rule.coverage))  # fmt: skip
    return lines

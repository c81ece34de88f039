"""A pass/fail gate on an audit's ``report.json``, for CI.

Each threshold names a bias (its key, e.g. ``self_preference_eo``, or an analysis id
as a shorthand for that analysis's headline bias) and a bound. For every finding of
that bias (every judge, dataset and detail), with ``d = estimate - null``
(``null`` from the finding: 0 for signed differences, 0.5 for rates such as
position; a finding whose ``null`` is not its bias's is refused as an edited report)
and the interval shifted the same way:

* ``max`` (``--max KEY=x``): pass when the whole interval lies in ``[null - x, null
  + x]``; fail when it lies wholly outside; otherwise inconclusive;
* ``min`` (``--min KEY=x``, for quality scores such as agreement): pass when the
  interval lies wholly at or above ``x``; fail when wholly below; else inconclusive.

An interval that rules nothing out, as the audit reads it (from fewer than 5 prompts, or
of zero width without the value being fixed by construction: :func:`rules_nothing_out`,
:attr:`recuse.report.model.Finding.informative`), is inconclusive whatever its ends: a
judge always right on 6 prompts, EO 0.00 [0.00, 0.00], neither passes ``--max
self_preference_eo=0.05`` nor fails a bound it lies outside.

A bound that would reward a worse judge is refused: ``--min`` on a bias, ``--max`` on a
quality score measured from chance (agreement, self-recognition), ``--min`` on one
whose best value is its floor 0 (a calibration error or Brier score).

Every judge is accounted for: an audited judge (of a dataset whose table the bias's
analysis reads) with no finding of the bias is listed as *not measured*, with the
report's reason (the skip it recorded, or the analysis not run); so is every judge
when the report has no finding of the bias at all. A pooled bias (one estimate per
group of judges) is accounted per dataset.

Exit code: 1 when any finding fails; else 3 when any is inconclusive, or a judge was
not measured (unless ``skip_unmeasured``: then listed only), or nothing at all was
measured; else 0. A damaged or crafted report is an input error (the CLI's exit 2).
An inconclusive line says roughly how many comparisons (ratings, for a bias of a ratings
table: :func:`counted`) would decide it: with ``h`` the
interval's half-width (``z · std_error`` when the report has a standard error,
else half the interval) and ``g`` the distance from the estimate to the bound,
``n_needed ≈ n · (h / g)²`` — an approximation that assumes the interval shrinks as
``1/√n`` and the estimate stays where it is. An interval that is the exact bound of
prompts none of which changed with the order (its ``interval_rule`` is "exact_bound"; in
a report written before that field, its ``method`` says "exact bound (not a
bootstrap)": :func:`exact_bound`, :func:`recuse.metrics.estimate.unseen_span`) shrinks
as ``1/n`` instead: its reach toward the bound is ``r = k · min(1, u(c) · h)``, ``u(c) =
1 − (1 − level)^(1/c)`` over ``c`` prompts and ``h`` the finding's ``heaviest_prompt``,
so the prompts needed are the least ``c'`` with ``u(c') ≤ g / (k · h)``, and the
comparisons ``n · c' / c`` (:func:`bound_needed`; 22 prompts for 0.50 [0.41, 0.59] from
12 under ``--max position=0.05``, where ``1/√n`` said 37).

That projection is only as good as ``g``, and ``g`` is itself uncertain by about one
standard error ``se = h / z``. When ``n_needed`` exceeds :data:`PRACTICAL_MULTIPLE`
(100) times ``n``, i.e. ``g < h / 10``, the estimate's own error is several times the
distance it is divided by (``se > 10 g / z``: over 6 ``g`` at the 90% level, over 3.9
``g`` at 99%), so the projection could be off by any factor; and the data cannot tell
on which side of the bound the judge lies (read as a flat-prior posterior, the chance
that the truth is on the estimate's side is at most ``Φ(z / 10)``, 0.57 at 90%). A
hundred times the data is also past what a study can usually add. Such a line says
instead that the estimate sits too close to the bound for more data to decide it at any
practical size, with the distance to the bound; the projection stays in the line and
in ``n_needed`` (``--json``), marked ``too_close``.

Numbers read as the audit prints them (:func:`~recuse.numbers.estimate_text`:
``+0.00 [−0.12, 0.11]``); where that rounding puts an end of the interval on a bound or
across it, the line adds the exact comparison (``high end 0.6004 > 0.6``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from statistics import NormalDist
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from recuse.bootstrap_rules import Extrapolation
from recuse.errors import ConfigError, InputError
from recuse.interval_rules import (
    EXACT_BOUND,
    FEW_CLUSTERS,
    INTERVAL_RULES,
    informative,
    zero_width,
)
from recuse.numbers import (
    MINUS,
    decimal_beside,
    ends_apart_decimals,
    estimate_digits,
    estimate_text,
    fixed_decimals,
    minus,
    percent,
)
from recuse.report.labels import FIXED_WORDS, all_judges_label, is_all_judges_label

if TYPE_CHECKING:
    from recuse.report.bias import Bias
    from recuse.report.certified_gate import Certified
    from recuse.report.model import AuditReport

__all__ = [
    "AuditedDataset",
    "GateLine",
    "GateResult",
    "GatedReport",
    "GatedSkip",
    "Scope",
    "Threshold",
    "evaluate",
    "gate_report",
    "gated_name",
    "load_findings",
    "load_report",
    "parse_thresholds",
]

Bound = Literal["max", "min"]
Outcome = Literal["pass", "fail", "inconclusive", "not measured"]
EXIT_PASS, EXIT_FAIL, EXIT_INCONCLUSIVE = 0, 1, 3
#: an inconclusive line whose projected comparisons exceed this multiple of its n says
#: the estimate is too close to the bound to decide, not the number (module docstring)
PRACTICAL_MULTIPLE = 100


def two_sided_z(level: float) -> float:
    """The normal quantile of a two-sided interval at ``level`` (0 < level < 1):
    ``z = Φ⁻¹((1 + level) / 2)``, 1.645 at 0.9 (the standard library's
    :class:`statistics.NormalDist`, so the gate imports no SciPy).

    >>> round(two_sided_z(0.9), 4), round(two_sided_z(0.95), 4)
    (1.6449, 1.96)
    """
    return NormalDist().inv_cdf((1 + level) / 2)


@dataclass(frozen=True)
class Threshold:
    """``key`` (bias key or analysis id) with its bound ``value``."""

    key: str
    value: float
    bound: Bound = "max"


@dataclass(frozen=True)
class Scope:
    """Where a bias can be measured, from the analysis that estimates it: the table
    kind it reads (``pairs`` / ``ratings``), the analysis (id and title, as skips name
    it) and whether one estimate is shared by a group of judges (``pooled``), so that it
    is accounted per dataset rather than per judge; ``quality``: a quality score
    (agreement, calibration error), not a bias; ``tested``: its null is a value a
    test can reject (chance, for agreement), not a floor that is the best score (0 for
    a calibration error). ``bias``: the bias itself, whose :attr:`~recuse.report.bias.Bias.span`
    (the values its estimate can take) a bound is checked against (:func:`check_thresholds`)."""

    table: str
    analysis: str
    title: str
    pooled: bool = False
    quality: bool = False
    tested: bool = True
    bias: Bias | None = None


@dataclass(frozen=True)
class GateLine:
    """One finding (or one judge without a finding) against one threshold: the outcome
    and the sentence saying why."""

    bias: str
    judge: str
    dataset: str
    outcome: Outcome
    text: str
    n_needed: int | None = None
    warnings: tuple[str, ...] = ()  # the finding's own caveats (report.json "warnings")
    #: an inconclusive line's distance from the estimate to the bound it is nearest
    gap: float | None = None
    #: inconclusive with the estimate so near the bound that more data is unlikely to
    #: decide it at a practical size (``n_needed`` over :data:`PRACTICAL_MULTIPLE` × n)
    too_close: bool = False
    #: the finding's estimate, its interval (low, high) at ``level`` (0.9: a 90%
    #: interval) and its no-bias value, as the line's text writes them; None on a line
    #: without a finding (not measured, a certification)
    estimate: float | None = None
    interval: tuple[float, float] | None = None
    level: float | None = None
    null: float | None = None
    #: a certification line's certified coverage, the share (0 to 1) of the judge's
    #: labelled pairs kept at the rule's agreement (None where not measured), and the
    #: share the rule requires; None on a bias line
    coverage: float | None = None
    required_coverage: float | None = None
    #: the finding's ends extrapolated past the resamples (report.json's
    #: ``extrapolated``; None: none, or a report written before it): its warning is
    #: printed in a line's words (:func:`recuse.report.extrapolated.gate_caveat`)
    extrapolated: Extrapolation | None = None
    #: the finding's value is fixed by construction (report.json's
    #: ``fixed_by_construction``): not a measurement, it has no interval (``--json``
    #: writes its ends null, where 0 and 0 read as one beside the line's "no interval")
    fixed: bool = False


@dataclass(frozen=True)
class GateResult:
    """Every line of the gate. ``skip_unmeasured``: judges (or datasets) whose bias was
    not measured are listed but do not make the gate inconclusive."""

    lines: tuple[GateLine, ...]
    skip_unmeasured: bool = False

    @property
    def unmeasured(self) -> tuple[GateLine, ...]:
        return tuple(line for line in self.lines if line.outcome == "not measured")

    @property
    def measured(self) -> tuple[GateLine, ...]:
        return tuple(line for line in self.lines if line.outcome != "not measured")

    @property
    def exit_code(self) -> int:
        """1 when a finding fails; else 3 when one is inconclusive, a judge was not
        measured (without ``skip_unmeasured``) or nothing at all was measured; else 0."""
        outcomes = {line.outcome for line in self.lines}
        if "fail" in outcomes:
            return EXIT_FAIL
        if "inconclusive" in outcomes or not self.measured:
            return EXIT_INCONCLUSIVE
        if self.unmeasured and not self.skip_unmeasured:
            return EXIT_INCONCLUSIVE
        return EXIT_PASS

    def verdict(self) -> str:
        """The gate's last line."""
        code, n = self.exit_code, len(self.unmeasured)
        missing = f"{n} not measured" if n else ""
        if code == EXIT_FAIL:
            return "gate FAILED" + (f" ({missing} besides)" if n else "")
        if code == EXIT_PASS:
            return "gate passed" + (f" ({missing}, skipped: --skip-unmeasured)" if n else "")
        if not self.measured:
            return "gate inconclusive: nothing was measured (see NOT MEASURED above)"
        if any(line.outcome == "inconclusive" for line in self.lines):
            skipped = ", skipped: --skip-unmeasured" if self.skip_unmeasured else ""
            return "gate inconclusive (need more data)" + (f"; {missing}{skipped}" if n else "")
        return (
            f"gate inconclusive: {missing} — audit data that measures them, or pass "
            "--skip-unmeasured to gate only what was measured"
        )


def parse_thresholds(
    texts: Sequence[str], bound: Bound = "max", *, option: str | None = None
) -> list[Threshold]:
    """``["self-preference=0.05", "position=0.1,verbosity=0.1"]`` as thresholds; an
    error names ``option`` (default ``--max`` / ``--min``; ``--fail-on`` for the audit's).

    >>> parse_thresholds(["a=0.05,b=1"])
    [Threshold(key='a', value=0.05, bound='max'), Threshold(key='b', value=1.0, bound='max')]
    >>> parse_thresholds(["agreement_kappa=-0.2"], "min")
    [Threshold(key='agreement_kappa', value=-0.2, bound='min')]
    """
    said = option or f"--{bound}"
    out: list[Threshold] = []
    for text in texts:
        for part in text.split(","):
            if not part.strip():
                continue
            key, sep, value = part.partition("=")
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            # a --max is a distance from the no-bias value (0 or more); a --min a floor
            # on a score, whose range (Bias.span: κ from -1) is checked with the bias
            negative = bound == "max" and number < 0
            if not sep or not key.strip() or not math.isfinite(number) or negative:
                what = "a number of 0 or more" if bound == "max" else "a number"
                example = (
                    f"{said} self-preference=0.05"
                    if bound == "max"
                    else f"{said} agreement_accuracy=0.75"
                )
                raise ConfigError(
                    f"{said}: cannot read {part.strip()!r} — write BIAS=NUMBER ({what}), "
                    f"comma-separated, e.g. {example}"
                )
            twice = next((t for t in out if t.key == key.strip()), None)
            if twice is not None:  # both were gated, and the line read as two verdicts
                raise ConfigError(
                    f"{said}: {twice.key} is given twice ({twice.value:g} and {number:g}) "
                    f"— give each bias one {said} bound"
                )
            out.append(Threshold(key.strip(), number, bound))
    if not out:
        raise ConfigError("give at least one threshold, e.g. --max self-preference=0.05")
    return out


_FIELDS = {"bias": str, "judge": str, "estimate": float, "ci_low": float, "ci_high": float}
_FIX = "give the report.json that `recuse audit` wrote, unmodified"


@dataclass(frozen=True)
class AuditedDataset:
    """One input of the audit as its report lists it (``provenance.sources``)."""

    name: str
    table: str  # "pairs" or "ratings"
    judges: tuple[str, ...]


@dataclass(frozen=True)
class GatedSkip:
    """One estimate or analysis the report says it did not make (its ``skipped``)."""

    analysis: str
    dataset: str
    judge: str  # one judge, or "" (not judge-specific, or every judge: ``all_judges``)
    reason: str
    bias: str  # the bias key it leaves unestimated, or ""
    all_judges: bool = False  # the reason holds for every judge of the dataset


@dataclass(frozen=True)
class GatedReport:
    """What the gate reads of a ``report.json``: every finding, every estimate not made
    (``skipped``), the audited datasets with their judges, and which analyses ran."""

    findings: tuple[dict[str, Any], ...]
    skipped: tuple[GatedSkip, ...]
    datasets: tuple[AuditedDataset, ...]
    only: tuple[str, ...] | None = None  # analysis ids of --only (None: all)
    skip: tuple[str, ...] = ()  # analysis ids of --skip
    renamed: tuple[str, ...] = ()  # old bias keys this report carried, read under new ones
    #: the Certification section's curve rows (:mod:`recuse.report.certified_gate`)
    certification: tuple[dict[str, Any], ...] = ()

    def ran(self, analysis: str) -> bool:
        """Whether the audit was asked to run ``analysis`` (an id)."""
        return analysis not in self.skip and (self.only is None or analysis in self.only)


def _bad(what: str, path: Path) -> InputError:
    return InputError(what, file=str(path), fix=_FIX)


def load_report(path: str | Path) -> GatedReport:
    """Read and check an audit ``report.json`` (or the folder the audit wrote it into:
    its ``report.json`` is read).

    Anything the gate's arithmetic would read is checked: a crafted or damaged report
    (an unknown ``schema_version``, a finding without its no-bias value ``null``, a
    number that is not finite or too large for a float, deep nesting) is an
    :class:`~recuse.errors.InputError` naming the field, never a guess.
    """
    from recuse.files import read_text

    p = Path(path)
    if p.is_dir():
        if not (p / "report.json").is_file():
            raise InputError(
                "a folder without a report.json",
                file=str(p),
                fix="give the folder `recuse audit --out` wrote, or its report.json",
            )
        p = p / "report.json"
    try:
        text = read_text(p)
    except InputError as exc:
        raise InputError(f"cannot read the report: {exc.reason}", file=str(p), fix=_FIX) from None
    try:
        data = json.loads(text)
    except RecursionError:
        raise _bad("not a report: JSON nested too deeply to read", p) from None
    except ValueError as exc:
        raise _bad(f"not JSON ({str(exc)[:200]})", p) from None
    return _report_data(data, p)


def in_memory(report: AuditReport) -> GatedReport:
    """What the gate reads of an audit's report object, as its ``report.json`` holds it
    (the same dictionary, not the file: ``--fail-on`` gates the report it made)."""
    from recuse.report.export import to_json

    return _report_data(json.loads(to_json(report)), Path("(the report in memory)"))


def _report_data(data: Any, p: Path) -> GatedReport:
    """The checked :class:`GatedReport` of a parsed ``report.json`` (``p``: its name)."""
    from recuse.report.labels import READ_VERSIONS

    sections = data.get("sections") if isinstance(data, dict) else None
    if not isinstance(sections, list) or "schema_version" not in data:
        raise _bad("not a recuse audit report (no schema_version and sections)", p)
    version = data["schema_version"]
    if type(version) is not int or version not in READ_VERSIONS:
        shown = repr(version)[:40]
        raise InputError(
            f"schema_version {shown} is not one this recuse reads "
            f"({' or '.join(map(str, READ_VERSIONS))})",
            file=str(p),
            fix="gate the report with the recuse version that wrote it, or audit again",
        )
    findings = []
    for i, section in enumerate(sections, start=1):
        items = section.get("findings") if isinstance(section, dict) else None
        if not isinstance(items, list):
            raise _bad(f"section {i} has no findings list", p)
        assert isinstance(section, dict)
        for j, f in enumerate(items, start=1):
            findings.append({"section": section.get("id", ""), **_finding(f, i, j, data, p)})
    skipped = _skipped(data.get("skipped", []), p)
    renamed = {str(f["bias"]) for f in findings} | {s.bias for s in skipped}
    renamed &= set(RENAMED)
    from recuse.report.certified_gate import certification_rows

    return GatedReport(
        findings=tuple(_renamed(f) for f in findings),
        skipped=tuple(
            replace(s, bias=RENAMED[s.bias].key) if s.bias in RENAMED else s for s in skipped
        ),
        datasets=_datasets(data.get("provenance"), p),
        **_run_options(data.get("provenance")),
        renamed=tuple(sorted(renamed)),
        certification=certification_rows(data, p),
    )


class Renamed(NamedTuple):
    """A bias key of older reports: the key the same number has now (``key``), what the
    gate says beside its line (``note``), the headline the old key gates now
    (``headline``) and what that headline's line says of an older report that did not
    estimate it (``unmeasured``: it read "the report holds no finding and no reason")."""

    key: str
    note: str
    headline: str
    unmeasured: str


#: bias keys of older reports. ``verbosity`` was Eq. 6's recall difference; it is now
#: ``verbosity_recall_gap``, and ``verbosity`` (the analysis id) gates the verbosity
#: headline, the prefer-longer gap. ``family_preference`` was the unadjusted equal-
#: opportunity family difference, which ``--max family_preference`` gated while
#: ``--max self_preference`` gated the calibrated headline; it is now
#: ``family_preference_eo``, as the self-preference one is ``self_preference_eo``, and
#: ``family_preference`` gates the headline (family_preference_calibrated).
RENAMED: dict[str, Renamed] = {
    "verbosity": Renamed(
        "verbosity_recall_gap",
        "read from an older report, where `verbosity` named Saito's Eq. 6 recall "
        "difference: it is gated here as verbosity_recall_gap; `verbosity` now gates the "
        "verbosity headline, the prefer-longer gap (verbosity_longer_gap)",
        "verbosity_longer_gap",
        "this report is from an older recuse, which did not estimate the prefer-longer "
        "gap (its `verbosity` was Eq. 6's recall difference, gated now as "
        "verbosity_recall_gap) — audit again to gate the headline, or gate Eq. 6 with "
        "--max verbosity_recall_gap=X",
    ),
    "family_preference": Renamed(
        "family_preference_eo",
        "read from an older report, where `family_preference` named the unadjusted "
        "equal-opportunity family difference: it is gated here as family_preference_eo; "
        "`family_preference` now gates the family-preference headline "
        "(family_preference_calibrated)",
        "family_preference_calibrated",
        "this report is from an older recuse, which did not estimate the calibrated family "
        "preference (its `family_preference` was the unadjusted equal-opportunity "
        "difference, gated now as family_preference_eo where the report holds it) — audit "
        "again to gate the headline",
    ),
}


def _renamed(f: dict[str, Any]) -> dict[str, Any]:
    """A finding of an older report under its bias's current key, with a note saying so."""
    old = RENAMED.get(str(f["bias"]))
    if old is None:
        return f
    return {**f, "bias": old.key, "warnings": [*f.get("warnings", []), old.note]}


def load_findings(path: str | Path) -> list[dict[str, Any]]:
    """Every finding of an audit ``report.json`` (each section's ``findings``), checked
    as :func:`load_report` does."""
    return list(load_report(path).findings)


def _finding(f: Any, i: int, j: int, report: dict[str, Any], p: Path) -> dict[str, Any]:
    where = f"finding {j} of section {i}"
    if not isinstance(f, dict):
        raise _bad(f"{where} is not an object", p)
    for k, t in _FIELDS.items():
        if k not in f:
            raise _bad(f"{where} lacks {k!r}", p)
        if not (isinstance(f[k], str) if t is str else _number(f[k])):
            kind = "text" if t is str else "a finite number"
            raise _bad(f"{where}: {k!r} is not {kind} (got {_shown(f[k])})", p)
    if "null" not in f:
        raise _bad(f"{where} lacks 'null' (the no-bias value its bounds are measured from)", p)
    if not _number(f["null"]):
        raise _bad(f"{where}: 'null' is not a finite number (got {_shown(f['null'])})", p)
    if f["ci_low"] > f["ci_high"]:
        # as written, never rounded: 0.5500001 read "ci_low 0.55 is above ci_high 0.55"
        low, high = _shown(f["ci_low"]), _shown(f["ci_high"])
        raise _bad(f"{where}: ci_low {low} is above ci_high {high}", p)
    level: Any = f.get("level", report.get("level"))
    if not _number(level) or not 0 < float(level) < 1:
        raise _bad(f"{where}: 'level' is not a number between 0 and 1 (got {_shown(level)})", p)
    for k in ("dataset", "detail"):
        if not isinstance(f.get(k, ""), str):
            raise _bad(f"{where}: {k!r} is not text (got {_shown(f[k])})", p)
    caveats = f.get("warnings", [])  # optional (older reports have none)
    if not isinstance(caveats, list) or not all(isinstance(w, str) for w in caveats):
        raise _bad(f"{where}: 'warnings' is not a list of texts (got {_shown(caveats)})", p)
    for k in ("n", "clusters", "std_error"):  # optional (null when not known)
        if f.get(k) is not None and not (_number(f[k]) and f[k] >= 0):
            raise _bad(f"{where}: {k!r} is not a finite number >= 0 (got {_shown(f[k])})", p)
    for k in ("fixed_by_construction", "absolute_value"):  # optional (older reports lack them)
        if k in f and not isinstance(f[k], bool):  # the audit writes true or false, never null
            raise _bad(f"{where}: {k!r} is not true or false (got {_shown(f[k])})", p)
    if f.get("fixed_by_construction") is True:
        _check_fixed(f, where, caveats, p)
    try:  # optional (older reports lack it: their warnings are printed whole)
        far = _extrapolated(f)
    except ValueError as exc:
        raise _bad(f"{where}: 'extrapolated' {exc}", p) from None
    # the record is of this finding's interval: its level and prompts (a record of
    # another level printed "90% low end extrapolated" under a 99% finding's line in
    # --json, and stood unquestioned beside its numbers)
    if far is not None and abs(far.level - float(level)) > 1e-9:
        raise _bad(f"{where}: 'extrapolated' is of level {far.level:g}, the finding's is "
                   f"{float(level):g}", p)  # fmt: skip
    if far is not None and f.get("clusters") is not None and far.clusters != f["clusters"]:
        raise _bad(f"{where}: 'extrapolated' is of {far.clusters:,} prompts, the finding "
                   f"resamples {_shown(f['clusters'])}", p)  # fmt: skip
    rule = f.get("interval_rule")  # optional (older reports lack it: the method's words)
    if rule is not None and rule not in INTERVAL_RULES:
        raise _bad(
            f"{where}: 'interval_rule' is not one of {', '.join(INTERVAL_RULES)} or null "
            f"(got {_shown(rule)})",
            p,
        )
    heaviest = f.get("heaviest_prompt")  # optional, as interval_rule
    if heaviest is not None and not (_number(heaviest) and heaviest >= 1):
        raise _bad(
            f"{where}: 'heaviest_prompt' is not a number >= 1 or null (got {_shown(heaviest)})", p
        )
    clusters: Any = f.get("clusters")
    if heaviest is not None and _number(clusters) and heaviest > clusters * (1 + 1e-9):
        # max / mean of c prompts' pairs is at most c (one prompt holding every pair)
        raise _bad(
            f"{where}: 'heaviest_prompt' {_shown(heaviest)} is above its 'clusters' "
            f"{_shown(clusters)}: the largest prompt's pairs over the mean prompt's is at "
            "most the number of prompts (one prompt holding every pair)",
            p,
        )
    if f.get("absolute_value") and (f["null"] != 0 or min(f["estimate"], f["ci_low"]) < 0):
        # an absolute value of a signed statistic whose no-bias value is 0: never below 0
        raise _bad(
            f"{where}: 'absolute_value' is true, but an absolute value has no-bias value 0 "
            f"and is never below 0 (got null {_shown(f['null'])}, estimate "
            f"{_shown(f['estimate'])}, ci_low {_shown(f['ci_low'])})",
            p,
        )
    return {**f, "level": level}


def _check_fixed(f: dict[str, Any], where: str, caveats: list[str], p: Path) -> None:
    """Refuse a finding marked ``fixed_by_construction`` that the audit never writes so:
    a fixed value has no interval, its ends are the value; and its warning says why it is
    fixed, never the "no variation in the resamples" of a measured zero-width interval.
    The flag alone turned a measured EO 0.00 [0.00, 0.00] from 6 prompts (inconclusive:
    it rules nothing out) into a PASS, and on a wide interval it was dropped unsaid."""
    est, low, high = f["estimate"], f["ci_low"], f["ci_high"]
    if not _no_width(float(est), float(low), float(high)):
        raise _bad(
            f"{where}: 'fixed_by_construction' is true, but its interval "
            f"[{_shown(low)}, {_shown(high)}] is not its estimate {_shown(est)}: a value "
            "fixed by construction has no interval (the audit writes both ends as the value)",
            p,
        )
    if any(w.startswith(NO_VARIATION) for w in caveats):
        raise _bad(
            f"{where}: 'fixed_by_construction' is true, but its warning says "
            f"'{NO_VARIATION}': a measured interval of zero width, which rules nothing out, "
            "not a value fixed by construction",
            p,
        )


def _no_width(est: float, low: float, high: float) -> bool:
    """``[low, high]`` and ``est`` are one value, to rounding (:func:`zero_width` of the
    span holding all three): the interval of a value fixed by construction."""
    return zero_width(est, min(low, est), max(high, est))


def _skipped(items: Any, p: Path) -> tuple[GatedSkip, ...]:
    """The report's ``skipped`` entries; a judge written "all N judges" (the report's
    words for every judge of the dataset) is read back here, once, as ``all_judges``."""
    if not isinstance(items, list):
        raise _bad("'skipped' is not a list", p)
    out = []
    fields = ("analysis", "dataset", "judge", "reason", "bias")
    for k, s in enumerate(items, start=1):
        if not isinstance(s, dict) or not all(isinstance(s.get(f, ""), str) for f in fields):
            raise _bad(f"skipped entry {k} is not an object of texts", p)
        text = {f: s.get(f, "") for f in fields}
        every = is_all_judges_label(text["judge"])
        out.append(GatedSkip(**{**text, "judge": "" if every else text["judge"]}, all_judges=every))
    return tuple(out)


def _datasets(provenance: Any, p: Path) -> tuple[AuditedDataset, ...]:
    if provenance is None:
        return ()
    sources = provenance.get("sources") if isinstance(provenance, dict) else None
    if not isinstance(sources, list):
        raise _bad("provenance has no sources list", p)
    out = []
    for k, s in enumerate(sources, start=1):
        ok = (
            isinstance(s, dict)
            and isinstance(s.get("name"), str)
            and isinstance(s.get("table"), str)
            and isinstance(s.get("judges"), list)
            and all(isinstance(j, str) for j in s["judges"])
        )
        if not ok:
            raise _bad(f"provenance source {k} lacks name, table or a list of judges", p)
        out.append(AuditedDataset(s["name"], s["table"], tuple(s["judges"])))
    options = provenance.get("options")
    chosen = options.get("judges") if isinstance(options, dict) else None
    if isinstance(chosen, str) and chosen != "all":
        # the report writes the audited judges as "a, b": a judge whose own name holds
        # ", " is found whole in that text (split, it was lost: the gate then left it
        # out and could pass without it)
        text = f", {chosen}, "
        out = [replace(d, judges=tuple(j for j in d.judges if f", {j}, " in text)) for d in out]
    return tuple(out)


def _listed(value: Any, *, none: str) -> tuple[str, ...] | None:
    """An option the report writes as ``"a, b"`` (or ``none``) as a tuple; None for
    ``none`` or when the report does not say."""
    if not isinstance(value, str) or value == none:
        return None
    return tuple(v for v in value.split(", ") if v)


def _run_options(provenance: Any) -> dict[str, Any]:
    options = provenance.get("options") if isinstance(provenance, dict) else None
    if not isinstance(options, dict):
        return {}
    return {
        "only": _listed(options.get("analyses"), none="all"),
        "skip": _listed(options.get("analyses skipped on request"), none="none") or (),
    }


def _number(x: Any) -> bool:
    """A finite JSON number (not a boolean; an integer too large for a float is not)."""
    if isinstance(x, bool) or not isinstance(x, int | float):
        return False
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def _shown(x: Any) -> str:
    text = repr(x)
    return text if len(text) <= 40 else f"{text[:30]}… ({len(text)} characters)"


def _judge(f: Mapping[str, Any]) -> str:
    where = (
        f" ({f['dataset']}{', ' + f['detail'] if f.get('detail') else ''})"
        if f.get("dataset")
        else ""
    )
    return f"{f['judge']}{where}"


#: the start of the warning of a zero-width interval not fixed by construction (a report
#: written before ``fixed_by_construction`` was: :func:`rules_nothing_out`)
NO_VARIATION = "no variation in the resamples"


def rules_nothing_out(finding: Mapping[str, Any]) -> str:
    """Why the interval of a report's ``finding`` rules nothing out, or "": as the audit
    reads it (:attr:`recuse.report.model.Finding.informative`), an interval from fewer
    than ``FEW_CLUSTERS`` prompts, or of zero width with no positive ``std_error`` (a
    calibration error's 0.00 [0.00, 0.00], its interval clamped at 0, is a measured one),
    unless the value is fixed by construction, its interval of zero width (more prompts
    would not change it: ``fixed_by_construction``; in an older report, a zero-width
    interval without the warning "no variation in the resamples")."""
    clusters: Any = finding.get("clusters")
    se: Any = finding.get("std_error")
    fixed = finding.get("fixed_by_construction")
    if fixed is None:  # an older report: its warnings say only of the width, so its
        # few prompts still rule nothing out
        few = _number(clusters) and float(clusters) < FEW_CLUSTERS
        warned = any(str(w).startswith(NO_VARIATION) for w in finding.get("warnings", ()))
        fixed = not (few or warned)
    low, high = float(finding["ci_low"]), float(finding["ci_high"])
    # a fixed value has no width: a finding marked fixed with a width is read as measured
    fixed = bool(fixed) and _no_width(float(finding["estimate"]), low, high)
    if informative(
        estimate=float(finding["estimate"]),
        low=low,
        high=high,
        clusters=int(clusters) if _number(clusters) else None,
        std_error=float(se) if _number(se) else None,
        fixed=fixed,
    ):
        return ""
    if _number(clusters) and float(clusters) < FEW_CLUSTERS:
        return (
            f"from {int(clusters)} prompts, under the {FEW_CLUSTERS} a clustered interval "
            "needs, it rules nothing out"
        )
    return (
        "of zero width, the resamples never varied (the value is not fixed by "
        "construction), it rules nothing out"
    )


def evaluate(
    finding: Mapping[str, Any],
    threshold: Threshold,
    *,
    quality: bool = False,
    counts: str = "comparisons",
    name: str = "",
) -> GateLine:
    """One finding against one threshold (module docstring). ``quality``: the finding is
    a quality score, whose estimate prints unsigned as the audit prints it (a bias whose
    no-bias value is 0 prints with its sign, unless the finding is an absolute value:
    ``absolute_value``, :attr:`recuse.report.model.Finding.absolute`). ``counts``: what
    its ``n`` counts, the word an inconclusive line's projection is in ("ratings" for a
    bias of a ratings table, :func:`counted`). ``name``: the estimate gated, as the line
    names it (:func:`gated_name`; the finding's key where not given)."""
    est, lo, hi = float(finding["estimate"]), float(finding["ci_low"]), float(finding["ci_high"])
    null, level = float(finding["null"]), float(finding["level"])
    x = threshold.value
    if threshold.bound == "max":
        allowed_lo, allowed_hi = _decimal_sum(null, -x), _decimal_sum(null, x)
        if allowed_lo <= lo and hi <= allowed_hi:
            outcome: Outcome = "pass"
        elif lo > allowed_hi or hi < allowed_lo:
            outcome = "fail"
        else:
            outcome = "inconclusive"
        edge = allowed_hi if est >= null else allowed_lo  # the bound nearest the estimate
        # |d| − x as the decimals written subtract: 0.6 on 0.5 + 0.1 sits on the bound,
        # where float arithmetic put it 2.8e−17 away and projected 1.3e33 comparisons
        gap = abs(_decimal_sum(est, -edge))
        edges: tuple[float, ...] = (allowed_lo, allowed_hi)
    else:
        if lo >= x:
            outcome = "pass"
        elif hi < x:
            outcome = "fail"
        else:
            outcome = "inconclusive"
        gap = abs(est - x)
        edge, edges = x, (x,)
    signed = null == 0 and not quality and not finding.get("absolute_value")
    name = name or str(finding["bias"])
    numbers = estimate_text(est, lo, hi, signed=signed)
    blind = rules_nothing_out(finding)
    if blind:  # neither a pass nor a fail: the audit reads it "no detectable bias"
        text = (
            f"INCONCLUSIVE: {name} of {_judge(finding)}: {numbers} "
            f"({percent(level)} interval); the interval, {blind}: add prompts"
        )
        return GateLine(str(finding["bias"]), str(finding["judge"]),
                        str(finding.get("dataset", "")), "inconclusive", text, None,
                        tuple(finding.get("warnings", ())), gap, False, est, (lo, hi), level,
                        null, extrapolated=_extrapolated(finding))  # fmt: skip
    says = _bound_words(outcome, threshold.bound, lo, hi, null, x, edges)
    interval = f"({percent(level)} interval)"
    fixed = finding.get("fixed_by_construction") is True and _no_width(est, lo, hi)
    if fixed:
        # not a measurement: its value, said so, and no interval (Finding.text)
        numbers, interval = f"{_num(est)}, {FIXED_WORDS}", "(no interval)"
        says = says.replace("the whole interval", "the value")
    text = (
        f"{outcome.upper()}: {name} of {_judge(finding)}: {numbers} "
        f"{interval}; {says}{_near(est, lo, hi, edges)}"
    )
    needed, too_close = None, False
    if outcome == "inconclusive":
        se: Any = finding.get("std_error")
        half = two_sided_z(level) * float(se) if _number(se) else (hi - lo) / 2
        n: Any = finding.get("n")
        needed = _needed(n, half, gap)
        bound_based = exact_bound(finding)
        if bound_based and needed is not None:
            reach = hi - est if edge >= est else est - lo
            heaviest: Any = finding.get("heaviest_prompt")
            needed = bound_needed(
                n=float(n), clusters=finding.get("clusters"), reach=reach, gap=gap, level=level,
                heaviest=float(heaviest) if _number(heaviest) else None,
            )  # fmt: skip
        on_bound = math.isfinite(half) and not (gap > 0 and half > 0 and _counted(n))
        if needed is not None and needed > PRACTICAL_MULTIPLE * float(n):
            too_close = True
            text += (
                f"; {_sits(est, edge, gap)}, under a tenth of the interval's half-width "
                f"({_num(half, 2)}): too close to the bound for more data to decide it at any "
                f"practical size (a {'1/n' if bound_based else '1/sqrt(n)'} projection, the "
                "estimate unchanged, says "
                f"{needed:,} {counts}, {needed / float(n):,.0f} times the {int(n):,} now)"
            )
        elif needed is not None:
            shrink = "1/n, an exact bound" if bound_based else "1/sqrt(n)"
            text += (
                f"; roughly {needed:,} {counts} (now {int(n):,}) would decide it "
                f"(approximate: interval shrinking as {shrink}, estimate unchanged)"
            )
        elif on_bound and gap == 0:
            too_close = True
            text += (
                f"; the estimate sits on the bound {_num(edge)}: more data alone may not decide it"
            )
        elif on_bound:  # a report without n, or an interval of width 0
            text += "; the report gives no n to say how much more data would decide it"
        elif bound_based and not _counted(finding.get("clusters")):  # 1/n needs the prompts
            text += (
                "; the report gives no prompts (clusters), which its exact bound shrinks "
                "with, to say how much data would decide it"
            )
        else:  # an interval as wide as a float holds (a crafted or broken report)
            text += "; the interval is too wide to say how much data would decide it"
    return GateLine(str(finding["bias"]), str(finding["judge"]), str(finding.get("dataset", "")),
                    outcome, text, needed, tuple(finding.get("warnings", ())),
                    gap if outcome == "inconclusive" else None, too_close, est, (lo, hi),
                    level, null, extrapolated=_extrapolated(finding), fixed=fixed)  # fmt: skip


def _extrapolated(finding: Mapping[str, Any]) -> Extrapolation | None:
    """A finding's ``extrapolated`` record (:class:`~recuse.bootstrap_rules.Extrapolation`),
    None where it is null or absent (a report written before it); a
    :class:`ValueError` saying what is wrong with one that is neither."""
    found = finding.get("extrapolated")
    return None if found is None else Extrapolation.from_dict(found)


@fixed_decimals
def _decimal_sum(a: float, b: float) -> float:
    """``a + b`` as the decimals written (each float's shortest repr) add, as near as a
    float holds it: the bound meant by 0.7 and 0.1 is 0.8, where float addition gives
    0.7999999999999999; a bound given to full precision (an interval's own end) is kept
    exactly, where rounding to a number of decimals moved it off that end."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a + b
    return float(Decimal(repr(a)) + Decimal(repr(b)))


def _num(value: float, significant: int | None = None) -> str:
    """A bound or a distance as given (``0.6``, ``−0.05``, ``0.1234567891``: the fewest
    digits that give the float back, where ``%g``'s six wrote a bound other than the one
    applied; ``significant``: that many significant digits), with the audit's minus
    sign."""
    if significant:
        text = f"{value:.{significant}g}"
    else:
        text = repr(float(value))
        text = text[:-2] if text.endswith(".0") else text
    return minus(text)


def _bound_words(
    outcome: Outcome, bound: Bound, lo: float, hi: float, null: float, x: float,
    edges: tuple[float, ...],
) -> str:  # fmt: skip
    """Where the interval lies against the bound, the bound's values written out:
    ``the whole interval lies within 0.5 ± 0.1 = [0.4, 0.6]``."""
    if bound == "min":
        return {
            "pass": f"the whole interval lies at or above the bound {_num(x)}",
            "fail": f"the whole interval lies below the bound {_num(x)}",
            "inconclusive": f"the interval straddles the bound {_num(x)}",
        }[outcome]
    low, high = edges

    def named(edge: float) -> str:  # the bound, and how it is made when null is not 0
        if null == 0:
            return _num(edge)
        sign = "+" if edge >= null else MINUS
        return f"{_num(edge)} ({_num(null)} {sign} {_num(x)})"

    if outcome == "pass":
        band = (
            f"±{_num(x)}"
            if null == 0
            else f"{_num(null)} ± {_num(x)} = [{_num(low)}, {_num(high)}]"
        )
        return f"the whole interval lies within {band}"
    if outcome == "fail":
        side, edge = ("above", high) if lo > high else ("below", low)
        return f"the whole interval lies {side} {named(edge)}"
    crossed = list(dict.fromkeys(e for e in edges if lo <= e <= hi))  # one when x = 0
    if len(crossed) == 2:
        both = f"{_num(low)} and {_num(high)} ({_num(null)} ± {_num(x)})"
        return f"the interval straddles both bounds, {both}"
    return f"the interval straddles the bound {named(crossed[0] if crossed else high)}"


def _near(est: float, lo: float, hi: float, edges: tuple[float, ...]) -> str:
    """`` (high end 0.6004 > 0.6)`` for each end of the interval that the audit's rounding
    (:func:`~recuse.numbers.estimate_digits`) puts on the bound or across it, so
    the decision reads from the line; every end, where a number is not finite."""
    digits = ends_apart_decimals(lo, hi, estimate_digits(est, lo, hi))  # as estimate_text
    finite = all(math.isfinite(v) for v in (est, lo, hi))
    out = []
    for name, value in (("low end", lo), ("high end", hi)):
        printed = float(f"{value:.{digits}f}") if finite else math.nan
        for edge in edges:
            side = (value > edge) - (value < edge)
            if (printed > edge) - (printed < edge) != side or math.isnan(printed):
                sign = {1: ">", 0: "=", -1: "<"}[side]
                out.append(f"{name} {decimal_beside(value, [edge], 2)} {sign} {_num(edge)}")
    return f" ({'; '.join(dict.fromkeys(out))})" if out else ""


def _sits(est: float, edge: float, gap: float) -> str:
    """``the estimate, 0.599, sits 0.001 below the bound 0.6``."""
    where, distance = ("above" if est > edge else "below"), _num(gap, 2)
    decimals = len(distance.partition(".")[2]) if "e" not in distance else 2
    shown = decimal_beside(est, [edge], decimals)  # as many decimals as the distance has
    return f"the estimate, {shown}, sits {distance} {where} the bound {_num(edge)}"


def exact_bound(finding: Mapping[str, Any]) -> bool:
    """Whether the finding's interval is the exact bound of prompts none of which changed
    with the order (:func:`recuse.metrics.estimate.unseen_span`): its ``interval_rule``
    says "exact_bound"; a report written before that field was (no ``interval_rule`` key)
    is read by its method's words, :data:`~recuse.interval_rules.EXACT_BOUND`."""
    if "interval_rule" in finding:
        return finding["interval_rule"] == "exact_bound"
    return EXACT_BOUND in str(finding.get("method", ""))


def bound_needed(
    *, n: float, clusters: Any, reach: float, gap: float, level: float,
    heaviest: float | None = None,
) -> int | None:  # fmt: skip
    """The comparisons an exact bound of ``clusters`` prompts, none of which changed
    (module docstring), needs to reach no further than ``gap`` from its estimate, where it
    now reaches ``reach``. The bound reaches ``r(c) = k · min(1, u(c) · h)``, ``u(c) = 1 −
    (1 − level)^(1/c)``, ``h`` the largest prompt's pairs over the mean's (``heaviest``,
    the same as prompts of the mean size are added) and ``k`` the side's scale (½ for a
    rate about 0.5, 1 for a floor or a ceiling), so ``k = reach / min(1, u(c) · h)`` and
    the bound is within ``gap`` once ``u(c') ≤ t = gap / (k · h)``: ``c' = ⌈ln(1 − level)
    / ln(1 − t)⌉`` prompts, and ``n · c' / c`` comparisons (the pairs per prompt
    unchanged). Without ``heaviest`` (a report written before it was carried) ``u(c) ·
    h`` is taken for under 1, ``t = u(c) · gap / reach``: 131 prompts where 184 are needed
    when the bound is capped at 1 (12 prompts, ``h`` = 8). None without prompts or a reach,
    or where the count is beyond a float (``t`` so small that ``c'`` overflows: a crafted
    ``heaviest`` of 1e308 ended the gate in an OverflowError, exit 1, read as a failure).

    >>> bound_needed(n=12, clusters=12, reach=0.0873, gap=0.05, level=0.9)
    22
    >>> bound_needed(n=12, clusters=12, reach=0.5, gap=0.05, level=0.9, heaviest=8.0)
    184
    >>> bound_needed(n=41, clusters=12, reach=0.5, gap=0.05, level=0.9, heaviest=1.7e308) is None
    True
    """
    if not (_number(clusters) and float(clusters) >= 1 and reach > 0 and gap > 0):
        return None
    c = float(clusters)
    u = -math.expm1(math.log(1 - level) / c)
    if heaviest is None:
        target = u * min(1.0, gap / reach)
    else:
        target = min(u, gap * min(1.0, u * heaviest) / (reach * heaviest))
    if not 0 < target < 1:
        return None
    prompts = math.log(1 - level) / math.log1p(-target)
    if not math.isfinite(prompts) or not math.isfinite(comparisons := n * math.ceil(prompts) / c):
        return None
    return math.ceil(comparisons)


def _counted(n: Any) -> bool:
    """Whether ``n`` is a count a projection can scale: a finite number above 0."""
    return _number(n) and n > 0


def _needed(n: Any, half: float, gap: float) -> int | None:
    """``n · (half / gap)²`` rounded up (module docstring), or None where it cannot be
    said: no ``n`` (or one of 0: "roughly 0 comparisons (now 0) would decide it"), the
    estimate on the bound, or a value too large for a float (an interval of ±1e308 must
    not end the gate in an OverflowError)."""
    if not (_counted(n) and gap > 0 and half > 0 and math.isfinite(half)):
        return None
    try:
        value = float(n) * (half / gap) ** 2
    except OverflowError:
        return None
    return math.ceil(value) if math.isfinite(value) else None


def gate_report(
    path: str | Path | GatedReport,
    thresholds: Sequence[Threshold],
    *,
    aliases: Mapping[str, str] | None = None,
    scopes: Mapping[str, Scope] | None = None,
    skip_unmeasured: bool = False,
    certified: Sequence[Certified] = (),
) -> GateResult:
    """Every finding of each threshold's bias in the report at ``path``, judged, and
    every audited judge without one listed as not measured, with the report's reason.

    ``aliases`` maps an analysis id to its headline bias key (the CLI passes the
    registry's; ``self_preference`` finds ``self-preference`` too). ``scopes`` (the
    registry's, by bias key) says which biases exist and where each can be measured:
    a bias it names that the report holds no finding of is not measured for every
    judge of the datasets of its table kind. A key that is neither a bias of
    ``scopes`` nor in the report raises :class:`ConfigError` (a typo). ``certified``:
    the ``--certified T@C`` rules (:mod:`recuse.report.certified_gate`).
    """
    from recuse.report.certified_gate import KEY, SECTION, gate_certified

    report = path if isinstance(path, GatedReport) else load_report(path)
    scopes = scopes or {}
    present = sorted({str(f["bias"]) for f in report.findings})
    known = {*scopes, *present, *(s.bias for s in report.skipped if s.bias)}
    lines: list[GateLine] = []
    for t in thresholds:
        key = _resolved(t.key, aliases or {}, known)
        if key not in known:
            raise ConfigError(
                f"--{t.bound} {t.key}: no bias {key!r} — biases in this report: "
                f"{', '.join(present) or 'none'} (or an analysis id for its headline; "
                "`recuse analyses` lists every bias)"
            )
        scope = scopes.get(key)
        if scope is not None:
            _check_bound(t, key, scope)
        mine = [f for f in report.findings if f["bias"] == key]
        if scope is not None and scope.bias is not None:
            _check_null(mine, scope.bias, path)
        quality = scope is not None and scope.quality
        bound = Threshold(key, t.value, t.bound)
        name = gated_name(key, scopes, aliases or {})
        for f in mine:
            lines.append(evaluate(f, bound, quality=quality, counts=counted(report, f, scope),
                                  name=name))  # fmt: skip
        lines.extend(_unmeasured(report, key, mine, scope, skip=skip_unmeasured, name=name))
    if certified:
        where = scopes.get(KEY) or Scope("pairs", SECTION, "Certification")
        for judge, dataset, outcome, text, cov, required in gate_certified(
            report, certified, skip=skip_unmeasured,
            reason=lambda dataset, judge: _reason(report, KEY, where, dataset, judge),
        ):  # fmt: skip
            lines.append(GateLine(KEY, judge, dataset, outcome, text,  # type: ignore[arg-type]
                                  coverage=cov, required_coverage=required))  # fmt: skip
    return GateResult(tuple(lines), skip_unmeasured)


def gated_name(key: str, scopes: Mapping[str, Scope], aliases: Mapping[str, str]) -> str:
    """``key`` as a gate line names the estimate it gates, so that a key is not read as
    another estimate of the same analysis: a number beside the analysis's headline
    (unadjusted, or out of the summary) says what it is and which key the headline is
    ("family_preference_eo (Family preference (equal opportunity), unadjusted; the
    family-preference headline is family_preference_calibrated)": the JSON key
    ``family_preference_eo`` is the equal-opportunity difference, the report's
    family-preference the calibrated one); any other key is itself: a headline
    (``family_preference_calibrated``, which ``--max family-preference`` gates, or
    ``position``), or a bias of the summary beside it (``family_bias``); a part of a
    headline says whose (the ladder's ``self_preference_part_human_neither`` read as a
    bias of its own).
    ``scopes`` and ``aliases`` as :func:`gate_report` takes them; a key of neither is
    itself.

    >>> from recuse.cli.gate import registry_scopes
    >>> aliases, scopes = registry_scopes()
    >>> print(gated_name("family_preference_eo", scopes, aliases))
    family_preference_eo (Family preference (equal opportunity), unadjusted; the family-preference headline is family_preference_calibrated)
    >>> [gated_name(k, scopes, aliases) for k in ("family_preference_calibrated", "x")]
    ['family_preference_calibrated', 'x']

    A part of the calibrated self-preference (:data:`_PARTS_OF`) says what it is a part of:

    >>> print(gated_name("self_preference_part_human_neither", scopes, aliases))
    self_preference_part_human_neither (Self-preference, the part where the human calls a tie or gave no label; a part of the self-preference headline self_preference_calibrated)
    """  # noqa: E501
    scope = scopes.get(key)
    if scope is None or scope.bias is None:
        return key
    bias, analysis = scope.bias, scope.analysis
    head = aliases.get(analysis, key)
    head_scope = scopes.get(head)
    head_bias = head_scope.bias if head_scope is not None else None
    if head != key and head_bias is not None and head_bias.headline:
        if bias.unadjusted or not bias.headline:
            unadjusted = ", unadjusted" if bias.unadjusted else ""
            return f"{key} ({bias.title}{unadjusted}; the {analysis} headline is {head})"
        return key
    whole = _PARTS_OF.get(analysis)
    if whole is not None and whole in scopes:
        # a part of another analysis's headline: its key alone read as a bias of its own
        return f"{key} ({bias.title}; a part of the {scopes[whole].analysis} headline {whole})"
    return key


def _check_null(
    findings: Sequence[Mapping[str, Any]], bias: Bias, path: str | Path | GatedReport
) -> None:
    """Refuse a finding whose no-bias value is not its bias's: the audit writes the
    registry's ``null`` (:attr:`recuse.report.bias.Bias.null`) into every finding, so
    another value is a report edited by hand or written for another bias, and every
    bound would be measured from the wrong point (``null`` 0.3 for a bias whose no-bias
    value is 0.5 passed ``--max KEY=0.1`` for the interval [0.32, 0.38], which lies
    wholly outside the allowed [0.4, 0.6])."""
    for f in findings:
        if float(f["null"]) != bias.null:
            where = "the report" if isinstance(path, GatedReport) else str(path)
            raise InputError(
                f"a finding of {bias.key} (judge {_shown(f.get('judge'))}, dataset "
                f"{_shown(f.get('dataset'))}) gives its no-bias value 'null' as "
                f"{_shown(f['null'])}, where {bias.key}'s is {bias.null:g}: the gate would "
                "measure every bound from the wrong point",
                file=where,
                fix=_FIX,
            )


def counted(report: GatedReport, finding: Mapping[str, Any], scope: Scope | None) -> str:
    """What a finding's ``n`` counts, in the words of the audit's summary ("n:
    comparisons or ratings"): "ratings" when its dataset is a ratings table (the
    report's provenance), or, a dataset not listed, when its bias is measured on one
    (``scope``); else "comparisons". The gate projected "roughly 10,072 comparisons (now
    7,099)" for a judge's self-bias in its ratings, whose n is its ratings in the fit."""
    tables = {d.name: d.table for d in report.datasets}
    table = tables.get(str(finding.get("dataset", "")), scope.table if scope else "pairs")
    return "ratings" if table == "ratings" else "comparisons"


def check_thresholds(
    thresholds: Sequence[Threshold],
    *,
    aliases: Mapping[str, str],
    scopes: Mapping[str, Scope],
    option: str,
) -> None:
    """Before any work (``recuse audit --fail-on``): every key names a bias of
    ``scopes`` or an analysis id of ``aliases``, and no bound would reward a worse
    judge; errors name ``option``."""
    for t in thresholds:
        key = _resolved(t.key, aliases, scopes)
        if key not in scopes:
            raise ConfigError(
                f"{option} {t.key}: no bias {t.key!r} — use a bias key or an analysis id "
                "(`recuse analyses` lists them)"
            )
        _check_bound(t, key, scopes[key], option=option)


def _resolved(key: str, aliases: Mapping[str, str], known: Container[str]) -> str:
    """``key`` where it is ``known``, else the headline bias of the analysis id it names
    in ``aliases`` (``self_preference`` finds ``self-preference``), else ``key``."""
    alias = aliases.get(key) or aliases.get(key.replace("_", "-"))
    return key if key in known or alias is None else alias


def _check_bound(t: Threshold, key: str, scope: Scope, *, option: str | None = None) -> None:
    """Refuse a bound that would reward a worse judge: ``--min`` on a bias (it passes a
    judge for being biased), ``--max`` on a quality score measured from chance (it fails
    a judge for being better than chance) and ``--min`` on a calibration error (it
    passes one for being badly calibrated); and one the estimate cannot reach
    (:func:`_check_span`)."""
    name = option or f"--{t.bound}"
    if scope.analysis == "certification":
        raise ConfigError(
            f"{name} {t.key}: {key} is a share certified at one target agreement among "
            "several in the report — ask for a certified agreement with --certified "
            "AGREEMENT@COVERAGE, e.g. --certified 0.85@0.6"
        )
    if t.bound == "min" and not scope.quality:
        # the distance of the value given from the no-bias value: --min x=-0.1 read
        # "--max x=-0.1", which --max refuses (a number of 0 or more), and --min
        # position=0.6 "--max position=0.6", not 0.1 from its 0.5
        null = scope.bias.null if scope.bias is not None else 0.0
        distance = abs(_decimal_sum(t.value, -null)) or 0.05
        raise ConfigError(
            f"{name} {t.key}: {key} is a bias, measured against its no-bias value, not "
            f"a quality score — bound its distance from that value with --max {key}="
            f"{distance:g} (--min is for scores such as agreement_accuracy)"
        )
    if scope.quality and t.bound == "max" and scope.tested:
        raise ConfigError(
            f"{name} {t.key}: {key} is a quality score measured from chance, so --max would "
            "fail a judge for being better than chance — ask it to stay above a floor "
            f"with --min {key}=X{_floor_example(key, scope.bias)}"
        )
    if scope.quality and t.bound == "min" and not scope.tested:
        raise ConfigError(
            f"{name} {t.key}: {key} is best at 0 (perfect), so --min would pass a judge for "
            f"being worse — bound it from above with --max {key}={t.value:g}"
        )
    _check_span(t, key, scope, name)


def _floor_example(key: str, bias: Bias | None) -> str:
    """After ``--min KEY=X``: where X lies for ``key``'s own score, from its
    :class:`~recuse.report.bias.Bias` (its chance value and best, and a floor halfway
    between them), where one example of accuracy's (0.7) read as a floor for a κ or an
    α, whose chance is 0, not 0.5. Empty where the bias is not known.

    >>> from recuse.report.bias import COEFFICIENT, Bias
    >>> kappa = Bias("agreement_kappa", "Agreement (κ)", "Cohen's κ", "above chance",
    ...              "below chance", "at chance", 0, kind="quality", span=COEFFICIENT)
    >>> _floor_example("agreement_kappa", kappa)
    ' between its chance = 0 and its best 1 (e.g. --min agreement_kappa=0.5)'
    """
    if bias is None:
        return ""
    best = bias.span[1]
    if not math.isfinite(best) or best <= bias.null:
        return f" above its {bias.null_text}"
    example = float(f"{(bias.null + best) / 2:.2g}")
    return f" between its {bias.null_text} and its best {best:g} (e.g. --min {key}={example:g})"


def _check_span(t: Threshold, key: str, scope: Scope, name: str) -> None:
    """Refuse a bound the estimate cannot reach (its bias's
    :attr:`~recuse.report.bias.Bias.span`): ``--min`` outside it fails every judge (above:
    ``agreement_accuracy=1.5``) or passes every one (below), and ``--max`` a distance from
    the no-bias value beyond the farthest an estimate can lie
    (:attr:`~recuse.report.bias.Bias.reach`) passes every judge (``position=0.7``: a share
    lies within 0.5 of 0.5)."""
    bias = scope.bias
    if bias is None:
        return
    low, high = bias.span
    takes = f"{key} ({bias.short_unit}) takes values in {bias.span_text}"
    if t.bound == "min" and not low <= t.value <= high:
        middle = (bias.null + high) / 2  # halfway from chance to perfect
        example = f", e.g. --min {key}={_num(middle)}" if math.isfinite(middle) else ""
        raise ConfigError(
            f"{name} {t.key}={_num(t.value)}: {takes}, so this floor "
            f"{'fails' if t.value > high else 'passes'} every judge — give a floor in "
            f"{bias.span_text}{example}"
        )
    if t.bound == "max" and bias.whole_scale is not None and t.value >= bias.whole_scale:
        raise ConfigError(
            f"{name} {t.key}={_num(t.value)}: {key} is in units of the dimension's top score "
            f"({bias.scale}: 0.05 = 5% of the scale), so this bound allows "
            f"{_num(t.value / bias.whole_scale)} times the whole scale and passes every judge "
            f"— give a share of the scale, e.g. {name} {key}=0.05"
        )
    if t.bound == "max" and t.value > bias.reach:
        ref = {"none": "no-bias value", "chance": "chance level", "perfect": "best value"}
        raise ConfigError(
            f"{name} {t.key}={_num(t.value)}: {takes}, never more than {_num(bias.reach)} "
            f"from its {ref[bias.null_name]} {_num(bias.null)}, so this bound passes every "
            f"judge — give a distance from 0 to {_num(bias.reach)}, e.g. --max "
            f"{key}={_num(bias.reach / 10)}"
        )


def _audited(report: GatedReport, mine: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """``{dataset: judges}`` the audit covered: its provenance, or (a report without
    one) the judges named by its headline findings and skips."""
    if report.datasets:
        return {d.name: list(d.judges) for d in report.datasets}
    out: dict[str, list[str]] = {}
    named = [
        *((str(f.get("dataset", "")), str(f["judge"])) for f in report.findings
          if f.get("headline", True)),
        *((s.dataset, s.judge) for s in report.skipped),
        *((str(f.get("dataset", "")), str(f["judge"])) for f in mine),
    ]  # fmt: skip
    for dataset, judge in named:
        if judge and not is_all_judges_label(judge):  # a pooled finding names no judge
            out.setdefault(dataset, [])
            if judge not in out[dataset]:
                out[dataset].append(judge)
    return out


def _unmeasured(
    report: GatedReport,
    key: str,
    mine: Sequence[Mapping[str, Any]],
    scope: Scope | None,
    *,
    skip: bool,
    name: str = "",
) -> list[GateLine]:
    """A line for each audited judge (per dataset; per dataset only for a pooled bias)
    that has no finding of ``key`` (``name``: the estimate as the lines name it,
    :func:`gated_name`; ``key`` where not given)."""
    name = name or key
    tables = {d.name: d.table for d in report.datasets}
    audited = {
        name: judges
        for name, judges in _audited(report, mine).items()
        if scope is None or tables.get(name, scope.table) == scope.table
    }
    found = {(str(f.get("dataset", "")), str(f["judge"])) for f in mine}
    missing: list[tuple[str, str, bool]] = []  # (dataset, judge as shown, all its judges)
    for dataset, judges in audited.items():
        if scope is not None and scope.pooled:
            if not any(d == dataset for d, _ in found) and judges:
                missing.append((dataset, all_judges_label(len(judges)), True))
        else:
            missing.extend((dataset, j, False) for j in sorted(judges) if (dataset, j) not in found)
    texts = [
        (
            dataset,
            judge,
            f"{name} of {_judge({'judge': judge, 'dataset': dataset})}: "
            f"{_reason(report, key, scope, dataset, judge, all_judges=every)}",
        )
        for dataset, judge, every in missing
    ]
    if not missing and not mine:  # nothing to judge, and no judge to name
        if audited:
            why = f"no dataset of the report ({', '.join(audited)}) has a judge"
        elif scope:
            why = (
                f"no dataset of the report is a {scope.table} table, which the "
                f"{scope.title} analysis reads"
            )
        else:
            why = "the report holds no dataset"
        texts.append(("", "", f"{name}: {why}"))
    skipped = " — skipped (--skip-unmeasured)" if skip else ""
    return [
        GateLine(key, judge, dataset, "not measured", f"NOT MEASURED: {text}{skipped}")
        for dataset, judge, text in texts
    ]


def _reason(
    report: GatedReport,
    key: str,
    scope: Scope | None,
    dataset: str,
    judge: str,
    *,
    all_judges: bool = False,
) -> str:
    """Why the report has no finding of ``key`` for ``judge`` in ``dataset``
    (``all_judges``: for the pooled estimate of all its judges)."""
    if scope is not None and not report.ran(scope.analysis):
        return f"the audit did not run the {scope.title} analysis (--only/--skip)"

    def about(s: GatedSkip) -> bool:
        return s.dataset in (dataset, "") and (s.judge in (judge, "") or s.all_judges or all_judges)

    # a skip of the key itself: without the metric name it starts with (_unnamed); a
    # skip of another estimate of the analysis keeps it, saying whose reason it is
    own = [_unnamed(s.reason) for s in report.skipped if s.bias == key and about(s)]
    whole = [
        s.reason
        for s in report.skipped
        if scope is not None and s.analysis == scope.title and not s.bias and about(s)
    ]
    analysis = [
        s.reason
        for s in report.skipped
        if scope is not None and s.analysis == scope.title and about(s)
    ]
    reasons = list(dict.fromkeys(own or whole or analysis))
    whose = _PARTS_OF.get(scope.analysis) if scope is not None else None
    if not reasons and whose is not None:
        # a part of an estimate the audit did not make: the ladder's parts of a judge
        # with no calibrated self-preference had no skip of their own in the reports of
        # older recuse (the ladder records one now), and read "the report holds no
        # finding and no reason"
        head = [s.reason for s in report.skipped if s.bias == whose and about(s)]
        reasons = [f"{whose} not estimated: {_unnamed(r)}"
                   for r in dict.fromkeys(head)]  # fmt: skip
    older = [RENAMED[old].unmeasured for old in report.renamed if RENAMED[old].headline == key]
    if older and not reasons:
        return older[0]
    if not reasons:
        return "the report holds no finding and no reason"
    more = f" (and {len(reasons) - 2} more reasons in the report)" if len(reasons) > 2 else ""
    return "; ".join(reasons[:2]) + more


#: the analyses whose estimates are parts of another analysis's estimate, and its key:
#: where the parts have no finding and no reason, the whole's reason is theirs
_PARTS_OF: dict[str, str] = {"self-preference-ladder": "self_preference_calibrated"}

#: a reason's leading metric name ("family_preference_eo: no pairs …")
_METRIC_NAME = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+: ")


def _unnamed(reason: str) -> str:
    """``reason`` without the metric name an analysis's skip starts with: the line names
    the estimate already (:func:`gated_name`: "family_preference_eo (…):
    family_preference_eo: no pairs holding a family member's answer …" said it twice),
    and the skip's name can be an internal one that is no key a user gates.

    >>> _unnamed("family_preference_eo: no pairs holding a family member's answer")
    "no pairs holding a family member's answer"
    >>> _unnamed("needs a pairs table (pairwise verdicts); this is ratings")
    'needs a pairs table (pairwise verdicts); this is ratings'
    """
    m = _METRIC_NAME.match(reason)
    return reason[m.end() :] if m else reason

"""`recuse gate REPORT.json --max BIAS=x --certified T@C`: pass/fail for CI on an
audit's report."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from recuse.cli.app import app
from recuse.cli.console import echo, echo_lines, json_shown
from recuse.errors import ConfigError
from recuse.report.extrapolated import gate_caveat

if TYPE_CHECKING:
    from recuse.report.certified_gate import Certified
    from recuse.report.gate import GateResult, Scope, Threshold
    from recuse.report.model import AuditReport


def registry_scopes() -> tuple[dict[str, str], dict[str, Scope]]:
    """The analyses' ids (-> headline bias key) and every bias's scope, from their
    headings (:data:`recuse.biases.HEADINGS`: light, so the gate imports no statistics)."""
    from recuse.biases import HEADINGS
    from recuse.report.gate import Scope

    aliases = {a.id: a.headline.key for a in HEADINGS}
    scopes = {
        b.key: Scope(a.table, a.id, a.title, b.pooled, b.kind == "quality", b.tested, b)
        for a in HEADINGS
        for b in a.biases
    }
    return aliases, scopes


def run_gate(
    report: Path | AuditReport,
    maxima: list[str],
    minima: list[str],
    *,
    skip_unmeasured: bool = False,
    as_json: bool = False,
    certified: list[str] | None = None,
) -> int:
    """Print one line per bias and judge (or, ``as_json``, one JSON object); return the
    gate's exit code (0, 1 or 3). ``report``: a ``report.json``, or the report object an
    audit just made (``--fail-on`` gates it in memory). ``certified``: ``T@C`` rules."""
    from recuse.report.certified_gate import parse_certified
    from recuse.report.gate import gate_report, in_memory, parse_thresholds

    if not maxima and not minima and not certified:
        raise ConfigError(
            "give at least one threshold, e.g. --max self-preference=0.05 or --certified 0.85@0.6"
        )
    thresholds = [
        *(parse_thresholds(maxima, "max") if maxima else []),
        *(parse_thresholds(minima, "min") if minima else []),
    ]
    rules = parse_certified(certified) if certified else []
    aliases, scopes = registry_scopes()
    read = report if isinstance(report, Path) else in_memory(report)
    result = gate_report(
        read, thresholds, aliases=aliases, scopes=scopes, skip_unmeasured=skip_unmeasured,
        certified=rules,
    )  # fmt: skip
    if as_json:
        import json

        from recuse.outputs import strict_json

        # strict JSON, as every JSON recuse writes: a number that is not finite is null
        payload = strict_json(_payload(report, result, thresholds, rules, skip_unmeasured))
        echo_lines(json_shown(json.dumps(payload, indent=2, ensure_ascii=False, allow_nan=False)))
        return result.exit_code
    for line in result.lines:  # each one line (echo): CI reads the output line by line
        echo(line.text)
        for caveat in line.warnings:  # what the audit said to read the number with
            echo(f"  ! {gate_caveat(caveat, line.extrapolated)}")
    echo(result.verdict())
    return result.exit_code


def _payload(
    report: Path | AuditReport,
    result: GateResult,
    thresholds: list[Threshold],
    rules: list[Certified],
    skip_unmeasured: bool,
) -> dict[str, Any]:
    """What ``recuse gate --json`` prints (a file's name as report.json writes it,
    :func:`recuse.files.path_text`)."""
    from recuse.files import path_text

    outcome = {0: "passed", 1: "failed", 3: "inconclusive"}[result.exit_code]
    return {
        "report": path_text(str(report)) if isinstance(report, Path) else report.title,
        "exit_code": result.exit_code,
        "outcome": outcome,
        "verdict": result.verdict(),
        "skip_unmeasured": skip_unmeasured,
        "thresholds": [{"bias": t.key, "bound": t.bound, "value": t.value} for t in thresholds],
        "certified": [{"agreement": r.target, "coverage": r.coverage} for r in rules],
        "lines": [
            {
                "bias": x.bias,
                "judge": x.judge,
                "dataset": x.dataset,
                "outcome": x.outcome,
                "text": x.text,
                "estimate": x.estimate,
                # a value fixed by construction has no interval (its text: "no interval")
                "ci_low": None if x.interval is None or x.fixed else x.interval[0],
                "ci_high": None if x.interval is None or x.fixed else x.interval[1],
                "fixed_by_construction": x.fixed,
                "level": x.level,
                "null": x.null,
                "n_needed": x.n_needed,
                "distance_to_bound": x.gap,
                "too_close": x.too_close,
                "warnings": list(x.warnings),
                # which ends of the interval were extrapolated past the resamples, as
                # report.json's finding records it (null: none, or an older report)
                "extrapolated": x.extrapolated.to_dict() if x.extrapolated else None,
                "certified_coverage": x.coverage,
                "required_coverage": x.required_coverage,
            }
            for x in result.lines
        ],
    }


#: the exit codes, as `recuse gate --help` and `recuse audit --help` state them
EXIT_CODES = (
    "Exit codes: 0 every named bias of every audited judge within its bound; 1 some "
    "interval wholly beyond a bound; 3 inconclusive: an interval straddles a bound, or a "
    "judge's bias was not measured (listed as NOT MEASURED with the report's reason; "
    "--skip-unmeasured lists it without failing on it); 2 bad input (an unknown bias, a "
    "damaged report)."
)

SkipUnmeasuredOption = Annotated[
    bool,
    typer.Option(
        "--skip-unmeasured",
        help="A judge (or dataset) whose bias the report could not estimate is listed as "
        "NOT MEASURED but does not make the gate inconclusive (a gate that measured "
        "nothing at all still is).",
    ),
]


#: what `recuse gate` prints, as its --help says it
PRINTS = (
    "One line per bias and judge: PASS, FAIL, INCONCLUSIVE or NOT MEASURED, the estimate "
    "and interval as the audit prints them, and where the interval lies against the bound; "
    "an inconclusive line says roughly how many comparisons would decide it, or, when the "
    "estimate sits within a tenth of the interval's half-width of the bound, that it is too "
    "close for more data to decide it at a practical size. --json gives the same lines."
)


@app.command("gate", help=f"Gate an audit's report.json for CI. {PRINTS} {EXIT_CODES}")
def gate_command(
    report: Annotated[
        Path, typer.Argument(help="The report.json an audit wrote (or its --out folder).")
    ],
    maxima: Annotated[
        list[str] | None,
        typer.Option(
            "--max",
            help="BIAS=x: every interval within x of the no-bias value (bias key, or an "
            "analysis id for its headline bias); comma list or repeated.",
        ),
    ] = None,
    minima: Annotated[
        list[str] | None,
        typer.Option(
            "--min", help="SCORE=x: every interval at or above x (e.g. agreement_accuracy=0.7)."
        ),
    ] = None,
    certified: Annotated[
        list[str] | None,
        typer.Option(
            "--certified",
            help="AGREEMENT@COVERAGE: each judge certified at agreement >= AGREEMENT with "
            "its labels (human or correctness) on at least COVERAGE of its labelled pairs, "
            "at the report's delta (1 - level), from the report's Certification section; "
            "e.g. 0.85@0.6.",
        ),
    ] = None,
    skip_unmeasured: SkipUnmeasuredOption = False,
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON object (lines, outcome, exit code) instead."
    ),
) -> None:
    code = run_gate(
        report, list(maxima or []), list(minima or []), skip_unmeasured=skip_unmeasured,
        as_json=as_json, certified=list(certified or []),
    )  # fmt: skip
    if code:
        raise typer.Exit(code)

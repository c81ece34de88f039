"""`recuse plan`: how many pairs and prompts a study needs to detect a bias."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from recuse.bootstrap_rules import check_interval_level, named_settings
from recuse.choices import POSITION_DEFAULTS, Planned
from recuse.cli.app import (
    PAIRS_READING,
    ConfidenceOfOption,
    ConfidenceOption,
    ConfigOption,
    MapOption,
    SwappedFrameOption,
    ValuesOption,
    app,
    cli_context,
    typed_options,
)
from recuse.cli.console import echo, echo_lines, json_shown, one_line
from recuse.errors import ConfigError
from recuse.lazy import lazy_module
from recuse.options import DEFAULTS

if TYPE_CHECKING:
    from recuse.metrics import bootstrap
    from recuse.simulate import power as planning
else:  # imported as the command runs (recuse.lazy)
    bootstrap = lazy_module("recuse.metrics.bootstrap")
    planning = lazy_module("recuse.simulate.power")


@app.command("plan")
def plan_cmd(
    ctx: typer.Context,
    bias: Annotated[
        Planned, typer.Option("--bias", help="self-preference (EO), verbosity or position.")
    ] = "self-preference",
    effect: float = typer.Option(
        0.1,
        "--effect",
        help="Size to detect: a difference of recalls (self-preference, verbosity) or the "
        "first-position rate minus 0.5 (position).",
    ),
    power: float = typer.Option(0.8, "--power", help="Chance of detecting it."),
    level: float = typer.Option(
        DEFAULTS.level,
        "--level",
        help="Interval level, in [0.5, 1) (the audit's default; a "
        "recuse.toml's level is read by recuse audit only).",
    ),
    pairs_per_prompt: int = typer.Option(3, "--pairs-per-prompt", help="Pairs per prompt."),
    accuracy: float = typer.Option(0.7, "--accuracy", help="The judge's agreement with humans."),
    flip_rate: float | None = typer.Option(
        None,
        "--flip-rate",
        help="Position: share of pairs whose winner reverses when the order is swapped "
        f"(default {POSITION_DEFAULTS['flip_rate']}, typical of LLM judges).",
    ),
    ties: float | None = typer.Option(
        None,
        "--ties",
        help=f"Position: share of per-order verdicts that are ties (default "
        f"{POSITION_DEFAULTS['tie_rate']}).",
    ),
    icc: float | None = typer.Option(
        None,
        "--icc",
        help="Position: within-prompt correlation of the per-pair first-position statistic "
        f"(default {POSITION_DEFAULTS['icc']}).",
    ),
    like: Annotated[
        str | None,
        typer.Option(
            "--like",
            help="Position: a pairs file or dataset name (both orders judged) whose flip "
            "rate, tie share and within-prompt correlation the simulation takes.",
        ),
    ] = None,
    runs: int = typer.Option(200, "--runs", help="Simulated data sets per size."),
    max_seconds: float = typer.Option(
        120.0, "--max-seconds", help="Stop the search after this many seconds (it says so)."
    ),
    seed: int = typer.Option(
        0, "--seed", help="Seed of the simulated data sets and their bootstraps (0 or more)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a sentence."),
    quiet: bool = typer.Option(False, "--quiet", help="No progress lines on stderr."),
    mapping: MapOption = None,
    values: ValuesOption = None,
    swapped_frame: SwappedFrameOption = "original",
    confidence: ConfidenceOption = None,
    confidence_of: ConfidenceOfOption = "winner",
    config: ConfigOption = None,
) -> None:
    """Pairs and prompts needed to detect a bias of a given size, checked by simulation.

    Position is simulated with the order flips, ties and within-prompt correlation of
    real judges (defaults stated in the answer; --flip-rate/--ties/--icc or --like FILE
    replace them). Effects needing more than 200,000 pairs are refused. --like FILE is
    read as recuse audit reads it, recuse.toml's [map], [values] and reading keys included."""
    check_interval_level(level)  # the audit's rule and message, whatever the value
    frame = None
    if like is not None:  # read as every command reads a pairs file (--map, --values, ...)
        from recuse.data.inputs import load_input

        settings, roster = cli_context(ctx, PAIRS_READING)
        frame = load_input(like, table="pairs", roster=roster,
                           mapping=dict(settings.mapping) or None,
                           reading=settings.reading()).frame  # fmt: skip
    elif config is not None or typed_options(ctx, PAIRS_READING):
        raise ConfigError("--map, --values, --swapped-frame, --confidence and --config read "
                          "--like FILE; give --like or drop them")  # fmt: skip

    def progress(line: str) -> None:
        if not quiet:
            print(f"recuse plan: {one_line(line)}", file=sys.stderr, flush=True)

    with named_settings():  # a bad --level or --seed (the library's or plan's rule)
        p = planning.plan(
            bias,
            effect,
            power=power,
            boot=bootstrap.Resampling(level=level, n_boot=planning.PLAN_N_BOOT, seed=seed),
            pairs_per_prompt=pairs_per_prompt,
            accuracy=accuracy,
            runs=runs,
            flip_rate=flip_rate,
            tie_rate=ties,
            icc=icc,
            like=frame,
            max_pairs=planning.MAX_PAIRS,
            max_seconds=max_seconds,
            progress=progress,
        )
    if as_json:
        echo_lines(json_shown(json.dumps(p.to_dict(), indent=2)))
    else:
        echo(p.sentence())

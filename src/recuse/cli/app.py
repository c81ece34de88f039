"""The ``recuse`` Typer app and what its command modules share: ``--map`` / ``--values``
parsing and the options of every command that reads a pairs file.

Command modules import ``app`` from here and add their commands to it;
:mod:`recuse.cli` imports them all and runs the app, so no module imports in a cycle.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Annotated, Any

import typer

from recuse.data.importers import References
from recuse.data.value_maps import ValueReading
from recuse.options import (
    Option,
    Settings,
    default,
    parse_mapping,
    parse_values,
    read_options,
    resolve,
    settings_fields,
)
from recuse.roster import ROSTER_ENV, Roster
from recuse.tables import ConfidenceOf, SwappedFrame

__all__ = [
    "AllowUnknownOption", "ConfidenceOfOption", "ConfidenceOption", "MapOption",
    "ReferenceJudgeOption", "ReferenceScorerOption", "SwappedFrameOption", "ValuesOption",
    "app", "cli_context", "option", "parse_mapping", "parse_values", "references",
    "settings_parameters", "value_reading",
]  # fmt: skip

app = typer.Typer(
    name="recuse",
    help="Is your LLM judge biased, by how much, with what confidence, and how to correct it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)

# options given before the subcommand that may also come after it (recuse.cli.main
# moves them to the front): name -> takes a value
GLOBAL_OPTIONS = {"--roster": True}


@app.callback()
def _root(
    roster: str = typer.Option(
        None,
        "--roster",
        envvar=ROSTER_ENV,
        help="TOML roster file extending the built-in one (before or after the subcommand).",
    ),
) -> None:
    """recuse: measure and correct the biases of LLM judges."""


def cli_roster(ctx: typer.Context) -> Roster:
    """The command's one roster: the built-in one with ``--roster`` (default
    ``$RECUSE_ROSTER``, read here only) on top, built once per command and passed down."""
    from recuse.api import context_roster

    root = ctx.find_root()
    if "recuse.roster" not in root.meta:
        root.meta["recuse.roster"] = context_roster(root.params.get("roster") or None, None)
    roster: Roster = root.meta["recuse.roster"]
    return roster


# --- the options of commands that read a pairs file (validate, metrics, audit, judge),
# made from the fields of recuse.options.Settings, where each is declared once ---


def option(name: str) -> Any:
    """The typer annotation of the :class:`~recuse.options.Settings` field ``name``."""
    spec = settings_fields()[name]
    return Annotated[spec.cli, typer.Option(*spec.flags, help=spec.help, hidden=spec.hidden)]


MapOption = option("mapping")
ValuesOption = option("values")
SwappedFrameOption = option("swapped_frame")
ConfidenceOption = option("confidence")
ConfidenceOfOption = option("confidence_of")
AllowUnknownOption = option("allow_unknown_models")
ReferenceScorerOption = option("reference_scorer")
ReferenceJudgeOption = option("reference_judge")

_CONFIG_HELP = (
    "A recuse.toml with default options, map, value maps, materiality and roster additions "
    "(default: ./recuse.toml if present); options given here win."
)


def settings_parameters(func: Callable[..., None], *, data_help: str) -> Callable[..., None]:
    """``func(ctx, data, **given)`` with a signature typer reads: the data argument,
    one option per :class:`~recuse.options.Settings` field, and ``--config``."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter("ctx", kind, annotation=typer.Context),
        inspect.Parameter("data", kind, annotation=Annotated[
            list[str], typer.Argument(metavar="DATA...", help=data_help)]),
    ]  # fmt: skip
    for f in fields(Settings):
        spec: Option = f.metadata["option"]
        plain = spec.cli_default if spec.cli_default is not None else default(f.name)
        cli_default = None if isinstance(plain, tuple | dict) or plain == {} else plain
        params.append(inspect.Parameter(f.name, kind, annotation=option(f.name),
                                        default=cli_default))  # fmt: skip
    config = Annotated[Path | None, typer.Option("--config", help=_CONFIG_HELP)]
    params.append(inspect.Parameter("config", kind, annotation=config, default=None))
    func.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return func


def cli_context(ctx: typer.Context, given: dict[str, Any]) -> tuple[Settings, Roster]:
    """The command's settings (command line > recuse.toml > default, by
    :func:`recuse.options.resolve`) and its one roster (``--roster`` plus the file's
    ``[[model]]`` entries)."""
    from recuse.api import context_roster
    from recuse.config import find_config, load_config

    path = find_config(given.pop("config", None))
    cfg = load_config(path) if path is not None else None
    typed = {
        name: value
        for name, value in given.items()
        if getattr(ctx.get_parameter_source(name), "name", "DEFAULT") != "DEFAULT"
    }
    settings = resolve(read_options(typed, "cli"), config=cfg)
    return settings, context_roster(ctx.find_root().params.get("roster") or None, cfg)


def references(scorer: str | None, judge: str | None) -> References:
    """The ``--reference-scorer`` / ``--reference-judge`` options as the library takes them."""
    return References(scorer=scorer or None, judge=judge or None)


def value_reading(
    values: list[str] | None,
    swapped_frame: SwappedFrame,
    confidence: str | None,
    confidence_of: ConfidenceOf,
) -> ValueReading:
    """The parsed value options of a command, as the library takes them."""
    return ValueReading(
        values=parse_values(values) or None,
        swapped_frame=swapped_frame,
        confidence=confidence,
        confidence_of=confidence_of,
    )

"""The ``recuse`` Typer app and what its command modules share: ``--map`` / ``--values``
parsing and the options of every command that reads a pairs file.

Command modules import ``app`` from here and add their commands to it;
:mod:`recuse.cli` imports them all and runs the app, so no module imports in a cycle.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from recuse.choices import ROSTER_ENV
from recuse.cli.console import echo
from recuse.options import (
    Option,
    Settings,
    default,
    mapping_held,
    option_named,
    parse_mapping,
    parse_values,
    read_options,
    resolve,
    settings_fields,
)
from recuse.renaming import mapping_set_in

if TYPE_CHECKING:
    from recuse.config import Config
    from recuse.roster import Roster

__all__ = [
    "PAIRS_READING",
    "READING",
    "AllowUnknownOption",
    "CertifiedConfidenceOfOption",
    "CertifiedConfidenceOption",
    "CertifiedSwappedFrameOption",
    "ConfidenceOfOption",
    "ConfidenceOption",
    "ConfigOption",
    "MapOption",
    "ReferenceJudgeOption",
    "ReferenceScorerOption",
    "SwappedFrameOption",
    "ValuesOption",
    "app",
    "cli_context",
    "config_help",
    "config_note",
    "config_path",
    "loaded_config",
    "option",
    "parse_mapping",
    "parse_values",
    "setting_sources",
    "settings_files",
    "settings_parameters",
    "typed_options",
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
GLOBAL_OPTIONS = {"--roster": True, "--no-config": False}


@app.callback()
def _root(
    roster: str = typer.Option(
        None,
        "--roster",
        envvar=ROSTER_ENV,
        help="TOML roster file extending the built-in one (before or after the subcommand).",
    ),
    no_config: bool = typer.Option(
        False,
        "--no-config",
        help="Read no recuse.toml: not ./recuse.toml, and no --config (before or after the "
        "subcommand). Every option is then the command line's or its default.",
    ),
) -> None:
    """recuse: measure and correct the biases of LLM judges."""


def cli_roster(ctx: typer.Context) -> Roster:
    """The command's one roster: the built-in one with ``--roster`` (default
    ``$RECUSE_ROSTER``, read here only) and recuse.toml's ``[[model]]`` entries on top
    (:func:`cli_context`), built once per command and passed down."""
    root = ctx.find_root()
    if "recuse.roster" not in root.meta:
        cli_context(ctx, ())
    roster: Roster = root.meta["recuse.roster"]
    return roster


# --- the options of commands that read a user's file (audit, validate, metrics, certify,
# plan, judge, probe, favoritism), made from the fields of recuse.options.Settings,
# where each is declared once ---


def option(name: str, *, more: str = "") -> Any:
    """The typer annotation of the :class:`~recuse.options.Settings` field ``name``;
    ``more``: words after its help, for a command whose default is not the field's (then
    none is shown)."""
    spec = settings_fields()[name]
    return Annotated[
        spec.cli,
        typer.Option(*spec.flags, help=spec.help + more, hidden=spec.hidden, show_default=not more),
    ]


MapOption = option("mapping")
ValuesOption = option("values")
SwappedFrameOption = option("swapped_frame")
ConfidenceOption = option("confidence")
ConfidenceOfOption = option("confidence_of")
#: `certify apply`'s reading options: one not given is the thresholds file's
_AS_CERTIFIED = " Not given (here or in recuse.toml): as the thresholds file was certified."
CertifiedSwappedFrameOption = option("swapped_frame", more=_AS_CERTIFIED)
CertifiedConfidenceOption = option("confidence", more=_AS_CERTIFIED)
CertifiedConfidenceOfOption = option("confidence_of", more=_AS_CERTIFIED)
AllowUnknownOption = option("allow_unknown_models")
ReferenceScorerOption = option("reference_scorer")
ReferenceJudgeOption = option("reference_judge")

_CONFIG_HELP = (
    "A recuse.toml with default options, map, value maps, materiality and roster additions "
    "(default: ./recuse.toml if present); options given here win."
)


def config_help(also: Iterable[str] = ()) -> str:
    """The help of ``--config`` of a command that reads a user's file; ``also``: the
    Settings fields it takes from the file's ``[audit]`` besides the reading keys, the
    ones it passes to :func:`cli_context` (named as the file's keys: the shared help
    named the reading keys and the roster only).

    >>> config_help(("se", "level", "self_scope")).split("[audit] ")[1][:37]
    'se, level and self-scope this command'
    """
    roster = "whose [[model]] entries join the roster"
    keys = [name.replace("_", "-") for name in also]
    named = ", ".join(keys[:-1]) + " and " + keys[-1] if len(keys) > 1 else "".join(keys)
    takes = (
        f", {roster}, and whose [audit] {named} this command takes too"
        if keys
        else (f", and {roster}")
    )
    return (
        f"A recuse.toml whose [map], [values] and file-reading keys read the file{takes}, "
        "as in recuse audit (default: ./recuse.toml if present); options given here win."
    )


ConfigOption = Annotated[Path | None, typer.Option("--config", help=config_help())]


def settings_parameters(func: Callable[..., None], *, data_help: str) -> Callable[..., None]:
    """``func(ctx, data, **given)`` with a signature typer reads: the data argument,
    one option per :class:`~recuse.options.Settings` field, and ``--config``."""
    kind = inspect.Parameter.POSITIONAL_OR_KEYWORD
    params = [
        inspect.Parameter("ctx", kind, annotation=typer.Context),
        inspect.Parameter("data", kind, annotation=Annotated[
            list[str], typer.Argument(metavar="DATA", help=data_help)]),
    ]  # fmt: skip
    for f in fields(Settings):
        if "option" not in f.metadata:  # Settings.sources: no option
            continue
        spec: Option = f.metadata["option"]
        plain = spec.cli_default if spec.cli_default is not None else default(f.name)
        cli_default = None if isinstance(plain, tuple | dict) or plain == {} else plain
        params.append(inspect.Parameter(f.name, kind, annotation=option(f.name),
                                        default=cli_default))  # fmt: skip
    config = Annotated[Path | None, typer.Option("--config", help=_CONFIG_HELP)]
    params.append(inspect.Parameter("config", kind, annotation=config, default=None))
    func.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return func


#: the options that say how a pairs file's columns and verdicts are read
PAIRS_READING = ("mapping", "values", "swapped_frame", "confidence", "confidence_of")
#: the options that say how a user's file is read: a command that reads one takes those
#: it has from recuse.toml, as the audit does (the audit takes every option)
READING = ("table", "format", *PAIRS_READING, "reference_scorer", "reference_judge", "data_dir")


def _parameter(ctx: typer.Context, name: str) -> str | None:
    """The command's parameter of :class:`~recuse.options.Settings` field ``name``: the
    one of that name, or the one with the field's flag (``recuse validate``'s ``fmt``,
    ``--format``); None where the command has no such option."""
    flag = settings_fields()[name].flag.split("/")[0]
    found = [p.name for p in ctx.command.params if p.name == name or flag in p.opts]
    return found[0] if found else None


def typed_options(ctx: typer.Context, names: Iterable[str]) -> dict[str, Any]:
    """The options of :class:`~recuse.options.Settings` fields ``names`` given on the
    command line (not left to their default), as given: field name -> value."""
    params = {n: _parameter(ctx, n) for n in names}
    return {
        n: ctx.params[p]
        for n, p in params.items()
        if p is not None and getattr(ctx.get_parameter_source(p), "name", "DEFAULT") != "DEFAULT"
    }


def cli_context(ctx: typer.Context, names: Iterable[str] | None = None) -> tuple[Settings, Roster]:
    """The command's settings (command line > recuse.toml > default, by
    :func:`recuse.options.resolve`) and its one roster (``--roster`` plus the file's
    ``[[model]]`` entries, kept for :func:`cli_roster`).

    ``names``: the :class:`~recuse.options.Settings` fields the command takes (those it
    has as options; default every field, as the audit); the recuse.toml is its
    ``--config``, else ``./recuse.toml``. A command that reads a user's file calls this
    first with :data:`READING`, so the file is read as the audit reads it; any other
    command's :func:`cli_roster` calls it with none, for the ``[[model]]`` entries. A
    ``recuse: note:`` line on stderr names the config file and what was taken from it."""
    from recuse.api import context_roster
    from recuse.config import load_config

    path = config_path(ctx)
    cfg = load_config(path) if path is not None else None
    ctx.find_root().meta["recuse.config"] = cfg
    has = [n for n in (settings_fields() if names is None else names) if _parameter(ctx, n)]
    typed = typed_options(ctx, has)
    typed_read = read_options(typed, "cli")
    settings = resolve(typed_read, config=cfg)
    # the sources of the options this command takes (those its JSON records)
    settings = replace(settings, sources={n: settings.sources[n] for n in has})
    # a column mapping's errors name where it was set (--map, [map] in recuse.toml)
    named = option_named("mapping", settings.sources.get("mapping", "default"),
                         written=settings.written)  # fmt: skip
    mapping_set_in(named or None, mapping_held(named, typed_read, cfg))
    roster_file = ctx.find_root().params.get("roster") or None
    roster = context_roster(roster_file, cfg)
    ctx.find_root().meta["recuse.roster"] = roster
    ctx.find_root().meta["recuse.settings_files"] = [
        Path(p) for p in (path, roster_file) if p is not None
    ]
    if cfg is not None and (has or cfg.models):  # (a command with a roster only: its models)
        # a merged option ([map], [values]) keeps the file's entries beside the given ones
        merged = {n for n, spec in settings_fields().items() if spec.merge}
        taken = [n for n in cfg.options if n in has and (n not in typed or n in merged)]
        given = [n for n in cfg.options if n in has and n not in taken]
        echo(f"recuse: note: {config_note(cfg, taken, given)}", err=True)
    return settings, roster


def setting_sources(ctx: typer.Context, settings: Settings) -> dict[str, str]:
    """Where each of the command's settings came from, keyed as its ``settings`` name
    them (``orders``, ``n_boot``, ``self_scope``): those read as the audit reads them
    (:meth:`~recuse.options.Settings.option_sources`, by
    :func:`recuse.options.setting_sources` in :func:`cli_context`), and the command's
    own options, which no recuse.toml sets (``metrics pairs``' ``--level``): ``cli`` or
    ``default``. What the command's JSON records beside the values (``setting_sources``)."""
    sources = settings.option_sources()
    taken = set(settings.sources)
    by_flag = {s.flag.split("/")[0]: n for n, s in settings_fields().items()}
    for param in ctx.command.params:
        hidden = getattr(param, "hidden", False)
        if param.param_type_name != "option" or hidden or param.name in (None, "config"):
            continue
        name = by_flag.get(param.opts[0], param.name)
        if name in taken or param.name in taken:
            continue
        given = getattr(ctx.get_parameter_source(param.name), "name", "DEFAULT") != "DEFAULT"
        sources[param.name] = "cli" if given else "default"
    return sources


def config_path(ctx: typer.Context) -> Path | None:
    """The command's recuse.toml: its ``--config``, else ``./recuse.toml`` if there is
    one (:func:`recuse.config.find_config`); None with ``--no-config``, which refuses a
    ``--config`` beside it."""
    from recuse.config import find_config
    from recuse.errors import ConfigError

    given = ctx.params.get("config")
    if not ctx.find_root().params.get("no_config"):
        return find_config(given)
    if given is not None:
        raise ConfigError(
            f"--config {given} and --no-config together: give one (--no-config reads no "
            "recuse.toml)"
        )
    return None


def loaded_config(ctx: typer.Context) -> Config | None:
    """The recuse.toml :func:`cli_context` read (None: none, or ``--no-config``)."""
    cfg: Config | None = ctx.find_root().meta.get("recuse.config")
    return cfg


def settings_files(ctx: typer.Context) -> list[Path]:
    """The files :func:`cli_context` read the command's settings from (its recuse.toml,
    its ``--roster`` file): inputs an output must not replace, as the data files are
    (``--out recuse.toml`` wrote a certificate over the config)."""
    files: list[Path] = ctx.find_root().meta.get("recuse.settings_files", [])
    return files


def config_note(cfg: Config, taken: list[str], given: Iterable[str] = ()) -> str:
    """What a command took from the config file ``cfg``: its entries ``taken`` (option
    names) and its roster additions; that the command line wins only where it took an
    option (roster additions join ``--roster``'s, nothing to win over). ``given``: the
    file's options the command has that the command line gave instead, named when
    nothing else was taken.

    >>> from recuse.config import Config
    >>> config_note(Config(Path("recuse.toml"), {"mapping": {}, "level": 0.95}), ["mapping"])
    'recuse.toml: read [map] (options given on the command line win)'
    >>> config_note(Config(Path("recuse.toml"), {"level": 0.95}), [])
    'recuse.toml: nothing in it applies to this command'
    >>> frame = Config(Path("recuse.toml"), {"swapped_frame": "presented"})
    >>> config_note(frame, [], ["swapped_frame"])
    'recuse.toml: nothing in it used: [audit] swapped-frame given on the command line'
    >>> from recuse.roster import Entry
    >>> config_note(Config(Path("recuse.toml"), {}, (Entry("ours", "ours"),)), [])
    'recuse.toml: read [[model]] (1 roster addition)'
    """
    specs = settings_fields()

    def named(n: str) -> str:  # as the file writes it: [map], [audit] self_scope
        found = cfg.written.get(n)
        if found is not None:
            return found.key
        return f"[{specs[n].section}]" if specs[n].section else f"[audit] {specs[n].key}"

    read = [named(n) for n in taken]
    if cfg.models:
        read.append(f"[[model]] ({len(cfg.models)} roster addition{'s' * (len(cfg.models) > 1)})")
    if not read and given:
        instead = ", ".join(map(named, given))
        return f"{cfg.path}: nothing in it used: {instead} given on the command line"
    if not read:
        return f"{cfg.path}: nothing in it applies to this command"
    wins = " (options given on the command line win)" if taken else ""
    return f"{cfg.path}: read {', '.join(read)}{wins}"

"""The ``recuse`` command line: thin; parses arguments, calls the library, prints.

Every :class:`~recuse.errors.RecuseError` becomes a one-line message on stderr and
exit code 2. Sub-commands live in the sibling modules and add themselves to ``app``
(:mod:`recuse.cli.app`) when :func:`main` imports them.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import warnings
from collections.abc import Callable
from typing import Any

from recuse.cli.app import GLOBAL_OPTIONS, app, parse_mapping
from recuse.cli.console import UNWRAPPED, json_shown, one_line
from recuse.cli.stdout import StdoutFailed, guarded
from recuse.errors import ConfigError, MissingDependencyError, ReaderNote, RecuseError
from recuse.interrupt import (
    INTERRUPTED,
    RESUMING,
    hurried_resumes,
    say_interrupted,
    stop_received,
    stopped_code,
)
from recuse.renaming import renaming_by
from recuse.terminal import surrogates_escaped

__all__ = [
    "app",
    "click_command",
    "global_options_first",
    "help_when_bare",
    "main",
    "parse_mapping",
    "refuse_empty_values",
]


def global_options_first(argv: list[str]) -> list[str]:
    """``argv`` with the global options (:data:`GLOBAL_OPTIONS`, e.g. ``--roster FILE``)
    moved before the subcommand, so ``recuse audit data.csv --roster r.toml`` works as
    ``recuse --roster r.toml audit data.csv`` does. Nothing after ``--`` is moved.

    >>> global_options_first(["audit", "x.csv", "--roster", "r.toml", "--out", "o"])
    ['--roster', 'r.toml', 'audit', 'x.csv', '--out', 'o']
    >>> global_options_first(["validate", "--roster=r.toml", "x.csv"])
    ['--roster=r.toml', 'validate', 'x.csv']
    """
    front: list[str] = []
    rest: list[str] = []
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest.extend(argv[i:])
            break
        name = arg.split("=", 1)[0]
        if name in GLOBAL_OPTIONS:
            takes_value = GLOBAL_OPTIONS[name] and "=" not in arg
            front.extend(argv[i : i + 1 + takes_value])
            i += 1 + takes_value
            continue
        rest.append(arg)
        i += 1
    return front + rest


#: the click form of ``app`` by the settings :func:`main` gives it off a terminal
_BUILT: dict[tuple[object, str], Any] = {}


def click_command() -> Any:
    """The click command that typer builds from ``app``, built once per process for
    each of the settings :func:`main` may give ``app`` (plain help off a terminal).
    typer reads every command's signature and options to build it (~50 ms, a third of
    ``recuse --help``); the empty-value check, the bare-group help and the command's
    run each needed it, and built it again."""
    import typer.main

    _register()  # the commands first: a group built before them would be kept empty
    key = (app.rich_markup_mode, repr(app.info.context_settings))
    if key not in _BUILT:
        _BUILT[key] = typer.main.get_command(app)
    return _BUILT[key]


def help_when_bare(args: list[str]) -> list[str]:
    """``args`` with ``--help`` added when they name a command group and nothing more
    (bare ``recuse``, ``recuse data``): typing a bare command asks what it does, so its
    help goes to stdout with exit 0, as ``pip`` does — click's ``no_args_is_help``
    would print it to stderr as a usage error (exit 2) and fail a script that runs
    ``recuse`` to list its commands. A leaf command given nothing (``recuse audit``) is
    left to click: its missing argument is a usage error.
    """
    words = args[:]
    while words and words[0].split("=", 1)[0] in GLOBAL_OPTIONS:  # moved to the front
        takes_value = GLOBAL_OPTIONS[words[0].split("=", 1)[0]] and "=" not in words[0]
        words = words[1 + takes_value :]
    command = click_command()
    for word in words:
        sub = command.commands.get(word) if hasattr(command, "commands") else None
        if sub is None:  # an option, an argument or an unknown name: click decides
            return args
        command = sub
    if hasattr(command, "commands") and getattr(command, "no_args_is_help", False):
        return [*args, "--help"]
    return args


def refuse_empty_values(args: list[str]) -> None:
    """Refuse an option of the named command, or a global one (``--roster``), given an
    empty value (``--out ""``, or ``--out "$DIR"`` with ``DIR`` unset; blank, or only
    invisible characters: :func:`recuse.options.blank`): a path read from
    it is ``.``, so the report went into the current folder, and a dataset folder or
    config file was looked for there; an empty roster was ignored; an empty name or
    number is no value either. Flags take no value and are left alone; after ``--``
    every word is an argument, and only an empty one is refused.
    """
    from recuse.options import blank

    command = click_command()
    takes = {o for p in command.params if not getattr(p, "is_flag", True) for o in p.opts}
    head = args[: args.index("--")] if "--" in args else args
    depth = 0  # the words that name the command (``certify apply``: 2)
    for k, word in enumerate(head):
        sub = command.commands.get(word) if hasattr(command, "commands") else None
        named = sub is not None
        if not named and k == depth and getattr(command, "default_command", None):
            # ``recuse certify SOURCE --cascade ""`` runs ``certify run``: its options
            sub = None if word in ("--help", "-h") else command.commands[command.default_command]
        if sub is not None:
            command = sub
            depth += named
            takes |= {o for p in command.params if not getattr(p, "is_flag", True) for o in p.opts}
    for k, word in enumerate(head):
        name, eq, value = word.partition("=")
        if name not in takes or (not name.startswith("--") and eq):
            continue
        given = value if eq else head[k + 1] if k + 1 < len(head) else None
        if given is not None and blank(given):
            raise ConfigError(
                f"{name} is given an empty value (an unset shell variable?) — give it a "
                "value, or leave the option out"
            )
    rest = args[args.index("--") + 1 :] if "--" in args else []
    _refuse_empty_arguments(head, takes, command, depth, rest=rest)


def _refuse_empty_arguments(
    head: list[str], takes: set[str], command: Any, depth: int, *, rest: list[str]
) -> None:
    """Refuse an empty argument (``recuse audit "$DATA"`` with ``DATA`` unset): its
    path is ``.``, so the current folder was read as the data (a folder of another
    tool's files there was audited) or named in the error as if it had been given.
    ``takes``: the options that take the next word as their value; ``command``: the
    command the first ``depth`` plain words name, whose arguments name the empty one;
    ``rest``: the words after ``--``, every one an argument (``recuse audit --
    "$DATA"``, as a careful script writes it, read the current folder)."""
    from recuse.options import blank

    names = [p.name for p in command.params if getattr(p, "param_type_name", "") == "argument"]
    words, plain = iter(head), -depth  # the index among the command's own arguments
    for word in words:
        if word.partition("=")[0] in takes and "=" not in word:
            next(words, None)  # the option's value (an empty one was refused above)
        elif word.startswith("-") and word.strip():
            continue  # a flag
        elif blank(word):
            raise _empty_argument(word, names, plain)
        else:
            plain += 1
    for word in rest:
        if blank(word):
            raise _empty_argument(word, names, plain)
        plain += 1


def _empty_argument(word: str, names: list[str], plain: int) -> ConfigError:
    """The error for the empty argument ``word``, the ``plain``-th of the command's
    arguments ``names`` (the last takes the rest; none where ``plain`` < 0)."""
    which = names[min(plain, len(names) - 1)].upper() if names and plain >= 0 else ""
    return ConfigError(
        f"an empty argument {word!r}{f' for {which}' if which else ''} (an unset "
        "shell variable?) — give a file, folder or dataset name"
    )


def _show_notes(show: Callable[..., None]) -> Callable[..., None]:
    """``warnings.showwarning`` that prints the reader's notes (:class:`ReaderNote`)
    as one ``recuse: note:`` line and leaves other warnings to ``show``."""

    def note(message: Warning | str, category: type[Warning], *args: Any, **kw: Any) -> None:
        if issubclass(category, ReaderNote):
            print(f"recuse: note: {one_line(message)}", file=sys.stderr)
        else:
            show(message, category, *args, **kw)

    return note


def _register() -> None:
    # Each import adds its commands to ``app``.
    from recuse.cli import audit as _audit  # noqa: F401
    from recuse.cli import certify as _certify  # noqa: F401
    from recuse.cli import data as _data  # noqa: F401
    from recuse.cli import favoritism as _favoritism  # noqa: F401
    from recuse.cli import gate as _gate  # noqa: F401
    from recuse.cli import judge as _judge  # noqa: F401
    from recuse.cli import metrics as _metrics  # noqa: F401
    from recuse.cli import plan as _plan  # noqa: F401
    from recuse.cli import probe as _probe  # noqa: F401
    from recuse.cli import validate as _validate  # noqa: F401

    if sys.flags.optimize >= 2:
        _help_from_source(app)


def _help_from_source(typer_app: Any) -> None:
    """Under ``python -OO`` (PYTHONOPTIMIZE=2) Python drops docstrings, whence most
    commands take their help: ``recuse --help`` listed audit, validate, plan... with no
    words, and ``recuse audit --help`` said nothing of what it does. Each command (and
    group) without a help of its own gets its function's docstring read back from its
    source file (:func:`_source_docstring`)."""
    for info in typer_app.registered_commands:
        if info.help is None and info.callback is not None:
            info.help = _source_docstring(info.callback)
    callback = typer_app.registered_callback
    if callback is not None and callback.help is None and callback.callback is not None:
        callback.help = _source_docstring(callback.callback)
    for group in typer_app.registered_groups:
        _help_from_source(group.typer_instance)


def _source_docstring(function: Callable[..., Any]) -> str | None:
    """The docstring written in ``function``'s source (None where its source cannot
    be read: the program then shows no help, as before)."""
    import ast
    import inspect
    import textwrap

    try:
        source = textwrap.dedent(inspect.getsource(inspect.unwrap(function)))
        node = ast.parse(source).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    return ast.get_docstring(node)


#: what a command that prints one JSON object (``--json``) adds to its error object
JSON_ERROR_FIELDS: dict[str, dict[str, object]] = {
    "validate": {"valid": False},
    "gate": {"outcome": "error"},
}


def json_error(args: list[str], message: str, code: int) -> str | None:
    """The JSON object a ``--json`` command prints on stdout when it fails with a
    one-line error (``None`` without ``--json``): ``{"error": message, "exit_code":
    code}``, plus ``"valid": false`` for validate and ``"outcome": "error"`` for gate,
    so a script reading stdout always gets one object.

    >>> json_error(["gate", "r.json", "--json"], "r.json: not JSON", 2)
    '{"outcome": "error", "error": "r.json: not JSON", "exit_code": 2}'
    >>> json_error(["gate", "r.json"], "r.json: not JSON", 2) is None
    True
    """
    head = args[: args.index("--")] if "--" in args else args
    if "--json" not in head:
        return None
    extra = JSON_ERROR_FIELDS.get(_command(args), {})
    said = surrogates_escaped(message)  # a file name as report.json and stderr name it
    return json.dumps({**extra, "error": said, "exit_code": code}, ensure_ascii=False)


def _command(args: list[str]) -> str:
    """The subcommand of ``args``: the first word that is no global option's ("" for
    none)."""
    skip = False
    for arg in args[: args.index("--")] if "--" in args else args:
        if skip:
            skip = False
        elif arg.split("=", 1)[0] in GLOBAL_OPTIONS:
            skip = GLOBAL_OPTIONS[arg.split("=", 1)[0]] and "=" not in arg
        elif not arg.startswith("-"):
            return arg
    return ""


#: the subcommands of a :data:`~recuse.interrupt.RESUMING` command that store nothing a
#: rerun goes on from: they read a store (``judge export`` writes one file, all or
#: none) or print
_STARTS_OVER = {"judge": ("export", "card", "templates")}


def _resumes(args: list[str]) -> bool:
    """Whether the command of ``args`` stores its finished work as it goes, so that a
    rerun goes on from it (:data:`~recuse.interrupt.RESUMING`): ``recuse judge``, not
    ``recuse judge export``, which a Ctrl-C told "finished work is kept — run the same
    command again to go on where it stopped" over an export it starts over.

    >>> _resumes(["judge", "--model", "m"]), _resumes(["judge", "export", "s.db"])
    (True, False)
    """
    command = _command(args)
    if command not in RESUMING:
        return False
    rest = args[args.index(command) + 1 :]
    return not (rest and rest[0] in _STARTS_OVER.get(command, ()))


def _print_to_reader(text: str) -> None:
    """``print`` to stdout, where the reader may have stopped reading (``| head``,
    ``| true``): a closed pipe then takes nothing more, quietly, as click does for a
    command's own output. The error's JSON printed this way gave two tracebacks
    (``BrokenPipeError``) after its one-line error."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        # what is still buffered would fail again when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def _stdout_failed(exc: OSError) -> int:
    """Say that standard output failed (:func:`recuse.outputs.stdout_error`) and end
    with 2; what is still buffered goes nowhere (flushed at exit it would fail again)."""
    from recuse.outputs import stdout_error

    with contextlib.suppress(OSError):
        print(f"recuse: error: {one_line(stdout_error(exc))}", file=sys.stderr, flush=True)
    with contextlib.suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``recuse`` console script; returns the exit code."""
    # a stop before the command is known starts nothing, and forgets an earlier stop's
    # complete-output words (a Python caller's, recuse.interrupt.output_complete)
    hurried_resumes(False)
    try:
        _register()
    except KeyboardInterrupt:  # a Ctrl-C while the commands load: none has begun
        say_interrupted(program=argv is None, resumes=False)
        return stopped_code()
    if sys.stdout is None or not sys.stdout.isatty():  # None: closed (>&-)
        # help and usage errors off a terminal: plain click text, one line per option
        # (a rich box there is 80 columns wide and cuts text with "…")
        app.rich_markup_mode = None
        app.info.context_settings = {"terminal_width": UNWRAPPED}
    given = list(sys.argv[1:] if argv is None else argv)
    resumes = _resumes(given)  # a judge's store: a rerun goes on from it
    hurried_resumes(resumes)  # what a second Ctrl-C's line says (recuse.interrupt)
    try:  # builds every command's click form (click_command): a Ctrl-C there began nothing
        args = help_when_bare(global_options_first(given))
    except KeyboardInterrupt:
        say_interrupted(program=argv is None, resumes=False)
        return stopped_code()
    try:
        with warnings.catch_warnings(), renaming_by("flag"), guarded():
            warnings.simplefilter("always", ReaderNote)
            warnings.showwarning = _show_notes(warnings.showwarning)
            refuse_empty_values(args)
            # what ``app(...)`` runs (typer's pretty tracebacks are off: app.py)
            click_command()(args=args, prog_name="recuse")
    except SystemExit as exc:  # click's own exits: 0 for --help, 2 for usage errors
        code = exc.code
        if code == INTERRUPTED:  # typer turns Ctrl-C into this exit, so say it here
            say_interrupted(program=argv is None, resumes=resumes)
            return stopped_code()  # 143 where a SIGTERM raised it (stop_on_signals)
        return code if isinstance(code, int) else (0 if code is None else 1)
    except RecuseError as exc:
        if isinstance(exc, MissingDependencyError) and stop_received():
            # the stop's KeyboardInterrupt, cut an import short (other errors, a full
            # disk at the stop's commit, are said as they are)
            say_interrupted(program=argv is None, resumes=resumes)
            return stopped_code()
        print(f"recuse: error: {one_line(exc)}", file=sys.stderr)
        as_json = json_error(args, str(exc), 2)
        if as_json is not None:
            try:
                _print_to_reader(json_shown(as_json))
            except OSError as failed:
                return _stdout_failed(failed)
        return 2
    except StdoutFailed as exc:
        return _stdout_failed(exc)
    except KeyboardInterrupt:
        say_interrupted(program=argv is None, resumes=resumes)
        return stopped_code()
    return 0


if __name__ == "__main__":
    sys.exit(main())

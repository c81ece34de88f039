"""The options that ``recuse audit`` shares with the other commands (``--level``,
``--n-boot``, ``--seed``, ``--min-n``, ``--orders``, ``--se``, ``--robustness``) take
the audit's default and read their values as the audit does, so that the same bias of
the same judge reads the same when no option is given (recuse.options.DEFAULTS)."""

from __future__ import annotations

from typing import Any

import pytest
import typer.main

from recuse.options import DEFAULTS, Settings, settings_fields

#: the shared options of each command, by flag
SHARED = {
    ("metrics", "pairs"): ("--level", "--n-boot", "--seed", "--min-n", "--orders"),
    ("favoritism",): ("--level", "--se"),
    ("plan",): ("--level",),
}


def _command(path: tuple[str, ...]) -> Any:
    from recuse.cli import _register, app

    _register()
    command: Any = typer.main.get_command(app)
    for word in path:
        command = command.commands[word]
    return command


def _audit_defaults() -> dict[str, object]:
    fields = settings_fields().items()
    return {o.flag.split("/")[0]: getattr(Settings(), name) for name, o in fields}


@pytest.mark.parametrize("path", sorted(SHARED))
def test_shared_options_default_to_the_audits(path: tuple[str, ...]) -> None:
    audit = _audit_defaults()
    params = {p.opts[0]: p.default for p in _command(path).params if p.opts}
    for flag in SHARED[path]:
        assert params[flag] == audit[flag], (path, flag)
    assert audit["--level"] == DEFAULTS.level == 0.9


def test_favoritism_reads_robustness_as_the_audit_does() -> None:
    """``recuse favoritism --robustness fast`` was an error ("unknown check(s) fast")
    where the audit's default is fast: the favoritism command reads the value by the
    audit's rule now, so fast runs the audit's checks (the same robustness table, row
    for row, on play-favorites) and all every check."""
    from recuse.cli.favoritism import _checks
    from recuse.regression.robustness import CHECKS, FAST_CHECKS

    assert _checks("fast") == list(FAST_CHECKS) == list(DEFAULTS.robustness)
    assert _checks("all") == list(CHECKS)
    assert _checks("none") == []
    assert _checks("length, by-task") == ["length", "by-task"]
    with pytest.raises(Exception, match="unknown check"):
        _checks("bogus")


def test_the_examples_take_the_audits_seed_and_resamples() -> None:
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
    helpers = pytest.importorskip("helpers")
    args = helpers.parser("An example.", work=Path("work")).parse_args([])
    assert (args.seed, args.n_boot) == (DEFAULTS.seed, DEFAULTS.n_boot)


@pytest.mark.parametrize("path", sorted(SHARED))
def test_the_level_help_says_a_config_files_level_is_the_audits_only(
    path: tuple[str, ...],
) -> None:
    """The help said "(as in the audit)", which a team with ``[audit] level = 0.8`` in its
    recuse.toml reads as "the audit's level"; these commands take the built-in 0.9 (and
    say "nothing in it applies to this command"), so the help says whose default it is."""
    help_text = {p.opts[0]: p.help for p in _command(path).params if p.opts}["--level"]
    assert help_text is not None
    assert "the audit's default" in help_text
    if path == ("favoritism",):  # reads the file's level as the audit does: said
        assert "recuse.toml's level, else" in help_text
    else:
        assert "read by recuse audit only" in help_text


def test_favoritisms_config_and_se_help_say_the_file_gives_them() -> None:
    """``recuse favoritism`` takes se, level and self-scope from recuse.toml (as the
    audit), but its --config help named only the reading keys and the roster, and its
    --se help read as if only the command line set it."""
    helps = {p.opts[0]: p.help or "" for p in _command(("favoritism",)).params if p.opts}
    assert "se, level and self-scope" in helps["--config"]
    assert "recuse.toml's se, else" in helps["--se"]
    # each --config help names the [audit] options its command takes, and only those
    pairs = {p.opts[0]: p.help or "" for p in _command(("metrics", "pairs")).params if p.opts}
    assert "[audit] orders, human-ties and self-scope" in pairs["--config"]
    certify = {p.opts[0]: p.help or "" for p in _command(("certify", "run")).params if p.opts}
    assert "[audit] self-scope this command" in certify["--config"]
    validate = {p.opts[0]: p.help or "" for p in _command(("validate",)).params if p.opts}
    assert "[audit]" not in validate["--config"]

"""Every ``recuse`` command line in the README and the pages of ``docs/`` names commands and
options that exist.

The README and the docs are where users copy commands from; a renamed or deprecated flag left there
(``--keep-unknown-models`` after it became ``--allow-unknown-models``) still works
through a hidden alias but teaches the wrong name. The check walks the click command
tree behind :data:`recuse.cli.app` and refuses hidden or unknown options.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer

from recuse.cli import _register, app, global_options_first

REPO = Path(__file__).parents[2]
README = REPO / "README.md"


def documents() -> list[Path]:
    """The README and every page of ``docs/``: the files users copy commands from."""
    return [README, *sorted((REPO / "docs").glob("**/*.md"))]


def documented_commands() -> list[list[str]]:
    """The ``recuse …`` command lines of the README and of every docs page."""
    return [c for path in documents() for c in readme_commands(path.read_text("utf-8"))]


def code_blocks(text: str) -> list[list[str]]:
    """The lines of each code block of the README (continuations joined)."""
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    return [re.sub(r"\\\n\s*", " ", block).splitlines() for block in blocks]


def readme_commands(text: str) -> list[list[str]]:
    """The README's ``recuse …`` command lines, split as a shell would: the lines of its
    code blocks (continuations joined, comments dropped, ``.venv/bin/`` allowed) and the
    inline code spans that give options."""
    lines = [line for block in code_blocks(text) for line in block]
    lines += [
        " ".join(span.split()) for span in re.findall(r"`(recuse [^`]+)`", text) if "--" in span
    ]
    commands = []
    for line in lines:
        line = re.sub(r"^\s*(run: )?(\.venv/bin/)?", "", line)
        if line.startswith("recuse "):
            try:
                commands.append(shlex.split(line, comments=True))
            except ValueError:  # prose in a code span ("recuse audit's options"), not a shell line
                continue
    return commands


def visible_options(command: Any) -> dict[str, bool]:
    """Each visible option name of ``command`` -> whether it takes a value."""
    return {
        opt: not param.is_flag and param.nargs != 0
        for param in command.params
        if param.param_type_name == "option" and not param.hidden
        for opt in (*param.opts, *param.secondary_opts)
    } | {"--help": False}


def check(args: list[str]) -> list[str]:
    """Problems with one command line (empty when it is right): each option must be a
    visible option of the (sub)command it follows, each group word a visible command."""
    _register()
    command: Any = typer.main.get_command(app)  # typer's own click: duck-typed
    problems: list[str] = []
    tokens = iter(global_options_first(args))
    for token in tokens:
        flag = token.split("=", 1)[0]
        if flag.startswith("-"):
            known = visible_options(command)
            if flag not in known:
                problems.append(f"{command.name}: {flag} is unknown or hidden")
            elif known[flag] and "=" not in token:
                next(tokens, None)  # the option's value
        elif hasattr(command, "commands"):  # a group: the word names a subcommand
            sub = command.commands.get(token)
            if sub is None and getattr(command, "default_command", None):  # certify SOURCE
                sub = command.commands[command.default_command]
            if sub is None or sub.hidden:
                return [*problems, f"no command {token!r} under {command.name!r}"]
            command = sub
    return problems


def test_readme_has_commands_to_check() -> None:
    commands = documented_commands()
    assert len(commands) >= 38  # as many as the README held before it moved into docs/
    assert any(c[1] == "audit" for c in commands)
    assert any(c[1] == "audit" for c in readme_commands(README.read_text("utf-8")))


def test_every_readme_command_uses_visible_options() -> None:
    problems = [f"{' '.join(c)}: {p}" for c in documented_commands() for p in check(c[1:])]
    assert problems == []


def test_the_check_catches_hidden_and_unknown_flags() -> None:
    assert check(["audit", "x.csv", "--keep-unknown-models", "--out", "o"]) == [
        "audit: --keep-unknown-models is unknown or hidden"
    ]
    assert check(["judge", "export", "s.sqlite", "--nope"]) == [
        "export: --nope is unknown or hidden"
    ]
    assert check(["audits", "x.csv"]) == ["no command 'audits' under 'recuse'"]
    assert check(["audit", "x.csv", "--roster", "r.toml"]) == []
    # kept for old scripts, hidden: a README command must not use it
    assert check(["audit", "x.csv", "--allow-unknown-models"]) == [
        "audit: --allow-unknown-models is unknown or hidden"
    ]


def test_every_readme_block_makes_the_folders_its_output_files_go_in() -> None:
    """recuse refuses an --out file whose folder is missing (a typo there should not
    scatter files), so a block that writes runs/x.sqlite must make runs/ first: the
    judge example failed on a fresh clone with 'folder runs does not exist'."""
    problems = []
    blocks = [block for path in documents() for block in code_blocks(path.read_text("utf-8"))]
    for block in blocks:
        made = {"."}
        for line in block:
            shell = re.sub(r"^\s*(run: )?(\.venv/bin/)?", "", line)
            if not shell.startswith(("recuse ", "mkdir ")):  # code, diagrams, TOML: not shell
                continue
            try:
                words = shlex.split(shell, comments=True)
            except ValueError:  # prose in a code block ("recuse audit's options"), not shell
                continue
            if words[:2] == ["mkdir", "-p"]:
                made |= {str(Path(w)) for w in words[2:]}
            if words[:1] != ["recuse"]:
                continue
            for option, value in itertools.pairwise(words):
                out = Path(value)
                if option == "--out" and out.suffix and str(out.parent) not in made:
                    problems.append(f"{line.strip()}: {out.parent}/ is not made before")
    assert problems == []


def test_every_docs_page_is_in_the_site_nav_and_every_link_resolves() -> None:
    """``mkdocs.yml`` lists every page of ``docs/`` once (a page missing from the nav is
    unreachable on the site) and names no page that is gone; every relative link of the
    README and the pages points at a file that exists."""
    nav = re.findall(r"^\s*-\s*[^:]+:\s*(\S+\.md)\s*$", (REPO / "mkdocs.yml").read_text("utf-8"),
                     flags=re.M)  # fmt: skip
    pages = sorted(str(p.relative_to(REPO / "docs")) for p in (REPO / "docs").glob("**/*.md"))
    assert sorted(nav) == pages
    assert nav[0] == "index.md"
    broken = []
    for path in documents():
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", path.read_text("utf-8")):
            if "://" not in target and not (path.parent / target).exists():
                broken.append(f"{path.relative_to(REPO)}: {target}")
    assert broken == []


def test_the_readme_is_short_and_ends_its_tour_with_gpt4s_self_preference() -> None:
    """The README is what a newcomer skims: what recuse is, the two commands and a short
    tour whose last command audits GPT-4's self-preference on LLMBar's MT-Bench pairs;
    everything else is in docs/."""
    text = README.read_text("utf-8")
    assert len(text.splitlines()) <= 120
    assert "make demo" in text and "make test" in text
    tour = text[text.index("## A five-minute tour") :]
    last = [c for c in readme_commands(tour.split("\n## ")[0]) if c[1] == "audit"][-1]
    assert last[1:4] == ["audit", "llmbar-mtbench", "--only"] and last[4] == "self-preference"


def tour_text() -> str:
    """The README's five-minute tour, up to the next section."""
    text = README.read_text("utf-8")
    return text[text.index("## A five-minute tour") :].split("\n## ")[0]


@pytest.fixture(scope="module")
def tour_run(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Any]:
    """The README tour's last command, run once on the real LLMBar MT-Bench pairs: what
    it prints on stdout and the ``report.json`` it writes (the README and
    docs/self-preference.md quote both)."""
    import contextlib
    import io

    from recuse.cli import main

    args = [c for c in readme_commands(tour_text()) if c[1] == "audit"][-1][1:]
    out = tmp_path_factory.mktemp("tour") / args[args.index("--out") + 1]
    args[args.index("--out") + 1] = str(out)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main([*args, "--data-dir", str(shared_data)]) == 0
    return printed.getvalue(), json.loads((out / "report.json").read_text("utf-8"))


def findings_of(report: Any, judge: str) -> dict[str, Any]:
    """A judge's findings in ``report.json``, by bias key."""
    return {f["bias"]: f for s in report["sections"] for f in s["findings"] if f["judge"] == judge}


def shown(finding: dict[str, Any]) -> str:
    """A finding's estimate and interval as its verdict sentence writes them
    ("−0.04 [−0.12, 0.05]")."""
    found = re.search(r"([+−]?[\d.]+ \[[^\]]+\]), n=", finding["verdict"])
    assert found, finding["verdict"]
    return found.group(1)


def test_the_tour_prints_the_gpt4_row_the_readme_shows(tour_run: tuple[str, Any]) -> None:
    """The README's answer is what its last tour command prints: GPT-4's row of the
    summary table, on the real LLMBar MT-Bench pairs (a changed estimator or table
    fails here until the README says the new answer)."""
    tour = tour_text()
    (row,) = re.findall(r"^\| gpt-4 .*$", tour, flags=re.M)
    printed, report = tour_run
    assert row in printed.splitlines()
    assert printed.startswith("| judge ")  # the table comes first
    # the prose under the row reads its numbers from the report: the own picks, the
    # predicted ones and the papers' EO beside the headline
    prose = " ".join(tour.split())
    said = re.search(r"picks its own answer in (\d+)% .*? predicts (\d+)%", prose)
    eo_said = re.search(r"equal-opportunity number \((\+[\d.]+)\)", prose)
    n_said = re.search(r"over its (\d+) own pairs", prose)
    assert said and eo_said and n_said, "the tour's sentences on GPT-4's numbers are gone"
    gpt4 = findings_of(report, "gpt-4")
    picks = re.search(r"picks its own ([\d.]+) vs ([\d.]+) predicted",
                      gpt4["self_preference_calibrated"]["detail"])  # fmt: skip
    assert picks, gpt4["self_preference_calibrated"]["detail"]
    assert [f"{float(x):.0%}" for x in picks.groups()] == [f"{said[1]}%", f"{said[2]}%"]
    assert f"{gpt4['self_preference_eo']['estimate']:+.2f}" == eo_said[1]
    assert gpt4["self_preference_calibrated"]["n"] == int(n_said[1])
    headline = re.search(r"headline is \*\*(.*?)\*\* \(90% interval\)", prose)
    assert headline and headline[1] == shown(gpt4["self_preference_calibrated"])


def test_the_self_preference_page_quotes_the_audits_numbers(
    tour_run: tuple[str, Any], shared_data: Path
) -> None:
    """docs/self-preference.md reads the same audit as the tour ("What survives on real
    data", the one-step interval, the count beside the headline, the prompts resampled)
    and the one-κ fits of tests/metrics/test_real_llmbar.py: each number it quotes is
    the report's or the function's, as the output writes it, so a changed estimator
    fails here until the page says the new number."""
    import recuse.data
    from recuse.metrics.bootstrap import Resampling
    from recuse.metrics.competence import calibrated_self_preference

    text = " ".join((REPO / "docs" / "self-preference.md").read_text("utf-8").split())
    _, report = tour_run
    gpt4, gpt35 = findings_of(report, "gpt-4"), findings_of(report, "gpt-3.5-turbo")
    cal4, cal35 = gpt4["self_preference_calibrated"], gpt35["self_preference_calibrated"]

    def rates(finding: dict[str, Any]) -> tuple[str, str, str]:
        """Own picks, predicted own picks (%) and the pairs without its own answer."""
        got = re.search(r"picks its own ([\d.]+) vs ([\d.]+) predicted from (\d+) pairs",
                        finding["detail"])  # fmt: skip
        assert got, finding["detail"]
        return f"{float(got[1]):.0%}", f"{float(got[2]):.0%}", got[3]

    own4, predicted4, without4 = rates(cal4)
    own35, predicted35, _ = rates(cal35)
    # the one-step interval the audit takes on this 4-judge table, to three decimals
    low, high = (f"{cal4[k]:.3f}".replace("-", "−") for k in ("ci_low", "ci_high"))
    assert f"GPT-4's [{low}, {high}] against" in text
    size = re.search(r"one-step resamples: (\d+) covariate patterns .*? the table's (\d+) judge",
                     cal4["method"])  # fmt: skip
    assert size and f"(LLMBar MT-Bench: {size[1]} × {size[2]})" in text
    assert f'("{cal4["detail"]}";' in text
    assert (f"({cal4['clusters']} for GPT-4 on LLMBar's MT-Bench set, where its {cal4['n']} "
            f"own pairs come from {gpt4['self_preference_eo']['clusters']})") in text  # fmt: skip
    assert "κ_c for humanities, roleplay; coding, extraction, math, reasoning, stem, writing " \
        "pooled" in cal4["method"]  # fmt: skip
    assert (f"GPT-4's EO of {shown(gpt4['self_preference_eo'])} becomes {shown(cal4)} — it "
            f"picks its own answer in {own4} of its {cal4['n']} pairs, and its competence on "
            f"the other {without4} pairs predicts {predicted4} (with a κ for humanities and "
            "roleplay and one for the six smaller MT-Bench categories;") in text  # fmt: skip
    assert f"the headline stays {shown(cal4)}." in text
    assert (f"GPT-3.5's EO of {shown(gpt35['self_preference_eo'])} becomes {shown(cal35)} in "
            f"the audit ({own35} picked, {predicted35} predicted;") in text  # fmt: skip
    # one κ for all: GPT-4 at its ceiling (label-conditioned), GPT-3.5 without a family term
    pairs = recuse.data.load("llmbar-mtbench", data_dir=shared_data)
    one4 = calibrated_self_preference(pairs, judge="gpt-4", stratum=None,
                                      boot=Resampling(n_boot=20))  # fmt: skip
    rate4 = one4.components["own_pick_rate"] - one4.estimate
    estimate4 = f"{one4.estimate:+.2f}".replace("-", "−")
    assert f"one κ for all reads {estimate4}, {rate4:.0%} predicted)" in text
    one35 = calibrated_self_preference(pairs, judge="gpt-3.5-turbo", stratum=None)
    line = re.search(r": (\S+ \[[^\]]+\]) \(90% interval\)", str(one35))
    assert line, str(one35)
    rate35 = one35.components["own_pick_rate"] - one35.estimate
    assert f"no family term, as in the test: {line[1]}, {rate35:.0%} predicted)" in text


def test_the_self_preference_page_states_the_models_constants() -> None:
    """docs/self-preference.md's thresholds are recuse.metrics.competence's: the size past
    which resamples take one Newton step, the stratum size that gets its own κ, the mix
    distance that warns, the ceiling that conditions on the label, the extrapolation
    factor, the interval kind, and the calibrated headline's materiality."""
    from recuse.analyses import REGISTRY
    from recuse.metrics import competence as c

    text = " ".join((REPO / "docs" / "self-preference.md").read_text("utf-8").split())
    assert f"times the table's judges stay within {c.MAX_PATTERNS:,};" in text
    assert (f"A stratum where some judge has fewer than {c.MIN_STRATUM_PAIRS} pairs without its "
            "own answer shares one pooled `κ`") in text  # fmt: skip
    assert f"(total-variation distance of the two mixes above {c.STRATA_DISTANCE:g};" in text
    assert (f"more than {c.CEILING:.0%} of the time (or less than {1 - c.CEILING:.0%})"
            in text)  # fmt: skip
    assert f"more than {c.EXTRAPOLATION_FACTOR:g} times as far apart in strength" in text
    assert c.CALIBRATED_INTERVAL == "percentile" and "as a percentile interval" in text
    (material,) = {b.material for a in REGISTRY for b in a.biases if b.key == c.CALIBRATED}
    assert f"material / small / negligible at {material:g} of pick probability" in text


def test_the_statistics_page_states_the_codes_defaults_and_thresholds() -> None:
    """docs/statistics.md quotes the defaults a reader runs with: the audit's level,
    resamples and smallest group (options.Settings), the level rule's 200 at 99%, the
    planner's resamples, ceiling and position defaults, and every bias's materiality
    threshold (`recuse analyses`). It said every command draws 2,000 resamples, where
    `recuse plan`'s simulated studies draw 200 (PLAN_N_BOOT), and gave no threshold for
    the favoritism regression's γ and λ (0.05, beside the 0.1 it named)."""
    import dataclasses
    import inspect

    from recuse.analyses import REGISTRY
    from recuse.metrics.bootstrap import min_resamples
    from recuse.options import Settings
    from recuse.simulate.position import simulate_position
    from recuse.simulate.power import HUMAN_TIE_RATE, MAX_PAIRS, PLAN_N_BOOT

    text = " ".join((REPO / "docs" / "statistics.md").read_text("utf-8").split())
    default = {f.name: f.default for f in dataclasses.fields(Settings)}
    level = float(default["level"])  # type: ignore[arg-type]
    assert f"at most 1 − level ({1 - level:.2f} for {level:.0%} intervals)" in text
    plan = f"`recuse plan` (whose simulated studies draw {PLAN_N_BOOT} each, as its answer says)"
    assert f"{plan} uses {default['n_boot']:,} bootstrap resamples unless `--n-boot`" in text
    assert f"2 / (1 − level) of them: {min_resamples(0.99)} at 99%" in text
    assert f"a group needs {default['min_n']} pairs (`--min-n`, default {default['min_n']})" in text
    position = inspect.signature(simulate_position).parameters
    assert (f"a flip rate of {position['flip_rate'].default}, a tie share of "
            f"{position['tie_rate'].default} per order and a within-prompt correlation of "
            f"{position['icc'].default}") in text  # fmt: skip
    assert f"needing more than {MAX_PAIRS:,} pairs is refused" in text
    assert f"and a human label ({HUMAN_TIE_RATE:.0%} ties)" in text
    # each threshold where the page says it is: 0.1 for the familiarity slope gap and the
    # leaderboard's covariates, 0.05 for every other bias that has one
    material = {(a.id, b.key): b.material for a in REGISTRY for b in a.biases if b.material}
    tenth = {key for key, m in material.items() if m == 0.1}
    assert {a for a, _ in tenth} == {"familiarity", "leaderboard"}
    assert set(material.values()) == {0.05, 0.1}
    assert "0.1 for the familiarity slope gap and the leaderboard's log-odds covariates" in text
    assert ("the favoritism regression's γ and λ (0.05 of the dimension's top score)" in text
            and material[("favoritism", "self_bias")] == 0.05)  # fmt: skip


def test_the_statistics_pages_negligible_example_is_the_audits(shared_data: Path) -> None:
    """docs/statistics.md's "real and practically nothing" is Claude-3-Sonnet's self-bias
    on Play Favorites: the audit's estimate, interval and n, as its verdict writes them,
    and read negligible (within ± the 0.05 threshold)."""
    import recuse

    text = " ".join((REPO / "docs" / "statistics.md").read_text("utf-8").split())
    report = recuse.audit("play-favorites", only=["favoritism"], robustness="none",
                          data_dir=shared_data)  # fmt: skip
    f = report.findings
    (row,) = f[(f["judge"] == "claude-3-sonnet-20240229") & (f["bias"] == "self_bias")].to_dict(
        "records"
    )
    assert row["materiality"] == "negligible"
    assert f"{shown(row)} at n = {row['n']:,} is real and practically nothing" in text


@pytest.mark.parametrize("group", [[], ["data"], ["certify"], ["judge"], ["metrics"]])
def test_a_bare_command_prints_its_help_on_stdout_and_exits_0(
    group: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The README says `recuse` alone lists the commands. Click's no_args_is_help printed
    that help to stderr with exit 2, a usage error: a user asking for help is not one (pip
    prints its help and exits 0). A leaf command given nothing is still a usage error."""
    from recuse.cli import main

    readme = " ".join(README.read_text("utf-8").split())
    assert "`recuse` (or `.venv/bin/recuse`) alone lists the commands" in readme
    assert main(group) == 0
    cap = capsys.readouterr()
    assert cap.out.startswith(f"Usage: recuse {' '.join(group)}".rstrip() + " [OPTIONS]")
    assert "Commands:" in cap.out and cap.err == ""
    assert main(["--roster", "/dev/null", *group]) == 0  # a global option first: the same
    assert "Commands:" in capsys.readouterr().out
    assert main(["audit"]) == 2  # missing its DATA argument
    cap = capsys.readouterr()
    assert cap.out == "" and "Usage: recuse audit" in cap.err
    assert main(["no-such-command"]) == 2
    assert "No such command" in capsys.readouterr().err


@pytest.mark.parametrize("group", [[], ["data"], ["certify"], ["judge"], ["metrics"]])
def test_each_command_listed_with_a_whole_sentence(
    group: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A command's line in the listing is the first sentence of its docstring as click
    finds it: up to the first '. '. 'recuse favoritism' was listed as '... from absolute
    ratings (Play Favorites, Eq.' — an abbreviation's dot ended it inside a bracket."""
    from recuse.cli import main

    assert main(group) == 0
    listing = capsys.readouterr().out
    command: Any = typer.main.get_command(app)
    for name in group:
        command = command.commands[name]
    shown = 0
    for name, sub in command.commands.items():
        if sub.hidden:
            continue
        line = sub.get_short_help_str(limit=10_000)
        assert line.count("(") == line.count(")"), (name, line)
        assert not re.search(r"\b(Eq|e\.g|i\.e|cf|vs|etc)\.$", line), (name, line)
        assert line.split()[0] in listing
        shown += 1
    assert shown >= 1


def test_the_configuration_page_lists_every_audit_key_and_what_is_not_a_keyword() -> None:
    """docs/configuration.md lists the ``[audit]`` keys of ``recuse.toml``: it left out
    ``out``, ``verbose`` and ``profile`` and said ``--out`` was command-line only, while
    the file reads all three. The list is the keys of ``options.Settings``, in order, and
    each option the page says is no keyword of ``recuse.audit`` is none."""
    from recuse.options import settings_fields

    text = " ".join((REPO / "docs" / "configuration.md").read_text("utf-8").split())
    listed = re.search(r"without their dashes \((.*?)\)\.", text)
    assert listed, "the [audit] key list of docs/configuration.md is gone"
    keys = [spec.key for spec in settings_fields().values() if spec.key]
    assert re.findall(r"`([a-z-]+)`", listed.group(1)) == keys
    not_keywords = re.search(r"`--out`, (.*?) are the command's and the file's", text)
    assert not_keywords, "the page no longer says which options are not keywords"
    by_flag = {spec.flag.split("/")[0]: spec for spec in settings_fields().values()}
    for flag in ["--out", *re.findall(r"`(--[a-z-]+)`", not_keywords.group(1))]:
        assert by_flag[flag].key and not by_flag[flag].api, flag
    hidden = [spec.flag for spec in settings_fields().values() if spec.hidden]
    assert all(f"`{flag}`" in text and not by_flag[flag].key for flag in hidden)

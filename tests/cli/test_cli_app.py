"""recuse.toml in every command that reads a user's file (``cli/app.cli_context``): the
file is read by the audit's rule (command line > recuse.toml > default), from the current
folder or --config, and a bad recuse.toml is the same one-line error, exit 2, in each."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.simulate import PlantedBias, simulate_pairs
from recuse.simulate.ratings import simulate_ratings
from recuse.testing.standin import StandIn

PICKS = {1.0: "L", 0.0: "R", 0.5: "T"}  # how the team's file writes P(a better)
VALUES = "L = 1\nR = 0\nT = 0.5\n"
CONFIG = f"""
[audit]
level = 0.8          # an analysis option: the audit's only

[map]
first_pick = "p_a_first"
second_pick = "p_a_second"
label = "human"
question = "prompt"
ans_a = "response_a"
ans_b = "response_b"

[values.first_pick]
{VALUES}
[values.second_pick]
{VALUES}
[values.label]
{VALUES}
[[model]]
id = "our-judge"
family = "ours"
aliases = ["OurJudge"]
"""
ROSTER = '[[model]]\nid = "our-judge"\nfamily = "ours"\naliases = ["OurJudge"]\n'
# the same reading on the command line
MAP = (
    "first_pick=p_a_first,second_pick=p_a_second,label=human,question=prompt,"
    "ans_a=response_a,ans_b=response_b"
)
FLAGS = ["--map", MAP, "--values", "first_pick:L=1,R=0,T=0.5;second_pick:L=1,R=0,T=0.5",
         "--values", "label:L=1,R=0,T=0.5"]  # fmt: skip
SWAPPED = "first_pick=p_a_second,second_pick=p_a_first"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture()
def team(tmp_path: Path) -> dict[str, Path]:
    """A team folder (``team/``: recuse.toml and a pairs file readable only with its
    [map] and [values]), a roster file holding its [[model]], and a folder without a
    recuse.toml (``elsewhere/``)."""
    sim = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.1)}, n_prompts=40, seed=2)
    pairs = sim.pairs.drop(columns=["p_a"]).assign(judge="OurJudge")
    k = pairs.index.astype(str)  # texts to judge, for recuse judge and recuse probe
    pairs = pairs.assign(question="Question " + k + "?", ans_a="One answer to " + k + ".",
                         ans_b="Another answer to " + k + ", longer.")  # fmt: skip
    for column in ("p_a_first", "p_a_second", "human"):
        pairs[column] = pairs[column].map(PICKS)
    pairs = pairs.rename(columns={"p_a_first": "first_pick", "p_a_second": "second_pick",
                                  "human": "label"})  # fmt: skip
    folder, elsewhere = tmp_path / "team", tmp_path / "elsewhere"
    folder.mkdir()
    elsewhere.mkdir()
    pairs.to_csv(folder / "pairs.csv", index=False)
    (folder / "recuse.toml").write_text(CONFIG, "utf-8")
    (tmp_path / "roster.toml").write_text(ROSTER, "utf-8")
    return {
        "pairs": folder / "pairs.csv", "config": folder / "recuse.toml", "folder": folder,
        "elsewhere": elsewhere, "roster": tmp_path / "roster.toml",
    }  # fmt: skip


def test_validate_reads_the_file_as_the_audit_and_says_which_config(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    planted = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.1)}, n_prompts=40, seed=2)
    pairs = str(team["pairs"])
    monkeypatch.chdir(team["elsewhere"])
    code, _, err = run(capsys, "validate", pairs, "--json")
    assert code == 2, err  # no verdict column without the team's map: the file is unread
    code, by_config, err = run(capsys, "validate", pairs, "--json", "--config", str(team["config"]))
    assert code == 0, err
    # the note names the file and what validate took from it: not [audit] level
    assert (
        f"recuse: note: {team['config']}: read [map], [values.first_pick], "
        "[values.second_pick], [values.label], [[model]] (1 roster" in err
    )
    assert "level" not in err
    monkeypatch.chdir(team["folder"])
    code, here, err = run(capsys, "validate", pairs, "--json")
    assert code == 0 and here == by_config, err
    assert "recuse: note: recuse.toml: read [map]" in err
    # docs/configuration.md shows this note as a command prints it
    doc = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text("utf-8")
    assert f"```\n{err.splitlines()[0]}\n```" in doc
    counts = json.loads(here)["counts"]
    human = planted.pairs["human"]
    assert counts["rows"] == len(human) and counts["judged rows without a verdict"] == 0
    assert counts["human: a better"] == int((human == 1).sum())
    assert counts["human: tie"] == int((human == 0.5).sum())
    monkeypatch.chdir(team["elsewhere"])
    code, flags, err = run(capsys, "--roster", str(team["roster"]), "validate", pairs, "--json",
                           *FLAGS)  # fmt: skip
    assert code == 0 and flags == here and err == ""


def test_the_note_says_what_the_file_gave_beside_the_command_line(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A --map on the command line merges with the file's [map] (the file's entries stay):
    the note said 'nothing in it applies to this command' while the file's map read the
    verdicts. An option the command line replaces is named as given there instead."""
    monkeypatch.chdir(team["folder"])
    team["config"].write_text(CONFIG.split("[values.first_pick]")[0], "utf-8")  # [map] only
    code, _, err = run(capsys, "validate", "pairs.csv", "--map", "label=human")
    assert code == 2  # the L/R/T verdicts need the file's [values]: what matters is the note
    assert err.startswith("recuse: note: recuse.toml: read [map] (options given on the ")
    team["config"].write_text('[audit]\nswapped-frame = "presented"\n', "utf-8")
    code, _, err = run(capsys, "validate", "pairs.csv", "--swapped-frame", "original", *FLAGS)
    assert code == 0, err
    assert err.splitlines()[0] == (
        "recuse: note: recuse.toml: nothing in it used: [audit] swapped-frame given on the "
        "command line"
    )


def _metrics(capsys: pytest.CaptureFixture[str], out: Path, *args: str) -> dict[str, object]:
    code, _, err = run(capsys, "metrics", "pairs", *args, "--n-boot", "200", "--out", str(out))
    assert code == 0, err
    payload: dict[str, object] = json.loads(out.read_text("utf-8"))
    return payload


def test_metrics_pairs_reads_the_file_as_the_audit_and_a_flag_wins(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    pairs, roster = str(team["pairs"]), str(team["roster"])
    monkeypatch.chdir(team["folder"])
    here = _metrics(capsys, tmp_path / "here.json", pairs, "-m", "first_position_rate")
    monkeypatch.chdir(team["elsewhere"])
    config = _metrics(capsys, tmp_path / "config.json", pairs, "-m", "first_position_rate",
                      "--config", str(team["config"]))  # fmt: skip
    flags = _metrics(capsys, tmp_path / "flags.json", "--roster", roster, pairs, "-m",
                     "first_position_rate", *FLAGS)  # fmt: skip
    # the same numbers and settings; where each setting came from is what differs
    froms = [p.pop("setting_sources") for p in (here, config, flags)]
    assert [f["map"] for f in froms] == ["config:recuse.toml", f"config:{team['config']}", "cli"]
    assert here == config == flags
    (result,) = here["results"]  # type: ignore[misc]
    assert result["judge"] == "our-judge"  # the [[model]] entry: the alias read as its id
    assert here["settings"]["level"] == 0.9  # type: ignore[index]  # [audit] level: not taken
    # --map given here replaces the file's entries of the same columns, keeps the others
    monkeypatch.chdir(team["folder"])
    swapped = _metrics(
        capsys, tmp_path / "s.json", pairs, "-m", "first_position_rate", "--map", SWAPPED
    )
    monkeypatch.chdir(team["elsewhere"])
    swapped_flags = _metrics(
        capsys, tmp_path / "sf.json", "--roster", roster, pairs, "-m", "first_position_rate",
        "--map", MAP.replace("first_pick=p_a_first,second_pick=p_a_second", SWAPPED), *FLAGS[2:],
    )  # fmt: skip
    froms = [p.pop("setting_sources") for p in (swapped, swapped_flags)]
    assert [f["map"] for f in froms] == ["cli + config:recuse.toml", "cli"]
    assert swapped == swapped_flags
    (turned,) = swapped["results"]  # type: ignore[misc]
    # the orders swapped: the share of wins to the first-shown answer is its complement
    assert turned["estimate"] == pytest.approx(1 - result["estimate"])


def test_certify_and_certify_apply_read_the_file_as_the_audit(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    pairs, roster = str(team["pairs"]), str(team["roster"])
    monkeypatch.chdir(team["folder"])
    code, here, err = run(capsys, "certify", pairs, "--json", "--min-labels", "10",
                          "--thresholds", str(tmp_path / "t.json"))  # fmt: skip
    assert code == 0, err
    monkeypatch.chdir(team["elsewhere"])
    code, flags, err = run(capsys, "--roster", roster, "certify", pairs, "--json",
                           "--min-labels", "10", *FLAGS)  # fmt: skip
    assert code == 0, err
    # the same certificate; where each setting came from is what differs
    here_said, flags_said = json.loads(here), json.loads(flags)
    froms = [p.pop("setting_sources") for p in (here_said, flags_said)]
    assert [f["map"] for f in froms] == ["config:recuse.toml", "cli"]
    assert flags_said == here_said
    assert json.loads(here)["judges"][0]["judge"] == "our-judge"
    decided = {}
    for name, args in {
        "config": ["--config", str(team["config"])],
        "flags": ["--roster", roster, *FLAGS],
    }.items():
        out = tmp_path / f"{name}.csv"
        code, _, err = run(capsys, "certify", "apply", str(tmp_path / "t.json"), pairs,
                           "--out", str(out), *args)  # fmt: skip
        assert code == 0, err
        decided[name] = pd.read_csv(out)
    pd.testing.assert_frame_equal(decided["config"], decided["flags"])
    assert len(decided["config"]) == 120


def test_plan_like_reads_the_file_as_the_audit(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pairs = str(team["pairs"])
    common = ["plan", "--bias", "position", "--effect", "0.1", "--runs", "20", "--json",
              "--quiet", "--like", pairs]  # fmt: skip
    monkeypatch.chdir(team["folder"])
    code, here, err = run(capsys, *common)
    assert code == 0, err
    monkeypatch.chdir(team["elsewhere"])
    code, flags, err = run(capsys, *common, *FLAGS)
    assert code == 0 and flags == here, err
    code, _, err = run(capsys, *common[:-2], "--config", str(team["config"]))
    assert code == 2 and "read --like FILE" in err  # no file to read: said, not ignored


@pytest.mark.parametrize("command", ["judge", "probe"])
def test_judge_and_probe_read_data_as_the_audit(
    command: str,
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    data = str(team["pairs"])
    extra = ["--probe", "padding"] if command == "probe" else []
    flags = ["--roster", str(team["roster"]), *FLAGS]
    tables = {}
    with StandIn() as server:
        for name, where, args in (
            ("here", team["folder"], []),
            ("config", team["elsewhere"], ["--config", str(team["config"])]),
            ("flags", team["elsewhere"], flags),
        ):
            monkeypatch.chdir(where)
            store, table = tmp_path / f"{name}.db", tmp_path / f"{name}.csv"
            code, _, err = run(capsys, command, "--data", data, "--out", str(store), "--model",
                               "gpt-4o", "--base-url", server.base_url, "--no-progress",
                               "--limit", "12", *extra, *args)  # fmt: skip
            assert code == 0, err
            assert main(["judge", "export", str(store), "--out", str(table)]) == 0
            tables[name] = pd.read_csv(table).drop(columns=["source"], errors="ignore")
    capsys.readouterr()
    pd.testing.assert_frame_equal(tables["here"], tables["config"])
    pd.testing.assert_frame_equal(tables["here"], tables["flags"])
    original = tables["here"]
    if command == "probe":
        original = original[original["probe"] == "original"]
        original = original.assign(item_id=original["base_item"])
    planted = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.1)}, n_prompts=40, seed=2)
    human = dict(zip(planted.pairs["item_id"], planted.pairs["human"], strict=True))
    assert len(original) == 12  # the [values] read: the planted labels
    assert original["human"].tolist() == [human[i] for i in original["item_id"]]


def test_favoritism_reads_the_file_as_the_audit(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    sim = simulate_ratings(seed=1, n_prompts=30)
    models = "".join(f'[[model]]\nid = "{j}"\nfamily = "{f}"\n\n' for j, f in sim.families.items())
    folder = tmp_path / "ratings"
    folder.mkdir()
    config = folder / "recuse.toml"
    config.write_text(f'[map]\ngrader = "judge"\nscore = "rating"\n\n{models}', "utf-8")
    (tmp_path / "roster.toml").write_text(models, "utf-8")
    ratings = folder / "ratings.csv"
    sim.ratings.rename(columns={"judge": "grader", "rating": "score"}).to_csv(ratings, index=False)
    fits = {}
    for name, where, args in (
        ("here", folder, []),
        ("config", team["elsewhere"], ["--config", str(config)]),
        ("flags", team["elsewhere"], ["--roster", str(tmp_path / "roster.toml"), "--map",
                                      "grader=judge,score=rating"]),
    ):  # fmt: skip
        monkeypatch.chdir(where)
        out = tmp_path / name
        code, _, err = run(capsys, "favoritism", str(ratings), "--out", str(out), *args)
        assert code == 0, err
        fits[name] = json.loads((out / "favoritism.json").read_text("utf-8"))["main"]
    assert fits["here"] == fits["config"] == fits["flags"]
    monkeypatch.chdir(team["elsewhere"])
    code, _, err = run(capsys, "favoritism", str(ratings), "--out", str(tmp_path / "none"))
    assert code == 2 and not (tmp_path / "none").exists()  # no rating column without the map


BAD = {
    "[audit]\nlevle = 0.9\n": "recuse.toml line 2: [audit] levle: unknown option",
    "[map]\nfirst_pick = 3\n": "recuse.toml line 1: [map]: first_pick: give the schema column "
    'as "name"',
    '[audit]\nswapped-frame = "sideways"\n': "recuse.toml line 2: [audit] swapped-frame = "
    "'sideways'",
}
COMMANDS = {
    "validate": ["validate", "pairs.csv"],
    "metrics": ["metrics", "pairs", "pairs.csv", "--out", "out.json"],
    "certify": ["certify", "pairs.csv", "--out", "out.json"],
    "apply": ["certify", "apply", "t.json", "pairs.csv", "--out", "out.csv"],
    "plan": ["plan", "--bias", "position", "--like", "pairs.csv"],
    "judge": ["judge", "--data", "pairs.csv", "--out", "out.db", "--base-url", "http://x"],
    "probe": ["probe", "--data", "pairs.csv", "--out", "out.db", "--base-url", "http://x"],
    "favoritism": ["favoritism", "pairs.csv", "--out", "out"],
    "audit": ["audit", "pairs.csv", "--out", "out"],
}


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("bad", BAD)
def test_a_bad_recuse_toml_is_the_audits_one_line_error_in_each_command(
    command: str,
    bad: str,
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    team["config"].write_text(bad, "utf-8")
    (team["folder"] / "t.json").write_text("{}", "utf-8")
    monkeypatch.chdir(team["folder"])
    before = sorted(p.name for p in team["folder"].iterdir())
    code, _, err = run(capsys, *COMMANDS[command])
    assert code == 2
    assert err.startswith(f"recuse: error: {BAD[bad]}") and err.count("\n") == 1, err
    assert sorted(p.name for p in team["folder"].iterdir()) == before  # nothing written
    monkeypatch.chdir(team["elsewhere"])  # the same file by --config: the same error
    args = [str(team["folder"] / a) if a.endswith((".csv", ".json")) and a != "out.json"
            else a for a in COMMANDS[command]]  # fmt: skip
    code, _, err2 = run(capsys, *args, "--config", str(team["config"]))
    assert code == 2 and err2 == err.replace("recuse.toml", str(team["config"]), 1)


def test_a_command_with_a_roster_only_takes_the_models_of_recuse_toml(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    shared_data: Path,
    tmp_path: Path,
) -> None:
    """`recuse data summary` reads no user file, but its roster is the command's one
    roster: recuse.toml's [[model]] entries join it, and a bad file is the same error."""
    root = tmp_path / "data"
    root.mkdir()
    (root / "hh_rlhf").symlink_to(shared_data / "hh_rlhf", target_is_directory=True)
    monkeypatch.chdir(team["folder"])
    code, out, err = run(capsys, "data", "summary", "--data-dir", str(root))
    assert code == 0 and "2,312" in out
    # no option was taken, so none of the command line's wins over it
    assert err == "recuse: note: recuse.toml: read [[model]] (1 roster addition)\n"
    team["config"].write_text(CONFIG.replace("[[model]]", "[[modle]]"), "utf-8")
    code, out, err = run(capsys, "data", "summary", "--data-dir", str(root))
    assert code == 2 and out == ""
    line = CONFIG.split("[[model]]")[0].count("\n") + 1  # the line of [[modle]]
    assert err == (
        f"recuse: error: recuse.toml line {line}: unknown section [modle] — use audit, map, "
        "values, material or [[model]]\n"
    )
    monkeypatch.chdir(team["elsewhere"])  # no recuse.toml: as ever, nothing said
    code, out, err = run(capsys, "data", "summary", "--data-dir", str(root))
    assert code == 0 and "2,312" in out and err == ""


@pytest.mark.parametrize("command", [c for c in COMMANDS if c != "audit"])
def test_each_command_says_what_config_reads_in_its_help(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    words = {"metrics": ["metrics", "pairs"], "certify": ["certify", "run"],
             "apply": ["certify", "apply"]}.get(command, [command])  # fmt: skip
    code, out, _ = run(capsys, *words, "--help")
    assert code == 0 and "--config" in out and "recuse.toml" in out


@pytest.mark.parametrize("command", ["metrics", "certify", "apply", "judge", "probe"])
def test_an_output_over_the_config_or_roster_file_is_refused(
    command: str,
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`recuse certify pairs.csv --out c.json --config c.json` wrote the certificate over
    the config, exit 0: the files a command reads its settings from are inputs too."""
    monkeypatch.chdir(team["folder"])
    (team["folder"] / "t.json").write_text("{}", "utf-8")
    config, roster = team["folder"] / "c.json", team["folder"] / "r.json"
    config.write_text(CONFIG, "utf-8")
    roster.write_text(ROSTER, "utf-8")
    for out, extra in ((config, ["--config", str(config)]), (roster, ["--roster", str(roster)])):
        args = [str(out) if a.startswith("out.") else a for a in COMMANDS[command]]
        code, _, err = run(capsys, *args, *extra)
        assert code == 2
        assert err.splitlines()[-1] == (
            f"recuse: error: --out {out}: is the input {out} — writing it would replace the "
            "data read; give another file name"
        )
    assert config.read_text("utf-8") == CONFIG and roster.read_text("utf-8") == ROSTER


@pytest.mark.parametrize("command", COMMANDS)
def test_no_config_reads_no_recuse_toml_in_any_command(
    command: str,
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--no-config`` (before or after the command) skips ./recuse.toml: a bad one in the
    folder is not read (its error gone), and ``--config`` beside it is refused."""
    bad = next(iter(BAD))
    team["config"].write_text(bad, "utf-8")
    (team["folder"] / "t.json").write_text("{}", "utf-8")
    monkeypatch.chdir(team["folder"])
    for args in (["--no-config", *COMMANDS[command]], [*COMMANDS[command], "--no-config"]):
        _, _, err = run(capsys, *args)
        assert BAD[bad] not in err and "recuse.toml" not in err, err
    before = sorted(p.name for p in team["folder"].iterdir())
    code, _, err = run(capsys, *COMMANDS[command], "--no-config", "--config", "recuse.toml")
    assert code == 2 and err == (
        "recuse: error: --config recuse.toml and --no-config together: give one (--no-config "
        "reads no recuse.toml)\n"
    )
    assert sorted(p.name for p in team["folder"].iterdir()) == before  # nothing written


def test_no_config_reads_a_file_as_from_a_folder_without_one(
    team: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    pairs = str(team["pairs"])
    monkeypatch.chdir(team["folder"])
    code, with_config, err = run(capsys, "validate", pairs, "--json")
    assert code == 0 and "recuse: note: recuse.toml" in err
    roster = ["--roster", str(team["roster"])]  # recuse.toml's [[model]], unread too
    code, here, err = run(capsys, "--no-config", "validate", pairs, "--json", *FLAGS, *roster)
    assert code == 0 and err == ""  # the command line's options alone, no note
    monkeypatch.chdir(team["elsewhere"])
    code, elsewhere, _ = run(capsys, "validate", pairs, "--json", *FLAGS, *roster)
    assert code == 0 and here == elsewhere
    assert json.loads(here)["counts"] == json.loads(with_config)["counts"]


@pytest.mark.parametrize(
    ("command", "then"),
    [
        (["audit", "--out", "OUT"], "run the same command again to start it over"),
        (["--no-config", "judge", "--data", "D", "--out", "S"],
         "finished work is kept — run the same command again to go on where it stopped"),
    ],
)  # fmt: skip
def test_a_stopped_command_says_whether_a_rerun_goes_on_or_starts_over(
    command: list[str],
    then: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A Ctrl-C in `recuse audit` said "finished work is kept — run the same command
    again to go on where it stopped": an audit keeps nothing of a stopped run and its
    rerun starts over. A judge's run (its store) still says its work is kept."""
    from recuse.cli import click_command

    def stopped(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(type(click_command()), "main", stopped)  # the command, stopped
    assert main(command) == 130
    assert capsys.readouterr().err == f"recuse: interrupted; {then}\n"


def test_a_missing_data_argument_names_it_once(capsys: pytest.CaptureFixture[str]) -> None:
    """``recuse audit``'s data argument reads ``{DATA}...`` in its usage (one ellipsis:
    click adds it for an argument of several values; the metavar said DATA... too, and
    the line read {DATA...}...)."""
    code, _, err = run(capsys, "audit")
    assert code == 2
    assert "Usage: recuse audit [OPTIONS] {DATA}...\n" in err
    assert "Missing argument 'DATA'." in err
    assert "DATA..." not in err

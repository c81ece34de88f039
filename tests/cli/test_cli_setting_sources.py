"""Where each setting came from, recorded in every command's JSON and said in its words
(``recuse.options.setting_sources`` / ``option_as_set``), and a stop once the outputs
are whole said as such (``recuse.interrupt.complete_over``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jsonschema
import pytest

from recuse.cli import main
from recuse.simulate.pairs import simulate_pairs
from recuse.simulate.ratings import simulate_ratings
from recuse.simulate.selective import simulate_selective

if TYPE_CHECKING:
    from conftest import StopOnce


@pytest.fixture(autouse=True)
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "250")


def _ran(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, out + err
    return out + err


def _ratings(tmp_path: Path) -> Path:
    """A simulated ratings table and its roster (families) in ``tmp_path``."""
    sim = simulate_ratings(seed=1, n_prompts=30)
    text = "".join(f'[[model]]\nid = "{j}"\nfamily = "{f}"\n\n' for j, f in sim.families.items())
    (tmp_path / "roster.toml").write_text(text, "utf-8")
    sim.ratings.to_csv(tmp_path / "ratings.csv", index=False)
    return tmp_path / "roster.toml"


# ------------------------------------------------------------ the JSON records


def test_favoritism_json_says_which_setting_came_from_the_line_the_file_or_the_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--se on the line, level in recuse.toml, self-scope left to its default, and the
    command's own --normalize given: favoritism.json's ``setting_sources`` says so."""
    roster = _ratings(tmp_path)
    (tmp_path / "recuse.toml").write_text('[audit]\nlevel = 0.8\nse = "HC1"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    _ran(["--roster", str(roster), "favoritism", "ratings.csv", "--out", "o", "--se", "HC3"],
         capsys)  # fmt: skip
    said = json.loads((tmp_path / "o" / "favoritism.json").read_text("utf-8"))
    sources = said["setting_sources"]
    assert sources["se"] == "cli" and said["main"]["se_type"] == "HC3"  # the line wins
    assert sources["level"] == "config:recuse.toml" and said["main"]["level"] == 0.8
    assert sources["self_scope"] == "default"
    assert sources["map"] == "default" and sources["robustness"] == "default"
    assert sources["out"] == "cli"  # the command's own option, given


def test_metrics_pairs_json_records_sources_and_words_the_orders_as_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """orders = "first" from recuse.toml: ``setting_sources`` says the file, and the
    position metrics' skip reason and the agreement curve's title say the file's line,
    not ``--orders first``, which the user never typed; from the line, the flag."""
    simulate_pairs(n_prompts=60, pairs_per_prompt=3, seed=1).pairs.to_csv(
        tmp_path / "pairs.csv", index=False
    )
    (tmp_path / "recuse.toml").write_text('[audit]\norders = "first"\n', "utf-8")
    (tmp_path / "other.toml").write_text('[map]\nlen_a = "len_a"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    head = ["metrics", "pairs", "pairs.csv", "--n-boot", "100"]
    _ran([*head, "--out", "file.json", "--seed", "3"], capsys)
    payload = json.loads((tmp_path / "file.json").read_text("utf-8"))
    sources = payload["setting_sources"]
    assert sources["orders"] == "config:recuse.toml"
    assert sources["human_ties"] == sources["self_scope"] == "default"
    assert sources["seed"] == sources["n_boot"] == "cli" and sources["level"] == "default"
    skipped = {s["reason"] for s in payload["skipped"] if s["metric"] == "flip_rate"}
    assert skipped == {'compares the two presentation orders; [audit] orders = "first" in '
                       "recuse.toml line 2 uses one"}  # fmt: skip
    title = payload["curve_words"]["human_alignment_curve"]["title"]
    assert '([audit] orders = "first" in recuse.toml line 2)' in title, title
    assert "--orders" not in title
    # on the line: the flag; a [map] given both ways: both
    argv = [*head, "--out", "line.json", "--orders", "first", "--map", "len_b=len_b",
            "--config", "other.toml"]  # fmt: skip
    _ran(argv, capsys)
    payload = json.loads((tmp_path / "line.json").read_text("utf-8"))
    assert payload["setting_sources"]["orders"] == "cli"
    assert payload["setting_sources"]["map"] == "cli + config:other.toml"
    skipped = {s["reason"] for s in payload["skipped"] if s["metric"] == "flip_rate"}
    assert skipped == {"compares the two presentation orders; --orders first uses one"}


def test_certify_run_records_where_self_scope_came_from(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    simulate_selective(400, seed=5).pairs.to_csv(tmp_path / "pairs.csv", index=False)
    (tmp_path / "conf.toml").write_text('[audit]\nself-scope = "line"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    args = ["certify", "pairs.csv", "--agreement", "0.8", "--thresholds", "t.json"]
    _ran([*args, "--out", "a.json", "--config", "conf.toml"], capsys)
    sources = json.loads((tmp_path / "a.json").read_text("utf-8"))["setting_sources"]
    assert sources["self_scope"] == "config:conf.toml"
    assert sources["agreement"] == "cli" and sources["delta"] == "default"
    _ran([*args, "--out", "b.json", "--self-scope", "snapshot"], capsys)
    sources = json.loads((tmp_path / "b.json").read_text("utf-8"))["setting_sources"]
    assert sources["self_scope"] == "cli"
    _ran([*args, "--out", "c.json"], capsys)
    sources = json.loads((tmp_path / "c.json").read_text("utf-8"))["setting_sources"]
    assert sources["self_scope"] == "default"


def test_the_audits_report_json_records_option_sources_and_the_schema_holds_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """report.json's ``provenance.option_sources``: the line's --seed, the file's orders
    and a default; the schema validates it and refuses a source it does not know. The
    position analysis's skip and the verbosity curve's title word the file's line."""
    from recuse.report.export import schema

    simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=2).pairs.to_csv(
        tmp_path / "pairs.csv", index=False
    )
    (tmp_path / "recuse.toml").write_text('[audit]\norders = "first"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    argv = ["audit", "pairs.csv", "--out", "r", "--n-boot", "100", "--seed", "4",
            "--only", "verbosity,position"]  # fmt: skip
    _ran(argv, capsys)
    report = json.loads((tmp_path / "r" / "report.json").read_text("utf-8"))
    sources = report["provenance"]["option_sources"]
    assert sources["seed"] == sources["n_boot"] == sources["only"] == "cli"
    assert sources["orders"] == "config:recuse.toml"
    assert sources["level"] == sources["self_scope"] == sources["map"] == "default"
    jsonschema.validate(report, schema(), cls=jsonschema.Draft202012Validator)
    bad = json.loads(json.dumps(report))
    bad["provenance"]["option_sources"]["orders"] = "the file"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(bad, schema(), cls=jsonschema.Draft202012Validator)
    words = json.dumps(report, ensure_ascii=False)
    assert '[audit] orders = \\"first\\" in recuse.toml line 2' in words
    assert "--orders first" not in words


def test_the_python_api_records_its_keywords_as_api(tmp_path: Path) -> None:
    import recuse

    pairs = simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=2).pairs
    (tmp_path / "c.toml").write_text("[audit]\nlevel = 0.8\n", "utf-8")
    report = recuse.audit(pairs, only=["verbosity"], n_boot=100, orders="second",
                          config=tmp_path / "c.toml")  # fmt: skip
    written = json.loads(report.to_json(tmp_path / "r.json").read_text("utf-8"))
    sources = written["provenance"]["option_sources"]
    assert sources["orders"] == sources["n_boot"] == sources["only"] == "api"
    assert sources["level"] == f"config:{tmp_path / 'c.toml'}"
    assert sources["seed"] == "default"
    assert "out" not in sources  # not a keyword of recuse.audit
    assert 'orders=\\"second\\"' in json.dumps(written, ensure_ascii=False)


# ------------------------------------------------------------ the one wording


@pytest.mark.parametrize(
    ("name", "value", "source", "said"),
    [
        ("orders", "first", "cli", "--orders first"),
        ("orders", "first", "default", "--orders first"),
        (
            "orders",
            "first",
            "config:team/recuse.toml",
            '[audit] orders = "first" in team/recuse.toml',
        ),
        ("orders", "first", "api", 'orders="first"'),
        ("self_scope", "line", "config:recuse.toml", '[audit] self-scope = "line" in recuse.toml'),
        ("n_boot", 500, "cli", "--n-boot 500"),
        ("fdr", False, "cli", "--no-fdr"),
        ("fdr", True, "config:r.toml", "[audit] fdr = true in r.toml"),
        ("only", ("position", "verbosity"), "cli", "--only position,verbosity"),
        ("only", ("position",), "config:r.toml", '[audit] only = ["position"] in r.toml'),
        ("mapping", {"a": "human"}, "cli + config:r.toml", "--map a=human"),
        ("mapping", {"a": "human"}, "config:r.toml", "[map] in r.toml"),
    ],
)
def test_option_as_set_words_an_option_by_its_source(
    name: str, value: Any, source: str, said: str
) -> None:
    from recuse.options import option_as_set

    assert option_as_set(name, value, source) == said


def test_setting_sources_is_the_one_rule() -> None:
    from recuse.config import Config
    from recuse.options import resolve, setting_sources

    cfg = Config(Path("x/recuse.toml"), {"orders": "first", "level": 0.8, "mapping": {"a": "b"}})
    got = setting_sources(["level", "mapping", "seed"], config=cfg, source="api")
    assert got["level"] == got["seed"] == "api"  # given wins
    assert got["mapping"] == "api + config:x/recuse.toml"  # merged, both
    assert got["orders"] == "config:x/recuse.toml" and got["n_boot"] == "default"
    settings = resolve({"seed": 3}, config=cfg)
    assert settings.sources == setting_sources(["seed"], config=cfg)
    assert settings.said("orders") == '[audit] orders = "first" in x/recuse.toml'
    assert settings.said("seed") == "--seed 3"
    assert settings.audit_options().said("orders") == '[audit] orders = "first" in x/recuse.toml'


# ------------------------------------------------------------ a stop over whole files


def _stopped(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    code = main(argv)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 130, err
    assert "start it over" not in err and "run the same command again to finish" in err
    return err


def test_a_stop_as_staged_releases_its_lock_says_the_files_are_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stop_once: StopOnce,
) -> None:
    from recuse import outputs

    roster = _ratings(tmp_path)
    hit = stop_once(outputs, "_release", lambda *a: True)
    out = tmp_path / "o"
    err = _stopped(["--roster", str(roster), "favoritism", str(tmp_path / "ratings.csv"),
                    "--out", str(out)], capsys)  # fmt: skip
    assert hit and f"the 7 files written in {out} are complete and in place" in err
    assert json.loads((out / "favoritism.json").read_text("utf-8"))["main"]["n"] > 0


@pytest.mark.parametrize(
    "command", ["audit", "favoritism", "metrics", "certify-run", "certify-apply"]
)
def test_a_stop_while_wrote_is_printed_says_the_files_are_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    stop_once: StopOnce,
) -> None:
    """A Ctrl-C while the "wrote ..." line is printed, every file in place, says they
    are complete (naming them), exit 130."""
    import recuse.cli.audit as audit_cli
    import recuse.cli.certify as certify_cli
    import recuse.cli.favoritism as favoritism_cli
    import recuse.cli.metrics as metrics_cli

    def wrote(text: object, *args: Any, **kwargs: Any) -> bool:
        return str(text).startswith("wrote ") or "; wrote " in str(text)

    if command == "audit":
        simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=1).pairs.to_csv(
            tmp_path / "pairs.csv", index=False
        )
        stop_once(audit_cli, "echo", wrote)
        out = tmp_path / "r"
        err = _stopped(["audit", str(tmp_path / "pairs.csv"), "--out", str(out), "--n-boot",
                        "100", "--only", "verbosity"], capsys)  # fmt: skip
        assert f"{out / 'report.html'}, {out / 'report.json'} and their tables are complete" in err
        assert json.loads((out / "report.json").read_text("utf-8"))["sections"]
        return
    if command == "favoritism":
        roster = _ratings(tmp_path)
        stop_once(favoritism_cli, "cell", wrote)
        err = _stopped(["--roster", str(roster), "favoritism", str(tmp_path / "ratings.csv"),
                        "--out", str(tmp_path / "o")], capsys)  # fmt: skip
        assert f"{tmp_path / 'o' / 'favoritism.json'}" in err and "complete and in place" in err
        return
    if command == "metrics":
        simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=1).pairs.to_csv(
            tmp_path / "pairs.csv", index=False
        )
        stop_once(metrics_cli, "cell", wrote)
        out = tmp_path / "m.json"
        err = _stopped(["metrics", "pairs", str(tmp_path / "pairs.csv"), "--n-boot", "100",
                        "--out", str(out)], capsys)  # fmt: skip
        assert f"{out} is complete and in place" in err
        assert json.loads(out.read_text("utf-8"))["results"]
        return
    simulate_selective(400, seed=5).pairs.to_csv(tmp_path / "pairs.csv", index=False)
    thr, run = tmp_path / "t.json", tmp_path / "run.json"
    certify = ["certify", str(tmp_path / "pairs.csv"), "--agreement", "0.8",
               "--thresholds", str(thr), "--out", str(run)]  # fmt: skip
    if command == "certify-run":
        stop_once(certify_cli, "echo", wrote)
        err = _stopped(certify, capsys)
        assert f"{thr} and {run} are complete and in place" in err
        return
    _ran(certify, capsys)
    stop_once(certify_cli, "echo", wrote)
    out = tmp_path / "d.csv"
    err = _stopped(["certify", "apply", str(thr), str(tmp_path / "pairs.csv"), "--out",
                    str(out)], capsys)  # fmt: skip
    assert f"{out} (exact, for scripts)" in err and "complete and in place" in err


def test_a_stop_as_write_csv_releases_its_lock_says_both_files_are_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stop_once: StopOnce,
) -> None:
    from recuse import outputs

    simulate_selective(400, seed=5).pairs.to_csv(tmp_path / "pairs.csv", index=False)
    thr = tmp_path / "t.json"
    _ran(["certify", str(tmp_path / "pairs.csv"), "--agreement", "0.8", "--thresholds",
          str(thr)], capsys)  # fmt: skip
    hit = stop_once(outputs, "_release", lambda *a: True)
    out = tmp_path / "d.csv"
    err = _stopped(["certify", "apply", str(thr), str(tmp_path / "pairs.csv"), "--out",
                    str(out)], capsys)  # fmt: skip
    copy = tmp_path / "for-spreadsheets" / "d.csv"
    assert hit and f"{out} (exact, for scripts) and {copy}" in err
    assert "are complete and in place" in err
    assert out.is_file() and copy.is_file()


def test_complete_over_notes_the_stop_once() -> None:
    from recuse import interrupt

    with pytest.raises(KeyboardInterrupt) as raised:
        with interrupt.complete_over("outer words"):
            with interrupt.complete_over("inner words"):
                raise KeyboardInterrupt
    assert raised.value.__notes__ == ["inner words"]
    interrupt._complete.clear()
    with pytest.raises(ValueError):  # only a stop is said over whole files
        with interrupt.complete_over("words"):
            raise ValueError
    assert not interrupt._complete


def test_a_config_path_not_in_utf8_or_with_a_newline_is_recorded_as_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """--config at a folder whose name is Latin-1 bytes (no UTF-8) and holds a newline:
    the audit's report.json records the path as the other paths are, ``\\xe9`` for the
    byte (it ended in a traceback, "surrogates not allowed", as the words reached a
    table), and the schema takes it (its pattern's ``.`` stopped at the newline)."""
    import os

    from recuse.report.export import schema

    simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=2).pairs.to_csv(
        tmp_path / "pairs.csv", index=False
    )
    folder = tmp_path / os.fsdecode(b"caf\xe9\nconf")
    folder.mkdir()
    (folder / "r.toml").write_text('[audit]\norders = "first"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    given = os.path.join(os.fsdecode(b"caf\xe9\nconf"), "r.toml")
    argv = ["audit", "pairs.csv", "--out", "r", "--n-boot", "100", "--config", given,
            "--only", "verbosity,position"]  # fmt: skip
    _ran(argv, capsys)
    report = json.loads((tmp_path / "r" / "report.json").read_text("utf-8"))
    shown = "caf\\xe9\nconf/r.toml"  # the byte as \xe9, as recuse names such files
    assert report["provenance"]["option_sources"]["orders"] == f"config:{shown}"
    jsonschema.validate(report, schema(), cls=jsonschema.Draft202012Validator)
    assert f'orders = \\"first\\" in {json.dumps(shown)[1:-1]}' in json.dumps(report)


@pytest.mark.parametrize(
    "command", ["audit", "favoritism", "metrics", "certify-run", "certify-apply"]
)
def test_a_stop_before_the_files_are_whole_is_never_said_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    command: str,
    stop_once: StopOnce,
) -> None:
    """A Ctrl-C as the last file is written, the others written or in place before it
    (the audit's page after its tables and report.json, favoritism.json after the CSVs,
    certify run's --out after its thresholds, certify apply's spreadsheet copy after the
    exact CSV): exit 130, "start it over", never the words of whole files, and none of
    the run's files left under its name."""
    from recuse import outputs

    def last(name: str) -> Any:
        return lambda *args, **kwargs: any(str(a).endswith(name) for a in args)

    if command in ("audit", "metrics"):
        simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=1).pairs.to_csv(
            tmp_path / "pairs.csv", index=False
        )
    if command == "audit":
        hit = stop_once(outputs.Staging, "write_text", last("report.html"))
        out = tmp_path / "r"
        argv = ["audit", str(tmp_path / "pairs.csv"), "--out", str(out), "--n-boot", "100",
                "--only", "verbosity"]  # fmt: skip
        made = [out / "report.json", out / "report.html"]
    elif command == "favoritism":
        roster = _ratings(tmp_path)
        hit = stop_once(outputs.Staging, "write_text", last("favoritism.json"))
        out = tmp_path / "o"
        argv = ["--roster", str(roster), "favoritism", str(tmp_path / "ratings.csv"), "--out",
                str(out)]  # fmt: skip
        made = [out / "favoritism.json", out / "coefficients.csv"]
    elif command == "metrics":
        hit = stop_once(outputs, "write_text", last("m.json"))
        argv = ["metrics", "pairs", str(tmp_path / "pairs.csv"), "--n-boot", "100", "--out",
                str(tmp_path / "m.json")]  # fmt: skip
        made = [tmp_path / "m.json"]
    else:
        simulate_selective(400, seed=5).pairs.to_csv(tmp_path / "pairs.csv", index=False)
        thr, run = tmp_path / "t.json", tmp_path / "run.json"
        argv = ["certify", str(tmp_path / "pairs.csv"), "--agreement", "0.8",
                "--thresholds", str(thr), "--out", str(run)]  # fmt: skip
        made = [thr, run]
        if command == "certify-apply":
            _ran(argv, capsys)
            out = tmp_path / "d.csv"
            argv = ["certify", "apply", str(thr), str(tmp_path / "pairs.csv"), "--out",
                    str(out)]  # fmt: skip
            made = [out]
            last_name = str(tmp_path / outputs.SPREADSHEET_FOLDER / "d.csv")
        else:
            last_name = str(run)
        hit = stop_once(outputs, "write_text", last(last_name))
    code = main(argv)
    err = " ".join(capsys.readouterr().err.split())
    assert code == 130 and hit, err
    assert "start it over" in err and "complete and in place" not in err
    assert [p for p in made if p.exists()] == []


def test_a_stop_as_certify_run_prints_its_json_says_the_files_are_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stop_once: StopOnce,
) -> None:
    """`certify run --json` with --thresholds and --out: a Ctrl-C as the JSON is printed,
    both files written, said them complete (it said "start it over", as the plain run's
    "wrote" lines no longer do)."""
    import recuse.cli.certify as certify_cli

    simulate_selective(400, seed=5).pairs.to_csv(tmp_path / "pairs.csv", index=False)
    thr, run = tmp_path / "t.json", tmp_path / "run.json"
    hit = stop_once(certify_cli, "json_shown", lambda *a: True)
    err = _stopped(["certify", str(tmp_path / "pairs.csv"), "--agreement", "0.8",
                    "--thresholds", str(thr), "--out", str(run), "--json"], capsys)  # fmt: skip
    assert hit and f"{thr} and {run} are complete and in place" in err
    assert json.loads(run.read_text("utf-8"))["setting_sources"]["agreement"] == "cli"


@pytest.mark.parametrize("ties", ["split", "drop"])
def test_human_ties_set_in_the_file_are_named_by_the_files_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, ties: str
) -> None:
    """human-ties from recuse.toml: the humans' length baseline's words on its ties, its
    table's human_ties column and the exclusions name the file's line, not
    ``--human-ties split``, a flag the user never typed."""
    sim = simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=1).pairs
    tied = sorted(set(sim["item_id"]))[::4]
    sim.loc[sim["item_id"].isin(tied), "human"] = 0.5
    sim.to_csv(tmp_path / "judged.csv", index=False)
    judged = [c for c in sim.columns if c.startswith(("p_a", "status_")) or c == "judge"]
    labels = sim.drop(columns=judged).drop_duplicates("item_id")
    labels.to_csv(tmp_path / "labels.csv", index=False)
    (tmp_path / "recuse.toml").write_text(f'[audit]\nhuman-ties = "{ties}"\n', "utf-8")
    monkeypatch.chdir(tmp_path)
    said = _ran(["audit", "labels.csv", "judged.csv", "--out", "r", "--n-boot", "100",
                 "--only", "verbosity"], capsys)  # fmt: skip
    report = json.loads((tmp_path / "r" / "report.json").read_text("utf-8"))
    line = f'[audit] human-ties = "{ties}" in recuse.toml line 2'
    terminal = " ".join(said.split())  # the baseline's sentence, its ties said
    how = ", each counted ½ to each side" if ties == "split" else " left out"
    assert f"human ties (labels of 0.5){how}: {line})" in terminal
    words = json.dumps(report, ensure_ascii=False)
    assert f"--human-ties {ties}" not in words
    if ties == "split":
        (table,) = [t for n, t in report["tables"].items() if n.startswith("human-length")]
        assert table["columns"]["human_ties"].endswith(f"({line})")
        said = json.dumps(line, ensure_ascii=False)[1:-1]  # as the JSON text writes it
        assert f"count them ½: {said})" in words  # the exclusions of the judged table
    else:
        said = json.dumps(line, ensure_ascii=False)[1:-1]  # as the JSON text writes it
        assert f"on answers of unequal length: {said}" in words  # the baseline's exclusion


def test_a_stop_in_the_audits_fail_on_gate_says_the_report_is_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stop_once: StopOnce,
) -> None:
    """`recuse audit --fail-on`: a Ctrl-C as its gate runs, after the "wrote" line, the
    report whole in its folder: exit 130 and the words of whole files (it said "start
    it over" over a report `recuse gate` could read as it was)."""
    import recuse.cli.gate as gate_cli

    simulate_pairs(n_prompts=40, pairs_per_prompt=3, seed=1).pairs.to_csv(
        tmp_path / "pairs.csv", index=False
    )
    hit = stop_once(gate_cli, "run_gate", lambda *a, **k: True)
    out = tmp_path / "r"
    err = _stopped(["audit", str(tmp_path / "pairs.csv"), "--out", str(out), "--n-boot", "100",
                    "--only", "verbosity", "--fail-on", "verbosity=0.5"], capsys)  # fmt: skip
    assert hit and f"{out / 'report.json'} and their tables are complete and in place" in err
    assert json.loads((out / "report.json").read_text("utf-8"))["sections"]


def test_a_stop_as_certify_apply_says_its_guarantee_says_the_file_is_complete(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    stop_once: StopOnce,
) -> None:
    """`certify apply`: a Ctrl-C as it prints the guarantee after the "wrote" line, the
    decisions file whole: the words of whole files (it said "start it over")."""
    import recuse.cli.certify as certify_cli

    simulate_selective(400, seed=5).pairs.to_csv(tmp_path / "pairs.csv", index=False)
    thr = tmp_path / "t.json"
    _ran(["certify", str(tmp_path / "pairs.csv"), "--agreement", "0.8", "--thresholds",
          str(thr)], capsys)  # fmt: skip
    hit = stop_once(certify_cli, "echo", lambda t, *a: t.startswith("guarantee"))
    out = tmp_path / "d.json"
    err = _stopped(["certify", "apply", str(thr), str(tmp_path / "pairs.csv"), "--out",
                    str(out)], capsys)  # fmt: skip
    assert hit and f"{out}: complete and in place" in err
    assert json.loads(out.read_text("utf-8"))["decisions"]


def test_the_files_options_are_named_as_it_spells_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A recuse.toml spelling ``human_ties`` (as the JSON's setting_sources name it) was
    noted "read human-ties" and worded 'human-ties = "split" in recuse.toml', a key the
    file does not hold, outside any table. The note and the command's words name the
    key as spelled, with its table, and its line."""
    simulate_pairs(n_prompts=60, pairs_per_prompt=3, seed=1).pairs.to_csv(
        tmp_path / "pairs.csv", index=False
    )
    (tmp_path / "recuse.toml").write_text(
        '[audit]\nhuman_ties = "split"\norders = "first"\n', "utf-8"
    )
    monkeypatch.chdir(tmp_path)
    said = _ran(["metrics", "pairs", "pairs.csv", "--n-boot", "100", "--out", "m.json"], capsys)
    assert "recuse.toml: read [audit] human_ties, [audit] orders" in said, said
    payload = json.loads((tmp_path / "m.json").read_text("utf-8"))
    skipped = {s["reason"] for s in payload["skipped"] if s["metric"] == "flip_rate"}
    assert skipped == {'compares the two presentation orders; [audit] orders = "first" in '
                       "recuse.toml line 3 uses one"}  # fmt: skip
    assert "human-ties" not in said and "human-ties" not in json.dumps(payload), said

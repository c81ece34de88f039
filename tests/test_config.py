"""recuse.toml: read, checked, and overridden by the command line."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from recuse.cli import main
from recuse.config import load_config
from recuse.errors import ConfigError, InputError
from recuse.simulate import PlantedBias, simulate_pairs

CONFIG = """
[audit]
only = ["position"]
n-boot = 200
title = "team audit"

[map]
verdict_1 = "p_a_first"

[material]
position = 0.4

[[model]]
id = "our-judge"
family = "ours"
aliases = ["OurJudge"]
"""


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    pairs = simulate_pairs(judges={"gpt-4": PlantedBias(position=0.1)}, n_prompts=80,
                           seed=2).pairs  # fmt: skip
    pairs["judge"] = "OurJudge"  # known only through the config's roster addition
    path = tmp_path / "pairs.csv"
    pairs.rename(columns={"p_a_first": "verdict_1"}).to_csv(path, index=False)
    cfg = tmp_path / "recuse.toml"
    cfg.write_text(CONFIG, "utf-8")
    return path, cfg


def test_the_config_sets_options_map_roster_and_materiality(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, cfg = files
    out = tmp_path / "r"
    assert main(["audit", str(path), "--config", str(cfg), "--out", str(out)]) == 0
    d = json.loads((out / "report.json").read_text())
    assert d["title"] == "team audit"
    assert d["provenance"]["options"]["bootstrap resamples (n_boot)"] == 200
    assert {s["id"] for s in d["sections"]} == {"position"}
    (f,) = [f for f in d["sections"][0]["findings"] if f["bias"] == "position"]
    assert f["judge"] == "our-judge" and f["material"] == 0.4
    # the command line wins over the file
    out2 = tmp_path / "r2"
    args = ["audit", str(path), "--config", str(cfg), "--out", str(out2), "--material",
            "position=0.01", "--n-boot", "300"]  # fmt: skip
    assert main(args) == 0
    d2 = json.loads((out2 / "report.json").read_text())
    assert d2["provenance"]["options"]["bootstrap resamples (n_boot)"] == 300
    (f2,) = [f for f in d2["sections"][0]["findings"] if f["bias"] == "position"]
    assert f2["material"] == 0.01 and f2["materiality"] == "material"
    assert "replaced" not in capsys.readouterr().out
    assert main(args) == 0  # the same --out again: it says it replaces the report
    assert "replaced the report.json and report.html that were there: wrote" in (
        capsys.readouterr().out
    )
    # another tool's report.json there: replaced, never called an earlier report
    (out2 / "report.html").unlink()
    (out2 / "report.json").write_text('{"tables": {"mine": "theirs.csv"}}')
    assert main(args) == 0
    said = capsys.readouterr().out
    assert "replaced the report.json that was there: wrote" in said and "earlier" not in said


def test_recuse_toml_in_the_current_folder_is_read(
    files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path, _ = files
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(path), "--out", "r3"]) == 0
    assert json.loads((tmp_path / "r3" / "report.json").read_text())["title"] == "team audit"


def test_a_config_map_met_by_a_named_dataset_says_it_came_from_the_file(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """docs/configuration.md's example keeps a [map] in recuse.toml; an audit of a named
    dataset from that folder was told "a column mapping (--map) applies to files", of a
    --map it was never given."""
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "llmbar-mtbench", "--out", "r4"]) == 2
    err = capsys.readouterr().err
    assert "[map] in recuse.toml" in err and "give --config a file without it" in err
    assert not (tmp_path / "r4").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[audit]\nlevle = 0.9\n", "[audit] levle: unknown option"),
        ("[audit]\nn-boot = 'many'\n", "[audit] n-boot = 'many': must be a number"),
        ("[material]\nposition = -1\n", "[material] position = -1: give a positive number"),
        ("[mapping]\nx = 'y'\n", "unknown section [mapping]"),
        # a key before any section is no section: it read 'unknown section [level]'
        ("level = 0.95\n", "level is outside any section — put it under [audit]"),
        ("n_boot = 500\n", "n_boot is outside any section — put it under [audit]"),
        ("levle = 0.95\n", "levle is outside any section — options go under [audit]"),
        ("[values.w]\nA = 'one'\n", "[values.w] A = 'one': give a number"),
        ("[audit\n", "not valid TOML"),
    ],
)
def test_a_bad_config_is_one_line_naming_file_and_key(
    tmp_path: Path, text: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert message in str(err.value) and str(cfg) in str(err.value)
    assert main(["audit", "llmbar", "--config", str(cfg), "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_a_config_that_is_a_folder_or_missing_says_which(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    assert main(["audit", "llmbar", "--config", str(tmp_path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "a folder, not a file" in err and str(tmp_path / "recuse.toml") in err
    missing = tmp_path / "nope.toml"
    assert main(["audit", "llmbar", "--config", str(missing), "--out", str(out)]) == 2
    assert "no such file" in capsys.readouterr().err
    assert not out.exists()


def test_a_config_is_read_as_any_text_file_is(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recuse.toml saved with a byte-order mark (Windows editors) read 'Invalid
    statement (at line 1, column 1)'; one not in UTF-8 said Python's "'utf-8' codec
    can't decode byte 0xff in position 15" with no fix; a data file given to --config
    said only that it was no TOML."""
    path, cfg = files
    cfg.write_bytes(b"\xef\xbb\xbf" + CONFIG.encode("utf-8"))
    assert load_config(cfg).options["title"] == "team audit"
    cfg.write_bytes(b'[audit]\ntitle = "caf\xe9"\n')  # Latin-1
    with pytest.raises(InputError) as err:
        load_config(cfg)
    assert str(err.value) == f"{cfg}: not UTF-8 text (byte 0xe9 on line 2) — save the file as UTF-8"
    out = tmp_path / "o"
    assert main(["validate", str(path), "--config", str(path)]) == 2
    assert capsys.readouterr().err == (
        f"recuse: error: {path}: not valid TOML (Expected '=' after a key in a key/value pair "
        "(at line 1, column 8)) — --config takes a recuse.toml; give a data file as the "
        "command's argument\n"
    )
    cfg.write_text("[audit\n", "utf-8")
    assert main(["audit", str(path), "--config", str(cfg), "--out", str(out)]) == 2
    assert capsys.readouterr().err.endswith(
        "(at line 1, column 7)) — fix that line (docs/configuration.md shows the file)\n"
    )
    cfg.write_text("[audit]\nlevel = " + "{a = " * 50_000 + "1" + "}" * 50_000 + "\n", "utf-8")
    assert main(["validate", str(path), "--config", str(cfg)]) == 2  # was a RecursionError
    assert capsys.readouterr().err == (
        f"recuse: error: {cfg}: arrays or tables nested too deeply for Python's TOML reader "
        "— nest them less (recuse's files need two levels at most)\n"
    )
    assert main(["validate", str(path), "--config", "/dev/null"]) == 2
    assert capsys.readouterr().err == (
        "recuse: error: --config /dev/null: a special file (a pipe, a device) — give a "
        "recuse.toml\n"
    )
    assert not out.exists()


@pytest.mark.parametrize("kind", ["folder", "link to nothing", "loop of links", "pipe"])
def test_a_recuse_toml_here_that_is_no_file_is_an_error(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    """A folder, a broken link or a pipe named recuse.toml in the current folder was
    passed over without a word: the team's [map] and [[model]] were not read, and the
    command ran as if there were no set-up (a pipe would have hung it)."""
    path, cfg = files
    cfg.unlink()
    if kind == "folder":
        cfg.mkdir()
    elif kind == "pipe":
        os.mkfifo(cfg)
    else:
        cfg.symlink_to(tmp_path / "nowhere.toml" if kind == "link to nothing" else cfg)
    said = {"folder": "a folder", "pipe": "a special file (a pipe, a device)"}.get(
        kind, "a link to nothing (or a loop of links)"
    )
    monkeypatch.chdir(tmp_path)
    for args in (["audit", str(path), "--out", "o"], ["validate", str(path)],
                 ["data", "summary"]):  # fmt: skip
        assert main(args) == 2
        assert capsys.readouterr().err == (
            f"recuse: error: recuse.toml in the current folder is {said}, not a config file — "
            "every command reads ./recuse.toml when there is one: make it a TOML file, rename "
            "it, or run from another folder\n"
        )
    assert not (tmp_path / "o").exists()
    other = tmp_path / "other.toml"  # --config names the file: ./recuse.toml is not looked at
    other.write_text(CONFIG, "utf-8")
    assert main(["validate", str(path), "--config", str(other)]) == 0


@pytest.mark.parametrize(
    "line",
    ['out = ""', 'out = "  "', 'judge = ""', 'judge = ["gpt-4", ""]', 'data-dir = ""',
     'title = ""', 'only = ""', 'confidence = ""', 'judge = ","', 'only = " , "',
     'judge = ["gpt-4", ","]', 'out = "\\ufeff"', 'title = "\\u200b"', 'judge = "\\u2060 "'],
)  # fmt: skip
def test_an_empty_value_in_the_config_is_refused_as_on_the_command_line(
    files: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    line: str,
) -> None:
    """Before: `out = ""` wrote report.html, report.json and tables/ into the current
    folder (the path '.'), `out = "  "` into a folder named by two spaces, and `judge =
    ""` audited every judge, exit 0, where `--out ""` and `--judge ""` are refused."""
    pairs, _ = files
    cfg = tmp_path / "empty.toml"
    cfg.write_text(f"[audit]\n{line}\nn-boot = 200\n", "utf-8")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    key = line.split(" =")[0]
    assert main(["audit", str(pairs), "--config", str(cfg), "--only", "position"]) == 2
    err = capsys.readouterr().err
    assert f"[audit] {key} = " in err and str(cfg) in err
    assert ("names nothing" if '","' in line or '" , "' in line else "an empty value") in err
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("option", ["--judge", "--only"])
def test_a_comma_list_naming_nothing_is_refused_on_the_command_line(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    option: str,
) -> None:
    """Before: `--judge ","` (a list from a script whose names were all empty) read as
    no judge given, so every judge was audited, and `--only " , "` ran every analysis,
    exit 0, where `--judge ""` is refused."""
    pairs = tmp_path / "plain.csv"  # one the audit reads without the config's [map]
    simulate_pairs(judges={"gpt-4": PlantedBias(position=0.1)}, n_prompts=40,
                   seed=2).pairs.to_csv(pairs, index=False)  # fmt: skip
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    assert main(["audit", str(pairs), "--out", str(out), option, " , "]) == 2
    assert capsys.readouterr().err == (
        f"recuse: error: {option} = ' , ': names nothing (only commas and blanks) — "
        "give a value, or leave it out\n"
    )
    assert not out.exists()


def test_an_option_from_the_file_is_named_as_the_file_writes_it(tmp_path: Path) -> None:
    """A setting read from recuse.toml was worded 'self-scope = "line" in recuse.toml'
    where the file says ``self_scope``, and without its ``[audit]`` table, so a search
    of the file for the words found nothing. It is named with its table and key as the
    file spells them, and the line it is on (counted here by hand); a table option
    ([map], [values]) by its header's line."""
    from recuse.options import option_named, resolve

    cfg = tmp_path / "recuse.toml"
    cfg.write_text(
        '# the team\'s set-up\n[audit]\nlevel = 0.8\nself_scope = "line"\n"human-ties" = '
        '"split"\n\n[values.w]\nA = 1\n\n[map]\nlabel = "human"\n',
        "utf-8",
    )
    settings = resolve({}, config=load_config(cfg))
    assert settings.said("self_scope") == f'[audit] self_scope = "line" in {cfg} line 4'
    assert settings.said("human_ties") == f'[audit] human-ties = "split" in {cfg} line 5'
    assert settings.said("level") == f"[audit] level = 0.8 in {cfg} line 3"
    assert settings.said("values") == f"[values.w] in {cfg} line 7"
    assert settings.said("mapping") == f"[map] in {cfg} line 10"
    # the audit's own wording (its skips, titles, notes) and the mapping's errors too
    said = settings.audit_options().said("self_scope")
    assert said == f'[audit] self_scope = "line" in {cfg} line 4'
    assert option_named("mapping", settings.sources["mapping"], written=settings.written) == (
        (f"[map] in {cfg} line 10", str(cfg)),
    )


@pytest.mark.parametrize(
    ("text", "level", "mapping", "named"),
    [
        # a multi-line title whose text holds a line "level = 0.8 …": the key was put there
        (
            '[audit]\ntitle = """\nWeekly audit\nlevel = 0.8 is the team\'s\n"""\nlevel = 0.9\n'
            '[map]\nx = "prompt"\n',
            6,
            7,
            None,
        ),
        # a [[model]] literal string holding "[map]" and a key line: the table was put there
        (
            "[[model]]\nid = 'ours'\nfamily = '''\n[map]\nlevel = 1\n'''\n[audit]\nlevel = 0.9\n"
            '\n[map]\nx = "prompt"\n',
            8,
            10,
            None,
        ),
        # an escaped quote does not close a multi-line string; four quotes close it
        (
            '[audit]\ntitle = """a \\""" b\nlevel = 0.1\n""""\nlevel = 0.9\n[map]\nx = "p"\n',
            5,
            6,
            None,
        ),
        # U+2028 and U+0085 are no line ends of TOML's (a comment may hold them)
        ("# a note\u2028 and\x85 more\n[audit]\nlevel = 0.9\n[map]\nx = 'p'\n", 3, 4, None),
        # dotted keys, an inline table, a quoted table name, CRLF ends: found, not dropped
        ('audit.level = 0.9\r\nmap.x = "p"\r\n', 1, 2, ("audit.level", "map")),
        ('audit = { level = 0.9 }\n\nmap = {x = "p"}\n', 1, 3, ("audit.level", "map")),
        ('# c\n[ "audit" ] # options\n\t"level" = 0.9\n[\'map\']\nx = "p"\n', 3, 4, None),
    ],
)
def test_an_options_line_is_its_line_as_toml_reads_the_file(
    tmp_path: Path, text: str, level: int, mapping: int, named: tuple[str, str] | None
) -> None:
    """The lines of the file's options, counted by hand: the line scan took a line
    inside a multi-line string for a key or a table header (a title's "level = 0.8 …"
    named as where level was set), counted U+2028 in a comment as a line end (every
    line after it one too far), and found no line for a dotted key, an inline table
    or a quoted table name; a dotted key or inline table is named as written (``named``:
    ``audit.level``, where it read "[audit] level")."""
    from recuse.options import resolve

    cfg = tmp_path / "recuse.toml"
    cfg.write_bytes(text.encode("utf-8"))
    settings = resolve({}, config=load_config(cfg))
    at_level, at_map = named or ("[audit] level", "[map]")
    assert settings.said("level") == f"{at_level} = 0.9 in {cfg} line {level}"
    assert settings.said("mapping") == f"{at_map} in {cfg} line {mapping}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '# set-up\n[audit]\ntitle = """\nlevel = 0.8\n"""\nlevel = 1.5\n',
            "recuse.toml line 6: [audit] level = 1.5: must be in [0.5, 1)",
        ),
        ("[audit]\n\nlevle = 0.9\n", "recuse.toml line 3: [audit] levle: unknown option"),
        (
            "[audit]\nn_boot = 500\n'n-boot' = 600\n",
            "recuse.toml line 3: [audit] n_boot and n-boot are the same option",
        ),
        (
            '[audit]\nlevel = 0.9\n\n[values.w]\nA = "one"\n',
            "recuse.toml line 4: [values.w] A = 'one': give a number",
        ),
        ('audit.seed = "x"\n', "recuse.toml line 1: audit.seed = 'x': must be"),
    ],
)
def test_a_bad_value_in_the_file_names_its_line(tmp_path: Path, text: str, message: str) -> None:
    """An error about a value of recuse.toml named the file and the key but not the line,
    which the words naming a setting that was read give ("[audit] level = 0.9 in
    recuse.toml line 3"): the line, counted by hand, of the key (a table's: of its
    header), as TOML reads the file."""
    cfg = tmp_path / "recuse.toml"
    cfg.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert f"{tmp_path / message}" in str(err.value), str(err.value)


def test_a_long_roster_in_the_file_is_scanned_once() -> None:
    """The lines of a recuse.toml with 20,000 [[model]] entries (0.8 MB) took 9 to 29 s to
    find: each key's line was counted from the top of the file (quadratic). One pass
    now: well under a second here, and the last key's line is its own (by hand: three
    lines an entry, then ``[audit]``)."""
    import time

    from recuse.config import _lines

    n = 20_000
    text = "".join(f'[[model]]\nid = "m{i}"\nfamily = "f{i}"\n' for i in range(n))
    text += "[audit]\nlevel = 0.9\n"
    start = time.perf_counter()
    lines = _lines(text)
    took = time.perf_counter() - start
    assert lines[("audit", "level")] == 3 * n + 2 and lines[("model", "family")] == 3
    assert took < 5, took


def test_a_sub_table_and_a_dotted_key_are_named_as_the_file_spells_them(tmp_path: Path) -> None:
    """A setting in ``[values.w]`` was named "[values] in recuse.toml line 7", a header the
    file does not have, and ``audit.n_boot = 5`` at the top of the file "[audit] n_boot";
    each is named as written, with its line (counted here by hand), two sub-tables by
    both their headers."""
    from recuse.options import resolve

    cfg = tmp_path / "recuse.toml"
    cfg.write_text(
        'audit.n_boot = 500\naudit.self_scope = "line"\n\n[values.w]\nA = 1\n\n'
        '[values.x]\nB = 0\n\n[map]\nlabel = "human"\n',
        "utf-8",
    )
    settings = resolve({}, config=load_config(cfg))
    assert settings.said("n_boot") == f"audit.n_boot = 500 in {cfg} line 1"
    cfg.write_text("audit.n_boot = 5\n", "utf-8")
    with pytest.raises(ConfigError, match=r"line 1: audit\.n_boot = 5: must be an integer"):
        load_config(cfg)
    cfg.write_text('audit.n_boot = 500\n"audit".n-boot = 600\n', "utf-8")
    with pytest.raises(ConfigError, match=r"audit\.n_boot and audit\.n-boot are the same option"):
        load_config(cfg)
    assert settings.said("self_scope") == f'audit.self_scope = "line" in {cfg} line 2'
    assert settings.said("values") == f"[values.w], [values.x] in {cfg} line 4"
    assert settings.said("mapping") == f"[map] in {cfg} line 10"
    cfg.write_text("[audit]\nlevel = 0.8\n\n[values.w]\nA = 1\n", "utf-8")
    settings = resolve({}, config=load_config(cfg))
    assert settings.said("level") == f"[audit] level = 0.8 in {cfg} line 2"
    assert settings.said("values") == f"[values.w] in {cfg} line 4"


def test_a_table_of_dotted_keys_is_named_by_its_table_not_its_every_key(
    tmp_path: Path,
) -> None:
    """A ``[map]`` written as dotted keys at the top (``map.human = …``, ``map.judge =
    …``) was named by each key, as if each opened a table: "the column mapping
    (map.human, map.judge in recuse.toml line 1)" (map.judge is on line 2), in every
    message naming the mapping, however many entries. The table is named as the file
    opens it, once: ``map`` (as ``map = {…}`` is), ``values.w`` for ``values.w.A = 1``,
    a dotted key's table as a header's is; keys stay named as written."""
    from recuse.options import resolve

    cfg = tmp_path / "recuse.toml"
    cfg.write_text(
        'audit.level = 0.8\nmap.label = "human"\nmap.who = "judge"\n'
        "values.w.A = 1\nvalues.x.B = 0\n",
        "utf-8",
    )
    settings = resolve({}, config=load_config(cfg))
    assert settings.said("mapping") == f"map in {cfg} line 2"
    assert settings.said("values") == f"values.w, values.x in {cfg} line 4"
    assert settings.said("level") == f"audit.level = 0.8 in {cfg} line 1"


def test_a_bad_fail_on_in_the_config_is_named_where_it_is_written(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fail-on = ["position"]` (no bound) in recuse.toml read "--fail-on: cannot read
    'position'", a flag the user never typed; the file and line are named now."""
    path, _ = files
    cfg = tmp_path / "gate.toml"
    cfg.write_text('[audit]\nonly = ["position"]\nfail-on = ["position"]\n')
    out = tmp_path / "o"
    assert main(["audit", str(path), "--config", str(cfg), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert f'[audit] fail-on = ["position"] in {cfg} line 3: --fail-on: cannot read' in err
    assert not out.exists()

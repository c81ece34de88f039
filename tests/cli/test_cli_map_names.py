"""``--map`` with a file column holding a comma: written in double quotes, as in CSV
(``--map '"score, raw"=human'``). Before, the comma split the name in two and the map
could not be written on the command line at all (``mapping=`` could)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.errors import ConfigError
from recuse.options import parse_mapping, parse_values

ROWS = {
    "pair, id": ["i1", "i2", "i3", "i4"],
    "score, raw": ["A", "B", "tie", "A"],
    'the "judge"': ["gpt-4"] * 4,
    "p_a_first": ["A", "B", "B", "A"],
    "model_a": ["gpt-4"] * 4,
    "model_b": ["claude-v1"] * 4,
}


def _validate(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    code = main(["validate", *args, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if code == 0 else {"error": err})


def test_a_quoted_name_with_a_comma_maps_as_the_renamed_file_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    given = tmp_path / "given.csv"
    pd.DataFrame(ROWS).to_csv(given, index=False)
    renamed = tmp_path / "renamed.csv"
    schema = {"pair, id": "item_id", "score, raw": "human", 'the "judge"': "judge"}
    pd.DataFrame(ROWS).rename(columns=schema).to_csv(renamed, index=False)
    code, want = _validate(capsys, str(renamed))
    assert code == 0, want
    text = '"pair, id"=item_id, "score, raw" = human,"the ""judge"""=judge'
    code, got = _validate(capsys, str(given), "--map", text)
    assert code == 0, got
    assert got["counts"] == want["counts"] and got["analyses"] == want["analyses"]
    assert got["counts"]["rows with a human label"] == 4  # type: ignore[index]
    assert parse_mapping(text) == schema


def test_the_hint_a_message_gives_reads_back_as_the_mapping() -> None:
    """The ``--map`` recuse writes in its hints quotes such a name for the map and
    for the shell: split as a shell splits it, it parses back to the same mapping."""
    from recuse.tables import map_option, renaming_by

    pairs = [("score, raw", "human"), (' "quoted"', "judge"), ("plain", "item_id")]
    with renaming_by("flag"):
        words = shlex.split(map_option(pairs))
    assert words[0] == "--map" and len(words) == 2
    assert parse_mapping(words[1]) == {k.strip(): v for k, v in pairs}


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('"score, raw=human', "the quote opening '\"score, raw=human' is not closed"),
        ('"score, raw"human', "cannot read '\"score, raw\"human'"),
        ('"score, raw"', "cannot read '\"score, raw\"'"),
        ('""=human', "cannot read '\"\"=human'"),
    ],
)
def test_a_badly_quoted_map_is_a_one_line_error(
    text: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(ConfigError, match="double quotes, as in CSV") as err:
        parse_mapping(text)
    assert said in str(err.value)
    path = tmp_path / "t.csv"
    pd.DataFrame(ROWS).to_csv(path, index=False)
    code, got = _validate(capsys, str(path), "--map", text)
    assert code == 2 and said in str(got["error"]) and "Traceback" not in str(got["error"])


def test_the_help_says_how_to_write_such_a_name(capsys: pytest.CaptureFixture[str]) -> None:
    for command in (["validate"], ["audit"], ["favoritism"]):
        assert main([*command, "--help"]) == 0
        out = " ".join(capsys.readouterr().out.split())
        assert "in double quotes, as in CSV" in out, command


def test_values_quotes_a_column_or_value_holding_colon_semicolon_or_comma(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--values`` takes a column or a value in double quotes, as ``--map`` does: a
    column ``judge: verdict; raw`` whose cells read ``A, clearly`` could not be given a
    map on the command line (the first ':' ended the column, ';' and ',' split it)."""
    plain = tmp_path / "plain.csv"
    pd.DataFrame(ROWS).to_csv(plain, index=False)
    code, want = _validate(capsys, str(plain), "--map", '"pair, id"=item_id,"the ""judge"""=judge')
    assert code == 0, want
    worded = dict(ROWS)
    worded["judge: verdict; raw"] = [{"A": "A, clearly", "B": "B; clearly"}[v] for v in
                                     worded.pop("p_a_first")]  # fmt: skip
    given = tmp_path / "worded.csv"
    pd.DataFrame(worded).to_csv(given, index=False)
    spec = '"judge: verdict; raw": "A, clearly"=1,"B; clearly"=0'
    assert parse_values([spec]) == {"judge: verdict; raw": {"A, clearly": 1.0, "B; clearly": 0.0}}
    names = '"pair, id"=item_id,"the ""judge"""=judge,"judge: verdict; raw"=p_a_first'
    code, got = _validate(capsys, str(given), "--map", names, "--values", spec)
    assert code == 0, got
    assert got["counts"] == want["counts"] and got["analyses"] == want["analyses"]
    for bad, said in (('"judge: verdict:A=1', "is not closed"),
                      ('"judge"x:A=1', "cannot read '\"judge\"x:A=1'"),
                      ('col:"A, clearly"x=1', "cannot read '\"A, clearly\"x=1'")):  # fmt: skip
        code, got = _validate(capsys, str(given), "--values", bad)
        assert code == 2 and said in str(got["error"]), got
        assert "in double quotes, as in CSV" in str(got["error"])


@pytest.mark.parametrize(
    ("flag", "toml", "named", "not_named"),
    [
        (True, False, "the column mapping (--map)", "recuse.toml"),
        (False, True, "the column mapping ([map] in recuse.toml line 1)", "--map"),
        (True, True, "the column mapping (--map and [map] in recuse.toml line 1)", "--map,"),
    ],
)  # fmt: skip
def test_a_mapping_error_names_where_the_mapping_was_set(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flag: bool,
    toml: bool,
    named: str,
    not_named: str,
) -> None:
    """A mapping naming a column the file lacks said "the column mapping (--map, or [map]
    in recuse.toml) names 'nope'" whichever of the two the user had given. It names the
    one that was used, both where both were (the mapping is their merge), as
    setting_sources records them; and a named dataset's refusal says how to leave out
    that one."""
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({k.replace(", ", "_").replace('"', ""): v for k, v in ROWS.items()}).to_csv(
        "pairs.csv", index=False
    )
    if toml:
        Path("recuse.toml").write_text('[map]\nnope = "human"\n', "utf-8")
    args = ["--map", "nope=human"] if flag else []
    code, said = _validate(capsys, "pairs.csv", *args)
    error = str(said["error"])
    assert code == 2 and f"{named} names 'nope', which is not in the file" in error, error
    assert not_named not in error.split("names 'nope'")[0], error
    # the fix names the place too: "before --map renames them" of a [map] read otherwise
    short = {(True, False): "--map renames", (False, True): "[map] renames"}
    assert f"(before {short.get((flag, toml), '--map and [map] rename')} them)" in error
    code = main(["validate", "llmbar-mtbench", *args])
    error = capsys.readouterr().err
    assert code == 2 and f"a column mapping ({named.split('(', 1)[1]} applies to files" in error
    assert ("leave --map out" in error) == flag, error
    assert ("remove [map] from recuse.toml, or give --config a file without it" in error) == toml
    assert code == 2 and f"{named.split('(', 1)[1].split(')')[0]}) applies" in error


def test_a_mapping_error_from_python_names_the_keyword_or_the_config(tmp_path: Path) -> None:
    """From recuse.audit the mapping is the keyword, or a recuse.toml's [map] given as
    config=: its error names that one (it read "(mapping=)" of a [map] the caller never
    typed as a keyword)."""
    import recuse
    from recuse.errors import InputError

    frame = tmp_path / "pairs.csv"
    pd.DataFrame({"item_id": ["i1"], "p_a": [1.0]}).to_csv(frame, index=False)
    cfg = tmp_path / "team.toml"
    cfg.write_text('[map]\nnope = "human"\n', "utf-8")
    with pytest.raises(InputError) as err:
        recuse.audit(frame, config=cfg)
    assert f"the column mapping ([map] in {cfg} line 1) names 'nope'" in str(err.value)
    with pytest.raises(InputError) as err:
        recuse.audit(frame, mapping={"nope": "human"})
    assert "the column mapping (mapping=) names 'nope'" in str(err.value)


def test_a_merged_mapping_error_names_the_place_that_holds_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --map and a recuse.toml's [map] merged, an error about one entry named both
    ("the column mapping (--map and [map] in recuse.toml line 1) names 'nope'") where
    only one holds it: it names that one, both where both hold the entry."""
    import recuse
    from recuse.errors import InputError

    monkeypatch.chdir(tmp_path)
    pd.DataFrame({k.replace(", ", "_").replace('"', ""): v for k, v in ROWS.items()}).to_csv(
        "pairs.csv", index=False
    )
    Path("recuse.toml").write_text('[map]\npair_id = "item_id"\n', "utf-8")
    code, said = _validate(capsys, "pairs.csv", "--map", "nope=human")
    assert code == 2 and "the column mapping (--map) names 'nope'" in str(said["error"])
    Path("recuse.toml").write_text('[map]\nnope = "human"\n', "utf-8")
    code, said = _validate(capsys, "pairs.csv", "--map", "pair_id=item_id")
    error = str(said["error"])
    assert code == 2 and "the column mapping ([map] in recuse.toml line 1) names 'nope'" in error
    # both hold it: both named; a target given twice, by the entries that give it
    code, said = _validate(capsys, "pairs.csv", "--map", "nope=human")
    assert "the column mapping (--map and [map] in recuse.toml line 1) names" in str(said["error"])
    Path("recuse.toml").write_text('[map]\nscore_raw = "human"\n', "utf-8")
    code, said = _validate(capsys, "pairs.csv", "--map", "pair_id=human")
    error = str(said["error"])
    assert code == 2 and "(--map and [map] in recuse.toml line 1) gives 'human' twice" in error
    Path("recuse.toml").write_text('[map]\np_a_first = "model_a"\n', "utf-8")
    code, said = _validate(capsys, "pairs.csv", "--map", "pair_id=item_id")
    error = str(said["error"])
    assert code == 2 and "column 'model_a' and the column mapping ([map] in recuse.toml" in error
    # from Python: the keyword's entry names mapping=, not the config's [map] beside it
    Path("recuse.toml").write_text('[map]\npair_id = "item_id"\n', "utf-8")
    with pytest.raises(InputError) as err:
        recuse.audit("pairs.csv", mapping={"nope": "human"}, config="recuse.toml")
    assert "the column mapping (mapping=) names 'nope'" in str(err.value)

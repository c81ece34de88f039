"""The malformed-input corpus: every file in tests/malformed gives a clear one-line error.

Each case runs the real CLI (`recuse.cli.main`) and checks: exit code 2, exactly one
line on stderr that names the file (and the row/column where there is one) and the
problem, no traceback, nothing on stdout.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from recuse.cli import main

CORPUS = Path(__file__).parent / "malformed"

# file, table, expected fragment of the message (row/column where the problem has one)
CASES: list[tuple[str, str, str]] = [
    ("pairs_missing_column.csv", "pairs", "missing required column(s) item_id —"),
    ("pairs_empty.csv", "pairs", "the file is empty"),
    (
        "pairs_header_only.csv",
        "pairs",
        "the pairs table is empty: it has columns but no data rows — add a row per pair under "
        "the header",
    ),
    ("pairs_not_utf8.csv", "pairs", "line 4 (data row 3): not UTF-8"),
    (
        "pairs_prob_out_of_range.csv",
        "pairs",
        "line 3 (data row 2), column 'p_a_first': 1.7 is not a probability",
    ),
    (
        "pairs_text_in_number.csv",
        "pairs",
        "line 3 (data row 2), column 'p_a_first': unknown verdict 'high'",
    ),
    (
        "pairs_unknown_label.csv",
        "pairs",
        "line 3 (data row 2), column 'human': unknown human label 'maybe'",
    ),
    ("pairs_duplicate_ids.csv", "pairs", "line 3 (data row 2): duplicate pairs row"),
    (
        "pairs_missing_item_id.csv",
        "pairs",
        "line 3 (data row 2), column 'item_id': missing item_id",
    ),
    (
        "pairs_nan_prompt_id.csv",
        "pairs",
        "line 3 (data row 2), column 'prompt_id': missing prompt_id",
    ),
    ("pairs_infinite.csv", "pairs", "line 3 (data row 2), column 'p_a_first': infinite value"),
    (
        "pairs_negative_length.csv",
        "pairs",
        "line 3 (data row 2), column 'len_a': negative value -3",
    ),
    (
        "pairs_verdict_without_judge.csv",
        "pairs",
        "line 2 (data row 1), column 'judge': judge verdict without",
    ),
    (
        "pairs_status_ok_but_empty.csv",
        "pairs",
        "line 3 (data row 2), column 'p_a_first': status_first is 'ok'",
    ),
    (
        "pairs_status_unparsed_with_value.csv",
        "pairs",
        "line 3 (data row 2), column 'p_a_first': status_first is 'unparsed' but "
        "p_a_first holds 0.5",
    ),
    (
        "pairs_unknown_status.csv",
        "pairs",
        "line 2 (data row 1), column 'status_first': unknown status 'fine'",
    ),
    (
        "pairs_ragged_row.csv",
        "pairs",
        "line 2 (data row 1): the row has more fields than the header",
    ),
    ("pairs_unclosed_quote.csv", "pairs", "line 3 (data row 2): cannot parse the file"),
    ("pairs_truncated.jsonl", "pairs", "line 2 (data row 2): the line is not valid JSON"),
    (
        "pairs_line_not_object.jsonl",
        "pairs",
        "line 2 (data row 2): the line is a JSON array, not an object",
    ),
    ("pairs_json_not_array.json", "pairs", "expected a JSON array of objects"),
    ("pairs_empty.jsonl", "pairs", "the file is empty"),
    ("pairs_garbage.parquet", "pairs", "not a readable Parquet file"),
    ("pairs_unknown_extension.xlsx", "pairs", "unknown file type"),
    ("pairs_needs_mapping.csv", "pairs", "missing required column(s) item_id —"),
    ("does_not_exist.csv", "pairs", "does_not_exist.csv"),
    # issue #12: nested values, deep JSON, huge numbers, damaged pages, short rows ...
    (
        "pairs_nested_model.jsonl",
        "pairs",
        "line 2 (data row 2), column 'model_a': expected one text or number, found a JSON object",
    ),
    (
        "pairs_nested_judge.json",
        "pairs",
        "line 1 (data row 2), column 'judge': expected one text or number, found a JSON list",
    ),
    (
        "pairs_nested_model.parquet",
        "pairs",
        "row 1, column 'model_b': expected one text or number, found a list",
    ),
    (  # a binary column: its missing texts were looked for with str.strip (TypeError)
        "pairs_binary_label.parquet",
        "pairs",
        "row 1, column 'human': expected one text or number, found a binary value b'a'",
    ),
    ("pairs_deep.json", "pairs", "JSON nested too deeply"),
    (  # deep within the first 64 KiB, which are read to tell a tool's format: a traceback
        "pairs_deep_line.jsonl",
        "pairs",
        "line 2 (data row 2): JSON nested too deeply for Python to read",
    ),
    (
        "pairs_huge_integer.jsonl",
        "pairs",
        "line 2 (data row 2): a JSON integer has more than 4,300",
    ),
    (
        "pairs_huge_number.csv",
        "pairs",
        "line 2 (data row 1), column 'len_a': number too large: '9999",
    ),
    (
        "pairs_short_row.csv",
        "pairs",
        "line 3 (data row 2): the row has fewer fields than the header (4, not 9",
    ),
    ("pairs_duplicate_header.csv", "pairs", "column 'human': the header names this column twice"),
    ("pairs_not_utf8_header.csv", "pairs", "csv: not UTF-8 text (byte 0xe9 in the header)"),
    (
        "pairs_lone_surrogate.jsonl",
        "pairs",
        "line 2 (data row 2), column 'prompt_id': text holds a lone UTF-16",
    ),
    (
        "pairs_bool_probability.jsonl",
        "pairs",
        "line 1 (data row 1), column 'p_a_first': expected a number, got",
    ),
    (
        "pairs_row_too_long.csv.gz",
        "pairs",
        "line 2 (data row 1): the row is longer than 4,194,304 bytes",
    ),
    (
        "pairs_damaged_page.parquet",
        "pairs",
        "column 'prompt': not a readable Parquet file (ArrowInvalid: Column 8",
    ),
    ("pairs_damaged_metadata.parquet", "pairs", "not a readable Parquet file (JSONDecodeError"),
    ("ratings_missing_reference.csv", "ratings", "missing required column(s) reference"),
    (
        "ratings_nan_rating.csv",
        "ratings",
        "line 3 (data row 2), column 'rating': rating is missing",
    ),
    (
        "ratings_text_rating.csv",
        "ratings",
        "line 2 (data row 1), column 'rating': expected a number, got 'four'",
    ),
    ("ratings_duplicate.csv", "ratings", "line 3 (data row 2): duplicate ratings row"),
    (
        "ratings_unknown_status.csv",
        "ratings",
        "line 2 (data row 1), column 'status': unknown status 'done'",
    ),
    (
        "ratings_missing_dimension.csv",
        "ratings",
        "line 2 (data row 1), column 'dimension': missing dimension",
    ),
    (
        "ratings_negative_length.csv",
        "ratings",
        "line 2 (data row 1), column 'length': negative value -10",
    ),
    # issue #15: a value no rule reads names the way to map it
    (
        "pairs_unmappable_value.csv",
        "pairs",
        "line 3 (data row 2), column 'p_a_first': unknown verdict 'A>B'",
    ),
]

# issue #15: files of other tools, recognised without --format
CASES += [
    ("fastchat_truncated_pair.jsonl", "pairs", "line 2 (data row 2): the line is not valid JSON"),
    (
        "fastchat_bad_winner_pair.jsonl",
        "pairs",
        "line 3 (data row 3), column 'g2_winner': unknown winner 'model_b' — FastChat "
        "pair judgments hold",
    ),
    (
        "arena_hard_bad_verdict.jsonl",
        "pairs",
        "line 2 (data row 2), column 'games[0].score': unknown verdict 'A>>>B' — "
        "Arena-Hard-Auto scores are",
    ),
    (
        "inspect_not_a_log.eval",
        "ratings",
        "not an Inspect AI log (a zip without header.json or _journal/start.json)",
    ),
    (
        "inspect_bad_grade.json",
        "ratings",
        "row 2, column 'scores.model_graded_qa.value': sample q2, scorer model_graded_qa: "
        "grade 'GRADE: B' is not a number",
    ),
    (
        "inspect_duplicate_sample.json",  # two joined logs: would average in as an epoch
        "ratings",
        "row 3, column 'id': sample q1, epoch 1 appears twice (samples 1 and 3)",
    ),
]

# issue #17: probe tables whose probe columns would make an effect silently wrong
CASES += [
    (
        "probes_bad_treated.csv",
        "pairs",
        "line 4 (data row 3), column 'treated': treated is 'c', expected a or b",
    ),
    (
        "probes_treated_disagrees.csv",
        "pairs",
        "line 4 (data row 3), column 'treated': base pair 'i1' is treated on side a in "
        "placebo but on side b "
        "in authority",
    ),
    (
        "probes_version_twice.csv",
        "pairs",
        "line 5 (data row 4), column 'probe': version 'authority' of base pair 'i1' "
        "appears 2 times",
    ),
    (
        "probes_empty_probe.csv",
        "pairs",
        "line 3 (data row 2), column 'probe': empty probe in a probe table",
    ),
    (
        "probes_base_two_prompts.csv",
        "pairs",
        "line 5 (data row 4), column 'base_item': base pair 'i1' spans prompts 'q1' and 'q2'",
    ),
    (
        "probes_wrong_side.csv",
        "pairs",
        "line 3 (data row 2), column 'treated': base pair 'i1': the answer that is not "
        "edited (response_a) "
        "differs between version 'original' and version 'placebo'",
    ),
]


# NUL bytes: pandas read one as part of a cell, so `gpt-4` and `gpt-4` + NUL were two
# judges of "a valid pairs table"; a file a crash padded with NULs ends in one
CASES += [
    (
        "pairs_nul_in_name.csv",
        "pairs",
        "line 3 (data row 2): a NUL byte (0x00), which no text holds — the file is damaged",
    ),
    # a CR alone in an unquoted cell: pandas split the row there and named the next
    # "row 3, missing prompt_id", a row with nothing wrong
    (
        "pairs_lone_cr.csv",
        "pairs",
        "line 3 (data row 2): a carriage return (CR, \\r) inside an unquoted field: it "
        "would split the row in two — quote the field",
    ),
    # the same with the line endings swapped (lines ending in CR alone, Excel for Mac's
    # "CSV (Macintosh)"; an LF alone in an unquoted cell): "row 3, missing prompt_id"
    (
        "pairs_lone_lf_in_cr_file.csv",
        "pairs",
        "data row 2: a line feed (LF, \\n) inside an unquoted field of a file whose lines "
        "end in CR alone: it would split the row in two — quote the field, or remove the LF",
    ),
    # a digit of another script (fullwidth 8) and a no-break space after a number were
    # "number too large" (Python's \\d takes any script's digits; str.strip any space)
    (
        "ratings_fullwidth_digit.csv",
        "ratings",
        "line 3 (data row 2), column 'rating': expected a number, got '８' — write numbers",
    ),
    (
        "ratings_nbsp_number.csv",
        "ratings",
        "line 3 (data row 2), column 'rating': expected a number, got '7.5\\xa0': a space "
        "other than the ordinary one (a no-break space",
    ),
    (
        "pairs_nul_padded.csv",
        "pairs",
        "line 4 (data row 3): a NUL byte (0x00), which no text holds — the file is damaged",
    ),
]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def assert_clear_error(code: int, out: str, err: str, *fragments: str) -> None:
    assert code == 2, (code, out, err)
    assert "Traceback" not in err + out
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    # values in messages are cut, never dumped whole; the corpus's own folder is the
    # checkout's (a clone in a long directory made the same message too long)
    assert len(lines[0].replace(str(CORPUS), "")) < 600, lines[0]
    assert lines[0].startswith("recuse: error: ")
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert out == ""


def test_corpus_is_large_and_fully_covered() -> None:
    files = {p.name for p in CORPUS.iterdir()}
    covered = {name for name, _, _ in CASES} | set(EXTRA_FILES)
    assert len(CASES) + len(EXTRA_FILES) >= 30
    assert files <= covered, f"corpus files without a case: {sorted(files - covered)}"


@pytest.mark.parametrize(("name", "table", "fragment"), CASES, ids=[c[0] for c in CASES])
def test_validate_gives_one_clear_line(
    name: str, table: str, fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    path = CORPUS / name
    code, out, err = run_cli(["validate", str(path), "--table", table], capsys)
    assert_clear_error(code, out, err, str(path), fragment)


def test_mapping_fixes_the_file_and_bad_mappings_are_clear(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = str(CORPUS / "pairs_needs_mapping.csv")
    good = "item=item_id,q=prompt_id,ma=model_a,mb=model_b,label=human,j=judge"
    good += ",p1=p_a_first,p2=p_a_second"
    code, out, err = run_cli(["validate", path, "--map", good], capsys)
    assert code == 0 and "valid pairs table" in out, err
    code, out, err = run_cli(["validate", path, "--map", "nope=human"], capsys)
    assert_clear_error(code, out, err, "'nope', which is not in the file")
    code, out, err = run_cli(["validate", path, "--map", "label"], capsys)
    assert_clear_error(code, out, err, "--map: cannot read 'label'")


def test_bad_roster_file(capsys: pytest.CaptureFixture[str]) -> None:
    roster = str(CORPUS / "roster_invalid.toml")
    data = str(CORPUS / "pairs_needs_mapping.csv")
    code, out, err = run_cli(["--roster", roster, "validate", data], capsys)
    assert_clear_error(code, out, err, "roster_invalid.toml: not valid TOML")


@pytest.mark.parametrize(
    ("name", "table", "unknown"),
    [
        ("pairs_unknown_model.csv", "pairs", "'my-house-model'"),
        ("pairs_mixed_models_no_roster.csv", "pairs", "'zephyr-7b-beta'"),
        ("ratings_unknown_judge.csv", "ratings", "'judge-nobody-knows'"),
    ],
)
def test_unknown_models_are_read_with_one_note_not_refused(
    name: str, table: str, unknown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """These files were in the corpus as errors; a model the roster lacks is now its own
    model and family, with one note (the old flag still parses)."""
    path = str(Path(__file__).parent / "data" / "unknown_models" / name)
    for extra in ([], ["--allow-unknown-models"]):
        code, out, err = run_cli(["validate", path, "--table", table, *extra], capsys)
        assert code == 0 and f"a valid {table} table" in " ".join(out.split()), err
        notes = [line for line in err.splitlines() if line.startswith("recuse: note:")]
        assert len(notes) == 1 and unknown in notes[0] and "not in the roster" in notes[0]


def test_ties_refused_when_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = str(CORPUS / "pairs_tie_not_allowed.csv")
    out_file = tmp_path / "out.json"
    args = ["metrics", "pairs", path, "--human-ties", "error", "--out", str(out_file)]
    code, out, err = run_cli(args, capsys)
    assert_clear_error(code, out, err, "row 2, column 'human': the human label is a tie")
    assert not out_file.exists()


def test_limits_are_raised_from_the_environment(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(CORPUS / "pairs_row_too_long.csv.gz")
    monkeypatch.setenv("RECUSE_MAX_ROW_BYTES", "8000000")
    code, out, err = run_cli(["validate", path], capsys)
    assert_clear_error(
        code, out, err, "line 2 (data row 1): the row has fewer fields than the header (1, not 9"
    )
    monkeypatch.setenv("RECUSE_MAX_INPUT_BYTES", "100000")
    code, out, err = run_cli(["validate", path], capsys)
    assert_clear_error(code, out, err, "decompresses to more than 100,000 bytes", "RECUSE_MAX_INP")
    monkeypatch.setenv("RECUSE_MAX_INPUT_BYTES", "-1")
    code, out, err = run_cli(["validate", path], capsys)
    assert_clear_error(code, out, err, "RECUSE_MAX_INPUT_BYTES must be a positive whole number")
    code, out, err = run_cli(["validate", "--help"], capsys)
    assert code == 0 and "RECUSE_MAX_ROW_BYTES" in out


EXTRA_FILES = [
    "roster_invalid.toml",
    "pairs_tie_not_allowed.csv",
    "pairs_confidence_out_of_range.csv",
]

# issue #15: the value options (file, extra arguments, fragments of the one error line)
VALUE_CASES: list[tuple[str, list[str], tuple[str, ...]]] = [
    ("pairs_unmappable_value.csv", [], ("--values COLUMN:VALUE=NUMBER",)),
    (
        "pairs_unmappable_value.csv",
        ["--values", "p_a_first:A>B=yes"],
        ("--values p_a_first: cannot read 'A>B=yes'", "judge_winner:A=1,B=0,tie=0.5"),
    ),
    ("pairs_unmappable_value.csv", ["--values", "p_a_first"], ("--values: cannot read",)),
    (
        "pairs_unmappable_value.csv",
        ["--values", "p_a_first:A>B=2"],
        ("'A>B' → 2.0 is not a probability in [0, 1]",),
    ),
    (
        "pairs_unmappable_value.csv",
        ["--values", "p_a_frist:A>B=1"],
        (
            "the value map (--values, or [values] in recuse.toml) names 'p_a_frist'",
            "did you mean 'p_a_first'?",
        ),
    ),
    (
        "pairs_confidence_out_of_range.csv",
        ["--confidence", "conf"],
        ("line 3 (data row 2), column 'conf': confidence 85 is outside [0, 1]", "divide by 100"),
    ),
    ("pairs_confidence_out_of_range.csv", ["--confidence", "cnf"], ("did you mean 'conf'?",)),
]


@pytest.mark.parametrize(("name", "args", "fragments"), VALUE_CASES)
def test_value_options_give_one_clear_line(
    name: str, args: list[str], fragments: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_cli(["validate", str(CORPUS / name), *args], capsys)
    assert_clear_error(code, out, err, *fragments)


def test_a_value_map_reads_the_unmappable_value(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(CORPUS / "pairs_unmappable_value.csv")
    code, out, err = run_cli(["validate", path, "--values", "p_a_first:A>B=1"], capsys)
    assert code == 0 and "valid pairs table" in out, err

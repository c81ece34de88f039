"""Roster: aliases, families, user overrides and errors."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from recuse.cli import main
from recuse.config import load_config
from recuse.errors import ConfigError, InputError
from recuse.roster import Roster


def test_builtin_aliases_and_families() -> None:
    r = Roster.builtin()
    assert r.canonical("  chatgpt ") == "gpt-3.5-turbo"
    assert r.canonical("anthropic.claude-3-5-sonnet-20241022-v2:0") == "claude-3.5-sonnet-20241022"
    assert r.family("meta.llama3-1-8b-instruct-v1:0") == "llama"
    assert r.family("Mixtral-8x7B-Instruct-v0.1") == "mistral"
    assert "vicuna-13b-v1.2" in r and "nobody-7b" not in r


def test_canonicalize_series_reports_first_unknown_row() -> None:
    r = Roster.builtin()
    out = r.canonicalize(pd.Series(["gpt4", None, "PaLM2"]))
    assert out.tolist()[0] == "gpt-4" and pd.isna(out.iloc[1]) and out.iloc[2] == "palm-2"
    with pytest.raises(InputError, match="not in the roster") as info:
        r.canonicalize(
            pd.Series(["gpt4", "mystery-model"]), file="x.csv", column="model_b", unknown="error"
        )
    assert (info.value.row, info.value.column) == (2, "model_b")


def test_unknown_names_are_their_own_model_and_family_with_one_note() -> None:
    from recuse.roster import ModelsNotInRoster

    r = Roster.builtin()
    with pytest.warns(ModelsNotInRoster) as caught:
        out = r.canonicalize(pd.Series(["gpt4", " mystery-7b ", "zeta", "zeta"]), file="x.csv")
    assert out.tolist() == ["gpt-4", "mystery-7b", "zeta", "zeta"]
    assert len(caught) == 1
    assert str(caught[0].message).startswith(
        "x.csv: 2 model names are not in the roster, each read as its own model and family: "
        "'mystery-7b', 'zeta'"
    )
    assert r.family("mystery-7b") == "mystery-7b" and r.line("zeta") == "zeta"
    assert r.kept == ["mystery-7b", "zeta"]
    # inside noting(): one note for everything kept in the block, at its end
    with pytest.warns(ModelsNotInRoster) as caught:
        with r.noting("dataset d"):
            r.canonical("one-1")
            r.canonicalize(pd.Series(["two-2", "gpt4"]))
            assert r.canonical("one-1") == "one-1"
    assert [str(w.message).split(" —")[0] for w in caught] == [
        "dataset d: 2 model names are not in the roster, each read as its own model and "
        "family: 'one-1', 'two-2'"
    ]


def test_user_file_overrides_builtin(tmp_path: Path) -> None:
    f = tmp_path / "roster.toml"
    f.write_text(
        '[[model]]\nid = "gpt-4"\nfamily = "openai"\naliases = ["my-gpt"]\n'
        '[[model]]\nid = "house-judge"\nfamily = "house"\n',
        "utf-8",
    )
    r = Roster.load(f)
    assert r.family("gpt-4") == "openai" and r.canonical("my-gpt") == "gpt-4"
    assert "gpt4" not in r  # the built-in aliases went with the replaced entry
    assert r.family("house-judge") == "house"


@pytest.mark.parametrize(
    "text",
    [
        "[[model]]\nid = 3\nfamily = 'x'\n",
        "not toml [",
        "[[model]]\nid='a'\nfamily='b'\naliases=[1]\n",
    ],
)
def test_bad_roster_files(tmp_path: Path, text: str) -> None:
    f = tmp_path / "r.toml"
    f.write_text(text, "utf-8")
    with pytest.raises(ConfigError):
        Roster.load(f)


def test_every_model_in_shared_data_is_known(shared_data: Path) -> None:
    """Spot list of the generator and judge names that appear in ../shared/data."""
    names = [
        "alpaca-13b",
        "claude-v1",
        "gpt-3.5-turbo",
        "gpt-4",
        "llama-13b",
        "vicuna-13b-v1.2",
        "GPT-4",
        "ChatGPT",
        "ChatGPT-0301",
        "LLaMA2",
        "PaLM2",
        "Falcon",
        "anthropic.claude-v2:1",
        "anthropic.claude-3-sonnet-20240229-v1:0",
        "anthropic.claude-3-5-sonnet-20241022-v2:0",
        "gpt-4o",
        "meta.llama3-1-8b-instruct-v1:0",
        "meta.llama3-1-70b-instruct-v1:0",
        "mistral.mistral-7b-instruct-v0:2",
        "mistral.mistral-large-2407-v1:0",
        "text_davinci_003",
        "gpt4_1106_preview",
        "alpaca_eval_gpt4",
        "weighted_alpaca_eval_gpt4_turbo",
        "gpt4_0314",
        "claude-2.1",
        "gpt35_turbo_instruct",
        "llama-2-70b-chat-hf",
        "Mixtral-8x7B-Instruct-v0.1",
        "gpt-4o-2024-05-13",
        "claude-3-5-sonnet-20240620",
        "o1-mini-2024-09-12",
        "claude-3-haiku-20240307",
        "Ray2333_GRM-Gemma-2B-rewardmodel-ft",
        "Skywork_Skywork-Reward-Gemma-2-27B",
        "Skywork_Skywork-Reward-Llama-3.1-8B",
        "internlm_internlm2-7b-reward",
        "internlm_internlm2-20b-reward",
    ]
    r = Roster.builtin()
    assert [n for n in names if n not in r] == []
    pf = pd.read_csv(
        shared_data / "play_favorites" / "Faithfulness.csv", usecols=["judge", "model"]
    )
    fams = {r.family(j) for j in pf["judge"].unique()}
    assert fams == {"claude", "gpt", "llama", "mistral"}


@pytest.mark.parametrize(
    ("name", "canonical", "family"),
    [
        ("gpt-4o", "gpt-4o", "gpt"),
        ("gpt-4-turbo", "gpt-4-turbo", "gpt"),  # the line, not the 1106 preview
        ("gpt-4o-mini", "gpt-4o-mini", "gpt"),
        ("claude-3-5-sonnet", "claude-3.5-sonnet", "claude"),  # the line, not a snapshot
        ("claude-3-opus", "claude-3-opus", "claude"),
        ("claude-3-haiku", "claude-3-haiku", "claude"),
        ("llama-3-70b", "llama-3-70b", "llama"),  # the base model, not the instruct one
        ("Llama-3-70B-Instruct", "llama-3-70b-instruct", "llama"),
        ("llama-3-8b", "llama-3-8b", "llama"),
        ("mistral-7b", "mistral-7b", "mistral"),
        ("mistral-7b-instruct", "mistral-7b-instruct-v0.2", "mistral"),
        ("mixtral-8x7b", "mixtral-8x7b", "mistral"),
        ("mixtral-8x7b-instruct", "mixtral-8x7b-instruct-v0.1", "mistral"),
        ("gemini-1.5-pro", "gemini-1.5-pro", "google"),
    ],
)
def test_common_undated_names(name: str, canonical: str, family: str) -> None:
    r = Roster.builtin()
    assert (r.canonical(name), r.family(name)) == (canonical, family)


@pytest.mark.parametrize(
    ("base", "instruct"),
    [
        ("mistral-7b", "mistral-7b-instruct-v0.2"),
        ("mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-Instruct-v0.2"),
        ("llama-3-8b", "llama-3-8b-instruct"),
        ("meta-llama/Meta-Llama-3-8B", "meta-llama/Meta-Llama-3-8B-Instruct"),
        ("llama-3-70b", "llama-3-70b-instruct"),
        ("llama3-70b", "meta-llama/Meta-Llama-3-70B-Instruct"),
        ("llama-3.1-8b", "llama-3.1-8b-instruct"),
        ("llama-3.1-70b", "llama-3.1-70b-instruct"),
        ("mixtral-8x7b", "mixtral-8x7b-instruct-v0.1"),
        ("mistralai/Mixtral-8x7B-v0.1", "Mixtral-8x7B-Instruct-v0.1"),
    ],
)
def test_a_base_model_and_its_instruct_model_are_two_models_of_one_family(
    base: str, instruct: str
) -> None:
    # a judge's base model read as the judge made its answers "self" (EO +1.000 on a
    # hand-made file): the two are one family, never one model
    r = Roster.builtin()
    assert r.canonical(base) != r.canonical(instruct)
    assert r.family(base) == r.family(instruct)
    own = pd.Series([r.canonical(base)])
    assert not (own == r.canonical(instruct)).any()


def test_no_builtin_name_names_two_models() -> None:
    import tomllib
    from importlib import resources

    data = tomllib.loads(resources.files("recuse").joinpath("roster.toml").read_text("utf-8"))
    seen: dict[str, str] = {}
    for m in data["model"]:
        for name in (m["id"], *m.get("aliases", [])):
            key = name.strip().casefold()
            assert seen.setdefault(key, m["id"]) == m["id"], (name, seen[key], m["id"])
    # Llama 3 and Llama 3.1 are different models of one family
    r = Roster.builtin()
    assert r.canonical("llama-3-70b") != r.canonical("llama-3.1-70b")


def test_all_unknown_names_in_one_message() -> None:
    r = Roster.builtin()
    names = pd.Series(["gpt-4", "zeta-1", "alpha-2", "zeta-1", None, "claude-3-5-sonet"])
    with pytest.raises(InputError) as info:
        r.canonicalize(names, file="x.csv", column="model_a", unknown="error")
    err = info.value
    assert err.row == 2  # the first row with an unknown name
    assert "3 model names are not in the roster: 'alpha-2' (1 cell), " in str(err)
    assert "'claude-3-5-sonet' (1 cell), 'zeta-1' (2 cells)" in str(err)
    assert "unknown_models='keep'" in (err.fix or "")
    assert "'claude-3-5-sonet' → claude-3.5-sonnet?" in (err.fix or "")
    many = pd.Series([f"m{i:02d}" for i in range(25)])
    with pytest.raises(InputError, match=r"25 model names .*'m19' \(1 cell\) and 5 more —"):
        r.canonicalize(many, unknown="error")


SNAPSHOTS = [  # (dated name, its canonical id, its line)
    ("gpt-4-0314", "gpt-4-0314", "gpt-4"),
    ("gpt4_0613", "gpt-4-0613", "gpt-4"),
    ("claude-3-5-sonnet-20240620", "claude-3.5-sonnet-20240620", "claude-3.5-sonnet"),
    ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3.5-sonnet-20241022",
     "claude-3.5-sonnet"),
    ("gpt-4o-2024-05-13", "gpt-4o-2024-05-13", "gpt-4o"),
    ("gemini-1.5-pro-002", "gemini-1.5-pro-002", "gemini-1.5-pro"),
    ("gpt4_1106_preview", "gpt-4-1106-preview", "gpt-4-turbo"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "canonical", "line"), SNAPSHOTS)
def test_a_dated_snapshot_is_its_own_model_of_its_line(
    name: str, canonical: str, line: str
) -> None:
    r = Roster.builtin()
    assert (r.canonical(name), r.line(name)) == (canonical, line)
    assert r.canonical(line) == line != canonical  # the undated name is the line itself
    assert r.family(name) == r.family(line)


def test_no_two_dated_builtin_names_of_different_dates_share_an_id() -> None:
    import tomllib
    from importlib import resources

    from recuse.roster import date_token

    data = tomllib.loads(resources.files("recuse").joinpath("roster.toml").read_text("utf-8"))
    for m in data["model"]:
        dates = {date_token(n) for n in (m["id"], *m.get("aliases", []))} - {None}
        assert len(dates) <= 1, (m["id"], dates)
        if dates and "line" not in m:  # a dated entry names its line
            assert date_token(m["id"]) is None, m["id"]


def test_self_map_widens_self_to_the_line() -> None:
    r = Roster.builtin()
    assert r.self_map("snapshot") is None
    selves = r.self_map("line")
    assert selves is not None
    assert selves["gpt-4-0613"] == selves["gpt-4-0314"] == selves["gpt-4"] == "gpt-4"
    assert selves["claude-3.5-sonnet-20240620"] == "claude-3.5-sonnet"
    assert selves["gpt-4-1106-preview"] != selves["gpt-4"]
    with pytest.raises(ConfigError, match="self scope"):
        r.self_map("family")  # type: ignore[arg-type]


def test_a_user_roster_merging_two_snapshots_is_overruled_in_a_file(tmp_path: Path) -> None:
    import warnings

    from recuse.data.model_names import SnapshotsKeptApart, canonicalize_models

    f = tmp_path / "r.toml"
    f.write_text('[[model]]\nid = "acme"\nfamily = "acme"\naliases = ["acme-0101", '
                 '"acme-0202", "acme_0202"]\n', "utf-8")  # fmt: skip
    r = Roster.load(f)
    frame = pd.DataFrame({"model_a": ["acme-0101", "acme"], "model_b": ["acme_0202", "acme-0202"]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = canonicalize_models(frame, ("model_a", "model_b"), r, file="f.csv")
    assert out["model_a"].tolist() == ["acme-0101", "acme"]
    assert out["model_b"].tolist() == ["acme-0202", "acme-0202"]  # one date: one model
    assert r.line("acme-0101") == "acme" and r.family("acme-0202") == "acme"
    notes = [str(w.message) for w in caught if issubclass(w.category, SnapshotsKeptApart)]
    assert len(notes) == 1 and "'acme-0101' (not 'acme')" in notes[0]
    # one dated name alone in a file keeps the roster's reading
    r2 = Roster.load(f)
    alone = canonicalize_models(frame.iloc[:1].assign(model_b="acme"), ("model_a", "model_b"), r2)
    assert alone["model_a"].tolist() == ["acme"]


def test_judge_in_names_the_judge_as_the_data_does() -> None:
    roster = Roster.builtin()
    present = ["gpt-4", "MyJudge-7B", "gpt-3.5-turbo"]
    assert roster.judge_in("gpt-4", present) == "gpt-4"
    assert roster.judge_in("GPT-4", present) == "gpt-4"  # another case of a roster id
    assert roster.judge_in("ChatGPT", present) == "gpt-3.5-turbo"  # an alias
    assert roster.judge_in(" myjudge-7b ", present) == "MyJudge-7B"  # outside the roster
    with pytest.raises(ConfigError, match="'gpt-4-0613' is not in the data"):
        roster.judge_in("gpt-4-0613", present)  # another snapshot is another model
    # two judges that differ only in case: the name must match one exactly
    with pytest.raises(ConfigError, match="judges present: MyJudge, myjudge"):
        roster.judge_in("MYJUDGE", ["myjudge", "MyJudge"])
    assert roster.judge_in("myjudge", ["myjudge", "MyJudge"]) == "myjudge"


def test_two_models_of_one_name_but_for_case_in_a_roster_file_are_refused(
    tmp_path: Path,
) -> None:
    """Model names are read ignoring case and the spaces around them, so a roster file
    with models ``Foo`` (family a) and ``foo`` (family b), or an alias naming another
    entry, made them one model without a word: ``Foo`` was read as ``foo`` of family b,
    and ``certify --cost FOO=1`` priced whichever came last."""
    f = tmp_path / "r.toml"
    for text, said in (
        ('[[model]]\nid = "Foo"\nfamily = "a"\n[[model]]\nid = "foo"\nfamily = "b"\n',
         "model entry 2 (foo): the name 'foo' is model entry 1 (Foo) too"),
        ('[[model]]\nid = "bar"\nfamily = "a"\n[[model]]\nid = "baz"\nfamily = "b"\n'
         'aliases = [" BAR"]\n', "model entry 2 (baz): the name ' BAR' is model entry 1 (bar) too"),
    ):  # fmt: skip
        f.write_text(text, "utf-8")
        with pytest.raises(ConfigError) as info:
            Roster.load(f)
        assert said in str(info.value) and str(f) in str(info.value)
    # an entry's own names in other cases, and one id given twice (the later wins), are fine
    f.write_text('[[model]]\nid = "Foo"\nfamily = "a"\naliases = ["FOO", "foo "]\n'
                 '[[model]]\nid = "Foo"\nfamily = "c"\n', "utf-8")  # fmt: skip
    assert Roster.load(f).family("foo") == "c"


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ('[[model]]\nid = "ours"\nfamily = "o"\nalias = ["OurJudge"]\n',
         "model entry 1 (ours): unknown key 'alias' — a [[model]] takes id, family, aliases, "
         "line"),
        ('[[model]]\nid = " "\nfamily = "o"\n', "model entry 1: id is empty — give the model's "
         "name"),
        ('[[model]]\nid = "ours"\nfamily = ""\n', "model entry 1 (ours): family is empty"),
        ('[model]\nid = "ours"\nfamily = "o"\n', "expected [[model]] tables — write [[model]], "
         "in two brackets"),
    ],
)  # fmt: skip
def test_a_model_entry_with_a_misspelt_key_or_no_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, said: str
) -> None:
    """A [[model]] entry's misspelt key (``alias`` for ``aliases``) was passed over, so
    the names it gave stayed unknown models of their own; an empty id or family made a
    model named ''. In a roster file and in recuse.toml alike: one line, exit 2."""
    f = tmp_path / "r.toml"
    f.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as info:
        Roster.load(f)
    assert str(info.value).startswith(f"{f}: {said}")
    cfg = tmp_path / "recuse.toml"
    cfg.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(cfg)
    assert str(info.value).startswith(f"{cfg}: {said}")
    assert main(["--roster", str(f), "data", "summary"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"recuse: error: {f}: {said}") and err.count("\n") == 1


def test_a_roster_file_is_read_as_any_text_file_is(tmp_path: Path) -> None:
    """A roster saved with a byte-order mark read 'Invalid statement (at line 1,
    column 1)'; one not in UTF-8, a folder or a missing file gave Python's own words
    ("'utf-8' codec can't decode byte 0xe9 in position 14", "[Errno 21] Is a
    directory: 'rd'") with no fix."""
    f = tmp_path / "r.toml"
    f.write_bytes(b'\xef\xbb\xbf[[model]]\nid = "ours"\nfamily = "o"\n')
    assert Roster.load(f).family("ours") == "o"
    f.write_bytes(b'[[model]]\nid = "caf\xe9"\nfamily = "o"\n')  # Latin-1
    with pytest.raises(InputError) as info:
        Roster.load(f)
    assert str(info.value) == f"{f}: not UTF-8 text (byte 0xe9 on line 2) — save the file as UTF-8"
    fifo, loop = tmp_path / "fifo.toml", tmp_path / "loop.toml"
    os.mkfifo(fifo)  # a pipe and a loop of links were "no such file", though ls shows them
    loop.symlink_to(loop.name)
    for path, what in (
        (tmp_path, "a folder"),
        (tmp_path / "none.toml", "no such file"),
        (fifo, "a special file (a pipe, a device)"),
        (loop, "a link to nothing (or a loop of links)"),
    ):
        with pytest.raises(ConfigError) as caught:
            Roster.load(path)
        assert str(caught.value) == f"roster file {path}: {what} — give a roster TOML file"


def test_a_user_entry_taking_a_name_of_another_model_of_the_roster_is_refused(
    tmp_path: Path,
) -> None:
    """A roster file's (or recuse.toml's) alias or id that already names a built-in model
    it does not replace took that name without a word: with aliases = ["claude-3-5-sonnet"]
    on gpt-4o, Claude's answers were read as gpt-4o's own. Replacing that model in the same
    file (its id) takes its names with it and stays allowed."""
    from recuse.api import context_roster
    from recuse.config import Config
    from recuse.roster import entries_from

    f = tmp_path / "r.toml"
    stolen = '[[model]]\nid = "gpt-4o"\nfamily = "openai"\naliases = ["claude-3-5-sonnet"]\n'
    assert Roster.builtin().canonical("claude-3-5-sonnet") == "claude-3.5-sonnet"
    for text, said in (
        (stolen, "model entry 1 (gpt-4o): the name 'claude-3-5-sonnet' already names the "
                 "roster's model 'claude-3.5-sonnet'"),
        ('[[model]]\nid = "GPT4"\nfamily = "x"\n',
         "model entry 1 (GPT4): the name 'GPT4' already names the roster's model 'gpt-4'"),
    ):  # fmt: skip
        f.write_text(text, "utf-8")
        with pytest.raises(ConfigError) as info:
            Roster.load(f)
        assert said in str(info.value) and str(f) in str(info.value)
    config = Config(path=f, models=tuple(entries_from(tomllib.loads(stolen), str(f))))
    with pytest.raises(ConfigError, match=r"already names the roster's model 'claude-3\.5-sonnet'"):
        context_roster(None, config)
    f.write_text('[[model]]\nid = "claude-3.5-sonnet"\nfamily = "anthropic"\n' + stolen, "utf-8")
    assert Roster.load(f).canonical("claude-3-5-sonnet") == "gpt-4o"


def test_a_name_in_two_unicode_spellings_is_one_model(tmp_path: Path) -> None:
    """'modèle' with é as one character (NFC) and as e + combining grave (NFD, as macOS
    and some editors write it) look alike and are one name: the judge's own pairs written
    either way are its own. Before, the NFD rows were another model: the judge's
    self-preference was read from the NFC half alone (DP 0.25 over 4 pairs, not 0.375
    over 8), the note listing 'modèle', 'modèle' as two unknown names."""
    import json
    import unicodedata

    nfc, nfd = (unicodedata.normalize(form, "modèle") for form in ("NFC", "NFD"))
    assert nfc != nfd
    r = Roster.builtin()
    assert r.canonicalize(pd.Series([nfc, nfd, f" {nfd.upper()} "])).tolist() == [nfc] * 3
    # own answer a (written NFD) on pairs 0-3, b (written NFC) on pairs 4-7
    verdicts = ["A", "A", "A", "B", "B", "A", "A", "B"]  # own picks 1,1,1,0 | 1,0,0,1
    human = ["A", "B", "B", "B", "B", "A", "A", "A"]  # human prefers own 1,0,0,0 | 1,0,0,0
    frame = pd.DataFrame(
        {
            "item_id": range(8),
            "prompt_id": range(8),
            "model_a": [nfd] * 4 + ["claude-v1"] * 4,
            "model_b": ["claude-v1"] * 4 + [nfc] * 4,
            "judge": nfc,
            "human": human,
            "p_a_first": verdicts,
            "p_a_second": verdicts,
        }
    )
    frame.to_csv(tmp_path / "pairs.csv", index=False)
    out = tmp_path / "m.json"
    args = ["pairs.csv", "-m", "self_preference_dp", "--n-boot", "50", "--min-n", "1"]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert main(["metrics", "pairs", *args, "-o", str(out)]) == 0
    (row,) = json.loads(out.read_text("utf-8"))["results"]
    # own picks 5 of 8, human prefers the own answer on 2 of 8: 5/8 - 2/8
    assert (row["judge"], row["n"]) == (nfc, 8)
    assert row["estimate"] == pytest.approx(3 / 8)


def test_a_column_of_names_is_keyed_once_per_distinct_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Roster.lookup normalised (NFD, casefold, NFD) every row's name, 10% slower than
    the plain key before it (0.10 s against 0.09 for 300,000 rows); a column holds a few
    names over many rows, so each distinct name is keyed once (0.07 s). The ids are the
    same: NFC and NFD spellings, case and spaces, unknown and missing names."""
    import unicodedata

    import recuse.roster

    keyed: list[str] = []
    key = recuse.roster._key
    monkeypatch.setattr(recuse.roster, "_key", lambda name: keyed.append(name) or key(name))
    nfd = unicodedata.normalize("NFD", "modèle")
    r = Roster.builtin()
    r.keep([unicodedata.normalize("NFC", "modèle")])
    names = pd.Series(["gpt-4", " GPT-4 ", nfd, None, "nobody", float("nan")] * 2_000)
    keyed.clear()
    ids, unknown = r.lookup(names)
    assert sorted(keyed) == sorted(["gpt-4", " GPT-4 ", nfd, "nobody"])
    first = ids.head(6).tolist()
    assert first[:3] == ["gpt-4", "gpt-4", unicodedata.normalize("NFC", "modèle")]
    assert all(x != x for x in first[3:])  # unknown and missing: NaN
    assert unknown.head(6).tolist() == [False, False, False, False, True, False]
    # a cell that is no string is read as its text, never an unhashable key
    ids, unknown = r.lookup(pd.Series([["gpt-4"], "gpt-4", "nan", None], dtype=object))
    assert ids.tolist()[1] == "gpt-4" and unknown.tolist() == [True, False, True, False]


def test_chatgpt_4o_latest_is_a_model_of_its_own_in_gpt_4os_line() -> None:
    """The API serves ChatGPT's GPT-4o as chatgpt-4o-latest, another model than gpt-4o: as
    an alias of gpt-4o its verdicts and rewrites were keyed as gpt-4o's (a probe's
    rewrites by one read as the other's). Its own id now, in the gpt-4o line."""
    roster = Roster.builtin()
    assert roster.canonical("chatgpt-4o-latest") == "chatgpt-4o-latest"
    assert roster.canonical("openai/gpt-4o") == roster.canonical("gpt-4o-latest") == "gpt-4o"
    assert roster.family("chatgpt-4o-latest") == roster.family("gpt-4o") == "gpt"
    assert roster.line("chatgpt-4o-latest") == roster.line("gpt-4o-2024-08-06") == "gpt-4o"

"""recuse.options: every audit option declared once, and the front door's errors.

The typer options of ``recuse audit``, the keywords of ``recuse.audit`` and the keys of
``recuse.toml`` are all held to the fields of :class:`recuse.options.Settings`; one
precedence rule (given > file > default) serves the CLI and the API."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import typer.main

import recuse
from recuse.cli import _register, main
from recuse.cli.app import app
from recuse.config import audit_keys, load_config
from recuse.errors import ConfigError
from recuse.metrics.bootstrap import Resampling
from recuse.options import MAX_N_BOOT, Settings, default, read_options, resolve, settings_fields
from recuse.simulate import PlantedBias, simulate_pairs


@pytest.fixture(scope="module")
def planted() -> pd.DataFrame:
    judges = {"gpt-4": PlantedBias(position=0.2), "claude-v1": PlantedBias(position=0.0)}
    return simulate_pairs(judges=judges, n_prompts=60, seed=4).pairs


def _audit_params() -> dict[str, list[str]]:
    _register()
    command = typer.main.get_command(app).commands["audit"]  # type: ignore[attr-defined]
    return {p.name: [*p.opts, *p.secondary_opts] for p in command.params}


def test_the_typer_options_are_the_fields() -> None:
    params = _audit_params()
    specs = settings_fields()
    assert set(params) == {*specs, "data", "config"}
    for name, spec in specs.items():
        assert params[name] == [*spec.flag.split("/")[:1], *spec.flags[1:],
                                *spec.flag.split("/")[1:]], name  # fmt: skip


def test_the_api_keywords_are_the_fields_with_their_defaults() -> None:
    sig = inspect.signature(recuse.audit)
    api = {n: p.default for n, p in sig.parameters.items()
           if n not in ("data", "config", "roster", "progress", "unknown_models")}  # fmt: skip
    assert api == {n: default(n) for n, s in settings_fields().items() if s.api}
    # a keyword that is no option is an error with the closest one, not a TypeError
    with pytest.raises(ConfigError, match="unknown option 'nboot' — did you mean 'n_boot'"):
        recuse.audit("llmbar", nboot=300)


def test_the_config_keys_are_the_fields(tmp_path: Path) -> None:
    keyed = {s.key: n for n, s in settings_fields().items() if s.key}
    assert audit_keys() == keyed
    # every key written with its default value reads back as the defaults
    lines = ["[audit]"]
    for key, name in keyed.items():
        value = default(name)
        if value is None:
            continue
        shown = str(value) if isinstance(value, Path) else value
        lines.append(f"{key} = {json.dumps(list(shown) if isinstance(shown, tuple) else shown)}")
    cfg = tmp_path / "recuse.toml"
    cfg.write_text("\n".join(lines) + "\n", "utf-8")
    assert resolve({}, config=load_config(cfg)) == Settings()


def test_given_beats_the_file_beats_the_default(tmp_path: Path) -> None:
    cfg = tmp_path / "recuse.toml"
    cfg.write_text('[audit]\nn-boot = 300\ntitle = "team"\n[material]\nposition = 0.2\n'
                   'verbosity = 0.3\n', "utf-8")  # fmt: skip
    given = read_options({"n_boot": 500, "material": {"position": 0.1}}, "api")
    s = resolve(given, config=load_config(cfg))
    assert (s.n_boot, s.title, s.seed) == (500, "team", 0)
    assert s.material == {"position": 0.1, "verbosity": 0.3}  # merged, the given entry wins


def test_a_bad_config_value_names_its_key_and_its_flag(tmp_path: Path) -> None:
    # every [audit] key and every section, given a value no option takes (a table of
    # booleans): the error names the file, the key as written and the command-line flag
    specs = settings_fields()
    cfg = tmp_path / "recuse.toml"
    for name, spec in specs.items():
        flag = spec.flag.split("/")[0]
        for key in [k for k in {spec.key, (spec.key or "").replace("-", "_")} if k]:
            cfg.write_text(f"[audit]\n{key} = {{ bad = true }}\n", "utf-8")
            with pytest.raises(ConfigError) as err:
                load_config(cfg)
            text = str(err.value)
            assert text.startswith(f"{cfg} line 2: [audit] {key} = "), (name, text)
            assert text.endswith(f"(the {flag} option)") and "\n" not in text, (name, text)
        if spec.section:
            cfg.write_text(f"[{spec.section}]\nx = {{ bad = true }}\n", "utf-8")
            with pytest.raises(ConfigError) as err:
                load_config(cfg)
            text = str(err.value)
            assert text.startswith(f"{cfg} line 1: [{spec.section}"), (name, text)
            assert text.endswith(f"(the {flag} option)"), (name, text)
    # the message of the issue: key as written, value, what it must be, and the flag
    cfg.write_text("[audit]\nn_boot = 'x'\n", "utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value) == (
        f"{cfg} line 2: [audit] n_boot = 'x': must be a number, a whole one, e.g. 2000 "
        "(the --n-boot option)"
    )
    # the command line and the API name the flag already, and only once
    with pytest.raises(ConfigError) as err:
        read_options({"n_boot": "x"}, "api")
    assert str(err.value).count("--n-boot") == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[audit]\nn_boot = 300\nn-boot = 200\n", "n_boot and n-boot are the same option"),
        ("[audit]\nn-boot = 9999999999\n", "about 298 GiB of memory"),
        ("[audit]\nn-boot = 200.5\n", "must be a number, a whole one"),
        ("[audit]\nlevel = true\n", "must be a number"),
        ("[audit]\nfail-on = 3\n", "must be a string or a list of strings"),
        # a value map that is not probabilities named neither the file nor its section
        ("[values]\nhuman = {A = 2}\n", r"\[values\]: value map for 'human': 'A' → 2"),
        ("[values]\nhuman = {A = nan}\n", r"\[values\]: .*'A' → nan is not a probability"),
    ],
)
def test_bad_config_values_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    cfg = tmp_path / "recuse.toml"
    cfg.write_text(text, "utf-8")
    with pytest.raises(ConfigError, match=message) as err:
        load_config(cfg)
    assert "\n" not in str(err.value) and str(cfg) in str(err.value)


def test_whole_floats_and_fail_on_are_accepted_in_the_file(
    planted: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "pairs.csv"
    planted.to_csv(data, index=False)
    cfg = tmp_path / "recuse.toml"
    cfg.write_text('[audit]\nn-boot = 200.0\nonly = ["position"]\nfail-on = ["position=0.05"]\n',
                   "utf-8")  # fmt: skip
    out = tmp_path / "r"
    code = main(["audit", str(data), "--config", str(cfg), "--out", str(out)])
    text = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["provenance"]["options"]["bootstrap resamples (n_boot)"] == 200
    # gpt-4 puts the first answer ahead 0.7 of the time: 0.2 beyond the 0.05 bound
    assert code == 1 and "FAIL: position of gpt-4" in text


def test_n_boot_beyond_the_bound_is_one_line_with_the_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "o"
    assert main(["audit", "llmbar", "--n-boot", "9999999999", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--n-boot = 9999999999" in err
    assert f"{9999999999 * 32 / 2**30:,.0f} GiB" in err and f"{MAX_N_BOOT:,}" in err
    assert not out.exists()
    with pytest.raises(ConfigError, match="GiB of memory"):
        recuse.audit("llmbar", n_boot=9999999999)


def test_an_n_boot_beyond_any_memory_is_said_in_a_short_line(tmp_path: Path) -> None:
    """A TOML ``n-boot = 1e300`` reads as a 301-digit whole number: its error says the
    value cut short and the memory in words, not a 290-digit count of GiB."""
    config = tmp_path / "recuse.toml"
    config.write_text("[audit]\nn-boot = 1e300\n")
    with pytest.raises(ConfigError) as caught:
        load_config(config)
    err = str(caught.value)
    assert "n-boot = 100000000000000005250" in err and "over a million GiB of memory" in err
    assert len(err) - len(str(config)) < 260, err
    with pytest.raises(ConfigError) as library:
        Resampling(n_boot=10**300)
    assert len(str(library.value)) < 300 and "over a million GiB" in str(library.value)
    # a count a machine could nearly hold keeps its figure
    with pytest.raises(ConfigError, match=r"about 30 GiB of memory"):
        Resampling(n_boot=10**9)


def test_the_api_gives_the_clis_errors_for_bad_data_and_values(planted: pd.DataFrame) -> None:
    for bad in (123, None, [planted, 4.5]):
        with pytest.raises(ConfigError, match="names, file paths or pandas DataFrames"):
            recuse.audit(bad)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"seed \(--seed\) = 'x': must be a number"):
        recuse.audit(planted, seed="x")
    with pytest.raises(ConfigError, match="level"):
        recuse.audit(planted, level="high")
    with pytest.raises(ConfigError, match="orders"):
        recuse.audit(planted, orders="third")
    with pytest.raises(ConfigError, match="roster"):
        recuse.audit(planted, roster=42)  # type: ignore[arg-type]


def test_fail_on_gates_the_report_in_memory(
    planted: pd.DataFrame, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """The gate of --fail-on reads the report object, never the report.json it wrote,
    and says what `recuse gate` says of that file."""
    import recuse.report.gate as gate

    data = tmp_path / "pairs.csv"
    planted.to_csv(data, index=False)
    out = tmp_path / "r"
    args = ["audit", str(data), "--out", str(out), "--n-boot", "200", "--only", "position"]

    def no_reading(path: object) -> None:
        raise AssertionError("--fail-on read the report back from disk")

    with monkeypatch.context() as m:
        m.setattr(gate, "load_report", no_reading)
        code = main([*args, "--fail-on", "position=0.05"])
    gated = capsys.readouterr().out.split(" s\n", 1)[1]
    assert code == 1
    assert main(["gate", str(out / "report.json"), "--max", "position=0.05"]) == 1
    assert capsys.readouterr().out == gated


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "[audit]\nlevel = 1.5\n",
            "[audit] level = 1.5: must be in [0.5, 1), e.g. 0.9 (the --level",
        ),
        ("[audit]\nlevel = nan\n", "[audit] level = nan: must be in [0.5, 1)"),
        ("[audit]\nlevel = 0\n", "[audit] level = 0: must be in [0.5, 1)"),
        (
            "[audit]\nn_boot = -1\n",
            "[audit] n_boot = -1: must be an integer of at least 100, e.g. 2000 (the",
        ),
        ("[audit]\nn-boot = 0\n", "[audit] n-boot = 0: must be an integer of at least 100"),
        ("[audit]\nseed = -1\n", "[audit] seed = -1: must be 0 or more (the --seed option)"),
    ],
)
def test_a_config_value_out_of_range_names_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    """A value of the right type but out of range (level = 1.5 in recuse.toml) said
    only '--level must be in [0.5, 1)', sending the user to a flag they never gave: the
    file, the key as written and the flag now, like a value of the wrong type."""
    cfg = tmp_path / "recuse.toml"
    cfg.write_text(text, "utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value).startswith(f"{cfg} line 2: ") and message in str(err.value)
    assert "\n" not in str(err.value)
    cfg.write_text("[audit]\nlevel = 0.5\nn-boot = 100\nseed = 0\n", "utf-8")  # the bounds
    assert resolve({}, config=load_config(cfg)).level == 0.5


def test_min_n_is_one_field_and_its_use(planted: pd.DataFrame, tmp_path: Path) -> None:
    """``--min-n`` was added as one :class:`Settings` field plus its use (the line of
    ``Settings.audit_options``): the flag, the keyword and the config key all reach the
    estimators. Each judge has 180 pairs judged in both orders: a smallest group of 180
    estimates position bias, 181 leaves it not estimated, with the count in the reason."""
    assert settings_fields()["min_n"].flag == "--min-n" and default("min_n") == 5
    kept = recuse.audit(planted, only=["position"], n_boot=200, min_n=180)
    assert sorted(kept.findings["n"]) == [180, 180]
    left = recuse.audit(planted, only=["position"], n_boot=200, min_n=181)
    assert left.findings.empty
    assert "only 180 pairs judged in both orders (need at least 181)" in " ".join(
        left.skipped["reason"]
    )
    cfg = tmp_path / "recuse.toml"
    cfg.write_text("[audit]\nmin-n = 181\n", "utf-8")
    assert resolve({}, config=load_config(cfg)).audit_options().min_n == 181
    data = tmp_path / "pairs.csv"
    planted.to_csv(data, index=False)
    out = tmp_path / "r"
    args = ["audit", str(data), "--out", str(out), "--n-boot", "200", "--only", "position"]
    assert main([*args, "--min-n", "181"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["provenance"]["options"]["min_n (smallest group estimated)"] == 181
    # out of range: one line naming the flag (command line) or the file, key and flag
    with pytest.raises(
        ConfigError, match=r"min_n \(--min-n\) = 0: must be a positive integer, e.g. 5$"
    ):
        recuse.audit(planted, min_n=0)
    cfg.write_text("[audit]\nmin-n = 0\n", "utf-8")
    with pytest.raises(
        ConfigError,
        match=r"\[audit\] min-n = 0: must be a positive integer, e.g. 5 \(the --min-n option\)$",
    ):
        load_config(cfg)


@pytest.mark.parametrize(("name", "example"), [("n_boot", 2000), ("seed", 0), ("min_n", 5)])
def test_a_whole_number_error_gives_an_example_that_fits_its_option(
    tmp_path: Path, name: str, example: int
) -> None:
    """Before: "must be a number, a whole one, e.g. 2000" for --seed and --min-n too (a
    seed of 2000 or a smallest group of 2000 pairs is no example). Each gets its own, a
    value it takes (its default), on the command line, in the API and in the file."""
    flag = settings_fields()[name].flag
    with pytest.raises(ConfigError) as err:
        read_options({name: 1.5}, "api")
    assert str(err.value) == f"{name} ({flag}) = 1.5: must be a number, a whole one, e.g. {example}"
    cfg = tmp_path / "recuse.toml"
    cfg.write_text(f"[audit]\n{name} = 'x'\n", "utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert str(err.value).endswith(f"= 'x': must be a number, a whole one, e.g. {example} "
                                   f"(the {flag} option)")  # fmt: skip
    read_options({name: example}, "cli")  # the example itself is a valid value


def test_numpy_numbers_are_numbers_to_the_api() -> None:
    """``recuse.audit(seed=np.int64(1))`` was refused as 'must be a number, a whole
    one' and ``level=np.float32(0.9)`` as 'must be a number': values read from a table
    or computed with NumPy are numbers. They arrive as Python numbers; NumPy bools and
    fractions are still refused."""
    read = read_options(
        {"seed": np.int64(1), "min_n": np.int32(7), "n_boot": np.uint16(300),
         "level": np.float32(0.75)}, "api",
    )  # fmt: skip
    assert read == {"seed": 1, "min_n": 7, "n_boot": 300, "level": float(np.float32(0.75))}
    assert all(type(v) in (int, float) for v in read.values())
    assert type(read_options({"n_boot": np.float64(200.0)}, "api")["n_boot"]) is int
    for bad in ({"seed": np.bool_(True)}, {"min_n": np.float64(1.5)}, {"level": np.bool_(0)}):
        with pytest.raises(ConfigError, match="must be a number"):
            read_options(bad, "api")


def test_an_n_boot_just_over_the_bound_says_its_memory_in_mib() -> None:
    """10 million resamples need 10**7 * 32 bytes = 305 MiB an estimate: the error read
    'about 0 GiB of memory', a reason that gives none."""
    with pytest.raises(ConfigError) as caught:
        recuse.audit("llmbar", n_boot=10**7)
    err = str(caught.value)
    assert f"about {10**7 * 32 / 2**20:,.0f} MiB of memory" in err and "305 MiB" in err
    assert "0 GiB" not in err


def test_a_level_given_as_a_fraction_is_checked_by_its_value() -> None:
    """The API reads any real number as a level (fractions.Fraction(9, 10) is 0.9), but
    the range was checked on the value as given, which the bootstrap's check does not
    count as a number: 9/10 was refused as 'must be in [0.5, 1)'."""
    from fractions import Fraction

    assert read_options({"level": Fraction(9, 10)}, "api")["level"] == 0.9
    with pytest.raises(ConfigError) as caught:
        read_options({"level": Fraction(3, 10)}, "api")
    assert "= Fraction(3, 10): must be in [0.5, 1)" in str(caught.value)
    with pytest.raises(ConfigError, match=r"= 0: must be in \[0.5, 1\)"):
        read_options({"level": 0}, "api")  # said as written, not 0.0


@pytest.mark.parametrize("number", ["nan", "NaN", "-nan"])
def test_values_with_a_nan_number_is_one_line_not_a_traceback(
    number: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--values human:A=nan``: NaN is unequal to itself, so the check for a value given
    twice read it as given twice and looked up the number it had not stored (KeyError,
    a traceback); it is a number that is not a probability."""
    from recuse.options import parse_values

    with pytest.raises(ConfigError, match=r"'A' → nan is not a probability in \[0, 1\]"):
        parse_values([f"human:A={number}"])
    assert main(["validate", "x.csv", "--values", f"human:A={number}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("recuse: error: --values: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def test_analysis_ids_are_read_as_recuse_gate_reads_them(
    planted: pd.DataFrame, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`recuse gate --max self_preference=0.05` is read, but `recuse audit --only
    self_preference` was refused as an unknown analysis: --only and --skip (command
    line, recuse.toml, keyword) read an id in any case, with _ for -."""
    given = read_options({"only": "self_preference,Position", "skip": ["Family_Preference"]},
                         "api")  # fmt: skip
    s = resolve(given)
    assert s.only == ("self-preference", "position") and s.skip == ("family-preference",)
    data = tmp_path / "pairs.csv"
    planted.to_csv(data, index=False)
    out = tmp_path / "r"
    args = ["audit", str(data), "--out", str(out), "--n-boot", "200", "--only", "Position"]
    assert main(args) == 0
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert [s["id"] for s in report["sections"]] == ["position"]
    with pytest.raises(ConfigError, match="--only: unknown analysis 'selfpref'"):
        resolve(read_options({"only": "selfpref"}, "api")).audit_options()
    capsys.readouterr()


@pytest.mark.parametrize(
    ("given", "read"),
    [
        ("none", ()),
        (["none"], ()),
        (" none ", ()),
        (["fast"], "fast"),
        ("fast,ordinal", "fast+ordinal"),
        (["all"], ("all",)),
    ],
)
def test_a_word_for_the_checks_reads_alike_alone_in_a_string_or_in_a_list(
    given: object, read: object
) -> None:
    """The error for an unknown check lists fast, all and none as allowed; ``["none"]``
    (the API's list form) was refused as 'unknown check(s) none'."""
    from recuse.choices import FAST_CHECKS
    from recuse.options import robustness_checks

    want = {"fast": FAST_CHECKS, "fast+ordinal": (*FAST_CHECKS, "ordinal")}
    assert robustness_checks(given) == want.get(read, read)  # type: ignore[arg-type]

"""Judge templates: each file kind renders a known pair as its upstream tool renders it,
is read by its upstream rule, is scored by Eq. 3 on its own labels, and keys its
judgments by its content hash."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from judging.helpers import FakeBackend, claiming_while_another_claims, fake_pairs
from recuse.errors import ConfigError, InputError
from recuse.judging.backends.base import Failure, Generation
from recuse.judging.protocols import (
    Message,
    Pair,
    PairwiseProtocol,
    Prompt,
    score_distribution,
)
from recuse.judging.runner import Runner, RunSummary
from recuse.judging.store import Store
from recuse.judging.templates import JudgeTemplate, load_template, template_entries

FIXTURES = Path(__file__).parent / "fixtures" / "fastchat_phi3"


def _table(n: int) -> pd.DataFrame:
    return pd.DataFrame(fake_pairs(n))


def _jsonl(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def _fastchat_pairs(shared_data: Path) -> list[tuple[dict[str, object], Pair]]:
    """The fixture's real judgment records with the pair FastChat judged (a = model_1)."""
    mt = shared_data / "mt_bench"
    questions = {r["question_id"]: r for r in _jsonl(mt / "question.jsonl")}
    refs = {r["question_id"]: r for r in _jsonl(mt / "reference_answer" / "gpt-4.jsonl")}
    answers = {
        m: {r["question_id"]: r for r in _jsonl(FIXTURES / "model_answer" / f"{m}.jsonl")}
        for m in ("phi-3", "phi-3-dpo")
    }
    out = []
    for rec in _jsonl(FIXTURES / "gpt-4_pair.jsonl"):
        qid = rec["question_id"]
        a = answers[str(rec["model_1"])][qid]["choices"][0]["turns"][0]  # type: ignore[index]
        b = answers[str(rec["model_2"])][qid]["choices"][0]["turns"][0]  # type: ignore[index]
        ref = refs[qid]["choices"][0]["turns"][0] if qid in refs else None  # type: ignore[index]
        q = questions[qid]["turns"][0]  # type: ignore[index]
        out.append((rec, Pair(f"q{qid}", q, a, b, ref)))
    return out


# --- FastChat: the real judge_prompts.jsonl ------------------------------------------


def test_fastchat_pair_v2_and_math_render_exactly_as_fastchat_rendered_them(
    shared_data: Path,
) -> None:
    """FastChat recorded the user prompt it sent in both orders (g1: model_1 as A, g2:
    model_2 as A); ours must be the same text, after the file's system prompt."""
    prompts_file = shared_data / "mt_bench" / "judge_prompts.jsonl"
    systems = {str(r["name"]): r["system_prompt"] for r in _jsonl(prompts_file)}
    cases = _fastchat_pairs(shared_data)
    assert {str(rec["judge"][1]) for rec, _ in cases} == {"pair-v2", "pair-math-v1"}  # type: ignore[index]
    for rec, pair in cases:
        name = str(rec["judge"][1])  # type: ignore[index]
        template = load_template(f"{prompts_file}:{name}")
        assert template.needs_reference == (name == "pair-math-v1")
        assert (pair.reference is not None) == template.needs_reference
        protocol = PairwiseProtocol(mode="explain", template=template)
        for order, recorded in (
            ("first", rec["g1_user_prompt"]),
            ("second", rec["g2_user_prompt"]),
        ):
            got = protocol.prompt(pair, order)  # type: ignore[arg-type]
            assert got.messages == (
                Message("system", str(systems[name])),
                Message("user", str(recorded)),
            )
            assert got.prefix == ""
        direct = PairwiseProtocol(mode="direct", template=template).prompt(pair, "first")
        assert direct.prefix == "[["


def test_fastchat_verdicts_read_as_fastchat_read_them(shared_data: Path) -> None:
    """The recorded replies give the recorded winners (g1: A = model_1; g2: A = model_2)."""
    prompts_file = shared_data / "mt_bench" / "judge_prompts.jsonl"
    seen = 0
    for rec, _ in _fastchat_pairs(shared_data):
        fmt = load_template(f"{prompts_file}:{rec['judge'][1]}").verdict  # type: ignore[index]
        for game, a_is in (("g1", "model_1"), ("g2", "model_2")):
            verdict = fmt.read(str(rec[f"{game}_judgment"]))[0]
            winner = rec[f"{game}_winner"]
            expected = {"A": a_is, "B": "model_2" if a_is == "model_1" else "model_1", "C": "tie"}
            assert expected[verdict] == winner  # type: ignore[index]
            seen += 1
    assert seen == 4
    fmt = load_template(f"{prompts_file}:pair-v2").verdict
    # FastChat tests "[[A]]" in the reply first, then "[[B]]", then "[[C]]"
    assert fmt.read("at first [[B]], on reflection [[A]]")[0] == "A"
    assert fmt.read("[[C]] then [[B]]")[0] == "B"
    assert fmt.read("a tie: [[C]]")[0] == "C"
    assert fmt.read("[[D]] or [A]") == (None, None)


def test_fastchat_listing_says_what_is_usable_and_why_not(shared_data: Path) -> None:
    prompts_file = shared_data / "mt_bench" / "judge_prompts.jsonl"
    entries = {e.name: e for e in template_entries(prompts_file)}
    assert len(entries) == 8
    usable = sorted(n for n, e in entries.items() if e.template is not None)
    assert usable == ["pair-math-v1", "pair-v2"]
    assert "multi-turn" in entries["pair-v2-multi-turn"].note
    assert "score per answer" in entries["single-v1"].note
    with pytest.raises(ConfigError, match=r"holds 8 prompts.*pair-v2, pair-math-v1"):
        load_template(prompts_file)
    with pytest.raises(ConfigError, match="no prompt named 'pair-v9'"):
        load_template(f"{prompts_file}:pair-v9")
    with pytest.raises(ConfigError, match=r"single-v1 cannot judge pairs.*score per answer"):
        load_template(f"{prompts_file}:single-v1")
    with pytest.raises(ConfigError, match="no such file"):
        load_template(str(prompts_file) + ".missing:pair-v2")


# --- recuse TOML -------------------------------------------------------------------------

TOML = """
name = "strict"
system = "Judge fairly. Reply with [[A]] or [[B]], or [[C]] for a tie."
user = '''Q: {question}
Reference: {reference}
{"json": "braces stay", "x": "{not_a_field}"}
First: {answer_a}
Second: {answer_b}'''
[verdict]
a = "[[A]]"
b = "[[B]]"
tie = "[[C]]"
answer_prefix = "My verdict: [["
"""


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_toml_template_fills_only_its_placeholders(tmp_path: Path) -> None:
    template = load_template(_write(tmp_path / "t.toml", TOML))
    assert template.kind == "toml" and template.needs_reference
    pair = Pair("i", "2+2? {answer_b}", "four {question}", "five", "4")
    second = PairwiseProtocol(mode="direct", template=template).prompt(pair, "second")
    assert second == Prompt(
        (
            Message("system", "Judge fairly. Reply with [[A]] or [[B]], or [[C]] for a tie."),
            Message(
                "user",
                'Q: 2+2? {answer_b}\nReference: 4\n{"json": "braces stay", "x": '
                '"{not_a_field}"}\nFirst: five\nSecond: four {question}',
            ),
        ),
        "My verdict: [[",
    )
    fmt = template.verdict
    assert (fmt.opener, fmt.closer, fmt.pick) == ("[[", "]]", "last")
    assert fmt.read("[[A]] ... no, [[B]]") == ("B", "B")
    assert fmt.read("[[ A ]]") == (None, None)  # the marks exactly as written


def test_toml_plain_letter_labels_are_words(tmp_path: Path) -> None:
    text = 'user = "{question} {answer_a} {answer_b}"\n[verdict]\na = "A"\nb = "B"\n'
    template = load_template(_write(tmp_path / "letters.toml", text))
    fmt = template.verdict
    assert (fmt.opener, fmt.closer, template.answer_prefix) == ("", "", "")
    assert fmt.read("All Bad things: B") == ("B", "B")  # not the A of All nor B of Bad
    assert not fmt.first_token_ambiguous


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('user = "{question} {answer_a}"\n[verdict]\na = "A"\nb = "B"\n', "column 'user'"),
        ('sytem = "x"\nuser = "{question} {answer_a} {answer_b}"\n', "column 'sytem'"),
        ('user = "{question} {answer_a} {answer_b}"\n', "column 'verdict'"),
        (
            'user = "{question} {answer_a} {answer_b}"\n[verdict]\na = "[[A]]"\nb = "[[B]]"\n'
            'answer_prefix = "Verdict:"\n',
            "column 'verdict.answer_prefix'",
        ),
        (
            'user = "{question} {answer_a} {answer_b}"\n[verdict]\na = "X"\nb = ["Y", "X"]\n',
            "column 'verdict'",
        ),
        ('user = "{question} {answer_a} {answer_b}"\n[verdict]\na = "A"\n', "column 'verdict.b'"),
        # an empty list was taken: a judge that could never write A, every verdict B
        (
            'user = "{question} {answer_a} {answer_b}"\n[verdict]\na = []\nb = "B"\n',
            "column 'verdict.a'",
        ),
        ("user = [", "not valid TOML"),
    ],
)
def test_bad_toml_template_names_file_and_field(tmp_path: Path, text: str, where: str) -> None:
    path = _write(tmp_path / "bad.toml", text)
    with pytest.raises(InputError) as err:
        load_template(path)
    message = str(err.value)
    assert str(path) in message and where in message and "\n" not in message


def test_a_toml_template_nested_too_deeply_is_one_line(tmp_path: Path) -> None:
    """Nested past Python's recursion limit, it was a RecursionError traceback."""
    path = _write(tmp_path / "deep.toml", "user = " + "[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError) as err:
        load_template(path)
    assert str(err.value).startswith(f"{path}: arrays or tables nested too deeply for Python")


# --- Arena-Hard-Auto ---------------------------------------------------------------------

# The v0.1 judge configuration schema (config/judge_config.yaml of Arena-Hard-Auto);
# the system prompt is a short one of ours.
ARENA_V01 = r"""name: judgment config file for Arena Hard

bench_name: arena-hard-v0.1

judge_model: gpt-4-1106-preview
reference: False
ref_model: null

baseline: True
baseline_model: gpt-4-0314

pairwise: True
temperature: 0
max_tokens: 4096

regex_pattern: \[\[([AB<>=]+)\]\]
number_of_judgment_attempts: 2
system_prompt: "@SYSTEM@"

prompt_template: ["@TEMPLATE@"]

model_list:
  - gpt-3.5-turbo-0125
"""
# the lines as the YAML files write them (one line each, escapes as in the files)
_V01_TEMPLATE = (
    r"<|User Prompt|>\n{question_1}\n\n<|The Start of Assistant A's Answer|>\n{answer_1}\n"
    r"<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n"
    r"{answer_2}\n<|The End of Assistant B's Answer|>"
)
_SYSTEM = r"Compare the two answers.\n\nEnd with one label: [[A>>B]], [[A>B]], [[A=B]], "
_SYSTEM += r"[[B>A]] or [[B>>A]]."
ARENA_V01 = ARENA_V01.replace("@SYSTEM@", _SYSTEM).replace("@TEMPLATE@", _V01_TEMPLATE)

# The v2.0 schema (config/arena-hard-v2.0.yaml), with the system_prompt a user adds.
ARENA_V2 = r"""judge_model: gpt-4.1
temperature: 0.0
max_tokens: 16000

bench_name: arena-hard-v2.0

reference: null

regex_patterns:
  - \[\[([AB<>=]+)\]\]
  - \[([AB<>=]+)\]

prompt_template: "@TEMPLATE@"

model_list:
  - deepseek-r1
"""
_V2_TEMPLATE = (
    _V01_TEMPLATE.replace("{question_1}", "{QUESTION}")
    .replace("{answer_1}", "{ANSWER_A}")
    .replace("{answer_2}", "{ANSWER_B}")
)
ARENA_V2 = ARENA_V2.replace("@TEMPLATE@", _V2_TEMPLATE)


def test_arena_hard_v01_renders_as_gen_judgment_and_reads_one_distinct_label(
    tmp_path: Path,
) -> None:
    template = load_template(_write(tmp_path / "judge_config.yaml", ARENA_V01))
    pair = Pair("u1", "Name a prime.", "7", "Eight {question_1}")
    # gen_judgment game 1 shows the baseline (a) as A, game 2 swaps
    for order, first, second in (
        ("first", "7", "Eight {question_1}"),
        ("second", "Eight {question_1}", "7"),
    ):
        got = PairwiseProtocol(mode="direct", template=template).prompt(pair, order)  # type: ignore[arg-type]
        assert got.messages == (
            Message(
                "system",
                "Compare the two answers.\n\nEnd with one label: [[A>>B]], [[A>B]], [[A=B]], "
                "[[B>A]] or [[B>>A]].",
            ),
            Message(
                "user",
                "<|User Prompt|>\nName a prime.\n\n<|The Start of Assistant A's Answer|>\n"
                f"{first}\n<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant "
                f"B's Answer|>\n{second}\n<|The End of Assistant B's Answer|>",
            ),
        )
        assert got.prefix == "[["
    fmt = template.verdict
    assert fmt.read("[[A>B]] and again [[A>B]]") == ("A", "A>B")
    assert fmt.read("[[A>>B]] or maybe [[A>B]]") == (None, None)  # two distinct: unparsed
    assert fmt.read("[[A=B]]") == ("C", "A=B")
    assert fmt.read("[[b>a]]") == (None, None)  # v0.1 reads the reply as written
    assert fmt.first_token_ambiguous  # A>B and A=B both start with A


def test_arena_hard_v2_needs_a_system_prompt_then_reads_the_last_label(tmp_path: Path) -> None:
    path = _write(tmp_path / "arena-hard-v2.0.yaml", ARENA_V2)
    with pytest.raises(InputError, match=r"column 'system_prompt'.*add system_prompt"):
        load_template(path)
    path = _write(path, ARENA_V2 + 'system_prompt: "Judge."\n')
    template = load_template(path)
    got = PairwiseProtocol(mode="explain", template=template).prompt(
        Pair("u", "Q?", "yes", "no"), "second"
    )
    assert got.messages[0] == Message("system", "Judge.")
    assert got.messages[1].content.startswith(
        "<|User Prompt|>\nQ?\n\n<|The Start of Assistant A's Answer|>\nno\n"
    )
    fmt = template.verdict
    assert fmt.read("[[A>B]] ... final: [[B>A]]") == ("B", "B>A")  # the last match
    assert fmt.read("single brackets, lower case: [b>>a]") == ("B", "B>>A")


# --- AlpacaEval ----------------------------------------------------------------------------

# A prompt file in AlpacaEval's ChatML markup (our own wording) and evaluator configs in
# the evaluators_configs/<name>/configs.yaml layout.
ALPACA_PROMPT = """<|im_start|>system
You pick the better output.
<|im_end|>
<|im_start|>user
Instruction: {instruction}

{
    "model_identifier": "m",
    "output": \"\"\"{output_1}\"\"\"
},
{
    "model_identifier": "M",
    "output": \"\"\"{output_2}\"\"\"
}

Answer m or M.
<|im_end|>
"""

ALPACA_CONFIGS = """weighted_mine:
  prompt_template: "clf_mine/prompt.txt"
  fn_completions: "openai_completions"
  completions_kwargs:
    model_name: "gpt-4-1106-preview"
    max_tokens: 1
    temperature: 1
    logprobs: true
    top_logprobs: 5
  fn_completion_parser: "logprob_parser"
  completion_parser_kwargs:
    numerator_token: "m"
    denominator_tokens: ["m", "M"]
    is_binarize: false
  completion_key: "completions_all"
  batch_size: 1
ranking_mine:
  prompt_template: "clf_mine/prompt.txt"
  fn_completion_parser: "ranking_parser"
  batch_size: 1
regex_mine:
  prompt_template: "clf_mine/prompt.txt"
  fn_completion_parser: "regex_parser"
"""


def _alpaca(tmp_path: Path) -> Path:
    root = tmp_path / "evaluators_configs"
    (root / "clf_mine").mkdir(parents=True)
    (root / "weighted_mine").mkdir()
    _write(root / "clf_mine" / "prompt.txt", ALPACA_PROMPT)
    return _write(root / "weighted_mine" / "configs.yaml", ALPACA_CONFIGS)


def test_alpaca_eval_renders_as_make_prompts_and_prompt_to_chatml(tmp_path: Path) -> None:
    configs = _alpaca(tmp_path)
    template = load_template(f"{configs}:weighted_mine")
    # AlpacaEval fills {instruction} first and then the FIRST "{output_1}" it finds, which
    # here is the one the instruction brought in; each message is stripped
    pair = Pair("i", "  Repeat '{output_1}'.", "yes  ", "no")
    got = PairwiseProtocol(mode="direct", template=template).prompt(pair, "first")
    user = (
        "Instruction:   Repeat 'yes  '.\n\n{\n"
        '    "model_identifier": "m",\n    "output": """{output_1}"""\n},\n{\n'
        '    "model_identifier": "M",\n    "output": """no"""\n}\n\nAnswer m or M.'
    )
    assert got == Prompt(
        (Message("system", "You pick the better output."), Message("user", user)), ""
    )
    swapped = PairwiseProtocol(mode="direct", template=template).prompt(
        Pair("i", "Say hi.", "hi", "hello"), "second"
    )
    assert '"output": """hello"""\n},\n{\n    "model_identifier": "M",\n    "output": """hi"""' in (
        swapped.messages[1].content
    )
    fmt = template.verdict
    assert fmt.read("m") == ("A", "m") and fmt.read(" M\n") == ("B", "M")
    assert fmt.read("M is better") == (None, None)


def test_alpaca_eval_parsers_and_listing(tmp_path: Path) -> None:
    configs = _alpaca(tmp_path)
    entries = {e.name: e for e in template_entries(configs)}
    assert entries["ranking_mine"].template is not None
    assert entries["ranking_mine"].template.answer_prefix is None  # explain mode only
    assert entries["regex_mine"].template is None
    assert "regex_parser" in entries["regex_mine"].note
    with pytest.raises(ConfigError, match="holds 3 prompts"):
        load_template(configs)
    ranking = entries["ranking_mine"].template
    protocol = PairwiseProtocol(mode="direct", template=ranking)
    with Store(tmp_path / "s.db") as store, pytest.raises(ConfigError, match="--mode explain"):
        Runner(FakeBackend(), store, progress=False).pairwise(_table(2), protocol)


# --- Eq. 3 on the template's own labels ------------------------------------------------------


def test_eq3_sums_the_templates_own_label_tokens(shared_data: Path, tmp_path: Path) -> None:
    fastchat = load_template(shared_data / "mt_bench" / "judge_prompts.jsonl:pair-v2").verdict
    dist = {"A": math.log(0.3), " A": math.log(0.1), "B": math.log(0.2), "C": math.log(0.1),
            "Cat": math.log(0.05), "The": math.log(0.25)}  # fmt: skip
    s = score_distribution(dist, fmt=fastchat)
    assert s.p_slot_a == pytest.approx(0.4 / 0.6) and s.p_tie == pytest.approx(0.1)
    alpaca = load_template(f"{_alpaca(tmp_path)}:weighted_mine").verdict
    dist = {"m": math.log(0.6), "M": math.log(0.2), " m": math.log(0.1), "The": math.log(0.1)}
    s = score_distribution(dist, fmt=alpaca)  # exact tokens, as AlpacaEval's logprob_parser
    assert s.p_slot_a == pytest.approx(0.75) and s.mass == pytest.approx(0.8)


class LabelBackend(FakeBackend):
    """Whole-label log-probs planted per label text; records what it was asked."""

    def __init__(self, planted: dict[str, float]) -> None:
        super().__init__()
        self.planted = planted
        self.asked: list[tuple[Prompt, str]] = []

    async def continuation_logprobs(  # type: ignore[override]
        self, prompts: Sequence[Prompt], continuations: Sequence[str]
    ) -> list[np.ndarray | Failure]:
        self.asked += list(zip(prompts, continuations, strict=True))
        # split each label's log-prob over two "tokens" (their sum is what counts)
        return [np.array([self.planted[c] / 2, self.planted[c] / 2]) for c in continuations]


def test_labels_sharing_a_first_token_are_scored_whole(tmp_path: Path) -> None:
    """Arena-Hard's A>B and A=B start alike: each label's whole text is scored, and
    p(A) = P(A>>B) + P(A>B), p(B) = P(B>A) + P(B>>A), tie = P(A=B)."""
    template = load_template(_write(tmp_path / "judge_config.yaml", ARENA_V01))
    planted = {"A>>B]]": -1.0, "A>B]]": -2.0, "A=B]]": -1.5, "B>A]]": -2.5, "B>>A]]": -3.0}
    backend = LabelBackend(planted)
    pa = math.exp(-1.0) + math.exp(-2.0)
    pb = math.exp(-2.5) + math.exp(-3.0)
    with Store(tmp_path / "s.db") as store:
        summary = Runner(backend, store, progress=False).pairwise(
            _table(2), PairwiseProtocol(mode="direct", template=template)
        )
        rows = store.judgments()
    assert summary.ok == 4
    assert len(backend.asked) == 4 * 5 and {c for _, c in backend.asked} == set(planted)
    assert all(p.prefix == "[[" for p, _ in backend.asked)
    first = rows[rows["slot"] == "first"]
    second = rows[rows["slot"] == "second"]
    assert np.allclose(first["p_slot_a"], pa / (pa + pb))
    assert np.allclose(first["value"], pa / (pa + pb))
    assert np.allclose(second["value"], 1 - pa / (pa + pb))  # undone to the a/b frame
    assert np.allclose(rows["p_tie"], math.exp(-1.5))


# --- the cache key: two templates never share verdicts -----------------------------------


def test_two_templates_never_share_verdicts(tmp_path: Path) -> None:
    base = 'user = "Q: {question}\\nA: {answer_a}\\nB: {answer_b}"\n[verdict]\n'
    one = load_template(_write(tmp_path / "one.toml", base + 'a = "[[A]]"\nb = "[[B]]"\n'))
    # the same messages, but a tie label and another reading rule
    two = load_template(
        _write(
            tmp_path / "two.toml",
            base + 'a = "[[A]]"\nb = "[[B]]"\ntie = "[[C]]"\npick = "unique"\n',
        )
    )
    same = load_template(_write(tmp_path / "copy.toml", base + 'a = "[[A]]"\nb = "[[B]]"\n'))
    pair = Pair("i0", "q", "x", "y")
    assert PairwiseProtocol(template=one).prompt(pair, "first") == PairwiseProtocol(
        template=two
    ).prompt(pair, "first")  # identical text: only the hash tells them apart
    assert one.sha256 != two.sha256 and one.sha256 == same.sha256
    pairs = _table(3)
    backend = FakeBackend()
    with Store(tmp_path / "s.db") as store:

        def run(judge: str, template: JudgeTemplate | None) -> RunSummary:
            runner = Runner(backend, store, judge=judge, progress=False)
            return runner.pairwise(pairs, PairwiseProtocol(template=template))

        first, again = run("one", one), run("copy", same)
        other, ours = run("two", two), run("ours", None)
        keys = store.judgments().groupby("key")["judge"].agg(lambda j: ",".join(sorted(j)))
        # one judge id, one prompt: another template under "one" is refused, untouched
        with pytest.raises(ConfigError, match="'one' already holds verdicts made with"):
            run("one", two)
        assert len(store.judgments()) == 24
    assert (first.cached, first.ok) == (0, 6)
    assert again.cached == 6  # the same content from another file: served
    assert other.cached == 0 and other.ok == 6  # another template: judged again
    assert ours.cached == 0 and backend.calls == 3 * 2  # three judged runs of two batches
    assert len(keys) == 18 and set(keys) == {"copy,one", "two", "ours"}


def test_a_run_that_judged_nothing_leaves_no_claim_on_its_prompt(tmp_path: Path) -> None:
    """The judge prompt is claimed before judging; a run that stored nothing (Ctrl-C,
    or here a server gone at the first batch) left the claim behind, so a run with
    the corrected template under the same judge id was refused ("already holds
    verdicts made with the judge prompt ...", for a store holding none)."""
    base = 'user = "Q: {question}\\nA: {answer_a}\\nB: {answer_b}"\n[verdict]\n'
    one = load_template(_write(tmp_path / "one.toml", base + 'a = "[[A]]"\nb = "[[B]]"\n'))
    two = load_template(_write(tmp_path / "two.toml", base + 'a = "[[A]]"\nb = "[[B]]"\n'
                                                     'tie = "[[C]]"\n'))  # fmt: skip

    class Broken(FakeBackend):
        async def _tick(self) -> None:
            raise ConnectionAbortedError("the server went away")

    with Store(tmp_path / "s.db") as store:
        with pytest.raises(ConnectionAbortedError):
            Runner(Broken(), store, judge="j", progress=False).pairwise(
                _table(2), PairwiseProtocol(template=one)
            )
        assert store.judgments().empty
        done = Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
            _table(2), PairwiseProtocol(template=two)
        )
        assert done.ok == 4
        # a claim that has verdicts stays: the first template is refused now
        with pytest.raises(ConfigError, match="'j' already holds verdicts made with"):
            Runner(FakeBackend(), store, judge="j", progress=False).pairwise(
                _table(2), PairwiseProtocol(template=one)
            )


def _claim_prompt_while_another_claims(path: Path, prompt: str) -> Store:
    """``claim_prompt(j, prompt)`` on ``path`` while another run claims ``j`` for the
    prompt "p1" between its look-up and its insert; the claiming store."""
    return claiming_while_another_claims(
        path, "judge_prompts",
        lambda other: other.claim_prompt("j", prompt="p1", name="one", keys=[]),
        lambda mine: mine.claim_prompt("j", prompt=prompt, name="two", keys=[]),
    )  # fmt: skip


def test_two_runs_claiming_one_judge_prompt_at_once(tmp_path: Path) -> None:
    """Two `recuse judge` runs of one judge started together on one store (overlapping
    items) both found its prompt unclaimed and both inserted it: the second ended in
    "cannot use the store (UNIQUE constraint failed: judge_prompts.judge)", exit 2, as
    claim_judge did before it took the first claim. Now the same prompt goes on and
    another is refused with the --judge-id fix, whichever run claims first."""
    with _claim_prompt_while_another_claims(tmp_path / "s.db", "p1") as store:
        assert store.judge_prompts()["j"][0] == "one"
    with pytest.raises(ConfigError, match=r"judge id 'j' already holds .*--judge-id"):
        _claim_prompt_while_another_claims(tmp_path / "s.db", "p2")
    with Store(tmp_path / "s.db") as store:
        assert store.judge_prompts()["j"][0] == "one"


def test_verdicts_from_before_prompts_were_recorded_are_recuses_own(tmp_path: Path) -> None:
    """A store whose judge has rows but no recorded prompt (written before templates)
    holds recuse's prompt's verdicts: a template under that judge id is refused."""
    import sqlite3

    template = load_template(
        _write(tmp_path / "t.toml", TOML.replace("Reference: {reference}\n", ""))
    )
    db = tmp_path / "old.db"
    with Store(db) as store:
        Runner(FakeBackend(), store, judge="j", progress=False).pairwise(_table(2))
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM judge_prompts")
    with Store(db) as store:
        runner = Runner(FakeBackend(), store, judge="j", progress=False)
        with pytest.raises(ConfigError, match="recuse's own judge prompt; this run uses 'strict'"):
            runner.pairwise(_table(2), PairwiseProtocol(template=template))
        assert runner.pairwise(_table(2)).cached == 4  # recuse's prompt: resumed


def test_template_needing_a_reference_refuses_pairs_without_one(
    shared_data: Path, tmp_path: Path
) -> None:
    math_t = load_template(shared_data / "mt_bench" / "judge_prompts.jsonl:pair-math-v1")
    assert isinstance(math_t, JudgeTemplate)
    pairs = _table(2)
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(InputError, match="row 1, column 'reference'"):
            Runner(FakeBackend(), store, progress=False).pairwise(
                pairs, PairwiseProtocol(template=math_t)
            )
        assert store.judgments().empty


def test_whole_label_templates_refuse_a_backend_without_continuation_scores(
    tmp_path: Path,
) -> None:
    template = load_template(_write(tmp_path / "judge_config.yaml", ARENA_V01))
    backend = FakeBackend()
    backend.continuation_refusal = "this server gives no prompt log-probs"
    with Store(tmp_path / "s.db") as store:
        with pytest.raises(ConfigError, match=r"share their first token.*--logprobs-mode"):
            Runner(backend, store, progress=False).pairwise(
                _table(2), PairwiseProtocol(mode="direct", template=template)
            )
        assert store.judgments().empty and backend.calls == 0


class ReplyBackend(FakeBackend):
    """A chat-only judge (no pre-filled answers) that writes fixed replies in turn."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__(batch_size=1)
        self.supports_prefix = False
        self.replies = replies
        self.stops: list[list[str]] = []

    async def generate(  # type: ignore[override]
        self, prompts: Sequence[Prompt], *, max_new_tokens: int, stop: Sequence[str] = (),
        top_k: int = 0, select: object = None,
    ) -> list[Generation | Failure]:  # fmt: skip
        self.stops.append(list(stop))
        return [Generation(text=self.replies.pop(0)) for _ in prompts]


def test_explain_mode_reads_the_templates_own_labels(tmp_path: Path) -> None:
    text = (
        'user = "{question} (a) {answer_a} (b) {answer_b}"\n[verdict]\n'
        'a = "Output (a)"\nb = "Output (b)"\npick = "unique"\n'
    )
    template = load_template(_write(tmp_path / "ab.toml", text))
    replies = ["Thinking. Output (b)", "Output (a) ... yes, Output (a)",
               "Output (a) or Output (b)", "no verdict here"]  # fmt: skip
    backend = ReplyBackend(list(replies))
    with Store(tmp_path / "s.db") as store:
        summary = Runner(backend, store, judge="j", progress=False).pairwise(
            _table(2), PairwiseProtocol(mode="explain", template=template)
        )
        rows = store.judgments().sort_values(["item_id", "slot"])
    assert (summary.ok, summary.unparsed, summary.failed) == (2, 2, 0)
    assert backend.stops == [[]] * 4  # a chat judge's whole reply is read by the rule
    by_text = dict(
        zip(rows["text"], zip(rows["status"], rows["p_slot_a"], strict=True), strict=True)
    )
    assert by_text["Thinking. Output (b)"] == ("ok", 0.0)
    assert by_text["Output (a) ... yes, Output (a)"] == ("ok", 1.0)
    assert by_text["Output (a) or Output (b)"][0] == "unparsed"  # two labels, pick unique
    assert by_text["no verdict here"][0] == "unparsed"
    assert rows.loc[rows["status"] == "unparsed", "value"].isna().all()  # never defaulted


def test_a_chat_judges_log_probs_do_not_overrule_its_templates_rule(tmp_path: Path) -> None:
    """Two different marks where the template's rule reads none (pick unique) stay
    unparsed even with log-probs at the first mark; an AlpacaEval one-token verdict is
    read from its first token's log-probs as AlpacaEval reads it."""
    from recuse.judging.handlers.pairwise import read_generated

    text = 'user = "{question} {answer_a} {answer_b}"\n[verdict]\na = "[[A]]"\nb = "[[B]]"\n'
    text += 'pick = "unique"\n'
    fmt = load_template(_write(tmp_path / "u.toml", text)).verdict
    dist = {"A": math.log(0.7), "B": math.log(0.1)}
    g = Generation("x [[A]] y [[B]]", ("x", " [[", "A", "]]", " y", " [[", "B", "]]"), (dist,) * 8)
    assert read_generated(g, fmt, parsed=True)[0].status == "unparsed"
    assert read_generated(g, fmt)[0].p_slot_a == pytest.approx(0.875)  # replay: log-probs
    alpaca = load_template(f"{_alpaca(tmp_path)}:weighted_mine").verdict
    one = {"m": math.log(0.2), "M": math.log(0.6)}
    g = Generation("M, because", ("M", ",", " because"), (one, one, one))
    assert read_generated(g, alpaca, parsed=True)[0].p_slot_a == pytest.approx(0.25)


def test_a_replys_log_probs_are_read_at_the_mark_its_rule_reads(tmp_path: Path) -> None:
    """A chat reply that writes the labels in its explanation before its verdict
    ('Format [[A]] or [[B]]. Verdict: [[B]]'): the template's rule reads the last mark
    (pick last, a TOML template's default), so Eq. 3 is read at that mark's [[, by hand
    0.02 / (0.02 + 0.9) = 0.0217; before, it was read at the first [[ (0.9 / 0.95 =
    0.947, for a judge whose verdict is B). Pick priority reads [[A]], the first mark
    of A: 0.947 there."""
    from recuse.judging.handlers.pairwise import read_generated

    toks = ("Format", " [[", "A", "]]", " or", " [[", "B", "]]", ". Verdict:", " [[", "B", "]]")
    at_first = {"A": math.log(0.9), "B": math.log(0.05)}
    at_last = {"A": math.log(0.02), "B": math.log(0.9)}
    g = Generation("".join(toks), toks, (at_first,) * 9 + (at_last,) * 3)
    text = 'user = "{question} {answer_a} {answer_b}"\n[verdict]\na = "[[A]]"\nb = "[[B]]"\n'
    last = load_template(_write(tmp_path / "last.toml", text)).verdict
    score, label, _ = read_generated(g, last, parsed=True)
    assert label == "B" and score.status == "ok"
    assert score.p_slot_a == pytest.approx(0.02 / 0.92)
    text += 'pick = "priority"\n'
    first = load_template(_write(tmp_path / "priority.toml", text)).verdict
    score, label, _ = read_generated(g, first, parsed=True)
    assert label == "A" and score.p_slot_a == pytest.approx(0.9 / 0.95)
    # a mark after a third bracket ('[[[A]]'): its opener ends the token '[[['
    odd = ("x", " [[[", "A", "]]")
    score, _, _ = read_generated(Generation("x [[[A]]", odd, (at_first,) * 4), last, parsed=True)
    assert score.status == "ok" and score.p_slot_a == pytest.approx(0.9 / 0.95)
    # '[[[A]]' written '[[', '[', 'A': the mark's opener is the second '[[' (at 1),
    # which ends the token '['; its verdict token is 'A' (0.02 / 0.92), not the '[' after
    # the first '[[' (mass 0.01 there, where '[' holds the rest: 0.5 read as a verdict)
    split = ("x", " [[", "[", "A", "]]")
    bracket = {"[": math.log(0.99), "A": math.log(0.005), "B": math.log(0.005)}
    g = Generation("x [[[A]]", split, (at_first, at_first, bracket, at_last, at_first))
    score, label, _ = read_generated(g, last, parsed=True)
    assert label == "A" and score.p_slot_a == pytest.approx(0.02 / 0.92)
    assert score.mass == pytest.approx(0.92)
    # four brackets, split '[', '[[', '[', 'B': the mark starts at the third '[' of them
    four = ("[", "[[", "[", "B", "]]")
    g = Generation("[[[[B]]", four, (at_first, at_first, bracket, at_last, at_first))
    assert read_generated(g, last, parsed=True)[0].p_slot_a == pytest.approx(0.02 / 0.92)


def test_one_judge_id_is_not_judged_in_both_modes(tmp_path: Path) -> None:
    """Direct and explain mode are two prompts: under one judge id, a run in the other
    mode is refused. Before, export kept the last verdict per (judge, item, order), so
    a direct run followed by an explain run on part of the items exported a table whose
    rows came from two protocols under one judge id, without a word."""
    pairs = _table(3)
    with Store(tmp_path / "s.db") as store:

        def run(judge: str, mode: str) -> RunSummary:
            runner = Runner(FakeBackend(), store, judge=judge, progress=False)
            return runner.pairwise(pairs, PairwiseProtocol(mode=mode))  # type: ignore[arg-type]

        assert run("j", "direct").ok == 6
        with pytest.raises(ConfigError, match=r"this run uses \"recuse's own prompt \(explain"):
            run("j", "explain")
        assert run("j", "direct").cached == 6  # the same mode resumes as before
        assert run("j-explain", "explain").ok == 6  # its own judge id: kept apart
        assert len(store.judgments()) == 12


def test_a_fastchat_file_with_two_different_prompts_of_one_name_is_refused(
    tmp_path: Path,
) -> None:
    """``judge_prompts.jsonl:pair-x`` with two different rows named pair-x: recuse took
    the first, FastChat's loader (a dict by name) the last: another prompt, silently."""
    row = {"name": "pair-x", "type": "pairwise", "system_prompt": "s",
           "prompt_template": "{question} {answer_a} {answer_b}", "output_format": "[[A]]",
           "description": "", "category": "general"}  # fmt: skip
    same = _write(tmp_path / "same.jsonl", "\n".join([json.dumps(row)] * 2) + "\n")
    assert load_template(f"{same}:pair-x").name == "pair-x"  # two copies: one prompt
    other = {**row, "prompt_template": "Q {question} A {answer_a} B {answer_b}"}
    two = _write(tmp_path / "two.jsonl", json.dumps(row) + "\n" + json.dumps(other) + "\n")
    with pytest.raises(ConfigError, match="holds 2 different prompts named 'pair-x'"):
        load_template(f"{two}:pair-x")


def test_a_chat_reply_whose_top_k_lacks_a_verdict_is_unparsed_not_its_text() -> None:
    """The server's top-k (TopK) at the token after [[ holding A but no B: the row is
    unparsed with the 'outside top-k' reason, not 1.0 and not the text verdict; the
    same numbers as a full distribution (a local model) read P(B) = 0 as before, and
    a top-k holding both gives Eq. 3 by hand: 0.7 / (0.7 + 0.1) = 0.875."""
    from recuse.judging.backends.base import TopK
    from recuse.judging.handlers.pairwise import read_generated
    from recuse.verdict_parsing import BRACKETS

    toks = ("Fine.", " [[", "A", "]]")
    only_a = {"A": math.log(0.7), "x": math.log(0.2)}
    score, _, why = read_generated(Generation("Fine. [[A]]", toks, (TopK(only_a),) * 4), BRACKETS)
    assert score.status == "unparsed" and math.isnan(score.p_slot_a)
    assert why == "verdict token outside top-k: no log-prob for B among the server's top 2"
    full, _, why = read_generated(Generation("Fine. [[A]]", toks, (only_a,) * 4), BRACKETS)
    assert full.p_slot_a == pytest.approx(1.0) and why is None
    both = TopK({"A": math.log(0.7), "B": math.log(0.1)})
    s, _, why = read_generated(Generation("Fine. [[A]]", toks, (both,) * 4), BRACKETS)
    assert s.status == "ok" and s.p_slot_a == pytest.approx(0.875) and why is None


def test_a_top_k_without_a_spellings_twin_whose_bound_straddles_a_half_is_unparsed() -> None:
    """Planted truth: A 0.30, B 0.35, " A" 0.10, " B" 0.08, so the judge prefers B
    (p_a = 0.40 / 0.83 = 0.482). Its top 3 (A, B, " A") leave " B" out: read as 0, p_a
    was 0.40 / 0.75 = 0.533, a firm preference for A. " B" is at most 0.10 (the
    smallest listed), so p_a lies in [0.40 / 0.85, 0.533] = [0.471, 0.533], both sides
    of 0.5: unparsed, on the chat route and on completions alike."""
    from recuse.judging.backends.base import TopK
    from recuse.judging.handlers.pairwise import bounded, read_generated
    from recuse.judging.protocols import score_distribution
    from recuse.verdict_parsing import BRACKETS

    truth = {"A": 0.30, "B": 0.35, " A": 0.10, " B": 0.08}
    full = {t: math.log(p) for t, p in truth.items()}
    assert score_distribution(full).p_slot_a == pytest.approx(0.40 / 0.83)
    top = TopK({t: lp for t, lp in full.items() if t != " B"})
    toks = ("Fine.", " [[", "A", "]]")
    score, _, why = read_generated(Generation("Fine. [[A]]", toks, (top,) * 4), BRACKETS)
    assert score.status == "unparsed" and math.isnan(score.p_slot_a)
    assert score.mass == pytest.approx(0.75)
    assert why is not None and why.endswith(
        "p_a lies between 0.471 and 0.533, on both sides of 0.5: which answer the judge "
        "prefers cannot be read"
    )
    assert (f"{0.40 / 0.85:.3f}", f"{0.40 / 0.75:.3f}") == ("0.471", "0.533")
    # the same top 3 as a whole distribution (a local model's): read as it is
    s, _, why = read_generated(Generation("Fine. [[A]]", toks, (dict(top),) * 4), BRACKETS)
    assert s.p_slot_a == pytest.approx(0.40 / 0.75) and why is None
    # A's twin absent instead (" B" listed, " A" not): the bound is on A's side
    mirror = TopK({"A": full["A"], "B": full["B"], " B": full[" B"]})
    s, why = bounded(mirror, BRACKETS, score_distribution(mirror))
    # p_a in [0.30 / 0.73, (0.30 + 0.08) / (0.38 + 0.43)] = [0.411, 0.469]: below 0.5
    assert s.status == "ok" and s.p_slot_a == pytest.approx(0.30 / 0.73)
    assert why is not None and "between 0.411 and 0.469;" in why
    assert (f"{0.30 / 0.73:.3f}", f"{0.38 / 0.81:.3f}") == ("0.411", "0.469")


def test_a_bound_that_cannot_move_p_a_is_no_interval() -> None:
    """A twin absent from a top-k whose listed tokens leave (almost) nothing of 1, or
    whose smallest listed probability is tiny, moves p_a by less than its third
    decimal. Before, each such row carried the interval ('between 0.900 and 0.900') and
    `recuse judge` counted it among the verdicts that are not exact."""
    from recuse.judging.backends.base import TopK
    from recuse.judging.handlers.pairwise import bounded
    from recuse.judging.protocols import score_distribution
    from recuse.verdict_parsing import BRACKETS

    def read(probs: dict[str, float]) -> tuple[str, float, str | None]:
        top = TopK({t: math.log(p) for t, p in probs.items()})
        s, why = bounded(top, BRACKETS, score_distribution(top))
        return s.status, s.p_slot_a, why

    # the listed mass is 1 but for rounding: " B" holds at most 1e-12
    status, p_a, why = read({"A": 0.6, "B": 0.1, " A": 0.3 - 1e-12})
    assert (status, why) == ("ok", None) and p_a == pytest.approx(0.9)
    # a confident judge's top 20: A 0.999, B 0.0005, " A" 0.0003 and 17 tokens of 1e-6;
    # " B" is at most 1e-6, so p_a lies in [0.9993 / 0.999801, 0.9993 / 0.9998]: its
    # width, 0.9993 * 1e-6 / (0.9998 * 0.999801) = 1.0e-6
    fillers = {f"f{i}": 1e-6 for i in range(17)}
    status, p_a, why = read({"A": 0.999, "B": 0.0005, " A": 0.0003, **fillers})
    assert (status, why) == ("ok", None) and p_a == pytest.approx(0.9993 / 0.9998)
    assert 0.9993 / 0.9998 - 0.9993 / 0.999801 == pytest.approx(1.0e-6, rel=1e-3)
    # the smallest listed 0.002: p_a in [0.6 / 0.802, 0.6 / 0.8] = [0.748, 0.750], a
    # width of 0.0019, is still an interval
    status, p_a, why = read({"A": 0.5, "B": 0.2, " A": 0.1, "x": 0.002})
    assert status == "ok" and p_a == pytest.approx(0.75)
    assert why is not None and "between 0.748 and 0.750;" in why
    assert (f"{0.6 / 0.802:.3f}", 0.6 / 0.8 - 0.6 / 0.802) == (
        "0.748",
        pytest.approx(0.0019, abs=1e-4),
    )


def test_a_top_k_missing_twins_on_both_sides_reads_p_a_inside_its_interval() -> None:
    """A 0.6 and " B" 0.3 listed, " A" and B not: each at most 0.3 (the smallest
    listed) and together at most 0.1 (what the listed leave of 1), so p_a lies in
    [0.6 / 1.0, 0.7 / 1.0] = [0.600, 0.700], and the p_a read with both at 0, 0.6 / 0.9
    = 0.667, is inside it, not its end, as the count line said of every such row."""
    from recuse.judging.backends.base import TopK
    from recuse.judging.handlers.pairwise import SPELLING_OUTSIDE, bounded, spelling_line
    from recuse.judging.protocols import score_distribution
    from recuse.verdict_parsing import BRACKETS

    top = TopK({"A": math.log(0.6), " B": math.log(0.3)})
    s, why = bounded(top, BRACKETS, score_distribution(top))
    assert s.status == "ok" and s.p_slot_a == pytest.approx(0.6 / 0.9)
    assert why == (
        f"{SPELLING_OUTSIDE}: ' A', 'B' not among the server's top 2 while their twins "
        "are, so their probabilities are unknown (each at most 0.3, the smallest listed): "
        "p_a lies between 0.600 and 0.700; read with them at 0: 0.667"
    )
    said = spelling_line([why, None])
    assert said is not None and "interval's end" not in said
    assert "at its end where only one verdict's spelling lacks its twin" in said


def test_bad_yaml_template_is_one_clean_line(tmp_path: Path) -> None:
    """The YAML parser's message spans lines (an indented snippet of the file): the
    error reads it as one line with single spaces, as it did before an error's
    whitespace was kept as read (no "\\n", no run of blanks)."""
    path = _write(tmp_path / "judge_config.yaml", "judge_model: a: b\n")
    with pytest.raises(InputError, match="not valid YAML") as err:
        load_template(path)
    message = str(err.value)
    assert "\\n" not in message and "  " not in message, message
    assert "line 1, column 15: judge_model: a: b ^)" in message, message

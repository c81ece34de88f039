"""Judge templates: the judge prompt a team ships, read from its own file.

``recuse judge`` and ``recuse probe`` judge with recuse's pairwise prompt unless a
template is given (``--template FILE`` or ``--template FILE:NAME``). A template holds
the messages the judge reads (with placeholders for the question, the two answers and,
where it shows one, a reference answer), the verdict labels the judge is asked to write
and the answer prefix at which the verdict is scored in ``direct`` mode. Four file
kinds are read as they are; recuse ships none of their prompt text:

* **recuse TOML** — our own format::

      name = "strict"                       # optional (default: the file name)
      system = "You are a fair judge ..."   # optional
      user = "Q: {question}\\nA: {answer_a}\\nB: {answer_b}"   # {reference} optional
      [verdict]
      a = "[[A]]"            # a mark, or a list of marks, meaning "A is better"
      b = "[[B]]"
      tie = "[[C]]"          # optional
      pick = "last"          # last | priority | unique: which mark counts
      answer_prefix = "[["   # optional: direct mode pre-fills it (default: the
                             # marks' common beginning)

  Placeholders are exactly ``{question}``, ``{answer_a}``, ``{answer_b}`` and
  ``{reference}``; any other text, braces included, is kept as written. The marks'
  common beginning (``[[``) is where the verdict token is read, their common end
  (``]]``) closes it.
* **FastChat** ``judge_prompts.jsonl`` (``name``, ``type``, ``system_prompt``,
  ``prompt_template``, ``output_format``): the ``pairwise`` prompts with output
  format ``[[A]]`` and one turn (``pair-v2``, ``pair-math-v1`` with its reference
  ``{ref_answer_1}``). Rendered as FastChat's ``run_judge_pair`` renders them for an
  OpenAI judge: ``prompt_template.format(question=, answer_a=, answer_b=,
  ref_answer_1=)`` as the user message after the system prompt (none when empty).
  Read as FastChat reads it: ``[[A]]`` anywhere wins, else ``[[B]]``, else ``[[C]]``
  (tie).
* **Arena-Hard-Auto** YAML judge configuration with ``system_prompt`` and
  ``prompt_template``. The v0.1 schema (``judge_config.yaml``: a list of
  templates, each a user message, with ``{question_1}``, ``{answer_1}`` (slot A),
  ``{answer_2}``, ``{ref_answer_1}``; ``regex_pattern``) is read with v0.1's rule:
  exactly one distinct match, else unparsed. The v2 schema (a template with
  ``{QUESTION}``, ``{ANSWER_A}``, ``{ANSWER_B}``, ``{REFERENCE}``;
  ``regex_patterns``) with v2's: the patterns in turn on the upper-cased reply, the
  last match. v2 keeps its system prompts in code (``utils/judge_utils.py``), so a
  v2 file needs a ``system_prompt`` key added. Labels ``A>>B``, ``A>B`` (A), ``A=B``
  (tie), ``B>A``, ``B>>A`` (B).
* **AlpacaEval** evaluator ``configs.yaml`` (``FILE`` or ``FILE:ANNOTATOR``) and its
  prompt file (``prompt_template``, relative to the folder above the config's, as
  AlpacaEval resolves it). Placeholders ``{instruction}``, ``{output_1}`` (slot A),
  ``{output_2}``, each filled once in order of first appearance (AlpacaEval's
  ``make_prompts``), then the ``<|im_start|>role ... <|im_end|>`` markup split into
  messages with each content stripped (``prompt_to_chatml``). Parsers:
  ``logprob_parser`` (the numerator token, e.g. ``m``, means the first output is
  better; the reply is that one token, and direct mode reads it as AlpacaEval does,
  from the first token's log-probs) and ``ranking_parser`` (a ranking list; explain
  mode only).

Scoring (Wataoka et al., Eq. 3) uses the template's own labels: in ``direct`` mode
the assistant turn is pre-filled with the answer prefix and ``p(A) / (p(A) + p(B))``
is read from the next-token distribution, where p(A) sums every token that commits to
a mark meaning A (a tie mark's probability is kept as ``p_tie``). When one first
token can commit to two verdicts (Arena-Hard's ``A>B`` and ``A=B``), each label's
whole text is scored instead (its log-prob as a continuation). The template's
:attr:`JudgeTemplate.sha256` enters every judgment's cache key, and a store keeps one
judge prompt per judge id (:meth:`~recuse.judging.store.Store.claim_prompt`). A template
replaces the quality question only: ``recuse probe``'s self-recognition rows keep
recuse's authorship question.
"""

from __future__ import annotations

import hashlib
import json
import re
import string
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

from recuse.errors import ConfigError, InputError, MissingDependencyError
from recuse.judging.protocols import (
    ARENA_HARD,
    Message,
    VerdictFormat,
    labels_format,
)
from recuse.tables import map_option

__all__ = [
    "JudgeTemplate",
    "TemplateEntry",
    "check_references",
    "listing",
    "load_template",
    "placeholder_notes",
    "selectable",
    "template_entries",
]

TEMPLATE_VERSION = "template-v1"
TemplateFormat = Literal["toml", "fastchat", "arena-hard", "alpaca-eval"]
Fill = Literal["names", "format", "replace-first"]
Field = Literal["question", "answer_a", "answer_b", "reference"]
ROLES = ("system", "user", "assistant")


@dataclass(frozen=True)
class JudgeTemplate:
    """A judge prompt: messages with placeholders, how they are filled, the verdict
    labels and the answer prefix (``None``: no direct-mode scoring point).

    ``slots`` maps each placeholder name to what fills it (``question``,
    ``answer_a`` = the answer shown first, ``answer_b``, ``reference``). ``fill``:
    ``names`` (each ``{name}`` replaced, in one pass), ``format`` (Python's
    ``str.format``, as FastChat and Arena-Hard-Auto fill theirs) or
    ``replace-first`` (each placeholder's first occurrence, in order of first
    appearance, as AlpacaEval fills its own). ``chatml``: after filling, the one
    message is split at ``<|im_start|>``/``<|im_end|>`` into messages.
    """

    name: str
    kind: TemplateFormat
    messages: tuple[tuple[str, str], ...]
    slots: tuple[tuple[str, Field], ...]
    fill: Fill
    verdict: VerdictFormat
    answer_prefix: str | None
    chatml: bool = False
    source: str = ""  # where it was read (not part of the content hash)

    @property
    def needs_reference(self) -> bool:
        return any(f == "reference" for _, f in self.slots)

    @cached_property
    def sha256(self) -> str:
        """Hash of everything that changes a verdict: messages, filling, labels,
        reading rule and answer prefix (not the name nor the file it came from)."""
        blob = json.dumps(
            {
                "version": TEMPLATE_VERSION,
                "messages": [list(m) for m in self.messages],
                "slots": [list(s) for s in self.slots],
                "fill": self.fill,
                "chatml": self.chatml,
                "verdict": self.verdict.spec(),
                "answer_prefix": self.answer_prefix,
            },
            sort_keys=True,
            ensure_ascii=False,
            separators=(",", ":"),
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def render(
        self, *, question: str, slot_a: str, slot_b: str, reference: str | None = None
    ) -> tuple[Message, ...]:
        """The messages for one pair in one order (slot A is shown first)."""
        if self.needs_reference and reference is None:
            raise InputError(
                f"judge template {self.name!r} shows a reference answer and this pair has none",
                column="reference",
                fix="give a column reference with each pair's reference answer",
            )
        values = {"question": question, "answer_a": slot_a, "answer_b": slot_b}
        values["reference"] = reference or ""
        by_name = {name: values[field] for name, field in self.slots}
        filled = [(role, _fill(text, by_name, self.fill)) for role, text in self.messages]
        if self.chatml:
            out = []
            for role, content in chatml_messages(filled[0][1]):
                if role not in ROLES:
                    raise InputError(
                        f"a question or answer holds ChatML markup (<|im_start|>{role}): "
                        f"AlpacaEval's template {self.name!r} would split the prompt there",
                        fix="remove the markup from the texts, or judge with another template",
                    )
                out.append(Message(role, content))  # type: ignore[arg-type]
            return tuple(out)
        return tuple(Message(role, text) for role, text in filled)  # type: ignore[arg-type]

    def line(self) -> str:
        """One line for listings: kind, labels, prefix, placeholders, hash."""
        labels = ", ".join(f"{label}={_MEANING[m]}" for label, m in self.verdict.labels)
        prefix = "none" if self.answer_prefix is None else repr(self.answer_prefix)
        ref = "; shows a reference answer" if self.needs_reference else ""
        return (
            f"{self.name} ({self.kind}): labels {labels} after {self.verdict.opener!r} "
            f"(pick {self.verdict.pick}); answer prefix {prefix}{ref}; sha256 {self.sha256[:12]}"
        )


_MEANING = {"A": "A better", "B": "B better", "C": "tie"}


@dataclass(frozen=True)
class TemplateEntry:
    """One prompt a file holds: its template, or why recuse cannot judge with it."""

    name: str
    template: JudgeTemplate | None
    note: str = ""
    #: the line of the file it was read from (FastChat's JSON lines), where it has one
    row: int | None = None

    def line(self) -> str:
        if self.template is not None:
            return self.template.line()
        if self.note.startswith(f"{self.name}:"):  # a line read as no prompt at all
            return f"{self.name}: not usable — {self.note[len(self.name) + 1 :].strip()}"
        return f"{self.name}: not usable — {self.note}"


# --- filling ------------------------------------------------------------------------


def _fill(text: str, values: Mapping[str, str], fill: Fill) -> str:
    if fill == "format":
        return text.format(**values)
    if fill == "replace-first":
        for name, value in values.items():  # slots are in order of first appearance
            text = text.replace("{" + name + "}", value, 1)
        return text
    if not values:
        return text
    pattern = re.compile("|".join(re.escape("{" + n + "}") for n in values))
    return pattern.sub(lambda m: values[m.group(0)[1:-1]], text)


def chatml_messages(text: str) -> list[tuple[str, str]]:
    """``(role, content)`` of ChatML text, split as AlpacaEval's ``prompt_to_chatml``
    splits it: at each ``<|im_start|>``, the role is the first line, the content the
    rest up to ``<|im_end|>``, both stripped."""
    out = []
    for part in text.strip().split("<|im_start|>")[1:]:
        head, _, rest = part.partition("\n")
        out.append((head.strip(), rest.split("<|im_end|>", 1)[0].strip()))
    return out


def _format_fields(text: str, *, file: Path, where: str) -> list[str]:
    """The ``str.format`` field names of ``text`` (in order, repeats kept). A field with
    a format spec or a conversion (``{question:>9999}``, ``{question:{answer_a}}``,
    ``{question!r}``) is refused: filled by ``str.format`` it pads, nests or changes
    the text the judge sees (or fails), so it is no plain placeholder."""
    try:
        parsed = list(string.Formatter().parse(text))
    except ValueError as exc:
        raise InputError(
            f"{where} is not a format string ({exc})", file=file, fix="double literal braces"
        ) from None
    fields = []
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if spec or conversion:
            written = "{" + name + (f"!{conversion}" if conversion else "")
            written += (f":{spec}" if spec else "") + "}"
            raise InputError(
                f"{where}: the placeholder {written} has a format spec or conversion "
                "(recuse fills plain placeholders only)",
                file=file,
                fix=f"write {{{name}}}, or double the braces to show them as text",
            )
        fields.append(name)
    return fields


# --- reading files -----------------------------------------------------------------------


def _no_template(path: Path) -> str:
    """What ``path``, no regular file, is: "a folder", "not a regular file (a pipe,
    socket or device)" or "no such file" (a folder or a pipe was "no such file")."""
    from recuse.files import is_file

    if is_file(path, folder=True):
        return "a folder, not a file"
    try:
        path.stat()
    except OSError:
        return "no such file"
    return "not a regular file (a pipe, socket or device)"


def split_spec(spec: str | Path) -> tuple[Path, str | None]:
    """``FILE`` or ``FILE:NAME`` -> (file, name)."""
    from recuse.files import is_file

    path = Path(spec)
    if is_file(path):
        return path, None
    head, sep, name = str(spec).rpartition(":")
    if sep and head and is_file(head) and name:
        return Path(head), name
    what = _no_template(path)
    said = f"no such file {str(spec)!r}" if what == "no such file" else f"{str(spec)!r} is {what}"
    raise ConfigError(
        f"--template: {said} — give a template file (TOML, FastChat "
        "judge_prompts.jsonl, Arena-Hard-Auto YAML or AlpacaEval configs.yaml), with "
        ":NAME to pick one of several prompts"
    )


def template_entries(path: str | Path) -> list[TemplateEntry]:
    """Every prompt ``path`` holds, each with its template or why it is not usable."""
    from recuse.files import is_file

    path = Path(path)
    if not is_file(path):
        raise InputError(_no_template(path), file=path, fix="give a judge template file")
    suffix = path.suffix.lower()
    if suffix == ".toml":
        return [TemplateEntry(path.stem, _read_toml(path))]
    if suffix == ".jsonl":
        return _read_fastchat(path)
    if suffix in (".yaml", ".yml"):
        data = _read_yaml(path)
        if isinstance(data, dict) and "prompt_template" in data:
            return [TemplateEntry(path.stem, _read_arena_hard(path, data))]
        if isinstance(data, dict) and data and all(isinstance(v, dict) for v in data.values()):
            return [_alpaca_entry(path, str(k), v) for k, v in data.items()]
        raise InputError(
            "neither an Arena-Hard-Auto judge configuration (prompt_template at the top) "
            "nor an AlpacaEval evaluator configs.yaml (annotator name -> settings)",
            file=path,
        )
    raise InputError(
        f"unknown template file type {suffix or '(none)'!r}",
        file=path,
        fix="use .toml (recuse), .jsonl (FastChat judge_prompts), .yaml (Arena-Hard-Auto "
        "judge config or AlpacaEval configs.yaml)",
    )


def selectable(entries: Sequence[TemplateEntry]) -> list[str]:
    """The names ``--template FILE:NAME`` accepts, in file order: usable prompts whose
    name no other, different prompt of the file also has (FastChat's loader would
    silently keep the last of a name, so recuse refuses such a name)."""
    by_name: dict[str, set[str]] = {}
    for e in entries:
        by_name.setdefault(e.name, set()).add(
            e.template.sha256 if e.template is not None else "not usable"
        )
    return [n for n, kinds in by_name.items() if len(kinds) == 1 and "not usable" not in kinds]


def listing(entries: Sequence[TemplateEntry]) -> list[str]:
    """One line per prompt (:meth:`TemplateEntry.line`); a usable prompt whose name is
    shared with a different prompt says that ``--template`` cannot pick it."""
    names = set(selectable(entries))
    counts: dict[str, int] = {}
    for e in entries:
        counts[e.name] = counts.get(e.name, 0) + 1
    out = []
    for e in entries:
        text = e.line()
        if e.template is not None and e.name not in names:
            rows = [str(o.row) for o in entries if o.name == e.name and o.row is not None]
            where = f" (rows {', '.join(rows)})" if rows else ""
            text += (
                f" — not selectable: {counts[e.name]} different prompts are named "
                f"{e.name!r}{where}; keep one"
            )
        out.append(text)
    return out


def load_template(spec: str | Path) -> JudgeTemplate:
    """The judge template ``spec`` names: ``FILE`` or ``FILE:NAME``."""
    path, name = split_spec(spec)
    entries = template_entries(path)
    if name is None:
        if len(entries) == 1:
            chosen = entries[0]
        else:
            usable = selectable(entries)
            raise ConfigError(
                f"{path} holds {len(entries)} prompts — name one as {path}:NAME"
                + (f" (usable: {', '.join(usable)})" if usable else "")
            )
    else:
        found = [e for e in entries if e.name == name]
        if not found:
            names = ", ".join(e.name for e in entries)
            raise ConfigError(f"{path} has no prompt named {name!r} — it holds: {names}")
        kinds = {e.template.sha256 if e.template is not None else e.note for e in found}
        if len(kinds) > 1:  # FastChat keeps the last of a name; which one was meant?
            raise ConfigError(
                f"{path} holds {len(found)} different prompts named {name!r} — keep one "
                "(FastChat's loader would use the last, silently)"
            )
        chosen = found[0]
    if chosen.template is None:
        raise ConfigError(f"{path}:{chosen.name} cannot judge pairs here — {chosen.note}")
    return chosen.template


def _read_yaml(path: Path) -> Any:
    try:
        import yaml
    except ImportError:
        raise MissingDependencyError("pyyaml", "yaml") from None
    from recuse.files import read_text

    try:
        return yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        # the parser's message spans lines (its snippet of the file, indented): one
        # line, its whitespace runs as one space
        said = " ".join(str(exc).split())
        raise InputError(f"not valid YAML ({said})", file=path) from None


def _text(value: object, *, file: Path, key: str, row: int | None = None) -> str:
    if not isinstance(value, str):
        raise InputError(
            f"expected text, found {type(value).__name__}",
            file=file,
            row=row,
            column=key,
        )
    return value


_TOML_KEYS = {"name", "system", "user", "verdict"}
_TOML_VERDICT_KEYS = {"a", "b", "tie", "pick", "answer_prefix"}
_NAMES: dict[str, Field] = {
    "question": "question",
    "answer_a": "answer_a",
    "answer_b": "answer_b",
    "reference": "reference",
}


def _read_toml(path: Path) -> JudgeTemplate:
    from recuse.files import TOO_DEEP, read_text

    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"not valid TOML ({exc})", file=path) from None
    except RecursionError:  # (tomllib's reader recurses: it was a traceback)
        raise InputError(TOO_DEEP, file=path) from None
    unknown = sorted(set(data) - _TOML_KEYS)
    if unknown:
        raise InputError(
            f"unknown key {unknown[0]!r}",
            file=path,
            column=unknown[0],
            fix=f"a template has {', '.join(sorted(_TOML_KEYS))}",
        )
    if "user" not in data:
        raise InputError("no user message", file=path, column="user", fix=_TOML_FIX)
    user = _text(data["user"], file=path, key="user")
    system = _text(data.get("system", ""), file=path, key="system")
    name = _text(data.get("name", path.stem), file=path, key="name")
    for need in ("question", "answer_a", "answer_b"):
        if "{" + need + "}" not in user:
            raise InputError(
                f"the user message has no {{{need}}} placeholder",
                file=path,
                column="user",
                fix="write {question}, {answer_a} and {answer_b} where they go",
            )
    texts = system + "\n" + user
    slots = tuple((n, f) for n, f in _NAMES.items() if "{" + n + "}" in texts)
    verdict = data.get("verdict")
    if not isinstance(verdict, dict):
        raise InputError("no [verdict] table", file=path, column="verdict", fix=_TOML_FIX)
    bad = sorted(set(verdict) - _TOML_VERDICT_KEYS)
    if bad:
        raise InputError(
            f"unknown key {bad[0]!r} in [verdict]",
            file=path,
            column=f"verdict.{bad[0]}",
            fix=f"[verdict] has {', '.join(sorted(_TOML_VERDICT_KEYS))}",
        )
    labels: list[tuple[str, str]] = []
    for key, meaning in (("a", "A"), ("b", "B"), ("tie", "C")):
        marks = verdict.get(key)
        if marks is None:
            if key == "tie":
                continue
            raise InputError(
                f"no label for {key}", file=path, column=f"verdict.{key}", fix=_TOML_FIX
            )
        listed = [marks] if isinstance(marks, str) else marks if isinstance(marks, list) else [None]
        if not listed:  # a = []: a judge that could never write that verdict
            listed = [None]
        for mark in listed:
            if not isinstance(mark, str) or not mark.strip():
                raise InputError(
                    "a label is a non-empty text (or a list of them)",
                    file=path,
                    column=f"verdict.{key}",
                )
            labels.append((mark, meaning))
    marks_seen = [m for m, _ in labels]
    if len(set(marks_seen)) != len(marks_seen):
        raise InputError(
            "the same label stands for two verdicts", file=path, column="verdict", fix=_TOML_FIX
        )
    pick = verdict.get("pick", "last")
    if pick not in ("last", "priority", "unique"):
        raise InputError(
            f"pick must be last, priority or unique, not {pick!r}",
            file=path,
            column="verdict.pick",
        )
    fmt = labels_format(name, labels, pick=pick)
    _refuse_prefix_labels(fmt, file=path)
    prefix = _text(verdict.get("answer_prefix", fmt.opener), file=path, key="answer_prefix")
    if not prefix.endswith(fmt.opener):
        raise InputError(
            f"the answer prefix {prefix!r} does not end with the labels' opening text "
            f"{fmt.opener!r}, so the verdict token would not come next",
            file=path,
            column="verdict.answer_prefix",
            fix=f"end it with {fmt.opener!r}",
        )
    messages = ((("system", system),) if system else ()) + (("user", user),)
    return JudgeTemplate(
        name=name,
        kind="toml",
        messages=messages,
        slots=slots,
        fill="names",
        verdict=fmt,
        answer_prefix=prefix,
        source=str(path),
    )


def _refuse_prefix_labels(fmt: VerdictFormat, *, file: Path) -> None:
    """Refuse labels where one, written out to its end (closing mark included), begins
    another (``A`` / ``AB``): scored as a continuation, the shorter label's probability
    holds every reply that goes on to the longer one, so the judge would lean to the
    shorter label's slot by construction (a position bias it does not have)."""
    whole = [(label + fmt.closer, label, meaning) for label, meaning in fmt.labels]
    for text, label, meaning in whole:
        for other, other_label, other_meaning in whole:
            if other != text and other.startswith(text):
                raise InputError(
                    f"the label {fmt.opener + label + fmt.closer!r} is the beginning of "
                    f"{fmt.opener + other_label + fmt.closer!r}: a reply written as the "
                    "second would also count as the first when Eq. 3 is read (as "
                    f"{_MEANING[meaning]!r} as well as {_MEANING[other_meaning]!r})",
                    file=file,
                    column="verdict",
                    fix="choose labels none of which begins another (e.g. [[A]], [[B]], "
                    "[[C]]: the closing mark ends each)",
                )


_TOML_FIX = (
    'write user = "...{question}...{answer_a}...{answer_b}..." and a [verdict] table '
    'with a = "[[A]]", b = "[[B]]" (tie = "[[C]]" optional)'
)

_FASTCHAT_KEYS = ("name", "type", "system_prompt", "prompt_template", "output_format")
_FASTCHAT_FIELDS: dict[str, Field] = {
    "question": "question",
    "answer_a": "answer_a",
    "answer_b": "answer_b",
    "ref_answer_1": "reference",
}


def _read_fastchat(path: Path) -> list[TemplateEntry]:
    """Every line of a ``judge_prompts.jsonl``: a line that cannot be read, or a prompt
    recuse cannot judge with, is listed as not usable with the reason; the others are
    usable (one bad line does not hide the file's good prompts)."""
    from recuse.files import read_text

    out = []
    for row, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append(_fastchat_entry(path, row, line))
        except InputError as exc:
            note = f"row {row}: {exc.reason}" + (f" — {exc.fix}" if exc.fix else "")
            out.append(TemplateEntry(f"row {row}", None, note, row=row))
    return out


def _fastchat_entry(path: Path, row: int, line: str) -> TemplateEntry:
    """The prompt of one line (``row``) of a FastChat ``judge_prompts.jsonl``."""
    try:
        rec = json.loads(line)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"not valid JSON ({exc})".replace("\n", " ")) from None
    if not isinstance(rec, dict):
        raise InputError(f"a JSON {type(rec).__name__}, not an object")
    missing = [k for k in _FASTCHAT_KEYS if k not in rec]
    if missing:
        raise InputError(f"no {', '.join(missing)}", fix=f"a line has {', '.join(_FASTCHAT_KEYS)}")
    name = _text(rec["name"], file=path, key="name", row=row)

    def refused(note: str) -> TemplateEntry:
        return TemplateEntry(name, None, note, row=row)

    for key in ("system_prompt", "prompt_template"):
        if not isinstance(rec[key], str):
            return refused(f"{key} is {type(rec[key]).__name__}, not text")
    system, user = rec["system_prompt"], rec["prompt_template"]
    if rec["type"] != "pairwise":
        return refused(f"type {rec['type']!r}: a score per answer, not a pairwise verdict")
    if rec["output_format"] != "[[A]]":
        return refused(f"output format {rec['output_format']!r}: two scores, not a verdict label")
    try:
        fields = _format_fields(user, file=path, where="prompt_template")
    except InputError as exc:
        return refused(exc.reason)
    other = sorted(set(fields) - set(_FASTCHAT_FIELDS))
    if other and all(re.fullmatch(r"(question|answer_[ab]|ref_answer)_\d+", f) for f in other):
        return refused(
            f"placeholders {', '.join(other)}: a multi-turn prompt; recuse judges one turn"
        )
    if other:
        return refused(
            f"placeholders {', '.join('{' + f + '}' for f in other)} are not FastChat's "
            "(it fills {question}, {answer_a}, {answer_b}, {ref_answer_1})"
        )
    absent = [f for f in ("question", "answer_a", "answer_b") if f not in fields]
    if absent:
        jinja = re.search(r"\{\{\s*(question|answer_a|answer_b)\s*\}\}", user)
        how = (
            f" (it writes {jinja.group(0)}, Jinja style: FastChat's str.format shows that "
            "as text, not the value)"
            if jinja
            else " (the prompt template is empty)"
            if not user.strip()
            else ""
        )
        return refused(
            f"the prompt template has no {', '.join('{' + f + '}' for f in absent)}{how}: "
            "the judge would not see what it is asked to compare"
        )
    labels = [("[[A]]", "A"), ("[[B]]", "B"), ("[[C]]", "C")]
    template = JudgeTemplate(
        name=name,
        kind="fastchat",
        # FastChat's OpenAI judge: system message (none when empty), then the user
        messages=((("system", system),) if system else ()) + (("user", user),),
        slots=tuple((f, _FASTCHAT_FIELDS[f]) for f in dict.fromkeys(fields)),
        fill="format",
        verdict=labels_format(name, labels, pick="priority"),
        answer_prefix="[[",
        source=f"{path}:{name}",
    )
    return TemplateEntry(name, template, row=row)


_AH_LABELS = ARENA_HARD.labels  # A>>B, A>B, A=B, B>A, B>>A
_AH_V01: dict[str, Field] = {
    "question_1": "question",
    "answer_1": "answer_a",
    "answer_2": "answer_b",
    "ref_answer_1": "reference",
}
_AH_V2: dict[str, Field] = {
    "QUESTION": "question",
    "ANSWER_A": "answer_a",
    "ANSWER_B": "answer_b",
    "REFERENCE": "reference",
}


def _regex(value: object, *, file: Path, key: str) -> re.Pattern[str]:
    text = _text(value, file=file, key=key)
    try:
        pattern = re.compile(text)
    except re.error as exc:
        raise InputError(f"not a regular expression ({exc})", file=file, column=key) from None
    if pattern.groups != 1:
        raise InputError(
            f"the pattern has {pattern.groups} groups; the verdict label is its one group",
            file=file,
            column=key,
        )
    return pattern


def _read_arena_hard(path: Path, data: dict[str, Any]) -> JudgeTemplate:
    if data.get("pairwise") is False:
        raise InputError(
            "pairwise: false is single-answer grading, not a pairwise verdict",
            file=path,
            column="pairwise",
        )
    if "system_prompt" not in data:
        raise InputError(
            "no system_prompt (Arena-Hard-Auto v2 keeps its judges' system prompts in "
            "utils/judge_utils.py)",
            file=path,
            column="system_prompt",
            fix="add system_prompt: with the system prompt your judge uses",
        )
    system = _text(data["system_prompt"], file=path, key="system_prompt")
    raw = data["prompt_template"]
    users = [raw] if isinstance(raw, str) else raw
    if not isinstance(users, list) or not users:
        raise InputError("expected a text or a list of texts", file=path, column="prompt_template")
    users = [_text(u, file=path, key="prompt_template") for u in users]
    if "regex_patterns" in data:  # v2: patterns in turn, upper-cased reply, last match
        pats = data["regex_patterns"]
        if not isinstance(pats, list) or not pats:
            raise InputError("expected a list of patterns", file=path, column="regex_patterns")
        patterns = [_regex(p, file=path, key="regex_patterns") for p in pats]
        names, pick, casefold = _AH_V2, "last", True
    elif "regex_pattern" in data:  # v0.1: exactly one distinct match
        patterns = [_regex(data["regex_pattern"], file=path, key="regex_pattern")]
        names, pick, casefold = _AH_V01, "unique", False
    else:
        raise InputError(
            "no regex_pattern (v0.1) or regex_patterns (v2)",
            file=path,
            fix="keep the pattern(s) your Arena-Hard-Auto configuration reads verdicts with",
        )
    fields: list[str] = []
    for u in users:
        fields += _format_fields(u, file=path, where="prompt_template")
    other = sorted(set(fields) - set(names))
    if other:
        raise InputError(
            f"placeholders {', '.join(other)} are not filled for one-turn pairs "
            f"(this schema fills {', '.join(names)})",
            file=path,
            column="prompt_template",
        )
    for need, field in names.items():
        if field in ("answer_a", "answer_b") and need not in fields:
            raise InputError(f"no {{{need}}} placeholder", file=path, column="prompt_template")
    verdict = VerdictFormat(
        name=f"arena-hard:{path.stem}",
        pattern=patterns[0],
        fallback=tuple(patterns[1:]),
        labels=_AH_LABELS,
        pick="last" if pick == "last" else "unique",
        opener="[[",
        closer="]]",
        casefold=casefold,
        describe="/".join(f"[[{lab}]]" for lab, _ in _AH_LABELS),
    )
    return JudgeTemplate(
        name=path.stem,
        kind="arena-hard",
        messages=(("system", system), *(("user", u) for u in users)),
        slots=tuple((f, names[f]) for f in dict.fromkeys(fields)),
        fill="format",
        verdict=verdict,
        answer_prefix="[[",
        source=str(path),
    )


_ALPACA_FIELDS: dict[str, Field] = {
    "instruction": "question",
    "output_1": "answer_a",
    "output_2": "answer_b",
}


def _alpaca_entry(path: Path, name: str, cfg: dict[str, Any]) -> TemplateEntry:
    try:
        return TemplateEntry(name, _read_alpaca(path, name, cfg))
    except InputError as exc:
        return TemplateEntry(name, None, exc.reason + (f" — {exc.fix}" if exc.fix else ""))


def _read_alpaca(path: Path, name: str, cfg: dict[str, Any]) -> JudgeTemplate:
    from recuse.files import read_text

    key = f"{name}.prompt_template"
    ref = _text(cfg.get("prompt_template"), file=path, key=key)
    batch = cfg.get("batch_size", 1)
    if batch is None:
        batch = 1
    if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
        raise InputError(
            f"batch_size {batch!r} is not a whole number of 1 or more",
            file=path,
            column=f"{name}.batch_size",
            fix="AlpacaEval's batch_size is how many examples one prompt holds (1 here)",
        )
    if batch != 1:
        raise InputError(
            f"batch_size {batch}: several examples in one prompt",
            file=path,
            column=f"{name}.batch_size",
        )
    # AlpacaEval reads the template relative to the folder above the config's folder;
    # a text that is no file is the template itself
    base = path.resolve().parent.parent
    file = base / ref
    text = read_text(file) if file.is_file() else ref
    found = re.findall(r"{([^ \s]+?)}", text)
    if set(found) != set(_ALPACA_FIELDS) or len(found) != len(_ALPACA_FIELDS):
        missing = "" if file.is_file() else f" (no file {file})"
        raise InputError(
            f"the prompt template{missing} has placeholders {sorted(found)}; recuse fills "
            "{instruction}, {output_1}, {output_2}, each once",
            file=path,
            column=key,
        )
    roles = [role for role, _ in chatml_messages(text)]
    chatml = text.strip().startswith("<|im_start|>")
    if chatml and (not text.strip().endswith("<|im_end|>") or set(roles) - set(ROLES)):
        raise InputError(
            f"the prompt's ChatML roles {roles} are not plain system/user/assistant "
            "turns ending in <|im_end|> (named few-shot turns are not supported)",
            file=path,
            column=key,
        )
    parser = cfg.get("fn_completion_parser")
    kwargs = cfg.get("completion_parser_kwargs") or {}
    if not isinstance(kwargs, dict):
        raise InputError(
            f"completion_parser_kwargs is {type(kwargs).__name__}, not a mapping",
            file=path,
            column=f"{name}.completion_parser_kwargs",
        )
    prefix: str | None
    if parser == "logprob_parser":
        first = _text(kwargs.get("numerator_token"), file=path, key=f"{name}.numerator_token")
        tokens = kwargs.get("denominator_tokens")
        others = [t for t in tokens or [] if t != first] if isinstance(tokens, list) else []
        if len(others) != 1 or not all(isinstance(t, str) for t in others):
            raise InputError(
                "denominator_tokens must hold the numerator token and one other",
                file=path,
                column=f"{name}.denominator_tokens",
            )
        verdict = VerdictFormat(
            name=f"alpaca-eval:{name}",
            pattern=re.compile(rf"^\s*({re.escape(first)}|{re.escape(others[0])})\s*$"),
            labels=((first, "A"), (others[0], "B")),
            pick="unique",
            tokens="exact",
            describe=f"the single token {first!r} or {others[0]!r}",
        )
        prefix = ""  # AlpacaEval reads the reply's first token
    elif parser == "ranking_parser":
        from recuse.judging.protocols import ALPACA_RANKING

        if kwargs.get("model_1_name", "model_1") != "model_1":
            raise InputError(
                "model_1_name other than model_1", file=path, column=f"{name}.model_1_name"
            )
        verdict, prefix = ALPACA_RANKING, None
    else:
        raise InputError(
            f"completion parser {parser!r} is not read by recuse",
            file=path,
            column=f"{name}.fn_completion_parser",
            fix="use an evaluator with logprob_parser or ranking_parser",
        )
    order = list(dict.fromkeys(found))
    return JudgeTemplate(
        name=name,
        kind="alpaca-eval",
        messages=(("user", text),),
        slots=tuple((f, _ALPACA_FIELDS[f]) for f in order),
        fill="replace-first",
        verdict=verdict,
        answer_prefix=prefix,
        chatml=chatml,
        source=f"{path}:{name}",
    )


def check_references(template: JudgeTemplate, table: Any, *, file: str | None = None) -> None:
    """Raise before any judging when ``template`` shows a reference answer and a pair
    of ``table`` (a DataFrame with item_id) has none."""
    if not template.needs_reference:
        return
    if "reference" not in table.columns:
        raise InputError(
            f"judge template {template.name!r} shows a reference answer and the data has "
            "no reference column",
            file=file,
            column="reference",
            fix=f"add a column reference (or {map_option([('YOUR_COLUMN', 'reference')])})",
        )
    refs = table["reference"]
    bad = [i for i, v in enumerate(refs.tolist(), start=1) if not isinstance(v, str)]
    if bad:
        raise InputError(
            f"judge template {template.name!r} shows a reference answer and this pair has "
            f"none ({len(bad)} pair(s) without one)",
            file=file,
            row=bad[0],
            column="reference",
            fix="give every pair a reference answer as text",
        )


def placeholder_notes(template: JudgeTemplate, table: Any) -> list[str]:
    """What the user should know before judging ``table`` (a pairs DataFrame with
    item_id, prompt, response_a, response_b) with ``template``: where a text holds one
    of an AlpacaEval template's placeholders. AlpacaEval fills each placeholder's first
    occurrence in turn, so ``{output_2}`` written in answer A is where answer B goes
    (and B's own slot keeps the placeholder): recuse fills it the same way, as the
    tool would have, and says so here."""
    if template.fill != "replace-first":
        return []
    marks = ["{" + name + "}" for name, _ in template.slots]
    hits: list[tuple[str, str, str]] = []
    for r in table.to_dict("records"):
        for column in ("prompt", "response_a", "response_b"):
            text = r.get(column)
            found = [m for m in marks if isinstance(text, str) and m in text]
            if found:
                hits.append((str(r.get("item_id")), column, found[0]))
    if not hits:
        return []
    item, column, mark = hits[0]
    pairs = len({h[0] for h in hits})
    return [
        f"{pairs} pair(s) hold a placeholder of AlpacaEval's template {template.name!r} in "
        f"their texts (first: item {item!r}, {column} holds {mark}); AlpacaEval fills each "
        "placeholder's first occurrence in order, so there the judge sees another text "
        "spliced in where the placeholder stands (one answer inside the other, say): "
        "recuse fills it as AlpacaEval does, so its verdicts match the tool's"
    ]

"""The words of the probes analysis (:mod:`recuse.analyses.probes`):
its biases and its heading, light to import (:mod:`recuse.biases`)."""

from __future__ import annotations

from recuse.biases.heading import Heading
from recuse.probe_edits import DESCRIPTIONS, VERBOSITY
from recuse.report.bias import RATE_DIFFERENCE, Bias

_WORDS = {
    "padding": ("Probe: padding", "favours padded answers", "penalises padded answers"),
    "attribution-self": ("Probe: attributed to itself", "favours answers labelled as its own",
                         "penalises answers labelled as its own"),
    "attribution-other": ("Probe: attributed to another",
                          "favours answers labelled as another assistant's",
                          "penalises answers labelled as another assistant's"),
    "authority": ("Probe: fake citation", "favours answers with a citation",
                  "penalises answers with a citation"),
    "bandwagon": ("Probe: bandwagon", "follows the stated majority",
                  "goes against the stated majority"),
    "distraction": ("Probe: distraction", "favours answers with an irrelevant sentence",
                    "penalises answers with an irrelevant sentence"),
    "concise": ("Probe: concise rewrite", "favours the concise rewrite over the original",
                "penalises the concise rewrite against the original"),
    "verbose": ("Probe: verbose rewrite", "favours the verbose rewrite over the original",
                "penalises the verbose rewrite against the original"),
}  # fmt: skip

PROBE_BIASES: dict[str, Bias] = {
    name: Bias(
        key=f"probe_{name}",
        title=title,
        short=title.removeprefix("Probe: ").capitalize(),
        unit="change in the edited answer's share of the win with the edit "
        f"({DESCRIPTIONS[name]}), minus the change a no-op edit (a trailing newline) makes; "
        "0 = no effect",
        positive=positive,
        negative=negative,
        none="no detectable effect",
        order=70 + i,
        material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
        scale="change in share of win",
        span=RATE_DIFFERENCE,
    )
    for i, (name, (title, positive, negative)) in enumerate(_WORDS.items())
}

PROBE_BIASES[VERBOSITY] = Bias(
    key=f"probe_{VERBOSITY}",
    title="Probe: verbose vs concise rewrite",
    short="Verbose vs concise",
    unit=f"change in the treated answer's share of the win with {DESCRIPTIONS[VERBOSITY]}, "
    "against the same other answer (Saito et al. §4); 0 = the length of the same content "
    "does not sway the judge",
    positive="prefers the verbose rewrite of the same answer",
    negative="prefers the concise rewrite of the same answer",
    none="no detectable effect",
    order=70 + len(_WORDS),
    material=0.05,  # 5 points of a rate or share: smallest effect worth acting on (default)
    scale="change in share of win",
    span=RATE_DIFFERENCE,
)


HEADING = Heading(
    id="probes",
    title="Probes (no labels needed)",
    table="pairs",
    biases=tuple(PROBE_BIASES.values()),
)

from __future__ import annotations

import base64
import io
import re

import numpy as np
import pytest

from recuse.report import figures as F


def _png(fig: F.Figure) -> np.ndarray:
    import matplotlib.image as mpimg

    return np.asarray(mpimg.imread(io.BytesIO(base64.b64decode(fig.data)), format="png"))


def test_confusion_matrix_is_a_decodable_png_with_counts_in_alt() -> None:
    fig = F.confusion_matrix(
        [[10, 2], [3, 9]], rows=["a", "b"], cols=["a", "b"], id="cm", title="CM"
    )
    img = _png(fig)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert (img[..., :3] < 0.9).any()  # something was drawn
    assert "a → b: 2" in fig.alt and "b → a: 3" in fig.alt
    big = F.confusion_matrix([[7013, 2], [3, 9]], rows=["a", "b"], cols=["a", "b"], id="c",
                             title="C")  # fmt: skip
    assert "a → a: 7,013" in big.alt  # a count as the tables write it
    assert fig.data_uri.startswith("data:image/png;base64,")


def test_confusion_matrix_writes_half_counts_as_they_are() -> None:
    # a judge's tie counts half in each column: gpt-4's own pairs on llmbar-mtbench are
    # 39.5 / 3.5 and 4.5 / 3.5 (n = 51). Rounded to even they read 40 / 4 and 4 / 4
    # (n = 52), equal counts beside shares of 56% and 44%.
    fig = F.confusion_matrix(
        [[39.5, 3.5], [4.5, 3.5]], rows=["own", "other"], cols=["own", "other"], id="cm",
        title="CM",
    )  # fmt: skip
    assert fig.alt == "CM: own → own: 39.5; own → other: 3.5; other → own: 4.5; other → other: 3.5"


def test_svg_is_embedded_as_an_image_uri_not_markup() -> None:
    fig = F.curves(
        ["short", "long"], [F.Series("j", [0.4, 0.6])], id="c", title="<t>", xlabel="x",
        ylabel="y", format="svg",
    )  # fmt: skip
    assert fig.data.lstrip().startswith("<?xml") and "<svg" in fig.data
    decoded = base64.b64decode(fig.data_uri.split(",", 1)[1]).decode()
    assert decoded == fig.data


def test_heatmap_handles_missing_cells_and_shape_errors() -> None:
    values = np.array([[0.1, np.nan], [-0.3, 0.2]])
    fig = F.heatmap(values, rows=["j1", "j2"], cols=["m1", "m2"], id="h", title="H",
                    highlight=np.eye(2, dtype=bool))  # fmt: skip
    assert _png(fig).shape[0] > 50
    with pytest.raises(ValueError):
        F.heatmap(values, rows=["j1"], cols=["m1", "m2"], id="h", title="H")


def test_coefficients_alt_lists_every_interval() -> None:
    fig = F.coefficients(["x", "y"], [0.1, -0.2], [0.0, -0.3], [0.2, -0.1], id="k", title="K",
                         xlabel="b")  # fmt: skip
    # as the findings' sentences write them (estimate_parts), with U+2212: it read
    # "y -0.200 [-0.300, -0.100]" beside a table's "−0.20 [−0.30, −0.10]"
    assert "x +0.10 [0.00, 0.20]" in fig.alt and "y \u22120.20 [\u22120.30, \u22120.10]" in fig.alt
    small = F.coefficients(["z"], [0.00031], [0.00012], [0.00052], id="k", title="K",
                           xlabel="b")  # fmt: skip
    assert small.alt == "K: z +0.00031 [0.00012, 0.00052]"  # never +0.000 [0.000, 0.001]
    rate = F.coefficients(["p"], [0.62], [0.55], [0.7], id="k", title="K", xlabel="b", null=0.5)
    assert rate.alt == "K: p 0.62 [0.55, 0.70]"  # a rate (no bias 0.5) has no '+'
    # texts given (the findings' own): the alt reads them, not its own rounding
    said = F.coefficients(["s"], [0.285], [0.2327], [0.3422], id="k", title="K", xlabel="b",
                          texts=["28.5% [23.3%, 34.2%]"])  # fmt: skip
    assert said.alt == "K: s 28.5% [23.3%, 34.2%]"
    with pytest.raises(ValueError, match="one text per label"):
        F.coefficients(["s"], [0.2], [0.1], [0.3], id="k", title="K", xlabel="b", texts=[])
    with pytest.raises(ValueError):
        F.coefficients(["x"], [0.1, 0.2], [0.0], [0.2], id="k", title="K", xlabel="b")


def test_bars_mark_highlighted_labels_and_skip_missing_intervals() -> None:
    fig = F.bars(["own", "m2"], [1.2, 1.5], [1.1, np.nan], [1.3, np.nan], id="b", title="B",
                 xlabel="log ppl", highlight=[True, False])  # fmt: skip
    img = _png(fig)
    assert img.shape[0] > 50 and (img[..., :3] < 0.9).any()
    assert "own (highlighted) 1.20 [1.10, 1.30]" in fig.alt and "m2 1.50" in fig.alt
    assert "m2 1.50 [" not in fig.alt
    # the terminal's rule (estimate_parts): its own decimals for each bar, U+2212, separators
    neg = F.bars(["a", "b"], [-0.00042, 1234.5], [-0.0009, 1200.0], [0.0001, 1300.25], id="b",
                 title="B", xlabel="x")  # fmt: skip
    assert neg.alt == "B: a \u22120.00042 [\u22120.00090, 0.00010]; b 1,234.50 [1,200.00, 1,300.25]"
    # whiskers that differ never read alike: one precision for the figure (three
    # decimals, the smallest number's) wrote 1.500 [1.500, 1.500], as if fixed
    near = F.bars(["m"], [1.5], [1.4996], [1.5004], id="b", title="B", xlabel="x")
    assert near.alt == "B: m 1.5000 [1.4996, 1.5004]"
    mixed = F.bars(["m", "n"], [1.5, 0.12], [1.4996, 0.08], [1.5004, 0.16], id="b",
                   title="B", xlabel="x")  # fmt: skip
    assert mixed.alt == "B: m 1.5000 [1.4996, 1.5004]; n 0.12 [0.08, 0.16]"
    with pytest.raises(ValueError):
        F.bars(["x"], [1.0, 2.0], [0.0], [2.0], id="b", title="B", xlabel="x")
    with pytest.raises(ValueError):
        F.bars(["x"], [1.0], [0.0], [2.0], id="b", title="B", xlabel="x", highlight=[True, False])


def test_reliability_diagram_lists_its_points_and_skips_empty_bins() -> None:
    fig = F.reliability(
        [("as $stated$ <b>", [0.05, np.nan, 0.9], [0.2, np.nan, 0.6], [10, 0, 30]),
         ("isotonic", [0.1, 0.5, 0.85], [0.1, 0.5, 0.8], [5, 5, 30])],
        id="rel", title="Reliability — j", caption="c",
    )  # fmt: skip
    img = _png(fig)
    assert img.shape[0] > 100 and (img[..., :3] < 0.9).any()
    assert "as $stated$ <b>: 0.05→0.20 (n=10), 0.90→0.60 (n=30)" in fig.alt  # empty bin out
    assert "isotonic: 0.10→0.10 (n=5), 0.50→0.50 (n=5), 0.85→0.80 (n=30)" in fig.alt
    with pytest.raises(ValueError, match="one entry per bin"):
        F.reliability([("x", [0.1], [0.1, 0.2], [1])], id="r", title="R")


def test_a_label_with_terminal_controls_is_drawn_escaped_without_a_warning() -> None:
    """A judge named with ESC or C1 CSI (\\x9b) made matplotlib warn 'Glyph 27 (\\x1b)
    missing' on stderr for each figure: the raw control character reached the terminal
    of the audit that drew it (and the figure showed an empty box). Labels are drawn as
    :func:`recuse.terminal.shown` writes them."""
    import warnings

    assert F._short("a\x1b[2Jb\x9bc\u202e") == "a\\x1b[2Jb\\x9bc\\u202e"
    assert F._short("a\nb\tc") == "a b c"  # whitespace still one space
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.coefficients(["j\x1b[2J\x9b", "y"], [0.1, -0.2], [0.0, -0.3], [0.2, -0.1], id="k",
                       title="K \x1b", xlabel="b")  # fmt: skip


def test_drawing_a_figure_leaves_the_callers_matplotlib_backend_as_it_is() -> None:
    # a notebook's inline backend must survive recuse.audit (it was forced to Agg); run
    # apart, since the backend is the process's
    import subprocess
    import sys

    code = (
        "import base64, matplotlib\n"
        "matplotlib.use('svg')\n"
        "from recuse.report import figures as F\n"
        "fig = F.confusion_matrix([[1, 2], [3, 4]], rows=['a', 'b'], cols=['a', 'b'],"
        " id='cm', title='CM')\n"
        "assert base64.b64decode(fig.data).startswith(b'\\x89PNG')\n"
        "print(matplotlib.get_backend())\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "svg"


def test_a_misspelt_mplbackend_is_named_not_a_traceback() -> None:
    # matplotlib checks $MPLBACKEND as it is imported: a bad value ended audits in its
    # ValueError; it is a ConfigError naming the variable (the CLI: one line, exit 2)
    import os
    import subprocess
    import sys

    code = (
        "from recuse.errors import ConfigError\n"
        "from recuse.report import figures as F\n"
        "try:\n"
        "    F.confusion_matrix([[1, 2], [3, 4]], rows=['a', 'b'], cols=['a', 'b'],"
        " id='cm', title='CM')\n"
        "except ConfigError as err:\n"
        "    print(err)\n"
    )
    env = os.environ | {"MPLBACKEND": "nosuch"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert "MPLBACKEND='nosuch' names no matplotlib backend" in out.stdout
    assert out.stdout.strip().endswith("unset it, or set it to agg")


def test_a_series_refuses_counts_that_do_not_fit_its_points() -> None:
    """A count list shorter than the points labelled the first points only, without a
    word; a NaN count was a traceback from inside the drawing."""
    with pytest.raises(ValueError, match="Series n: 1 values for 2 points"):
        F.Series("j", [0.4, 0.6], n=[10])
    with pytest.raises(ValueError, match="Series low: 3 values for 2 points"):
        F.Series("j", [0.4, 0.6], low=[0.1, 0.2, 0.3], high=[0.5, 0.7])
    for bad in (float("nan"), -1, 2.5):
        with pytest.raises(ValueError, match="a count of pairs is a whole number"):
            F.Series("j", [0.4, 0.6], n=[10, bad])  # type: ignore[list-item]
    assert F.Series("j", [0.4, 0.6], n=[10, 0]).n == [10, 0]


def test_rows_of_counts_stay_apart_with_many_judges_long_names_and_big_counts() -> None:
    """Nine judges over twelve bins of thousands of pairs: each count was centred under
    its point in a 5.2-inch figure, and 12,345 … 148,140 at 6 points ran into each other
    ("98,760111,105123,450"); each row's label cut the judge's name at 18 characters, so
    the rows of meta-llama/Llama-3.1-8B-Instruct, …-70B- and …-405B-Instruct all read
    "n meta-llam…Instruct", told apart by colour alone, which repeats from the eighth
    judge on. The figure widens until the widest count fits between two points and the
    rows' labels fit beside the plot, and a row names its judge as the legend does."""
    import re

    import matplotlib
    from analyses.test_verbosity import _drawn_counts

    names = [
        "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-70B-Instruct",
        "meta-llama/Llama-3.1-405B-Instruct", "Qwen/Qwen2.5-72B-Instruct",
        "Qwen/Qwen2.5-7B-Instruct", "mistralai/Mistral-7B-Instruct-v0.3", "gpt-4o-2024-08-06",
        "claude-3-5-sonnet-20241022", "gemini-1.5-pro-002",
    ]  # fmt: skip
    rng = np.random.default_rng(0)

    def svg(bins: int) -> str:
        series = [
            F.Series(label=name, y=list(rng.uniform(0.4, 0.9, bins)), low=None, high=None,
                     n=[12_345 * (1 + i) for i in range(bins)])
            for name in names
        ]  # fmt: skip
        x = [round(0.2 * i, 1) for i in range(bins)]
        with matplotlib.rc_context({"svg.fonttype": "none"}):  # texts as <text>
            fig = F.curves(x, series, id="align-x", title="t", xlabel="x", ylabel="y",
                           format="svg")  # fmt: skip
        return str(fig.data)

    for bins in (12, 1):
        drawn = svg(bins)
        boxes = _drawn_counts(drawn)
        assert len(boxes) == 9 * bins
        for a, (_, x1, y1, w1, h1) in enumerate(boxes):
            for _, x2, y2, w2, h2 in boxes[a + 1 :]:
                apart = x1 + w1 <= x2 or x2 + w2 <= x1 or y1 + h1 <= y2 or y2 + h2 <= y1
                assert apart, (bins, (x1, y1), (x2, y2))
        rows = [t for t in re.findall(r"<text[^>]*>([^<]*)</text>", drawn) if t[:2] == "n "]
        assert rows == [f"n {name}" for name in names], rows
    # one judge's counts of tens over a few bins keep the plot's 5.2 inches (374.4 pt)
    one = F.curves([0.0, 0.2, 0.4], [F.Series("j", [0.5, 0.6, 0.7], n=[18, 26, 7])],
                   id="a", title="t", xlabel="x", ylabel="y", format="svg")  # fmt: skip
    assert 'width="374.4pt"' in str(one.data)


def test_the_eighth_series_does_not_look_like_the_first() -> None:
    """Seven colours, then the palette again: the eighth judge's curve had the first's
    colour, line and marker, one look under two names in the legend. From the eighth
    on, each round through the colours takes the next line style and marker."""
    import matplotlib

    looks = [F._look(k) for k in range(28)]
    assert len(set(looks)) == 28
    assert looks[7][0] == looks[0][0] and looks[7][1:] != looks[0][1:]

    def dashed(judges: int) -> int:
        series = [F.Series(label=f"j{k}", y=[0.5, 0.6]) for k in range(judges)]
        with matplotlib.rc_context({"svg.fonttype": "none"}):
            svg = F.curves([0.0, 1.0], series, id="c", title="t", xlabel="x", ylabel="y",
                           format="svg")  # fmt: skip
        return str(svg.data).count("stroke-dasharray")

    assert dashed(7) == 0 and dashed(8) >= 1  # the eighth is dashed, the first seven solid


def test_a_name_starting_with_an_underscore_is_in_the_legend() -> None:
    """matplotlib leaves out of a legend every line whose label starts with '_' (its
    mark for a helper line): a judge named '_internal-judge' was drawn, in its colour,
    but the legend named only the others, so its curve (or calibration line) belonged
    to no one. Each legend names every series given."""
    names = ["_internal-judge", "gpt-4o", "__x"]
    curves = F.curves(
        [0, 1, 2], [F.Series(n, [0.2, 0.5, 0.7]) for n in names],
        id="c", title="t", xlabel="x", ylabel="y", format="svg",
    )  # fmt: skip
    bins = [0.2, 0.8]
    reliability = F.reliability(
        [(n, bins, bins, [3, 4]) for n in names], id="r", title="t", format="svg"
    )
    for fig in (curves, reliability):
        for name in names:  # the SVG writes each text it draws in a comment
            assert f"<!-- {name} -->" in fig.data, (fig.id, name)


def test_figures_drawn_in_two_threads_leave_matplotlib_as_it_was(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each drawing switches formulas off inside rc_context, and matplotlib's settings
    # are one per process: the first thread out put back "on" under the second's labels,
    # and the second, out last, put back the first's "off" for good (the next test
    # drawing a formula, or a user's own figure, found it off). Held in order: A in, B
    # in, A out, B out (the old code ended with parse_math False each time)
    import threading

    import matplotlib

    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    new = F._new
    seen: dict[str, bool] = {}

    def held(*args: object, **kwargs: object) -> object:
        if threading.current_thread().name == "a":
            a_in.set()
            b_in.wait(1.0)  # B cannot come in while A draws: then this times out
        else:
            b_in.set()
            a_out.wait(10.0)
            seen["b"] = matplotlib.rcParams["text.parse_math"]  # as B's labels are drawn
        return new(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(F, "_new", held)

    def a() -> None:
        F.bars(["x"], [1.0], [0.5], [1.5], id="a", title="t", xlabel="x")
        a_out.set()

    def b() -> None:
        F.bars(["$y$"], [1.0], [0.5], [1.5], id="b", title="t", xlabel="x")

    first = threading.Thread(target=a, name="a")
    second = threading.Thread(target=b, name="b")
    first.start()
    assert a_in.wait(10.0)
    second.start()
    first.join(20.0)
    second.join(20.0)
    assert seen == {"b": False}  # B's labels drawn as plain text
    assert matplotlib.rcParams["text.parse_math"] is True


def test_an_svg_figure_is_the_same_bytes_each_time_it_is_drawn() -> None:
    """matplotlib salts an SVG's element ids at random (each save), so a report written
    twice from one input differed in every figure; the figure's id is the salt now, and
    two figures of one page keep different element ids."""

    def draw(id: str) -> str:
        return F.coefficients(
            ["a", "b"], [0.1, -0.2], [0.0, -0.3], [0.2, -0.1], id=id, title="t",
            xlabel="x", null=0.0, format="svg",
        ).data  # fmt: skip

    first, again, other = draw("coef-a"), draw("coef-a"), draw("coef-b")
    assert first == again
    salted = re.compile(r'id="([^"]+_[0-9a-f]{10})"')  # clip paths, markers
    ids = set(salted.findall(first))
    assert ids and ids.isdisjoint(salted.findall(other))

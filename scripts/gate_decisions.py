"""Compare `recuse gate`'s decisions between two versions of the source on the same
report.json files: every bias of every finding, at fixed bounds (--max and --min) and at
bounds exactly on each finding's interval ends and estimate (written to full
precision), and all biases at once. Only the words of a gate line may change between
versions; the outcome of each line (and the exit code) must not.

    python scripts/gate_decisions.py --old /tmp/old/src --new src REPORT.json ...

``--old``: a ``src`` folder of the earlier release, e.g. from
``git archive 442ebec src | tar -x -C /tmp/old``. Prints the runs, the lines and each
difference; exits 1 when any decision differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

# run under each version: every gate, its exit code and (bias, judge, dataset, outcome)s
_PROBE = r"""
import contextlib, io, json, sys
from recuse.cli import main

MAXB = ["0", "0.001", "0.01", "0.02", "0.03", "0.05", "0.08", "0.1", "0.15", "0.2", "0.3",
        "0.5", "1"]
MINB = ["0", "0.3", "0.5", "0.6", "0.7", "0.75", "0.8", "0.9", "0.95", "1"]
out = {}

def go(args):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(io.StringIO()):
        try:
            code = main(args + ["--json"])
        except SystemExit as e:
            code = e.code
    try:
        lines = sorted([l["bias"], l["judge"], l.get("dataset", ""), l["outcome"]]
                       for l in json.loads(buf.getvalue())["lines"])
    except (ValueError, KeyError):
        lines = "error"
    out[" ".join(args[1:])] = [code, lines]

for rep in sys.argv[1:]:
    r = json.load(open(rep, encoding="utf-8"))
    findings = [f for s in r["sections"] for f in s.get("findings", [])]
    keys = sorted({f["bias"] for f in findings})
    for key in keys:
        for flag, bounds in (("--max", MAXB), ("--min", MINB)):
            for b in bounds:
                go(["gate", rep, flag, f"{key}={b}"])
    for f in findings:
        for v in (f["ci_low"], f["ci_high"], f["estimate"]):
            if v is not None:
                go(["gate", rep, "--max", f"{f['bias']}={abs(v - f['null'])!r}"])
                go(["gate", rep, "--min", f"{f['bias']}={v!r}"])
    quality = [k for k in keys if "accuracy" in k or "agreement" in k]
    go(["gate", rep, "--max", ",".join(f"{k}=0.1" for k in keys if k not in quality)]
       + (["--min", ",".join(f"{k}=0.6" for k in quality)] if quality else []))
json.dump(out, sys.stdout)
"""


def _decisions(src: str, reports: list[str]) -> dict[str, list[object]]:
    if not os.path.isfile(os.path.join(src, "recuse", "__init__.py")):
        # else the import would fall back silently to an installed recuse
        raise SystemExit(f"{src}: not a src folder holding recuse/")
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run([sys.executable, "-c", _PROBE, *reports], env=env, check=True,
                          capture_output=True, text=True)  # fmt: skip
    result: dict[str, list[object]] = json.loads(done.stdout)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", required=True, help="src folder of the earlier version")
    parser.add_argument("--new", default="src", help="src folder of this version")
    parser.add_argument("reports", nargs="+")
    args = parser.parse_args()
    old, new = _decisions(args.old, args.reports), _decisions(args.new, args.reports)
    differ = [k for k in old if old[k] != new.get(k)]
    lines = sum(len(v[1]) for v in new.values() if isinstance(v[1], list))
    refused = sum(1 for v in new.values() if v[1] == "error")
    print(f"{len(old):,} gates ({refused:,} refused as bad input by both), {lines:,} lines; "
          f"{len(differ):,} with a different decision")  # fmt: skip
    for k in differ:
        print(f"  {k}: exit {old[k][0]} -> {new[k][0]}")
        was = {tuple(x[:3]): x[3] for x in old[k][1]} if isinstance(old[k][1], list) else {}
        now = {tuple(x[:3]): x[3] for x in new[k][1]} if isinstance(new[k][1], list) else {}
        for line in sorted(set(was) | set(now)):
            if was.get(line) != now.get(line):
                print(f"    {' / '.join(line)}: {was.get(line)} -> {now.get(line)}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())

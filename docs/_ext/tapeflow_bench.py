"""Benchmark results on the site: tables, a comparison table and a plot, made at build time.

Results come from ``benchmarks/results/<name>.json`` (what ``python benchmarks/run_all.py``
or ``nox -s bench`` writes, through ``benchmarks/_common.py:save``) when the checkout has
them, else from the snapshot committed in ``docs/_data/benchmarks/`` (see its README for
the command and date).  Each table says which file it shows.

Directives:

``.. tapeflow-bench-sources::``
    where each result file came from.
``.. tapeflow-bench-tables:: core``
    every measurement of one result file, as tables (generic: any new key appears).
``.. tapeflow-bench-ratios::``
    the comparisons of :data:`COMPARISONS` as a table of ratios (other / tapeflow).

:func:`plot_ratios` draws the same comparisons (called from a ``.. plot::`` directive).
"""
from __future__ import annotations

import datetime
import json
import math
import pathlib

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

DOCS = pathlib.Path(__file__).resolve().parent.parent
ROOT = DOCS.parent
LIVE = ROOT / "benchmarks" / "results"
SNAPSHOT = DOCS / "_data" / "benchmarks"
NAMES = ("core", "tape", "train", "conv", "data", "function", "fusion")
META = {"machine", "cpus", "threads", "omp_wait_policy"}

# what the keys of the result files measure (from the benchmark scripts' docstrings)
DESCRIPTIONS = {
    "small_ops_us": ("Small-op dispatch", "µs per call: ``add`` of two 2-element vectors, a 2x2 ``matmul``. "
                     "This is the Python overhead of one op."),
    "matmul_gflops": ("1024x1024 float32 matmul", "GFLOP/s (higher is better); every library calls a BLAS."),
    "elementwise_4M_s": ("4M-element float32 element-wise ops", "seconds per op over 4,194,304 elements."),
    "import_s": ("Import time", "seconds for ``import x`` in a fresh interpreter, best of 3."),
    "chain_us_per_op": ("Tape overhead", "µs per op of a 100-op scalar chain: recorded on a tape and played "
                        "back (``recorded_us``), and run with no tape (``no_tape_us``)."),
    "linreg_300_steps_ms": ("The guide's linear regression", "ms for 300 steps of the eager guide's "
                            "2000-point regression (tape, gradient, two variable updates)."),
    "linreg_us_per_step": ("The linear regression, per step", "µs per step, the same runs."),
    "linreg_first_compiled_call_ms": ("First call of a compiled step", "ms: trace, graph passes, plan and one run."),
    "call_overhead_us": ("Calling a compiled function", "µs per call of a function doing no work (identity) or "
                         "one scalar add, and of the eager add."),
    "n": ("Elements", "of the element-wise chain's float32 input."),
    "ms": ("The element-wise chain", "ms per call of ``tanh(x*2+1)*sigmoid(x) - exp(-x*x)``, best of 5."),
    "mlp_ms": ("MLP training step", "ms per step: 784-256-256-10 ReLU MLP, batch 128, sparse softmax "
               "cross-entropy, SGD (forward, backward, update)."),
    "cnn_ms": ("CNN training step", "ms per step: the seeds' Conv2D(16, 3)-Conv2D(16, 3)-"
               "GlobalAveragePooling2D-Dense(10) on 28x28x1, batch 32."),
    "lstm_cell_forward_ms": ("LSTM cell forward", "ms per step: the seeds' LSTM cell, batch 32, input 128, "
                             "hidden 256."),
    "lstm_cell_fwd_bwd_ms": ("LSTM cell forward + backward", "ms per step, same cell."),
    "mlp_profile_us_per_step": ("Where a tapeflow MLP step spends its time", "µs per step by layer of the "
                                "stack, from cProfile (profiling itself slows the Python parts)."),
    "conv": ("conv2d, batch 32", "ms: ``fwd`` the forward op; ``tapeflow ops`` forward and both backprop ops "
             "called directly; ``tapeflow tape`` the same through a GradientTape; other frameworks forward, "
             "and forward + backward with their autodiff."),
    "pool": ("2x2/2 pooling of 32x26x26x16, forward + backward", "ms."),
    "devices": ("Devices", "what this machine had when the backends were measured."),
    "workloads": ("Each workload on each device", "seconds per workload (``bench_backends.py`` lists them); "
                  "inputs already on the device, each timed run ending with a read of the result."),
    "transfer_gbps": ("Transfers", "GB/s of a 16 MB copy to and from the device."),
    "seconds_per_epoch": ("One epoch of an input pipeline", "seconds for 60,000 784-float images through "
                          "``shuffle(10000).map(normalize).batch(128).prefetch(AUTOTUNE)``, and variants."),
}

# The comparisons of the plot and the ratio table: a label, the result file, the path to
# tapeflow's figure, and the paths to the others'.  Every path is a sequence of keys into the
# JSON.  ``higher_is_better`` marks throughputs, whose ratio is inverted so that every ratio
# reads "how many times longer the other takes" (> 1: tapeflow is faster).
_FW = {"NumPy": "numpy", "PyTorch": "pytorch", "TensorFlow": "tensorflow"}
#: the columns of the ratio table and the bars of the plot (JAX only where a comparison names it: the compiled rows)
FRAMEWORKS = ("NumPy", "PyTorch", "TensorFlow", "JAX")


def _pair(file, label, path_of, others=("NumPy", "PyTorch", "TensorFlow"), higher_is_better=False):
    return {"file": file, "label": label, "tapeflow": path_of("tapeflow"),
            "others": {o: path_of(_FW.get(o, o)) for o in others}, "higher_is_better": higher_is_better}


COMPARISONS = [
    _pair("core", "add, 2 elements", lambda fw: ("small_ops_us", fw, "add")),
    _pair("core", "matmul, 2x2", lambda fw: ("small_ops_us", fw, "matmul")),
    _pair("core", "matmul, 1024x1024", lambda fw: ("matmul_gflops", fw), higher_is_better=True),
    _pair("core", "exp, 4M elements", lambda fw: ("elementwise_4M_s", "exp", fw), others=("NumPy", "PyTorch")),
    _pair("core", "tanh, 4M elements", lambda fw: ("elementwise_4M_s", "tanh", fw), others=("NumPy", "PyTorch")),
    _pair("core", "add, 4M elements", lambda fw: ("elementwise_4M_s", "add", fw), others=("NumPy", "PyTorch")),
    _pair("core", "import", lambda fw: ("import_s", {"pytorch": "torch"}.get(fw, fw))),
    _pair("tape", "taped op (mul chain)", lambda fw: ("chain_us_per_op", "mul by const", fw, "recorded_us"),
          others=("PyTorch", "TensorFlow")),
    _pair("tape", "taped op (mixed chain)",
          lambda fw: ("chain_us_per_op", "mixed mul/add/sin/mul", fw, "recorded_us"), others=("PyTorch", "TensorFlow")),
    _pair("tape", "linear regression, 300 steps", lambda fw: ("linreg_300_steps_ms", fw),
          others=("PyTorch", "TensorFlow")),
    _pair("train", "MLP step", lambda fw: ("mlp_ms", {"tensorflow": "tensorflow raw+tape"}.get(fw, fw)),
          others=("PyTorch", "TensorFlow")),
    _pair("train", "CNN step", lambda fw: ("cnn_ms", {"tensorflow": "tensorflow raw+tape"}.get(fw, fw)),
          others=("PyTorch", "TensorFlow")),
    _pair("train", "LSTM cell fwd+bwd", lambda fw: ("lstm_cell_fwd_bwd_ms", fw), others=("PyTorch", "TensorFlow")),
    _pair("conv", "conv2d fwd+bwd, 16->16",
          lambda fw: ("conv", "32x28x28x16 -> 16 3x3", "tapeflow tape" if fw == "tapeflow" else f"{fw} fwd+bwd"),
          others=("PyTorch", "TensorFlow")),
    _pair("conv", "max pool fwd+bwd", lambda fw: ("pool", "max", fw), others=("PyTorch", "TensorFlow")),
    {"file": "function", "label": "linear regression step, compiled", "higher_is_better": False,
     "tapeflow": ("linreg_us_per_step", "tapeflow tf.function"),
     "others": {"PyTorch": ("linreg_us_per_step", "pytorch eager"),
                "TensorFlow": ("linreg_us_per_step", "tensorflow tf.function"),
                "JAX": ("linreg_us_per_step", "jax jit")}},
    {"file": "fusion", "label": "element-wise chain 4M, compiled", "higher_is_better": False,
     "tapeflow": ("ms", "tapeflow compiled, fused"),
     "others": {"NumPy": ("ms", "numpy eager"), "PyTorch": ("ms", "torch.compile"),
                "TensorFlow": ("ms", "tensorflow tf.function(jit_compile=True)"), "JAX": ("ms", "jax jit")}},
    {"file": "data", "label": "input pipeline epoch", "higher_is_better": False,
     "tapeflow": ("seconds_per_epoch", "tapeflow: natural pipeline"),
     "others": {"PyTorch": ("seconds_per_epoch", "PyTorch DataLoader, per-example map"),
                "TensorFlow": ("seconds_per_epoch", "tf.data: natural pipeline")}},
]


# ---- results ------------------------------------------------------------------------------------

def load(name: str):
    """``(data, path, where)`` for result file ``name``, or ``(None, None, None)``."""
    for folder, where in ((LIVE, "this checkout's benchmarks/results"), (SNAPSHOT, "the committed snapshot")):
        path = folder / f"{name}.json"
        if path.exists():
            try:
                return json.loads(path.read_text()), path, where
            except (OSError, ValueError) as e:
                logger.warning("tapeflow docs: cannot read %s: %s", path, e, type="tapeflow", subtype="bench")
    return None, None, None


def _get(data, path):
    for k in path:
        if not isinstance(data, dict) or k not in data:
            return None
        data = data[k]
    return data if isinstance(data, (int, float)) and not isinstance(data, bool) else None


def ratios():
    """``[(label, {framework: ratio}, file)]``: how many times longer each framework takes than tapeflow."""
    out = []
    cache = {}
    for c in COMPARISONS:
        if c["file"] not in cache:
            cache[c["file"]] = load(c["file"])[0]
        data = cache[c["file"]]
        if data is None:
            continue
        base = _get(data, c["tapeflow"])
        if not base:
            logger.info("tapeflow docs: no tapeflow figure at %s in %s.json", "/".join(c["tapeflow"]), c["file"])
            continue
        row = {}
        for fw, path in c["others"].items():
            v = _get(data, path)
            if v:
                row[fw] = base / v if c["higher_is_better"] else v / base
        if row:
            out.append((c["label"], row, c["file"]))
    return out


def _fmt(v) -> str:
    if v is None:
        return "--"
    if isinstance(v, str):
        return v
    if isinstance(v, bool) or isinstance(v, int):
        return str(v)
    if not isinstance(v, float):
        return ", ".join(map(str, v)) if isinstance(v, (list, tuple)) else str(v)
    if v == 0:
        return "0"
    mag = math.floor(math.log10(abs(v)))
    digits = max(0, 2 - mag)
    return f"{v:,.{digits}f}"


def _flatten(d: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + " / "))
        else:
            out[key] = v
    return out


def table_rst(key: str, value) -> list:
    """One key of a result file as a list-table (rows: first level; columns: the rest, flattened)."""
    title, what = DESCRIPTIONS.get(key, (key.replace("_", " "), ""))
    lines = [f".. rubric:: {title}", ""]
    if what:
        lines += [what, ""]
    if not isinstance(value, dict):
        return lines + [f"``{key}``: {_fmt(value)}", ""]
    if all(not isinstance(v, dict) for v in value.values()):
        header, rows = ["", "value"], [[k, _fmt(v)] for k, v in value.items()]
    else:
        flat = {k: (_flatten(v) if isinstance(v, dict) else {"value": v}) for k, v in value.items()}
        cols = []
        for f in flat.values():
            for c in f:
                if c not in cols:
                    cols.append(c)
        header = [""] + cols
        rows = [[k] + [_fmt(f.get(c)) for c in cols] for k, f in flat.items()]
    lines += [".. list-table::", "   :header-rows: 1", ""]
    for r in [header] + rows:
        lines.append(f"   * - {r[0] or ' '}")
        lines += [f"     - {c}" for c in r[1:]]
    return lines + [""]


def _describe_source(name):
    data, path, where = load(name)
    if data is None:
        return None
    when = datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc).strftime("%Y-%m-%d")
    rel = path.relative_to(ROOT)
    machine = f"{data.get('machine', '?')}, {data.get('cpus', '?')} CPUs"
    if where == "the committed snapshot":
        return f"``{rel}`` ({where}; {machine})"
    return f"``{rel}`` ({where}, written {when}; {machine})"


class _RstDirective(SphinxDirective):
    def _parse(self, lines, source):
        node = nodes.container()
        nested_parse_with_titles(self.state, StringList(lines, source=source), node)
        return node.children


class BenchSources(_RstDirective):
    def run(self):
        lines = []
        for name in list(NAMES) + other_names():
            d = _describe_source(name)
            lines.append(f"* ``{name}``: " + (d or "no results (run ``python benchmarks/run_all.py``)"))
            path = load(name)[1]
            if path is not None:
                self.env.note_dependency(str(path))
        return self._parse(lines + [""], "<tapeflow-bench-sources>")


class BenchTables(_RstDirective):
    required_arguments = 1

    def run(self):
        name = self.arguments[0]
        data, path, where = load(name)
        if data is None:
            return self._parse([f"No ``{name}`` results in this build (run ``python benchmarks/bench_{name}.py``).",
                                ""], f"<tapeflow-bench-tables {name}>")
        self.env.note_dependency(str(path))
        lines = [f"*From* {_describe_source(name)}.", ""]
        for key, value in data.items():
            if key in META:
                continue
            lines += table_rst(key, value)
        return self._parse(lines, f"<tapeflow-bench-tables {name}>")


def other_names() -> list:
    """Result files beyond :data:`NAMES` (benchmarks added since this page was written)."""
    found = {p.stem for folder in (LIVE, SNAPSHOT) if folder.is_dir() for p in folder.glob("*.json")}
    return sorted(found - set(NAMES))


class BenchOthers(_RstDirective):
    """Every result file the page does not show by name, each under a heading of its own."""

    def run(self):
        lines = []
        for name in other_names():
            data, path, where = load(name)
            if data is None:
                continue
            self.env.note_dependency(str(path))
            title = f"``{name}``"
            lines += [title, "~" * len(title), "", f"``benchmarks/bench_{name}.py``; *from* {_describe_source(name)}.",
                      ""]
            for key, value in data.items():
                if key not in META:
                    lines += table_rst(key, value)
        if not lines:
            return []
        return self._parse(lines, "<tapeflow-bench-others>")


class BenchRatios(_RstDirective):
    def run(self):
        rows = ratios()
        for name in {c["file"] for c in COMPARISONS}:
            path = load(name)[1]
            if path is not None:
                self.env.note_dependency(str(path))
        if not rows:
            return self._parse(["No benchmark results in this build.", ""], "<tapeflow-bench-ratios>")
        fws = [fw for fw in FRAMEWORKS if any(fw in row for _, row, _ in rows)]
        lines = [".. list-table::", "   :header-rows: 1", "", "   * - workload", "     - file"]
        lines += [f"     - {fw}" for fw in fws]
        for label, row, file in rows:
            lines += [f"   * - {label}", f"     - ``{file}``"]
            lines += [f"     - {row[fw]:.2f}x" if fw in row else "     - --" for fw in fws]
        return self._parse(lines + [""], "<tapeflow-bench-ratios>")


def plot_ratios():
    """Grouped horizontal bars of :func:`ratios` on a log axis (called by the ``plot`` directive)."""
    import matplotlib.pyplot as plt

    rows = ratios()
    fws = [fw for fw in FRAMEWORKS if any(fw in row for _, row, _ in rows)] or list(FRAMEWORKS[:3])
    colors = {"NumPy": "#4c72b0", "PyTorch": "#dd8452", "TensorFlow": "#55a868", "JAX": "#8172b3"}
    fig, ax = plt.subplots(figsize=(8, 0.42 * max(len(rows), 1) + 1.8))
    h = 0.8 / len(fws)
    for j, fw in enumerate(fws):
        ys, xs = [], []
        for i, (_, row, _) in enumerate(rows):
            if fw in row:
                ys.append(i + (j - (len(fws) - 1) / 2) * h)
                xs.append(row[fw])
        # bars grow from 1 (parity): right of it tapeflow is faster, left of it slower
        ax.barh(ys, [x - 1.0 for x in xs], height=h, color=colors[fw], label=fw, left=1.0)
        for y, x in zip(ys, xs):
            ax.text(x * (1.04 if x >= 1 else 0.96), y, f"{x:.2g}x", va="center", fontsize=6,
                    ha="left" if x >= 1 else "right")
    ax.set_xscale("log")
    values = [v for _, row, _ in rows for v in row.values()] or [1.0]
    ax.set_xlim(min(min(values), 1.0) / 3, max(max(values), 1.0) * 3)   # room for the labels
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label for label, _, _ in rows])
    ax.invert_yaxis()
    ax.set_xlabel("time of the other framework / time of tapeflow  (> 1: tapeflow is faster)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.09), ncol=len(fws), fontsize="small", frameon=False)
    ax.grid(axis="x", which="both", alpha=0.3)
    return fig


def setup(app):
    app.add_directive("tapeflow-bench-sources", BenchSources)
    app.add_directive("tapeflow-bench-tables", BenchTables)
    app.add_directive("tapeflow-bench-ratios", BenchRatios)
    app.add_directive("tapeflow-bench-others", BenchOthers)
    return {"version": "1", "parallel_read_safe": True, "parallel_write_safe": True}

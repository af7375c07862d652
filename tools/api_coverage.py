"""Write docs/api-coverage.rst: which of TensorFlow 2's public ``tf.*`` names tapeflow has.

Reads the committed list docs/_data/tf_api_names.txt (made from TensorFlow's own API by
tools/gen_tf_api_names.py), looks each name up on ``import tapeflow as tf`` (an attribute path that
resolves is a name tapeflow has), and writes one table per module (has / missing) with the coverage
percentages, Keras (``tf.keras.*``) in a section of its own.  tests/test_api_coverage.py fails when the
committed page differs from what this prints, so the page stays true::

    python tools/api_coverage.py          # rewrite docs/api-coverage.rst
    python tools/api_coverage.py --check  # exit 1 if the page is stale
"""
from __future__ import annotations

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
NAMES = ROOT / "docs" / "_data" / "tf_api_names.txt"
PAGE = ROOT / "docs" / "api-coverage.rst"


def load_names(path=NAMES) -> tuple:
    """(header comment, the names) of the committed list."""
    lines = path.read_text().splitlines()
    header = " ".join(x.lstrip("# ").strip() for x in lines if x.startswith("#"))
    return header, [x.strip() for x in lines if x.strip() and not x.startswith("#")]


def has(tf, name: str) -> bool:
    """Whether ``tf.<path>`` resolves on tapeflow's facade."""
    obj = tf
    for part in name.split(".")[1:]:
        try:
            obj = getattr(obj, part)
        except Exception:  # noqa: BLE001 - AttributeError, or an upper package's ImportError: not there
            return False
    return True


def _module(name: str) -> str:
    return name.rsplit(".", 1)[0]


def coverage(tf, names) -> dict:
    """{module: (has names, missing names)} over the names' modules."""
    out = {}
    for n in names:
        got, missing = out.setdefault(_module(n), ([], []))
        (got if has(tf, n) else missing).append(n.rsplit(".", 1)[1])
    return out


def _pct(a, b) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "-"


def _table(rows, header, widths) -> list:
    out = [".. list-table::", "   :header-rows: 1", f"   :widths: {' '.join(str(w) for w in widths)}", ""]
    for row in [header] + rows:
        out.append(f"   * - {row[0]}")
        out.extend(f"     - {c}" for c in row[1:])
    return out + [""]


def _lit(names) -> str:
    return ", ".join(f"``{n}``" for n in names) if names else "(none)"


def render(tf, names, header="") -> str:
    """The page's reStructuredText."""
    cov = coverage(tf, names)
    keras = {m: v for m, v in cov.items() if m == "tf.keras" or m.startswith("tf.keras.")}
    core = {m: v for m, v in cov.items() if m not in keras}

    def totals(part):
        h = sum(len(v[0]) for v in part.values())
        return h, h + sum(len(v[1]) for v in part.values())

    th, tn = totals(core)
    kh, kn = totals(keras)
    lines = ["TensorFlow API coverage", "=======================", "",
             "Which of TensorFlow 2's public ``tf.*`` names ``import tapeflow as tf`` has: a name counts when its",
             "attribute path resolves on tapeflow.  The list is TensorFlow's own API, committed in",
             "``docs/_data/tf_api_names.txt`` (" + (header or "tools/gen_tf_api_names.py") + ");",
             "``tools/api_coverage.py`` writes this page and ``tests/test_api_coverage.py`` fails when it is stale.",
             "",
             f"**TensorFlow (without Keras): {th} of {tn} names, {_pct(th, tn)}.**",
             f"**Keras (tf.keras): {kh} of {kn} names, {_pct(kh, kn)}.**",
             f"**All: {th + kh} of {tn + kn} names, {_pct(th + kh, tn + kn)}.**", ""]
    for title, part in (("TensorFlow", core), ("Keras", keras)):
        lines += [title, "-" * len(title), ""]
        rows = [[f"``{m}``", str(len(h)), str(len(h) + len(mi)), _pct(len(h), len(h) + len(mi))]
                for m, (h, mi) in sorted(part.items())]
        lines += _table(rows, ["module", "has", "of", "coverage"], [40, 10, 10, 10])
        for m, (h, mi) in sorted(part.items()):
            lines += [m, "~" * len(m), "",
                      f"{len(h)} of {len(h) + len(mi)} ({_pct(len(h), len(h) + len(mi))}).", ""]
            lines += _table([[_lit(h), _lit(mi)]], ["has", "missing"], [50, 50])
    return "\n".join(lines).rstrip() + "\n"


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    import tapeflow as tf

    header, names = load_names()
    text = render(tf, names, header)
    if "--check" in argv:
        if not PAGE.exists() or PAGE.read_text() != text:
            print(f"{PAGE} is stale: run python tools/api_coverage.py")
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every "not installed" hint in the packages' code names a pip command that works: a tapeflow distribution
built from this repository, with extras its pyproject.toml declares (``pip install 'tapeflow-nn[summary]'``).
The hints that name their package through a variable (``pip install {dist}``: tf.keras, tf.data) are run for
real, against the wheels, by tests/wheel_check.py in ``nox -s wheels``."""
from __future__ import annotations

import pathlib
import re

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the test dependency tomli (noxfile.py's TEST_DEPS)
    import tomli as tomllib

PACKAGES = pathlib.Path(__file__).resolve().parents[1] / "packages"
# `pip install` then the requirement, possibly quoted, possibly continued in the next string literal
HINT = re.compile(r"pip install\s*(?:[\"']\s*\n\s*f?[\"'])?\s*'?([A-Za-z0-9_.{}-]+)(\[[^\]]*\])?")


def declared() -> dict:
    """distribution name -> the extras its pyproject.toml declares."""
    out = {}
    for pyproject in PACKAGES.glob("*/pyproject.toml"):
        project = tomllib.loads(pyproject.read_text())["project"]
        out[project["name"]] = set(project.get("optional-dependencies", {}))
    return out


def hints(text: str) -> list:
    """(distribution, extras) of each ``pip install`` naming a tapeflow distribution in ``text``."""
    found = []
    for m in HINT.finditer(text):
        name, extras = m.group(1), m.group(2)
        if name.startswith("tapeflow"):
            found.append((name, sorted(e.strip() for e in extras.strip("[]").split(",")) if extras else []))
    return found


def problems(sources, dists: dict) -> list:
    out = []
    for path, text in sources:
        for name, extras in hints(text):
            if name not in dists:
                out.append(f"{path}: pip install {name}: no such distribution in packages/")
            for e in extras:
                if name in dists and e not in dists[name]:
                    out.append(f"{path}: pip install '{name}[{e}]': {name} declares no extra {e!r}")
    return out


def test_every_hint_names_a_distribution_and_extras_that_exist():
    sources = [(p.relative_to(PACKAGES), p.read_text()) for p in sorted(PACKAGES.glob("*/src/**/*.py"))]
    assert sum(len(hints(t)) for _, t in sources) >= 8   # the hints are found at all
    assert problems(sources, declared()) == []


def test_a_hint_for_a_missing_extra_or_distribution_is_reported():
    dists = declared()
    text = ('raise ImportError("needs Pillow: pip install \'tapeflow-core[pictures]\'")\n'
            'raise ImportError("x: pip install "\n    f"tapeflow-nope (y)")\n'
            'raise ImportError("ok: pip install \'tapeflow-nn[summary]\'")')
    assert hints(text) == [("tapeflow-core", ["pictures"]), ("tapeflow-nope", []), ("tapeflow-nn", ["summary"])]
    assert problems([("x.py", text)], dists) == [
        "x.py: pip install 'tapeflow-core[pictures]': tapeflow-core declares no extra 'pictures'",
        "x.py: pip install tapeflow-nope: no such distribution in packages/"]

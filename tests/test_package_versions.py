"""Each package's version is written once (its ``__version__``; pyproject.toml reads it; the ``tapeflow``
metapackage, which has no module, writes it in its pyproject.toml), and every pin one package has on another
(``tapeflow-core==0.1.0``, ``tapeflow-nn[summary]==0.1.0`` in an extra) names the pinned package's version."""
from __future__ import annotations

import ast
import pathlib
import re
import shutil

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: the test dependency tomli (noxfile.py's TEST_DEPS)
    import tomli as tomllib

PACKAGES = pathlib.Path(__file__).resolve().parents[1] / "packages"
PIN = re.compile(r"^(tapeflow(?:-[a-z]+)?)\s*(?:\[[a-z0-9_,\s-]*\])?\s*(\S.*)?$")


def _module_version(folder: pathlib.Path, module: str) -> str:
    """The literal ``__version__ = "..."`` of ``module`` in the package's src/ (read, not imported)."""
    init = folder / "src" / pathlib.Path(*module.split(".")) / "__init__.py"
    for node in ast.parse(init.read_text()).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["__version__"]:
            return ast.literal_eval(node.value)
    raise AssertionError(f"{init} has no literal __version__")


def version_problems(packages: pathlib.Path) -> list:
    """Every place where the packages under ``packages`` disagree on a version, as sentences."""
    projects, problems = {}, []
    for pyproject in sorted(packages.glob("*/pyproject.toml")):
        conf = tomllib.loads(pyproject.read_text())
        project, folder = conf["project"], pyproject.parent.name
        if conf.get("tool", {}).get("setuptools", {}).get("packages") == []:   # a metapackage: no module
            if "version" not in project or "version" in project.get("dynamic", []):
                problems.append(f"{folder}: a package without a module writes its version in [project]")
                continue
            projects[project["name"]] = (folder, project["version"], project)
            continue
        if "version" in project or "version" not in project.get("dynamic", []):
            problems.append(f"{folder}: [project] must say dynamic = [\"version\"] (the version lives in __version__)")
            continue
        attr = conf["tool"]["setuptools"]["dynamic"]["version"]["attr"]
        module, _, name = attr.rpartition(".")
        if name != "__version__":
            problems.append(f"{folder}: the version attr is {attr!r}; expected <module>.__version__")
            continue
        projects[project["name"]] = (folder, _module_version(pyproject.parent, module), project)
    for dist, (folder, _, project) in projects.items():
        optional = [r for reqs in project.get("optional-dependencies", {}).values() for r in reqs]
        for req in project.get("dependencies", []) + optional:
            m = PIN.match(req)
            if not m:
                continue
            pinned, spec = m.group(1), (m.group(2) or "").strip()
            if pinned not in projects:
                problems.append(f"{folder}: depends on {pinned}, which is not a package under {packages}")
            elif spec != f"=={projects[pinned][1]}":
                problems.append(f"{folder}: pins {pinned}{spec or ' (no version)'} but {projects[pinned][0]} "
                                f"is version {projects[pinned][1]}; pin =={projects[pinned][1]}")
    return problems


def test_versions_are_single_sourced_and_every_pin_names_the_pinned_version():
    found = sorted(p.parent.name for p in PACKAGES.glob("*/pyproject.toml"))
    assert {"kernels-c", "core", "autodiff", "tapeflow"} <= set(found), found
    assert version_problems(PACKAGES) == []


def test_a_stale_pin_is_reported(tmp_path):
    # bump core's version in a copy of the packages' metadata: every pin on core is now stale
    for pyproject in PACKAGES.glob("*/pyproject.toml"):
        dest = tmp_path / pyproject.parent.name
        dest.mkdir()
        shutil.copy(pyproject, dest / "pyproject.toml")
        for init in (pyproject.parent / "src" / "tapeflow").glob("*/__init__.py"):
            target = dest / "src" / "tapeflow" / init.parent.name / "__init__.py"
            target.parent.mkdir(parents=True)
            shutil.copy(init, target)
    core_init = tmp_path / "core" / "src" / "tapeflow" / "core" / "__init__.py"
    text = core_init.read_text()
    core_init.write_text(re.sub(r'^__version__ = "[^"]*"', '__version__ = "9.9.9"', text, count=1, flags=re.M))
    problems = version_problems(tmp_path)
    pins_on_core = sorted(p.parent.name for p in PACKAGES.glob("*/pyproject.toml")
                          if "tapeflow-core" in p.read_text() and p.parent.name != "core")
    assert "tapeflow" in pins_on_core   # the metapackage's dependencies and extras are checked too
    assert pins_on_core and sorted({p.split(":")[0] for p in problems}) == pins_on_core, problems
    old = _module_version(PACKAGES / "core", "tapeflow.core")
    assert all(f"pins tapeflow-core=={old} but core is version 9.9.9; pin ==9.9.9" in p for p in problems), problems

"""Write the code a user copies from the README and the docs' pages as Python files, for type checkers.

``nox -s typecheck`` runs pyright and ``mypy --strict`` over these files and ``examples/``: the README's
```python blocks, and the code of every page under ``docs/getting-started`` and ``docs/guides``: its
``testsetup``, ``testcode`` and ``doctest`` blocks (of a doctest block, its ``>>>`` and ``...`` lines) and
its ``code-block:: python``/``pycon`` blocks, in page order.

A page is written as one module per section (``docs_<page>_NN.py``), as the pages read (the eager tour
redefines ``loss``, ``grad`` and ``MNISTModel`` from section to section, as TensorFlow's tour does): a
section imports what it uses from the sections before it (an import statement again, any other name
``from docs_<page>_MM import name``), so each name has one definition per module.

Left out: blocks listed in ``EXCLUDED``, each with its reason (a fragment naming the reader's own functions);
a doctest example whose expected output is a traceback (it fails on purpose: ``tf.placeholder``, a missing
package); ``console`` blocks (shell commands) and ``plot`` directives (the docs build's own helpers,
``docs/_ext``).  Code that runs on several MPI processes or on a GPU is checked as any other: checking runs
nothing.  ``docs/conf.py``'s doctest setup (``import numpy as np``, ``import tapeflow as tf``) is imported by
each section that uses those names.  The checkers' configuration for these files is written beside them
(``mypy.ini``, ``pyrightconfig.json``).

    python tools/typecheck_snippets.py OUTDIR
"""
from __future__ import annotations

import ast
import builtins
import pathlib
import re
import symtable
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGE_DIRS = ["getting-started", "guides"]   # every .rst under these is checked (tests/test_typecheck_snippets.py)


def pages() -> list[pathlib.Path]:
    """Every page under ``PAGE_DIRS``: a new page is read without being listed here."""
    return sorted(p for d in PAGE_DIRS for p in (DOCS / d).glob("*.rst"))


PAGES = pages()
_DIRECTIVE = re.compile(r"^\.\. (testsetup|testcode|doctest|code-block|code|sourcecode)::\s*(\S*)")
_PYTHON = {"python", "python3", "py", "pycon", ""}   # a code block's languages that are Python
GLOBAL_SETUP = "import numpy as np\nimport tapeflow as tf\n"   # what docs/conf.py's doctest_global_setup gives a page
# mypy's configuration for the snippets (``mypy --config-file OUTDIR/mypy.ini``): the pages also run ONNX
# models and read TensorBoard's event files with libraries that ship no type information: mypy reads ONNX
# Runtime's code (as pyright does; its functions are annotated), and takes TensorBoard's reader (whose
# functions are not) as untyped
MYPY_INI = """[mypy]
strict = True

[mypy-onnxruntime.*]
follow_untyped_imports = True
implicit_reexport = True

[mypy-tensorboard.*]
ignore_missing_imports = True
"""
# pyright's configuration for the snippets (pyright run in OUTDIR, so that a section imports the ones before
# it): the pages read as an interactive session, where a name a loop bound is used after the loop (the last
# batch of an epoch); pyright cannot know the loop ran and calls the name "possibly unbound", which
# ``mypy --strict`` does not check: a warning here, as it is not an error in those pages
PYRIGHT_CONFIG = '{"reportPossiblyUnboundVariable": "warning"}\n'
# blocks left out: (page's path under docs/, a line of the block) -> why
EXCLUDED = {
    ("guides/distributed.rst", "model = make_model()"):
        "a fragment of a script: make_model is the reader's own function (the runnable loop is the testcode above)",
}


def module_stem(page: pathlib.Path) -> str:
    """``docs/guides/graph-functions.rst`` -> ``docs_graph_functions`` (the snippets' module names)."""
    return f"docs_{page.stem.replace('-', '_')}"


def excluded(page: pathlib.Path, body: str) -> str | None:
    """Why a block of ``page`` is left out, or None."""
    rel = page.relative_to(DOCS).as_posix()
    for (where, line), why in EXCLUDED.items():
        if where == rel and any(ln.strip() == line for ln in body.splitlines()):
            return why
    return None


def readme_code(text: str) -> str:
    return "\n".join(m.group(1) for m in re.finditer(r"```python\n(.*?)```", text, re.S))


def doctest_code(body: str) -> str:
    """The source of a doctest block's examples (``>>>`` and ``...`` lines), leaving out each example whose
    expected output is a traceback: it shows an error on purpose (``tf.placeholder``, a missing package)."""
    examples: list[tuple[list[str], list[str]]] = []   # (source lines, output lines)
    for ln in body.splitlines():
        if ln.startswith(">>> ") or ln == ">>>":
            examples.append(([ln[4:]], []))
        elif (ln.startswith("... ") or ln == "...") and examples and not examples[-1][1]:
            examples[-1][0].append(ln[4:])
        elif examples and ln.strip():
            examples[-1][1].append(ln)
        elif not ln.strip() and examples:
            examples.append(([], ["(prose)"]))   # a blank line ends an example's output
    return "\n".join(ln for src, outp in examples if not (outp and outp[0].startswith("Traceback (most recent"))
                     for ln in src)


def rst_code(text: str, page: pathlib.Path | None = None) -> str:
    """The Python blocks of (part of) a page, as one Python file (``page``: to leave out its ``EXCLUDED``)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        i += 1
        if not m:
            continue
        while i < len(lines) and (lines[i].strip().startswith(":") or not lines[i].strip()):
            i += 1  # options (":hide:") and the blank line after the directive
        block = []
        while i < len(lines) and (not lines[i].strip() or lines[i].startswith(" ")):
            block.append(lines[i])
            i += 1
        if m.group(1) not in ("testsetup", "testcode", "doctest") and m.group(2) not in _PYTHON:
            continue  # a console session, a table...
        body = textwrap.dedent("\n".join(block))
        if page is not None and excluded(page, body):
            continue
        if m.group(1) == "doctest" or body.lstrip().startswith(">>>"):
            body = doctest_code(body)
        out.append(body.strip("\n"))
    return "\n\n".join(out) + "\n"


def sections(text: str) -> list[str]:
    """The page cut before each section title (a line underlined with ``---``)."""
    lines, out, cur = text.splitlines(), [], []
    for i, line in enumerate(lines):
        if line.strip() and i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1]) and cur:
            out.append("\n".join(cur))
            cur = []
        cur.append(line)
    out.append("\n".join(cur))
    return out


def _bound(tree: ast.Module) -> dict[str, ast.stmt | None]:
    """The names a module binds at its top level: name -> the import statement that binds it (else None)."""
    out: dict[str, ast.stmt | None] = {}
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                out[(a.asname or a.name).split(".")[0]] = ast.Import([a]) if isinstance(node, ast.Import) else \
                    ast.ImportFrom(node.module, [a], node.level)
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[node.name] = None
            continue
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out[sub.id] = None
    return out


def _free(table: symtable.SymbolTable) -> set[str]:
    """The module-level names a module's code reads (at its top level or from its functions and classes)."""
    out = set()
    for sym in table.get_symbols():
        top = table.get_type() == "module"
        if sym.is_referenced() and (sym.is_global() or top):
            out.add(sym.get_name())
    for child in table.get_children():
        out |= _free(child)
    return out


def sectioned(text: str, stem: str, page: pathlib.Path | None = None) -> dict[str, str]:
    """{module name: code} of a page's sections, each importing what it uses from the sections before it."""
    files: dict[str, str] = {}
    # name -> (module, import statement) of its last binding; docs/conf.py's doctest_global_setup imports
    # numpy as np and tapeflow as tf for every page
    known: dict[str, tuple[str, ast.stmt | None]] = {
        n: ("", imp) for n, imp in _bound(ast.parse(GLOBAL_SETUP)).items()}
    for k, sec in enumerate(sections(text)):
        code = rst_code(sec, page)
        if not code.strip():
            continue
        name = f"{stem}_{k:02d}"
        tree = ast.parse(code)
        bound = _bound(tree)
        used = _free(symtable.symtable(code, name, "exec"))
        head = []
        for n in sorted(used - set(bound) - set(dir(builtins))):
            if n in known:
                mod, imp = known[n]
                head.append(ast.unparse(imp) if imp is not None else f"from {mod} import {n}")
        files[name] = "\n".join(head) + ("\n\n" if head else "") + code
        known.update({n: (name, imp) for n, imp in bound.items()})
    return files


def main(outdir: str) -> None:
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "mypy.ini").write_text(MYPY_INI)
    (out / "pyrightconfig.json").write_text(PYRIGHT_CONFIG)
    (out / "readme_tour.py").write_text(readme_code((ROOT / "README.md").read_text()))
    n = 1
    stems = [module_stem(p) for p in PAGES]
    if len(set(stems)) != len(stems):
        raise SystemExit(f"two pages give the same module name: {stems}")
    for page, stem in zip(PAGES, stems):
        for name, code in sectioned(page.read_text(), stem, page).items():
            (out / f"{name}.py").write_text(code)
            n += 1
    print(f"wrote {n} files to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/typecheck")

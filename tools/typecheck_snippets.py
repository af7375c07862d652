"""Write the code a user copies from the README and the docs' tour pages as Python files, for type checkers.

``nox -s typecheck`` runs pyright and ``mypy --strict`` over these files and ``examples/``: the README's
```python blocks, and the ``testcode``/``doctest`` blocks of ``docs/getting-started/*.rst`` (``>>>`` and
``...`` lines), one file per page, in page order.

A page that reads as a sequence of independent sections (the eager tour, which redefines ``loss``, ``grad``
and ``MNISTModel`` from section to section, as TensorFlow's tour does) is written as one module per section
(``docs_tour_NN.py``): a section imports what it uses from the sections before it (an import statement
again, any other name ``from docs_tour_MM import name``), so each name has one definition per module.

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
PAGES = sorted((ROOT / "docs" / "getting-started").glob("*.rst"))
_DIRECTIVE = re.compile(r"^\.\. (testcode|doctest)::")
SECTIONED = {"tour"}   # pages checked one section at a time


def readme_code(text: str) -> str:
    return "\n".join(m.group(1) for m in re.finditer(r"```python\n(.*?)```", text, re.S))


def rst_code(text: str) -> str:
    """The testcode and doctest blocks of a page, as one Python file."""
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
        body = textwrap.dedent("\n".join(block))
        if m.group(1) == "doctest":
            body = "\n".join(ln[4:] for ln in body.splitlines() if ln.startswith((">>> ", "... ")) or
                             ln in (">>>", "..."))
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


def sectioned(text: str, stem: str) -> dict[str, str]:
    """{module name: code} of a page's sections, each importing what it uses from the sections before it."""
    files: dict[str, str] = {}
    known: dict[str, tuple[str, ast.stmt | None]] = {}   # name -> (module, import statement) of its last binding
    for k, sec in enumerate(sections(text)):
        code = rst_code(sec)
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
    (out / "readme_tour.py").write_text(readme_code((ROOT / "README.md").read_text()))
    n = 1
    for page in PAGES:
        stem = f"docs_{page.stem.replace('-', '_')}"
        if page.stem in SECTIONED:
            for name, code in sectioned(page.read_text(), stem).items():
                (out / f"{name}.py").write_text(code)
                n += 1
        else:
            (out / f"{stem}.py").write_text(rst_code(page.read_text()))
            n += 1
    print(f"wrote {n} files to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/typecheck")

"""Write the code a user copies from the README and the docs' tour pages as Python files, for type checkers.

``nox -s typecheck`` runs pyright and ``mypy --strict`` over these files and ``examples/``: the README's
```python blocks, and the ``testcode``/``doctest`` blocks of ``docs/getting-started/*.rst`` (``>>>`` and
``...`` lines), one file per page, in page order.

    python tools/typecheck_snippets.py OUTDIR
"""
from __future__ import annotations

import pathlib
import re
import sys
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs" / "getting-started").glob("*.rst"))
_DIRECTIVE = re.compile(r"^\.\. (testcode|doctest)::")


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


def main(outdir: str) -> None:
    out = pathlib.Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "readme_tour.py").write_text(readme_code((ROOT / "README.md").read_text()))
    for page in PAGES:
        (out / f"docs_{page.stem.replace('-', '_')}.py").write_text(rst_code(page.read_text()))
    print(f"wrote {len(PAGES) + 1} files to {out}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/typecheck")

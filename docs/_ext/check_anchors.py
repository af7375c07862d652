"""Check every in-site link of a built HTML site: the page exists and so does its ``#anchor``.

The API reference's ``[source]`` links point into viewcode's ``_modules/`` pages (``#tapeflow.add``)
and those pages link back (``#tapeflow.add`` on the API page); a link to an anchor that no element
defines (``id=``) scrolls nowhere.  Run after ``sphinx-build -b html docs OUT``:

    python docs/_ext/check_anchors.py OUT

Prints each broken link (page, target) and exits 1 when there is one.
"""
from __future__ import annotations

import html.parser
import pathlib
import sys
import urllib.parse


class _Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.links = set(), []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])


def broken_links(root: pathlib.Path) -> list:
    pages = {}
    for path in root.rglob("*.html"):
        p = _Page()
        p.feed(path.read_text(encoding="utf-8", errors="replace"))
        pages[path.resolve()] = p
    out = []
    for path, page in sorted(pages.items()):
        for href in page.links:
            parts = urllib.parse.urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue  # another site: not checked here
            target = (path.parent / urllib.parse.unquote(parts.path)).resolve() if parts.path else path
            if target.is_dir():
                target = target / "index.html"
            if target.suffix != ".html":
                if not target.exists():
                    out.append((path.relative_to(root.resolve()), href))
                continue
            dest = pages.get(target)
            if dest is None:
                out.append((path.relative_to(root.resolve()), href))
            elif parts.fragment and urllib.parse.unquote(parts.fragment) not in dest.ids:
                out.append((path.relative_to(root.resolve()), href))
    return out


def main(argv) -> int:
    root = pathlib.Path(argv[1] if len(argv) > 1 else "docs/_build/html")
    bad = broken_links(root)
    for page, href in bad:
        print(f"{page}: {href}")
    print(f"{len(bad)} broken in-site link(s) in {root}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

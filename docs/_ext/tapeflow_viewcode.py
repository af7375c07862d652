"""viewcode's ``[docs]`` links back from a source page, each to the entry of its own object.

``sphinx.ext.viewcode`` builds a module's back links from one reference name per module, the
namespace of the first object of that module a page documents: ``tapeflow/core/debugging.py`` holds
``tf.check_numerics`` (documented as ``tapeflow.check_numerics``) and ``tf.debugging.assert_equal``
(documented as ``tapeflow.debugging.assert_equal``), and both back links pointed at ``#tapeflow.<name>``,
an anchor that exists for the first only (54 such links were broken on the site).  This records, as
pages are read, where each object of each module was documented (its page and its anchor) and
rewrites the back links of the ``_modules/`` pages to those.  ``docs/_ext/check_anchors.py`` checks
every in-site link and anchor of a built site.
"""
from __future__ import annotations

import re

from sphinx import addnodes
from sphinx.ext import viewcode

_BACK = re.compile(r'class="viewcode-back" href="([^"]*)"')


def _record(app, doctree) -> None:
    """{defining module: {name in it: (docname, anchor)}} for every indexed Python entry of the page."""
    env = app.env
    anchors = getattr(env, "_tapeflow_back_anchors", None)
    if anchors is None:
        anchors = env._tapeflow_back_anchors = {}
    for signode in doctree.findall(addnodes.desc_signature):
        modname, fullname, ids = signode.get("module"), signode.get("fullname"), signode.get("ids")
        if not modname or not fullname or not ids:  # (a :no-index: entry has no anchor to link to)
            continue
        real = app.events.emit_firstresult("viewcode-follow-imported", modname, fullname) or \
            viewcode._get_full_modname(modname, fullname)
        if real:
            anchors.setdefault(real, {}).setdefault(fullname, (env.docname, ids[0]))


def _purge(app, env, docname) -> None:
    for names in getattr(env, "_tapeflow_back_anchors", {}).values():
        for name in [n for n, (doc, _) in names.items() if doc == docname]:
            del names[name]


def _merge(app, env, docnames, other) -> None:
    mine = getattr(env, "_tapeflow_back_anchors", None)
    if mine is None:
        mine = env._tapeflow_back_anchors = {}
    for mod, names in getattr(other, "_tapeflow_back_anchors", {}).items():
        for name, hit in names.items():
            mine.setdefault(mod, {}).setdefault(name, hit)


def _fix_back_links(app, pagename, templatename, context, doctree) -> None:
    prefix = viewcode.OUTPUT_DIRNAME + "/"
    if not pagename.startswith(prefix) or "body" not in context:
        return
    modname = pagename[len(prefix):].replace("/", ".")
    entry = getattr(app.env, "_viewcode_modules", {}).get(modname)
    mine = getattr(app.env, "_tapeflow_back_anchors", {}).get(modname, {})
    if not entry or not mine:
        return
    refname = entry[3]  # the one name viewcode put before every name of this module

    def fix(m):
        base, _, frag = m.group(1).partition("#")
        if frag.startswith(refname + "."):
            hit = mine.get(frag[len(refname) + 1:])
            if hit is not None:
                docname, anchor = hit
                return f'class="viewcode-back" href="{app.builder.get_relative_uri(pagename, docname)}#{anchor}"'
        return m.group(0)

    context["body"] = _BACK.sub(fix, context["body"])


def setup(app):
    app.setup_extension("sphinx.ext.viewcode")
    app.connect("doctree-read", _record)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.connect("html-page-context", _fix_back_links)
    return {"parallel_read_safe": True, "parallel_write_safe": True, "env_version": 1}

"""The API reference, generated from the packages themselves.

``.. tapeflow-api:: core`` renders one package's page: its distribution name and
version, then every public name of each of its namespaces, grouped by the module
that defines it, as tables of names and one-line summaries.  Every public function
and class has a page of its own (``docs/api/_generated/<full name>.rst``, written when
a build starts, git-ignored): its signature, its whole docstring with its examples (run
by the doctest builder, once), its ``[source]`` link and, for a class, its methods and
properties.  The tables link to those pages, and so do ``:func:``/``:class:``
references from anywhere on the site (each object is indexed on its page only).  The
names come from the installed packages at build time (``__all__`` where a module
has one; otherwise the functions and classes defined in that package), so a name
added to a package appears on the site without editing the docs, and a docstring
that is not valid reStructuredText fails the ``-W`` build.

A name already documented under an earlier namespace of the same package (for
example ``tf.math.add``, which is ``tf.add``) is listed as an alias with a link
instead of being documented twice.

``.. tapeflow-facade-map::`` renders the table of names the ``tapeflow`` facade
loads from the upper packages on first use (``tf.GradientTape``, ``tf.keras``...).
"""
from __future__ import annotations

import functools
import importlib
import inspect
import re
import sys
import types

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

logger = logging.getLogger(__name__)

# package key -> distribution, the module holding __version__, and its namespaces in order
# (namespace, heading, blurb); names are documented under the first namespace they appear in
PACKAGES = {
    "kernels": {
        "dist": "tapeflow-kernels",
        "version_module": "tapeflow.kernels",
        "prefix": "tapeflow.kernels",
        "namespaces": [
            ("tapeflow.kernels", "tapeflow.kernels",
             "Backends by name, the kernel status codes and the op codes shared with the C sources."),
            ("tapeflow.kernels.backend", "tapeflow.kernels.backend",
             "The interface every backend implements."),
            ("tapeflow.kernels.cpu", "tapeflow.kernels.cpu", "The CPU backend (C kernels through cffi)."),
            ("tapeflow.kernels.gpu_common", "tapeflow.kernels.gpu_common",
             "What the OpenCL and CUDA backends share: the device allocator and kernel table."),
            ("tapeflow.kernels.opencl", "tapeflow.kernels.opencl", "The OpenCL backend."),
            ("tapeflow.kernels.cuda", "tapeflow.kernels.cuda", "The CUDA backend."),
        ],
    },
    "core": {
        "dist": "tapeflow-core",
        "version_module": "tapeflow.core",
        "prefix": "tapeflow.core",
        "namespaces": [
            ("tapeflow", "tapeflow (the facade)",
             "``import tapeflow as tf``: tensors, variables, dtypes, devices and every core op."),
            ("tapeflow.math", "tapeflow.math", "``tf.math``: element-wise math and reductions."),
            ("tapeflow.linalg", "tapeflow.linalg", "``tf.linalg``: linear algebra."),
            ("tapeflow.signal", "tapeflow.signal",
             "``tf.signal``: FFTs of complex64/complex128 tensors (csrc/fft.c: mixed radix 2/3/4/5, Bluestein for "
             "other lengths, double precision inside; the OpenCL and CUDA backends run them on the host with one "
             "copy each way), real FFTs, windows, frames and the STFT."),
            ("tapeflow.random", "tapeflow.random", "``tf.random``: seeds and random tensors."),
            ("tapeflow.config", "tapeflow.config", "``tf.config``: threads, devices, denormals."),
            ("tapeflow.debugging", "tapeflow.debugging", "``tf.debugging``: assertions and numeric checks."),
            ("tapeflow.errors", "tapeflow.errors", "``tf.errors``: the typed errors ops raise."),
            ("tapeflow.dtypes", "tapeflow.dtypes", "``tf.dtypes``: element types."),
        ],
    },
    "autodiff": {
        "dist": "tapeflow-autodiff",
        "version_module": "tapeflow.autodiff",
        "prefix": "tapeflow.autodiff",
        "namespaces": [
            ("tapeflow.autodiff", "tapeflow.autodiff",
             "Tapes, the function-style gradient APIs, custom gradients and the numeric checker. "
             "The facade maps the common ones: ``tf.GradientTape``, ``tf.gradients_function``, "
             "``tf.custom_gradient``..."),
            ("tapeflow.autodiff.registry", "tapeflow.autodiff.registry",
             "The gradient registry core ops' rules are written against."),
        ],
    },
    "nn": {
        "dist": "tapeflow-nn",
        "version_module": "tapeflow.nn",
        "prefix": "tapeflow.nn",
        "namespaces": [
            ("tapeflow.nn", "tapeflow.nn",
             "Layers and models (``tf.nn`` and ``tf.keras`` on the facade; ``tf.keras.layers`` is "
             ":mod:`tapeflow.nn.layers`)."),
            ("tapeflow.nn.layers", "tapeflow.nn.layers", "``tf.keras.layers``."),
            ("tapeflow.nn.optimizers", "tapeflow.nn.optimizers", "``tf.optimizers``."),
            ("tapeflow.nn.optimizers.schedules", "tapeflow.nn.optimizers.schedules",
             "Learning-rate schedules."),
            ("tapeflow.nn.losses", "tapeflow.nn.losses", "``tf.losses``."),
            ("tapeflow.nn.metrics", "tapeflow.nn.metrics", "``tf.metrics``."),
            ("tapeflow.nn.initializers", "tapeflow.nn.initializers", "``tf.initializers``."),
            ("tapeflow.nn.regularizers", "tapeflow.nn.regularizers", "Weight regularizers."),
            ("tapeflow.nn.activations", "tapeflow.nn.activations", "Activation functions by name."),
            ("tapeflow.nn.callbacks", "tapeflow.nn.callbacks", "Callbacks of ``fit``."),
            ("tapeflow.nn.train", "tapeflow.nn.train", "``tf.train``: checkpoints and the global step."),
            ("tapeflow.nn.summary", "tapeflow.nn.summary", "``tf.summary``: TensorBoard event files."),
            ("tapeflow.nn.backend", "tapeflow.nn.backend", "``tf.keras.backend``."),
        ],
    },
    "data": {
        "dist": "tapeflow-data",
        "version_module": "tapeflow.data",
        "prefix": "tapeflow.data",
        "namespaces": [
            ("tapeflow.data", "tapeflow.data", "``tf.data``: datasets, readers and options."),
            ("tapeflow.data.experimental", "tapeflow.data.experimental", "``tf.data.experimental``."),
            ("tapeflow.data.datasets", "tapeflow.data.datasets",
             "Loaders: scikit-learn's digits, MNIST and Fashion-MNIST."),
            ("tapeflow.data.datasets.mnist", "tapeflow.data.datasets.mnist", "MNIST (IDX files)."),
            ("tapeflow.data.datasets.fashion_mnist", "tapeflow.data.datasets.fashion_mnist",
             "Fashion-MNIST (IDX files)."),
        ],
    },
    "distribute": {
        "dist": "tapeflow-distribute",
        "version_module": "tapeflow.distribute",
        "prefix": "tapeflow.distribute",
        "namespaces": [
            ("tapeflow.distribute", "tapeflow.distribute",
             "``tf.distribute``: strategies (MPI processes, local devices), replica contexts, distributed "
             "datasets and the loss helpers."),
        ],
    },
}

# the defining module -> the heading of its group on a namespace's section
GROUPS = {
    "tapeflow.core.tensor": "Tensors",
    "tapeflow.core.variables": "Variables",
    "tapeflow.core.dtypes": "Data types",
    "tapeflow.core.devices": "Devices",
    "tapeflow.core.config": "Configuration",
    "tapeflow.core.ops.math_ops": "Math",
    "tapeflow.core.ops.reduce_ops": "Math",
    "tapeflow.core.ops.array_ops": "Arrays: creation, shapes, indexing, sorting",
    "tapeflow.core.ops.slice_ops": "Arrays: creation, shapes, indexing, sorting",
    "tapeflow.core.ops.index_ops": "Arrays: creation, shapes, indexing, sorting",
    "tapeflow.core.ops.sort_ops": "Arrays: creation, shapes, indexing, sorting",
    "tapeflow.core.ops.nn_ops": "Neural-network ops",
    "tapeflow.core.ops.conv_ops": "Convolution and pooling",
    "tapeflow.core.ops.linalg_ops": "Linear algebra",
    "tapeflow.core.ops.complex_ops": "Complex numbers",
    "tapeflow.core.ops.fft_ops": "Signal processing",
    "tapeflow.core.ops.random_ops": "Random numbers",
    "tapeflow.core.random": "Random numbers",
    "tapeflow.core.ops.grad_ops": "Gradient helpers",
    "tapeflow.core.dispatch": "The op registry (for authors of ops)",
    "tapeflow.core.runner": "The op registry (for authors of ops)",
    "tapeflow.core.debugging": "Assertions and numeric checks",
    "tapeflow.core.errors": "Errors",
    "tapeflow.autodiff.tape": "Tapes",
    "tapeflow.autodiff.functions": "Gradients of functions",
    "tapeflow.autodiff.custom": "Custom gradients and your own ops",
    "tapeflow.autodiff.check": "The numeric gradient checker",
    "tapeflow.autodiff.registry": "The gradient registry",
    "tapeflow.nn.layers.base": "Layer, Input",
    "tapeflow.nn.layers.core": "Core layers",
    "tapeflow.nn.layers.conv": "Convolution and pooling layers",
    "tapeflow.nn.layers.normalization": "Normalization layers",
    "tapeflow.nn.layers.rnn": "Recurrent layers",
    "tapeflow.nn.models": "Models",
    "tapeflow.nn.train": "Checkpoints",
    "tapeflow.nn.checkpoint": "Checkpoints",
    "tapeflow.data.dataset": "Datasets",
    "tapeflow.data.readers": "Readers",
    "tapeflow.data._structure": "Element specs",
    "tapeflow.distribute": "Strategies and replicas",
    "tapeflow.distribute._strategy": "Strategies and replicas",
    "tapeflow.distribute._collective": "Collectives",
}

_SKIP = {"annotations"}

# namespaces that re-export another package's functions on purpose, and how to say so
REEXPORTS = {
    "tapeflow.nn": "Core's neural-network ops are here too, under TensorFlow's spellings (``tf.nn.relu``, "
                   "``tf.nn.softmax_cross_entropy_with_logits``...); they are documented with tapeflow-core:",
}


def reexported(modname: str) -> list:
    """(name, documented target) of the functions ``modname`` takes from another tapeflow package."""
    import tapeflow

    mod = _import(modname)
    prefix = modname.split(".")[0] + "." + modname.split(".")[1]
    out = []
    for n in sorted(dir(mod)):
        obj = getattr(mod, n, None)
        where = _defining_module(obj) if obj is not None else None
        if n.startswith("_") or not where or not where.startswith("tapeflow.") or where.startswith(prefix):
            continue
        if getattr(tapeflow, n, None) is obj:
            out.append((n, f"tapeflow.{n}"))
        elif getattr(tapeflow.math, n, None) is obj:
            out.append((n, f"tapeflow.math.{n}"))
    return out  # `from __future__ import annotations` seen through `import *`


def _import(name: str):
    """A module by dotted name; facade namespaces (``tapeflow.random``) are attributes, not modules."""
    try:
        return importlib.import_module(name)
    except ImportError:
        head, _, attr = name.rpartition(".")
        if not head:
            raise
        obj = getattr(_import(head), attr, None)
        if not isinstance(obj, types.ModuleType):
            raise
        return obj


def _version(key: str) -> str:
    try:
        return getattr(_import(PACKAGES[key]["version_module"]), "__version__", "?")
    except ImportError:
        return "not installed"


def _defining_module(obj) -> str | None:
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType, type)) or inspect.isclass(obj):
        return getattr(obj, "__module__", None)
    if callable(obj) and hasattr(obj, "__module__") and not isinstance(obj, types.ModuleType):
        return getattr(obj, "__module__", None)
    return None


def public_names(modname: str, prefix: str) -> list:
    """(name, object) pairs a user of ``modname`` may type.

    ``__all__`` when the module has one.  Otherwise the non-underscore functions and
    classes defined under ``prefix`` (the package), and instances of classes defined
    there (``tf.float32``); names a module merely imports from elsewhere are left out.
    """
    mod = _import(modname)
    listed = getattr(mod, "__all__", None)
    out = []
    if listed is not None:
        for n in listed:
            if n in _SKIP:
                continue
            try:
                obj = getattr(mod, n)
            except AttributeError:
                logger.warning("%s.__all__ names %r, which the module does not have", modname, n,
                               type="tapeflow", subtype="api")
                continue
            out.append((n, obj))
        return out

    def owned(where: str) -> bool:
        return where == modname or where == prefix or where.startswith(prefix + ".")

    for n in sorted(dir(mod)):
        if n.startswith("_") or n in _SKIP:
            continue
        try:
            obj = getattr(mod, n)
        except Exception:
            continue
        if isinstance(obj, types.ModuleType):
            continue
        where = _defining_module(obj)
        if where is None:
            where = getattr(type(obj), "__module__", "")
            if isinstance(obj, (dict, list, tuple, set)):
                continue
        if owned(where):
            out.append((n, obj))
    return out


def _kind(obj) -> str:
    if inspect.isclass(obj):
        return "class"
    if isinstance(obj, types.ModuleType):
        return "module"
    if callable(obj) and not _is_instance_of_tapeflow_class(obj):
        return "function"
    return "data"


def _is_instance_of_tapeflow_class(obj) -> bool:
    return not (inspect.isfunction(obj) or inspect.isbuiltin(obj) or inspect.ismethod(obj)
                or isinstance(obj, type))


def _heading(text: str, char: str) -> list:
    return [text, char * len(text), ""]


def _group_title(modname: str, obj, namespace: str) -> str:
    where = _defining_module(obj) or getattr(type(obj), "__module__", "") or namespace
    if where in GROUPS:
        return GROUPS[where]
    for k in sorted(GROUPS, key=len, reverse=True):
        if where.startswith(k + "."):
            return GROUPS[k]
    return "More" if where.startswith("tapeflow") else "Other"


class Namespace:
    """One namespace of a package's page: what it documents, in order.

    ``fresh``: (name, object) documented here for the first time in the package; ``aliases``: (name,
    the full name it was first documented under); ``submodules``: names of public submodules;
    ``error``: why it could not be imported (then nothing else is set).
    """

    def __init__(self, ns: str, heading: str, blurb: str):
        self.ns, self.heading, self.blurb = ns, heading, blurb
        self.fresh: list = []
        self.aliases: list = []
        self.submodules: list = []
        self.error: str | None = None


_SURFACES: dict = {}   # package key -> [Namespace]; emptied when a build starts (builder-inited)


def surface(key: str) -> list:
    """The namespaces of one package's page (``PACKAGES[key]``), each with what it documents.

    A name already documented under an earlier namespace of the same package is an alias of that
    entry.  Computed once per build (the page and the symbol pages read the same list).
    """
    if key in _SURFACES:
        return _SURFACES[key]
    spec = PACKAGES[key]
    out = []
    documented: dict = {}   # id(obj) -> the full name it was documented under
    for ns, heading, blurb in spec["namespaces"]:
        space = Namespace(ns, heading, blurb)
        out.append(space)
        try:
            names = public_names(ns, spec["prefix"])
        except ImportError as e:
            space.error = str(e)
            continue
        space.submodules = [n for n, obj in names if isinstance(obj, types.ModuleType)]
        names = [(n, obj) for n, obj in names if not isinstance(obj, types.ModuleType)]
        # of two names of one object in a namespace, the object's own (GlobalMaxPooling1D, not GlobalMaxPool1D)
        preferred: dict = {}
        for n, obj in names:
            if id(obj) not in preferred or n == getattr(obj, "__name__", None):
                preferred[id(obj)] = n
        for n, obj in names:
            k = id(obj)
            if isinstance(obj, (int, float, str, bytes, bool)):
                space.fresh.append((n, obj))
            elif k in documented:
                if documented[k] != f"{ns}.{n}":
                    space.aliases.append((n, documented[k]))
            else:
                space.fresh.append((preferred[k], obj))
                documented[k] = f"{ns}.{preferred[k]}"
                if n != preferred[k]:
                    space.aliases.append((n, documented[k]))
    _SURFACES[key] = out
    return out


def package_rst(key: str) -> list:
    """The reStructuredText of one package's page (below its title).

    Each namespace: a table per group of its functions and classes (name, linked to the name's own
    page, and the first line of its docstring), the entries of its data (``tf.float32``) in full, and
    links to the names it shares with an earlier namespace.  The docstrings themselves are on the
    symbol pages (``symbol_pages``), so each object is indexed, and each example run, once.
    """
    spec = PACKAGES[key]
    lines = [f"**Distribution** ``{spec['dist']}`` **version** ``{_version(key)}``", ""]
    for space in surface(key):
        ns = space.ns
        lines += _heading(space.heading, "-")
        if space.error is not None:
            lines += [f"Not importable here: ``{space.error}``.", ""]
            continue
        lines += [f".. py:module:: {ns}", ""]
        lines += [space.blurb, ""]
        if not space.fresh and not space.aliases:
            lines += ["Nothing public.", ""]
        groups: dict = {}
        for n, obj in space.fresh:
            groups.setdefault(_group_title(ns, obj, ns), []).append((n, obj))
        for title in sorted(groups, key=_group_order):
            members = groups[title]
            if len(groups) > 1:
                lines += _heading(f"{title}", "~")
            lines += _summary_table(ns, members)
            for n, obj in members:
                if _kind(obj) not in PAGE_KINDS:
                    lines += _entry(f"{ns}.{n}", obj)
        if ns in REEXPORTS:
            links = ", ".join(f":py:obj:`{n} <{target}>`" for n, target in reexported(ns))
            if links:
                lines += [f"{REEXPORTS[ns]} {links}.", ""]
        if space.submodules:
            links = ", ".join(f":py:mod:`{ns}.{n}`" for n in space.submodules)
            lines += [f"Submodules of ``{ns}``: {links}.", ""]
        if space.aliases:
            links = ", ".join(f":py:obj:`{n} <{target}>`" for n, target in space.aliases)
            lines += [f"Also in ``{ns}`` (the same objects as documented above): {links}.", ""]
    return lines


# ---- one page per public function and class -----------------------------------------------------

PAGE_KINDS = ("function", "class")   # what gets a page of its own (data stays on the package page)
GENERATED = "api/_generated"         # where the symbol pages are written (under the source dir; git-ignored)


def symbol_pages(keys=None) -> dict:
    """{docname under ``GENERATED``: reStructuredText} of every public function and class of the packages.

    Each page: the full name as title, where it lives (namespace, package page, aliases), a hidden
    doctest setup with its module's globals, and its autodoc entry (signature, the whole docstring,
    the ``[source]`` link, and for a class its documented methods and properties).  Names that differ
    only in case (``tf.keras.layers.Add`` and ``add``) get the kind appended to their file names, so
    the site also unpacks on a case-insensitive file system.
    """
    entries = []   # (key, Namespace, name, obj, full name, kind, aliases)
    for key in (keys or PACKAGES):
        also: dict = {}
        spaces = surface(key)
        for space in spaces:
            for n, target in space.aliases:
                also.setdefault(target, []).append(f"{space.ns}.{n}")
        for space in spaces:
            for n, obj in space.fresh:
                kind = _kind(obj)
                if kind in PAGE_KINDS:
                    entries.append((key, space, n, obj, f"{space.ns}.{n}", kind, also.get(f"{space.ns}.{n}", [])))
    folded: dict = {}
    for e in entries:
        folded.setdefault(e[4].lower(), []).append(e)
    pages = {}
    for e in entries:
        key, space, n, obj, full, kind, aliases = e
        same = folded[full.lower()]
        stem = full
        if len(same) > 1:   # Add and add: tapeflow.nn.Add-class, tapeflow.nn.add-function (else numbered)
            stem = f"{full}-{kind}" if len({x[5] for x in same}) == len(same) else f"{full}-{same.index(e) + 1}"
        pages[stem] = _symbol_page(key, space, n, obj, full, kind, aliases)
    return pages


def _escape_title(text: str) -> str:
    return text.replace("\\", "\\\\").replace("_", "\\_").replace("*", "\\*")


def _symbol_page(key, space, n, obj, full, kind, aliases) -> list:
    spec = PACKAGES[key]
    where = _defining_module(obj)
    title = _escape_title(full)
    lines = [":orphan:", "", f".. generated by docs/_ext/tapeflow_api.py from {where}; not committed", "",
             title, "=" * len(title), ""]
    group = _group_title(space.ns, obj, space.ns)
    context = f"A {kind} of ``{space.ns}`` (:doc:`{spec['dist']} <../{key}>`"
    context += f", *{group}*)." if group not in ("More", "Other") else ")."
    if aliases:
        context += " Also: " + ", ".join(f"``{a}``" for a in aliases) + "."
    lines += [context, ""]
    if where and where.startswith("tapeflow"):
        lines += _module_globals_setup([where])
    return lines + _entry(full, obj)


# ---- [source] links for what viewcode cannot place ---------------------------------------------------
#
# viewcode links an entry to its source when the entry's name is a ``def``/``class`` of the defining
# module.  Many public names are not: ``tf.print`` is ``print_``, ``tf.add`` is made by a factory
# (``op.__name__ = "add"``), ``tf.config.list_logical_devices = list_physical_devices``.  This gives
# viewcode, for each module, the tags it finds plus one per documented name (and, for a class documented
# under another name, per member) at the lines of the object's definition.

_TAGS: dict = {}   # module -> (code, tags); emptied when a build starts


def _documented_by_module() -> dict:
    """{defining module: [(name the entry is documented under, object)]} over every package's surface."""
    out: dict = {}
    for key in PACKAGES:
        for space in surface(key):
            for n, obj in space.fresh:
                if _kind(obj) in PAGE_KINDS and isinstance(getattr(obj, "__module__", None), str):
                    out.setdefault(obj.__module__, []).append((n, obj))
    return out


def find_source(app, modname: str):
    """viewcode-find-source: (code, tags) of a module defining documented names, with a tag for each of them
    (None for other modules: viewcode's own analysis)."""
    if modname in _TAGS:
        return _TAGS[modname]
    documented = _documented_by_module().get(modname)
    if not documented:
        return None
    from sphinx.pycode import ModuleAnalyzer

    try:
        analyzer = ModuleAnalyzer.for_module(modname)
        analyzer.find_tags()
    except Exception:
        return None
    tags = dict(analyzer.tags)
    module = _import(modname)
    source_file = getattr(module, "__file__", None)
    for n, obj in documented:
        if n in tags:
            continue
        qual = getattr(obj, "__qualname__", "")
        if qual in tags:
            tags[n] = tags[qual]
            for t in [t for t in tags if t.startswith(qual + ".")]:
                tags.setdefault(n + t[len(qual):], tags[t])
            continue
        try:   # made by a factory: the lines of the def that made it, when it is in this module
            if inspect.getsourcefile(obj) != source_file:
                continue
            body, start = inspect.getsourcelines(obj)
        except (OSError, TypeError):
            continue
        tags[n] = ("def", start, start + len(body) - 1)
    _TAGS[modname] = (analyzer.code, tags)
    return _TAGS[modname]


_FILES: dict = {}   # source file -> module name, over sys.modules; emptied when a build starts


def _module_of_file(path: str) -> str | None:
    if path not in _FILES:
        _FILES.update({getattr(m, "__file__", None): name for name, m in list(sys.modules.items())})
    return _FILES.get(path)


def _code_file(obj) -> str | None:
    """The file a function's code, or a class's body (its own methods' code), comes from."""
    obj = inspect.unwrap(obj) if callable(obj) else obj   # (a decorated function's own code, not its wrapper's)
    if inspect.isfunction(obj):
        return obj.__code__.co_filename
    if inspect.isclass(obj):
        for member in vars(obj).values():
            member = getattr(member, "__func__", None) or getattr(member, "fget", None) or member
            member = inspect.unwrap(member) if callable(member) else member
            if inspect.isfunction(member) and member.__qualname__.startswith(obj.__qualname__ + "."):
                return member.__code__.co_filename
    return None


def follow_definition(app, modname: str, attribute: str):
    """viewcode-follow-imported: the module whose source defines an entry, where viewcode's guess (the
    object's ``__module__``) is not it: a property's is its getter's (viewcode skips properties: no
    ``__module__``), and a package that re-homes its names (tapeflow.distribute sets ``__module__`` to
    itself) has them defined in a submodule.  None: viewcode's guess stands."""
    value = None
    try:
        value = _import(modname)
        for part in attribute.split("."):
            value = getattr(value, part)
    except Exception:
        return None
    if isinstance(value, (property, functools.cached_property)):
        getter = getattr(value, "fget", None) or getattr(value, "func", None)
        return getattr(getter, "__module__", None)
    home = getattr(value, "__module__", None)
    try:
        path = _code_file(value)
    except Exception:   # (an object whose __wrapped__ chain loops)
        return None
    if not isinstance(home, str) or path == getattr(sys.modules.get(home), "__file__", None):
        return None
    if path is not None:
        return _module_of_file(path)
    qual = getattr(value, "__qualname__", None)
    if not inspect.isclass(value) or not qual or _defines(home, qual):
        return None
    for name in sorted(m for m in list(sys.modules) if m.startswith(home + ".")):   # a class without methods
        if getattr(sys.modules[name], qual, None) is value and _defines(name, qual):
            return name
    return None


def _defines(modname: str, qualname: str) -> bool:
    from sphinx.pycode import ModuleAnalyzer

    try:
        analyzer = ModuleAnalyzer.for_module(modname)
        analyzer.find_tags()
    except Exception:
        return False
    return qualname in analyzer.tags


def write_symbol_pages(app) -> None:
    """builder-inited: (re)write ``GENERATED`` to hold exactly the symbol pages of this build.

    A page whose text did not change is not touched (its time stamp stays); a page of a name that is
    gone is removed.  Every symbol page is read again on each build, as the package pages are: its
    text comes from the installed packages, not from its file.
    """
    import pathlib

    _SURFACES.clear()
    _TAGS.clear()
    _FILES.clear()
    out = pathlib.Path(app.srcdir) / GENERATED
    out.mkdir(parents=True, exist_ok=True)
    pages = symbol_pages()
    for stem, lines in pages.items():
        path = out / f"{stem}.rst"
        text = "\n".join(lines) + "\n"
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    for path in out.glob("*.rst"):
        if path.stem not in pages:
            path.unlink()
    app.env.tapeflow_symbol_docs = {f"{GENERATED}/{stem}" for stem in pages}


def _module_globals_setup(modules: list) -> list:
    """A hidden doctest setup giving the page's docstring examples their modules' globals.

    The packages' own docstring test (tests/test_docstring_examples.py) runs each module's
    examples in that module's namespace; the doctest builder runs a page's examples in one
    namespace of its own.  This gives that namespace the public names of the modules whose
    objects the page documents (never shadowing a builtin), so an example behaves here as it
    does there.  Examples should not need it: they import what they use (``import tapeflow as
    tf``); the build log names those that do (see ``report_module_globals``).
    """
    if not modules:
        return []
    return [".. testsetup::", "",
            "   import builtins as _builtins, importlib as _importlib",
            f"   for _m in {modules!r}:",
            "       globals().update({_k: _v for _k, _v in vars(_importlib.import_module(_m)).items()",
            "                         if not _k.startswith('_') and not hasattr(_builtins, _k)})",
            ""]


def _group_order(title: str):
    order = list(dict.fromkeys(GROUPS.values()))
    return (order.index(title) if title in order else len(order) + (title in ("More", "Other")), title)


def _summary(obj) -> str:
    """The first paragraph of a docstring, on one line ('|' read as text, as in the entries)."""
    doc = inspect.getdoc(obj) or ""
    if isinstance(obj, (int, float, str, dict, list, tuple)) or not doc:
        return ""
    first = doc.strip().split("\n\n", 1)[0]
    if first.lstrip().startswith(">>>"):
        return ""
    lines = [" ".join(first.split())]
    escape_formula_bars(None, "", "tapeflow.summary", obj, None, lines)
    return lines[0]


def _summary_table(ns: str, members) -> list:
    """A two-column index of a group: each name (linked to its entry) and its one-line summary."""
    out = [".. list-table::", "   :class: tapeflow-summary", "   :widths: 30 70", ""]
    for n, obj in members:
        out += [f"   * - :py:obj:`~{ns}.{n}`", f"     - {_summary(obj) or ' '}"]
    return out + [""]


def _entry(full: str, obj) -> list:
    kind = _kind(obj)
    if kind == "class":
        bases = [b for b in obj.__bases__ if b is not object]
        return [f".. autoclass:: {full}", "   :members:"] + (["   :show-inheritance:"] if bases else []) + [""]
    if kind == "function":
        return [f".. autofunction:: {full}", ""]
    cls = type(obj)
    module, _, short = full.rpartition(".")
    head = [f".. py:data:: {short}", f"   :module: {module}"]
    if isinstance(obj, (int, float, str, bool)) or cls.__module__.startswith("tapeflow"):
        value = repr(obj)
        value = value if len(value) <= 60 else value[:57] + "..."
        head += [f"   :value: {value}", ""]
    else:
        head += [f"   :type: {cls.__qualname__}", ""]
    if cls.__module__.startswith("tapeflow"):
        return head + [f"   An instance of :py:class:`{cls.__module__}.{cls.__qualname__}`.", ""]
    return head


# ---- docstrings: `|` is text ------------------------------------------------------------------
#
# tapeflow's docstrings give each op's formula in plain text (STYLE.md), where |x| is an absolute
# value and ||t|| a norm.  In reStructuredText |x| is a substitution reference, an error.  Outside
# literals (``...``, `...` roles, doctest and literal blocks) a `|` is escaped, so the formula shows
# as written.  Each docstring changed this way is named in the build log (INFO), so the owners can
# escape it at the source (``|x|`` in double backquotes, or \|x\|), after which this does nothing.

_LITERAL_SPAN = re.compile(r"(``.+?``|:[\w:]+:`[^`]*`|`[^`]*`_?)")


def _escape_bars(text: str) -> str:
    parts = _LITERAL_SPAN.split(text)
    for i in range(0, len(parts), 2):   # even parts are outside literal spans
        parts[i] = re.sub(r"(?<!\\)\|", r"\\|", parts[i])
    return "".join(parts)


def escape_formula_bars(app, what, name, obj, options, lines):
    if not name.startswith("tapeflow"):
        return
    changed = False
    in_doctest = False
    literal_indent = None
    for i, line in enumerate(lines):
        stripped = line.lstrip()
        indent = len(line) - len(stripped)
        if not stripped:
            in_doctest = False
            continue
        if literal_indent is not None:
            if indent > literal_indent:
                continue
            literal_indent = None
        if stripped.startswith(">>>"):
            in_doctest = True
        if in_doctest or "|" not in line or stripped.startswith(("| ", "+-", "+=")):
            pass
        else:
            new = _escape_bars(line)
            if new != line:
                lines[i] = new
                changed = True
        if not in_doctest and stripped.endswith("::"):
            literal_indent = indent
    if changed and name != "tapeflow.summary":
        logger.info("tapeflow docs: '|' read as text (absolute value / norm) in the docstring of %s", name)


# ---- docstring examples that lean on their module's globals ---------------------------------------

def _undefined_names(lines) -> set:
    """Names the ``>>>`` examples of a docstring use without defining or importing them."""
    import ast
    import builtins
    import doctest

    try:
        examples = doctest.DocTestParser().get_examples("\n".join(lines))
    except ValueError:
        return set()
    defined, used = {"tf", "np"}, set()
    for ex in examples:
        try:
            tree = ast.parse(ex.source)
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Name):
                (defined if isinstance(node.ctx, (ast.Store, ast.Del)) else used).add(node.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                defined.update((a.asname or a.name).split(".")[0] for a in node.names)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                defined.add(node.name)
            elif isinstance(node, ast.arg):
                defined.add(node.arg)
            elif isinstance(node, ast.ExceptHandler) and node.name:
                defined.add(node.name)
    return {n for n in used - defined if not hasattr(builtins, n)}


def report_module_globals(app, what, name, obj, options, lines):
    if not name.startswith("tapeflow"):
        return
    missing = _undefined_names(lines)
    if missing:
        logger.info("tapeflow docs: the examples of %s use %s without importing them (module globals)",
                    name, ", ".join(sorted(missing)))


class TapeflowAPI(SphinxDirective):
    required_arguments = 1
    has_content = False

    def run(self):
        _always_reread(self.env)
        key = self.arguments[0]
        if key not in PACKAGES:
            raise self.error(f"unknown package {key!r}; known: {', '.join(PACKAGES)}")
        text = package_rst(key)
        node = nodes.container()
        nested_parse_with_titles(self.state, StringList(text, source=f"<tapeflow-api {key}>"), node)
        return node.children


class FacadeMap(SphinxDirective):
    has_content = False

    def run(self):
        import tapeflow

        _always_reread(self.env)
        rows = []
        for name, (mod, attr, dist) in sorted(tapeflow._LAZY.items()):
            target = mod if attr is None else f"{mod}.{attr}"
            rows.append((f"``tf.{name}``", f":py:obj:`{target}`", f"``{dist}``"))
        text = [".. list-table::", "   :header-rows: 1", "   :widths: 30 45 25", "",
                "   * - on the facade", "     - is", "     - from"]
        for a, b, c in rows:
            text += [f"   * - {a}", f"     - {b}", f"     - {c}"]
        node = nodes.container()
        nested_parse_with_titles(self.state, StringList(text, source="<tapeflow-facade-map>"), node)
        return node.children


class Versions(SphinxDirective):
    """A table of the packages: distribution, import, version installed, and its API page."""
    has_content = False

    def run(self):
        _always_reread(self.env)
        text = [".. list-table::", "   :header-rows: 1", "", "   * - distribution", "     - import",
                "     - version", "     - reference"]
        for key, spec in PACKAGES.items():
            text += [f"   * - ``{spec['dist']}``", f"     - ``{spec['version_module']}``",
                     f"     - ``{_version(key)}``", f"     - :doc:`{key}`"]
        node = nodes.container()
        nested_parse_with_titles(self.state, StringList(text, source="<tapeflow-versions>"), node)
        return node.children


class CompareNames(SphinxDirective):
    """A table of names side by side, one row per content line, cells separated by `` | ``.

    The first row is the header.  Every cell of the ``tapeflow`` column that starts with ``tf.``
    is resolved on the installed facade (up to the first ``(`` or space): a name that does not
    exist is a build warning, so the table cannot promise what tapeflow lacks.
    """
    has_content = True

    def run(self):
        import tapeflow

        _always_reread(self.env)
        rows = [[c.strip() for c in line.split(" | ")] for line in self.content if line.strip()]
        header, body = rows[0], rows[1:]
        col = header.index("tapeflow")
        for r in body:
            if len(r) != len(header):
                raise self.error(f"row has {len(r)} cells, the header {len(header)}: {r}")
            cell = r[col]
            if cell.startswith("tf."):
                path = re.split(r"[ (\[]", cell, maxsplit=1)[0].split(".")[1:]
                obj = tapeflow
                try:
                    for part in path:
                        obj = getattr(obj, part)
                except (AttributeError, ImportError) as e:
                    logger.warning("tapeflow-compare: %s does not resolve on this tapeflow (%s)", cell, e,
                                   location=self.get_location(), type="tapeflow", subtype="compare")

        def fmt(c):
            return "--" if c in ("", "-") else (c if c.startswith("*") else f"``{c}``")

        text = [".. list-table::", "   :header-rows: 1", ""]
        for r in [header] + body:
            cells = r if r is header else [fmt(c) for c in r]
            text.append(f"   * - {cells[0]}")
            text += [f"     - {c}" for c in cells[1:]]
        node = nodes.container()
        nested_parse_with_titles(self.state, StringList(text, source="<tapeflow-compare>"), node)
        return node.children


# ---- pages made from the installed packages are read again on every build -------------------------

def _always_reread(env):
    if not hasattr(env, "tapeflow_live_docs"):
        env.tapeflow_live_docs = set()
    env.tapeflow_live_docs.add(env.docname)


def _outdated(app, env, added, changed, removed):
    live = getattr(env, "tapeflow_live_docs", set()) | getattr(env, "tapeflow_symbol_docs", set())
    return sorted(live - set(removed) - set(added))


def _purge(app, env, docname):
    getattr(env, "tapeflow_live_docs", set()).discard(docname)


def _merge(app, env, docnames, other):
    env.tapeflow_live_docs = getattr(env, "tapeflow_live_docs", set()) | getattr(other, "tapeflow_live_docs", set())


def setup(app):
    app.setup_extension("sphinx.ext.viewcode")
    app.connect("builder-inited", write_symbol_pages)
    app.connect("viewcode-find-source", find_source)
    app.connect("viewcode-follow-imported", follow_definition)
    app.connect("env-get-outdated", _outdated)
    app.connect("env-purge-doc", _purge)
    app.connect("env-merge-info", _merge)
    app.add_directive("tapeflow-compare", CompareNames)
    app.add_directive("tapeflow-versions", Versions)
    app.add_directive("tapeflow-api", TapeflowAPI)
    app.connect("autodoc-process-docstring", escape_formula_bars)
    app.connect("autodoc-process-docstring", report_module_globals)
    app.add_directive("tapeflow-facade-map", FacadeMap)
    return {"version": "1", "env_version": 3, "parallel_read_safe": True, "parallel_write_safe": True}

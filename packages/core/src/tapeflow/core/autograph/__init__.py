"""AutoGraph: Python ``if``/``while``/``for`` over tensors become graph control flow inside ``tf.function``.

``convert(func)`` rewrites the source of ``func`` (see :mod:`.transformer`): the result behaves as ``func``
in Python and eagerly, and while a graph is traced a statement whose condition (or iterable) is a symbolic
tensor builds ``cond``/``while_loop`` instead (:mod:`.runtime`).  Calls made by converted code convert
their callee too, except tapeflow's own modules, the standard library, NumPy, builtins and functions
marked :func:`do_not_convert`.  Conversions are cached per code object.

>>> import tapeflow as tf
>>> from tapeflow.core import autograph
>>> def collatz(a):
...     n = 0
...     while a != 1:
...         a = a // 2 if a % 2 == 0 else 3 * a + 1
...         n += 1
...     return n
>>> autograph.convert(collatz)(tf.constant(6))
8
"""
from __future__ import annotations

import ast
import functools
import inspect
import os
import sys
import sysconfig
import textwrap
import types
import weakref
from typing import TYPE_CHECKING, overload

from . import runtime as _runtime
from .runtime import ConversionError, Undefined, UndefinedReturnValue  # noqa: F401
from .transformer import ConversionSyntaxError, transform

if TYPE_CHECKING:
    from typing import Any, Callable, TypeVar
    _F = TypeVar("_F", bound=Callable[..., Any])   # convert gives a function of the same signature

__all__ = ["convert", "to_graph", "do_not_convert", "converted_call", "ConversionError", "is_converted"]

_DO_NOT_CONVERT = "__autograph_do_not_convert__"
_CONVERTED = "__autograph_converted__"
_code_cache: dict = {}                            # code object -> converted code object, or None
_fn_cache = weakref.WeakKeyDictionary()           # function -> its converted function
_skip_roots: list = []


def _roots():
    """Directories whose code is never converted: tapeflow's packages, NumPy, the standard library."""
    if not _skip_roots:
        import numpy
        import tapeflow
        paths = list(getattr(tapeflow, "__path__", ())) + [os.path.dirname(numpy.__file__)]
        paths += [sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib")]
        _skip_roots.extend(sorted({os.path.realpath(p) + os.sep for p in paths}))
    return _skip_roots


@overload
def do_not_convert(func: None = None) -> Callable[[_F], _F]: ...
@overload
def do_not_convert(func: _F) -> _F: ...


def do_not_convert(func: Any = None) -> Any:
    """Mark ``func`` so that AutoGraph calls it as written (its loops stay Python loops).

    >>> from tapeflow.core import autograph
    >>> @autograph.do_not_convert
    ... def f(x):
    ...     return x
    >>> autograph.convert(f) is f
    True
    """
    if func is None:
        return do_not_convert
    try:
        setattr(func, _DO_NOT_CONVERT, True)
    except AttributeError:
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return func(*args, **kwargs)
        setattr(wrapper, _DO_NOT_CONVERT, True)
        return wrapper
    return func


def is_converted(func) -> bool:
    """Whether ``func`` is AutoGraph's converted version of a function.

    >>> from tapeflow.core import autograph
    >>> def f(x):
    ...     return x
    >>> autograph.is_converted(f), autograph.is_converted(autograph.convert(f))
    (False, True)
    """
    return getattr(func, _CONVERTED, False) is True


def _skipped(func) -> bool:
    if getattr(func, _DO_NOT_CONVERT, False) or getattr(func, _CONVERTED, False):
        return True
    filename = func.__code__.co_filename
    if filename.startswith("<"):
        return not filename.startswith("<doctest")  # no source file (the REPL, exec'd strings)
    top = str(func.__globals__.get("__name__") or "").split(".")[0]
    if top in ("tapeflow", "numpy") or top in sys.stdlib_module_names:
        return True
    path = os.path.realpath(filename)
    return any(path.startswith(root) and "site-packages" not in path[len(root):] for root in _roots())


_NOT_CONVERTIBLE = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def _parse(code):
    """The function definition of ``code`` in its source file, with the file's line numbers."""
    lines, first = inspect.getsourcelines(code)
    source = textwrap.dedent("".join(lines))
    try:
        tree = ast.parse(source)
        offset = first - 1
    except SyntaxError:
        tree = ast.parse("if 1:\n" + "".join(lines))
        offset = first - 2
    ast.increment_lineno(tree, offset)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == code.co_name:
            return node
    return None


def _convert_code(code, filename):
    """The converted code object for ``code`` (None where it cannot be converted: no source, a lambda)."""
    if code in _code_cache:
        return _code_cache[code]
    try:
        node = _parse(code)
    except (OSError, TypeError, SyntaxError, IndentationError):
        node = None
    if node is None or code.co_name == "<lambda>":
        _code_cache[code] = None
        return None
    try:
        new = transform(node, filename, "__class__" in code.co_freevars)
    except ConversionSyntaxError as e:
        raise ConversionError(f"{filename}:{e.lineno}: {e}", "function") from None
    freevars = list(code.co_freevars)
    factory_args = ["ag__"] + [v for v in freevars if v != "ag__"]
    factory = ast.FunctionDef(
        name="_ag_factory",
        args=ast.arguments(posonlyargs=[], args=[ast.arg(arg=a) for a in factory_args], vararg=None,
                           kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[]),
        body=[new, ast.Return(value=ast.Name(id=new.name, ctx=ast.Load()))], decorator_list=[], returns=None,
        **({"type_params": []} if sys.version_info >= (3, 12) else {}))
    ast.copy_location(factory, new)
    module = ast.Module(body=[factory], type_ignores=[])
    ast.fix_missing_locations(module)
    namespace: dict = {}
    exec(compile(module, filename, "exec"), namespace)  # defines the factory only; no user code runs
    inner = namespace["_ag_factory"](*([None] * len(factory_args)))
    _code_cache[code] = inner.__code__
    return inner.__code__


def convert(func: _F) -> _F:
    """The AutoGraph-converted version of ``func``: same Python semantics, and tensor-dependent ``if``,
    ``while`` and ``for`` statements become ``cond``/``while_loop`` while a graph is traced.

    ``func`` may be a function, a bound method or a callable object; what cannot be converted (no source
    available, a builtin, a lambda, tapeflow's own code, ``do_not_convert``) comes back unchanged.  A
    generator raises ``ConversionError`` naming its file and line.  This is the entry point
    ``tf.function(autograph=True)`` calls, once per function.

    >>> import tapeflow as tf
    >>> from tapeflow.core import autograph
    >>> def absolute(x):
    ...     if x < 0:
    ...         return -x
    ...     return x
    >>> autograph.convert(absolute)(tf.constant(-3.0)).numpy().item()
    3.0
    """
    return _convert(func, True)


def _convert(func, strict):
    if isinstance(func, types.MethodType):
        conv = _convert(func.__func__, strict)
        return func if conv is func.__func__ else types.MethodType(conv, func.__self__)
    if isinstance(func, functools.partial):
        conv = _convert(func.func, strict)
        return func if conv is func.func else functools.partial(conv, *func.args, **func.keywords)
    if not isinstance(func, types.FunctionType):
        call = getattr(type(func), "__call__", None)
        if isinstance(call, types.FunctionType) and not isinstance(func, type):
            conv = _convert(call, strict)
            return func if conv is call else types.MethodType(conv, func)
        return func
    if _skipped(func):
        return func
    try:
        return _fn_cache[func]
    except KeyError:
        pass
    flags = func.__code__.co_flags
    if flags & _NOT_CONVERTIBLE or (flags & inspect.CO_GENERATOR and not strict):
        return func  # coroutines, and generators called from converted code, run as written
    new_code = _convert_code(func.__code__, func.__code__.co_filename)
    if new_code is None:
        _fn_cache[func] = func
        return func
    cells = dict(zip(func.__code__.co_freevars, func.__closure__ or ()))
    # a global function calling itself: in the factory its name is a free variable; it names the function
    own = {func.__code__.co_name: func.__globals__.get(func.__code__.co_name, func)}
    closure = tuple(cells[v] if v in cells else types.CellType(_runtime if v == "ag__" else own.get(v))
                    for v in new_code.co_freevars)
    new = types.FunctionType(new_code, func.__globals__, func.__name__, func.__defaults__, closure)
    new.__kwdefaults__ = func.__kwdefaults__
    new.__dict__.update(func.__dict__)
    for attr in ("__module__", "__qualname__", "__doc__", "__annotations__"):
        setattr(new, attr, getattr(func, attr))
    new.__wrapped__ = func
    setattr(new, _CONVERTED, True)
    _fn_cache[func] = new
    return new


to_graph = convert


def converted_call(func, args, kwargs):
    """``func(*args, **kwargs)`` from converted code: ``func`` converted first where it is the user's code.

    >>> from tapeflow.core import autograph
    >>> autograph.converted_call(max, (1, 2), {})
    2
    """
    try:
        conv = _convert(func, False)
    except ConversionError:
        raise
    except Exception:  # noqa: BLE001 - an object AutoGraph cannot inspect is called as it is
        conv = func
    return conv(*args, **kwargs)


_runtime.converted_call = converted_call

"""``tf.Module``: a named container of variables and other modules, with the collections TensorFlow gives."""
from __future__ import annotations

import re

from .variables import Variable

__all__ = ["Module"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def _camel_to_snake(name: str) -> str:
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


class Module:
    """A named container: ``variables``, ``trainable_variables`` and ``submodules`` are found by walking
    its attributes (lists, tuples and dicts included), so subclasses need no registration.

    >>> import tapeflow as tf
    >>> class Dense(tf.Module):
    ...     def __init__(self, n_in, n_out, name=None):
    ...         super().__init__(name=name)
    ...         self.w = tf.Variable(tf.ones([n_in, n_out]), name="w")
    ...         self.b = tf.Variable(tf.zeros([n_out]), name="b")
    ...     @tf.function
    ...     def __call__(self, x):
    ...         return tf.matmul(x, self.w) + self.b
    >>> class MLP(tf.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.layers = [Dense(2, 3), Dense(3, 1)]
    ...     def __call__(self, x):
    ...         for layer in self.layers:
    ...             x = layer(x)
    ...         return x
    >>> m = MLP()
    >>> m(tf.ones([1, 2])).numpy().tolist()
    [[6.0]]
    >>> m.name, len(m.trainable_variables), len(m.submodules)
    ('mlp', 4, 2)
    """

    def __init__(self, name=None) -> None:
        if name is None:
            name = _camel_to_snake(type(self).__name__)
        elif not isinstance(name, str) or not _NAME.match(name):
            raise ValueError(f"tf.Module name {name!r} is not a valid scope name: letters, digits, '_', '.', "
                             f"'-' and '/', not starting with a digit")
        self._name = name

    @property
    def name(self) -> str:
        return self.__dict__.get("_name") or _camel_to_snake(type(self).__name__)

    @property
    def name_scope(self):
        """A ``tf.name_scope``-like context named after the module (names are informational in tapeflow)."""
        return _NameScope(self.name)

    def _walk(self, predicate, recurse=True):
        seen, out = set(), []

        def visit(x, depth):
            if id(x) in seen:
                return
            if isinstance(x, (Variable, Module)) or predicate(x):
                seen.add(id(x))
                if predicate(x):
                    out.append(x)
                if isinstance(x, Module) and (recurse or depth == 0):
                    for k in sorted(vars(x)):
                        if k.startswith("__tf_function_"):
                            continue
                        visit(vars(x)[k], depth + 1)
                return
            if isinstance(x, dict):
                for k in sorted(x, key=str):
                    visit(x[k], depth)
            elif isinstance(x, (list, tuple, set, frozenset)):
                for v in x:
                    visit(v, depth)

        seen.add(id(self))
        for k in sorted(vars(self)):
            if k.startswith("__tf_function_"):
                continue
            visit(vars(self)[k], 1)
        return tuple(out)

    @property
    def variables(self) -> tuple:
        """Every variable of this module and its submodules (each once)."""
        return self._walk(lambda x: isinstance(x, Variable))

    @property
    def trainable_variables(self) -> tuple:
        """The trainable variables of this module and its submodules."""
        return self._walk(lambda x: isinstance(x, Variable) and x.trainable)

    @property
    def non_trainable_variables(self) -> tuple:
        return self._walk(lambda x: isinstance(x, Variable) and not x.trainable)

    @property
    def submodules(self) -> tuple:
        """Every module reachable from this one's attributes (not itself)."""
        return self._walk(lambda x: isinstance(x, Module))

    @classmethod
    def with_name_scope(cls, method):
        """Decorator: run ``method`` inside the module's name scope."""
        def wrapped(self, *args, **kwargs):
            with self.name_scope:
                return method(self, *args, **kwargs)

        wrapped.__name__, wrapped.__doc__ = method.__name__, method.__doc__
        return wrapped

    def __repr__(self):
        return f"<{type(self).__name__} name={self.name!r}>"


class _NameScope:
    __slots__ = ("name",)

    def __init__(self, name) -> None:
        self.name = name + "/"  # TensorFlow's scope name ends with "/"

    def __enter__(self):
        return self.name

    def __exit__(self, *exc):
        return False

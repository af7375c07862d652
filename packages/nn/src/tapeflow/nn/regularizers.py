"""Weight regularizers: a penalty added to the loss (``layer.losses``) for each regularized weight.

>>> import tapeflow as tf
>>> float(tf.keras.regularizers.L2(0.5)(tf.constant([1.0, 2.0])))
2.5
"""
from __future__ import annotations

import tapeflow.core as K


class Regularizer:
    """Base class: ``reg(weight)`` returns a scalar penalty.

    >>> import tapeflow as tf
    >>> class Zero(tf.keras.regularizers.Regularizer):
    ...     def __call__(self, x):
    ...         return tf.constant(0.0)
    >>> float(Zero()(tf.constant([1.0])))
    0.0
    """

    def __call__(self, x):
        raise TypeError(f"{type(self).__name__} must define __call__(x)")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        """A regularizer like the one ``get_config`` described.

        >>> import tapeflow as tf
        >>> tf.keras.regularizers.L2.from_config({"l2": 0.5}).get_config()
        {'l2': 0.5}
        """
        return cls(**config)


class L1L2(Regularizer):
    """l1 * sum(|x|) + l2 * sum(x**2).

    >>> import tapeflow as tf
    >>> float(tf.keras.regularizers.L1L2(l1=1.0, l2=1.0)(tf.constant([-1.0, 2.0])))
    8.0
    """

    def __init__(self, l1=0.0, l2=0.0) -> None:
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        out = None
        if self.l1:
            out = self.l1 * K.reduce_sum(K.abs(x))
        if self.l2:
            term = self.l2 * K.reduce_sum(K.square(x))
            out = term if out is None else out + term
        return out if out is not None else K.zeros((), x.dtype)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(L1L2):
    """l1 * sum(|x|).

    >>> import tapeflow as tf
    >>> float(tf.keras.regularizers.L1(0.1)(tf.constant([-1.0, 2.0])))
    0.30000001192092896
    """

    def __init__(self, l1=0.01) -> None:
        super().__init__(l1=l1)

    def get_config(self):
        return {"l1": self.l1}


class L2(L1L2):
    """l2 * sum(x**2).

    >>> import tapeflow as tf
    >>> float(tf.keras.regularizers.L2(1.0)(tf.constant([3.0])))
    9.0
    """

    def __init__(self, l2=0.01) -> None:
        super().__init__(l2=l2)

    def get_config(self):
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2


def get(identifier):
    """A regularizer from a name (``"l2"``), an instance, a callable or None.

    >>> import tapeflow as tf
    >>> tf.keras.regularizers.get("l2").l2
    0.01
    """
    if identifier is None or isinstance(identifier, Regularizer) or callable(identifier):
        return identifier
    if isinstance(identifier, dict) and "class_name" in identifier:  # what serialize() wrote
        cls = {"L1": L1, "L2": L2, "L1L2": L1L2}.get(identifier["class_name"])
        if cls is None:
            raise ValueError(f"unknown regularizer class {identifier['class_name']!r}; allowed: L1, L2, L1L2 "
                             "(a class of your own: pass the object)")
        return cls.from_config(identifier.get("config") or {})
    if isinstance(identifier, str):
        table = {"l1": L1, "l2": L2, "l1_l2": L1L2, "l1l2": L1L2}
        try:
            return table[identifier.lower()]()
        except KeyError:
            raise ValueError(f"unknown regularizer {identifier!r}; allowed: l1, l2, l1_l2") from None
    raise TypeError(f"a regularizer must be a name, a Regularizer or a callable, not {type(identifier).__name__}")


def serialize(regularizer):
    """A layer config's value for ``regularizer``: None and names as they are, a Regularizer as
    ``{"class_name", "config"}`` (``get`` takes it back), a plain callable as it is.

    >>> import tapeflow as tf
    >>> cfg = tf.keras.regularizers.serialize(tf.keras.regularizers.L2(0.5))
    >>> cfg, tf.keras.regularizers.get(cfg).l2
    ({'class_name': 'L2', 'config': {'l2': 0.5}}, 0.5)
    """
    if isinstance(regularizer, Regularizer):
        return {"class_name": type(regularizer).__name__, "config": regularizer.get_config()}
    return regularizer

"""Learning-rate schedules: called with the optimizer's step (``iterations``), they return the rate.

Pass one as ``learning_rate`` to an optimizer; it is evaluated at the step count
before each update, as in Keras.

>>> import tapeflow as tf
>>> s = tf.optimizers.schedules.ExponentialDecay(0.1, decay_steps=10, decay_rate=0.5)
>>> s(0), s(10), s(20)
(0.1, 0.05, 0.025)
"""
from __future__ import annotations

import math


class LearningRateSchedule:
    """Base class: ``schedule(step)`` returns the learning rate (a float) at ``step``.

    >>> import tapeflow as tf
    >>> class Halve(tf.optimizers.schedules.LearningRateSchedule):
    ...     def __call__(self, step):
    ...         return 1.0 / 2 ** int(step)
    >>> Halve()(3)
    0.125
    """

    def __call__(self, step):
        raise TypeError(f"{type(self).__name__} must define __call__(step)")

    def get_config(self) -> dict:
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def _step(step) -> float:
    return float(int(step)) if not isinstance(step, float) else step


class ExponentialDecay(LearningRateSchedule):
    """initial_learning_rate * decay_rate ** (step / decay_steps) (the exponent floored if ``staircase``).

    >>> import tapeflow as tf
    >>> tf.optimizers.schedules.ExponentialDecay(1.0, 2, 0.5, staircase=True)(3)
    0.5
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None) -> None:
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}")
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), decay_steps
        self.decay_rate, self.staircase, self.name = float(decay_rate), bool(staircase), name

    def __call__(self, step):
        p = _step(step) / self.decay_steps
        if self.staircase:
            p = math.floor(p)
        return self.initial_learning_rate * self.decay_rate ** p

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class InverseTimeDecay(LearningRateSchedule):
    """initial_learning_rate / (1 + decay_rate * step / decay_steps) (the ratio floored if ``staircase``).

    >>> import tapeflow as tf
    >>> tf.optimizers.schedules.InverseTimeDecay(1.0, 1, 1.0)(3)
    0.25
    """

    def __init__(self, initial_learning_rate, decay_steps, decay_rate, staircase=False, name=None) -> None:
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}")
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), decay_steps
        self.decay_rate, self.staircase, self.name = float(decay_rate), bool(staircase), name

    def __call__(self, step):
        p = _step(step) / self.decay_steps
        if self.staircase:
            p = math.floor(p)
        return self.initial_learning_rate / (1.0 + self.decay_rate * p)

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "decay_rate": self.decay_rate, "staircase": self.staircase, "name": self.name}


class PiecewiseConstantDecay(LearningRateSchedule):
    """values[0] up to boundaries[0] (inclusive), values[i] up to boundaries[i], values[-1] after.

    >>> import tapeflow as tf
    >>> s = tf.optimizers.schedules.PiecewiseConstantDecay([10, 20], [1.0, 0.5, 0.1])
    >>> s(10), s(11), s(21)
    (1.0, 0.5, 0.1)
    """

    def __init__(self, boundaries, values, name=None) -> None:
        if len(values) != len(boundaries) + 1:
            raise ValueError(f"values needs one more entry than boundaries, got {len(values)} values and "
                             f"{len(boundaries)} boundaries")
        self.boundaries, self.values, self.name = list(boundaries), [float(v) for v in values], name

    def __call__(self, step):
        s = _step(step)
        for b, v in zip(self.boundaries, self.values):
            if s <= b:
                return v
        return self.values[-1]

    def get_config(self):
        return {"boundaries": self.boundaries, "values": self.values, "name": self.name}


class PolynomialDecay(LearningRateSchedule):
    """(initial - end) * (1 - min(step, decay_steps) / decay_steps) ** power + end.

    >>> import tapeflow as tf
    >>> tf.optimizers.schedules.PolynomialDecay(1.0, 10, end_learning_rate=0.0)(5)
    0.5
    """

    def __init__(self, initial_learning_rate, decay_steps, end_learning_rate=0.0001, power=1.0, cycle=False,
                 name=None) -> None:
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}")
        self.initial_learning_rate, self.decay_steps = float(initial_learning_rate), decay_steps
        self.end_learning_rate, self.power, self.cycle, self.name = float(end_learning_rate), power, cycle, name

    def __call__(self, step):
        s = _step(step)
        steps = float(self.decay_steps)
        if self.cycle:
            mult = 1.0 if s == 0 else math.ceil(s / self.decay_steps)
            steps *= mult
        else:
            s = min(s, steps)
        frac = (1.0 - s / steps) ** self.power
        return (self.initial_learning_rate - self.end_learning_rate) * frac + self.end_learning_rate

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "end_learning_rate": self.end_learning_rate, "power": self.power, "cycle": self.cycle,
                "name": self.name}


class CosineDecay(LearningRateSchedule):
    """Cosine decay from the initial rate (or ``warmup_target`` after a linear warm-up) to ``alpha`` times it.

    rate = lr0 * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + alpha)

    >>> import tapeflow as tf
    >>> s = tf.optimizers.schedules.CosineDecay(1.0, 10)
    >>> s(0), round(s(5), 6), s(10)
    (1.0, 0.5, 0.0)
    """

    def __init__(self, initial_learning_rate, decay_steps, alpha=0.0, name="CosineDecay", warmup_target=None,
                 warmup_steps=0) -> None:
        if decay_steps <= 0:
            raise ValueError(f"decay_steps must be positive, got {decay_steps}")
        self.initial_learning_rate, self.decay_steps, self.alpha = float(initial_learning_rate), decay_steps, alpha
        self.name, self.warmup_target, self.warmup_steps = name, warmup_target, warmup_steps

    def _decay(self, s, lr):
        cos = 0.5 * (1.0 + math.cos(math.pi * s / self.decay_steps))
        return lr * ((1.0 - self.alpha) * cos + self.alpha)

    def __call__(self, step):
        s = _step(step)
        if self.warmup_target is None:
            return self._decay(min(s, float(self.decay_steps)), self.initial_learning_rate)
        s = min(s, float(self.decay_steps + self.warmup_steps))
        if s < self.warmup_steps:
            return (self.warmup_target - self.initial_learning_rate) * (s / self.warmup_steps) + \
                self.initial_learning_rate
        return self._decay(s - self.warmup_steps, float(self.warmup_target))

    def get_config(self):
        return {"initial_learning_rate": self.initial_learning_rate, "decay_steps": self.decay_steps,
                "alpha": self.alpha, "name": self.name, "warmup_target": self.warmup_target,
                "warmup_steps": self.warmup_steps}

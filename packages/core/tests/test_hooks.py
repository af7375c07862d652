"""Recorder subscribers: several listeners at once, handles that unsubscribe, per-thread pauses."""
from __future__ import annotations

import threading

import tapeflow as tf
from tapeflow.core.dispatch import hooks


def test_every_subscriber_hears_every_primitive_until_it_unsubscribes():
    a, b = [], []
    sa = hooks.subscribe(lambda op, ins, out, attrs: a.append(op))
    sb = hooks.subscribe(lambda op, ins, out, attrs: b.append(op))
    try:
        tf.multiply(tf.constant(2.0), 3.0)
        sa.remove()
        sa.remove()  # idempotent
        tf.exp(tf.constant(1.0))
    finally:
        sb.remove()
    assert a == ["multiply"] and b == ["multiply", "exp"]
    assert hooks.recorder is None


def test_a_pause_silences_only_its_own_thread():
    seen = []
    sub = hooks.subscribe(lambda op, ins, out, attrs: seen.append((threading.get_ident(), op)))
    try:
        inside = threading.Event()
        done = threading.Event()

        def other():
            inside.wait()
            tf.negative(tf.constant(1.0))
            done.set()

        t = threading.Thread(target=other)
        t.start()
        with hooks.paused():
            tf.abs(tf.constant(-1.0))
            inside.set()
            done.wait()
        t.join()
        tf.square(tf.constant(2.0))
    finally:
        sub.remove()
    assert seen == [(t.ident, "negative"), (threading.get_ident(), "square")]


def test_variable_reads_reach_their_subscriber():
    reads = []
    sub = hooks.subscribe(None, variable_read=reads.append)
    v = tf.Variable(1.0)
    try:
        tf.add(v, 1.0)
    finally:
        sub.remove()
    assert reads == [v] and hooks.variable_read is None

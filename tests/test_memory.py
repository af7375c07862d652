"""Many small ops in a loop do not grow the process's memory."""
import gc

import psutil

import tapeflow as tf


def _rss():
    gc.collect()
    return psutil.Process().memory_info().rss


def test_100k_small_ops_do_not_grow_memory():
    a = tf.constant([1.0, 2.0])
    b = tf.constant([3.0, 4.0])
    for _ in range(2000):  # warm caches and allocator pools
        c = tf.exp(a * b + 1.0)
    before = _rss()
    for _ in range(100_000 // 4):
        c = a * b
        c = c + 1.0
        c = tf.exp(c)
        c = tf.reduce_sum(c)
    grown = _rss() - before
    assert grown < 4 * 2 ** 20, f"RSS grew by {grown / 2 ** 20:.1f} MiB over 100,000 ops"
    assert float(c) > 0

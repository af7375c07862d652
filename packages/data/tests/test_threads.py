"""Background work: prefetch and parallel map keep order, forward exceptions with their traceback,
stop when abandoned, and never hold the process open at exit."""
import os
import subprocess
import sys
import textwrap
import threading
import time
import traceback

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import Dataset, TensorSpec


def data_threads():
    return [t for t in threading.enumerate() if t.name.startswith("tapeflow-data")]


def wait_for_no_data_threads(timeout=10.0):
    end = time.monotonic() + timeout
    while data_threads() and time.monotonic() < end:
        time.sleep(0.02)
    return data_threads()


@pytest.mark.parametrize("size", [1, 3, tf.data.AUTOTUNE])
def test_prefetch_keeps_order_and_epochs(size):
    ds = Dataset.range(100).map(lambda x: x * 2).batch(7).prefetch(size)
    for _ in range(2):
        assert [v for b in ds for v in b.numpy().tolist()] == [2 * i for i in range(100)]
    assert int(ds.cardinality()) == 15


def test_prefetch_zero_runs_inline():
    assert [int(x) for x in Dataset.range(3).prefetch(0)] == [0, 1, 2]
    with pytest.raises(tf.errors.InvalidArgumentError, match="buffer_size = -2 is not allowed"):
        Dataset.range(3).prefetch(-2)


def test_prefetch_works_ahead_in_the_background():
    produced = []

    def gen():
        for i in range(6):
            produced.append(i)
            yield i

    it = iter(Dataset.from_generator(gen, output_signature=TensorSpec([], tf.int64)).prefetch(4))
    assert int(next(it)) == 0
    end = time.monotonic() + 10
    while len(produced) < 5 and time.monotonic() < end:
        time.sleep(0.01)
    assert len(produced) >= 5  # the worker filled the buffer while we did nothing
    assert [int(x) for x in it] == [1, 2, 3, 4, 5]


def bad_map_function(x):
    if int(x) == 3:
        raise ValueError(f"element {int(x)} is bad")
    return x


@pytest.mark.parametrize("pipeline", ["map", "parallel_map", "prefetch", "parallel_map_prefetch", "batch"])
def test_map_exception_surfaces_with_its_traceback(pipeline):
    ds = Dataset.range(10)
    ds = {"map": lambda: ds.map(bad_map_function),
          "parallel_map": lambda: ds.map(bad_map_function, num_parallel_calls=3),
          "prefetch": lambda: ds.map(bad_map_function).prefetch(2),
          "parallel_map_prefetch": lambda: ds.map(bad_map_function, num_parallel_calls=2).prefetch(2),
          "batch": lambda: ds.map(bad_map_function).batch(4).prefetch(1)}[pipeline]()
    got = []
    with pytest.raises(ValueError, match="element 3 is bad") as e:
        for x in ds:
            got.append(x)  # noqa: PERF402 - keeps what arrived before the error
    frames = [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    assert "bad_map_function" in frames
    assert frames.index("bad_map_function") == len(frames) - 1  # raised there, not re-created elsewhere
    if pipeline in ("map", "parallel_map", "prefetch"):
        assert [int(x) for x in got] == [0, 1, 2]
    assert wait_for_no_data_threads() == []


def test_exception_in_generator_under_prefetch():
    def source():
        yield 1
        raise RuntimeError("source failed")

    ds = Dataset.from_generator(source, output_signature=TensorSpec([], tf.int32)).prefetch(2)
    it = iter(ds)
    assert int(next(it)) == 1
    with pytest.raises(RuntimeError, match="source failed") as e:
        next(it)
    assert "source" in [f.name for f in traceback.extract_tb(e.value.__traceback__)]
    with pytest.raises(StopIteration):
        next(it)


def test_abandoned_iterators_stop_their_threads():
    ds = Dataset.range(10 ** 9).map(lambda x: x + 1, num_parallel_calls=2).prefetch(3)
    for _ in range(3):
        it = iter(ds)
        next(it)
        del it
    for x in ds.repeat():
        break
    assert wait_for_no_data_threads() == []


def test_take_after_prefetch_stops_the_worker():
    ds = Dataset.range(10 ** 9).prefetch(2).take(3)
    assert [int(x) for x in ds] == [0, 1, 2]
    assert wait_for_no_data_threads() == []


EXIT_SCRIPTS = {
    "prefetch of an infinite pipeline": """
        ds = tf.data.Dataset.range(10).repeat().map(lambda x: x * 2).batch(4).prefetch(2)
        it = iter(ds)
        for _ in range(3):
            next(it)
    """,
    "parallel map left mid-epoch": """
        ds = tf.data.Dataset.range(10 ** 6).map(lambda x: x + 1, num_parallel_calls=3)
        for i, x in enumerate(ds):
            if i == 5:
                break
        keep = iter(ds); next(keep)
    """,
    "worker blocked in user code": """
        import time
        def slow():
            yield 1
            time.sleep(3600)
            yield 2
        ds = tf.data.Dataset.from_generator(slow, output_signature=tf.data.TensorSpec([], tf.int32)).prefetch(1)
        it = iter(ds); next(it)
    """,
    "sys.exit mid-iteration": """
        import sys
        for x in tf.data.Dataset.range(10 ** 9).map(lambda x: x, num_parallel_calls=2).prefetch(4):
            if int(x) == 10:
                sys.exit(0)
    """,
}


@pytest.mark.parametrize("name", list(EXIT_SCRIPTS))
def test_process_exits_mid_iteration(name):
    script = "import tapeflow as tf\n" + textwrap.dedent(EXIT_SCRIPTS[name]) + "\nprint('done')\n"
    if "sys.exit" in name:
        script = script.replace("print('done')", "")
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False,
                          env={**os.environ, "PYTHONFAULTHANDLER": "1"})
    assert proc.returncode == 0, proc.stderr
    assert time.monotonic() - t0 < 30
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr


def test_many_epochs_do_not_grow_memory():
    import gc
    import tracemalloc

    x = np.random.default_rng(0).random((512, 32), dtype=np.float32)
    ds = (Dataset.from_tensor_slices((x, np.arange(512))).shuffle(100).map(lambda a, b: (a * 2.0, b))
          .batch(64).prefetch(2))
    par = Dataset.range(200).map(lambda v: v + 1, num_parallel_calls=2).batch(50).prefetch(1)

    def epochs(k):
        for _ in range(k):
            for _ in ds:
                pass
            for _ in par:
                pass
        gc.collect()

    epochs(5)
    tracemalloc.start()
    try:
        epochs(5)
        first, _ = tracemalloc.get_traced_memory()
        epochs(30)
        later, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert later - first < 256 * 1024, (first, later)
    assert wait_for_no_data_threads() == []

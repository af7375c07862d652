"""Run by `nox -s wheels` in a fresh venv holding only `pip install tapeflow` from dist/ (no C compiler):
what a user who installs the wheels gets.

usage: python tests/wheel_check.py DIST_DIR

1. The installed tapeflow-kernels is the cp310-abi3 manylinux wheel, loaded from the venv (not a checkout).
2. The README's tour runs as written; a line whose comment names an error raises that error, with that text.
3. Core + autodiff work; tf.keras and tf.data say they are not installed and name a pip command; that command
   (pip's options added: this dist folder, binaries only) installs them and they work.
4. `pip install 'tapeflow[all]'` gives the full stack: a model trains on the digits shipped in tapeflow-data,
   tf.data, tf.summary, tf.io's PNG codec, tf.distribute import.
"""
from __future__ import annotations

import ast
import builtins
import os
import pathlib
import re
import shlex
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
DIST = pathlib.Path(sys.argv[1]).resolve()
PIP = [sys.executable, "-m", "pip", "install", "--only-binary", ":all:", "--find-links", str(DIST)]


def run_py(code: str) -> str:
    """``code`` in a new interpreter of this venv (a module just installed is importable there)."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tempfile.gettempdir())
    assert out.returncode == 0, f"{code}\n{out.stdout}\n{out.stderr}"
    return out.stdout


def readme_tour() -> str:
    """The ```python block under the README's "A short tour" heading."""
    text = (ROOT / "README.md").read_text()
    m = re.search(r"^## A short tour\n.*?```python\n(.*?)```", text, re.S | re.M)
    assert m, "README.md has no ```python block under '## A short tour'"
    return m.group(1)


def run_tour(source: str) -> None:
    """Each top-level statement in turn; one whose line ends in ``# SomeError: text`` must raise SomeError
    with that text (the tour shows its error messages that way), every other must not raise."""
    import tapeflow as tf

    lines = source.splitlines()
    scope: dict = {}
    for stmt in ast.parse(source).body:
        comment = lines[stmt.end_lineno - 1].partition("#")[2].strip()
        expect = re.match(r"(\w+Error): (.*)$", comment)
        code = compile(ast.Module([stmt], []), "README.md tour", "exec")
        if not expect:
            exec(code, scope)
            continue
        kind = getattr(tf.errors, expect.group(1), None) or getattr(builtins, expect.group(1))
        try:
            exec(code, scope)
        except kind as e:
            assert expect.group(2) in str(e), (str(e), expect.group(2))
            print(f"  tour line {stmt.lineno}: {type(e).__name__}: {e}  (as the README says)")
        else:
            raise AssertionError(f"tour line {stmt.lineno} should raise {expect.group(0)}")


# 1. the wheel, not a checkout, and no compiler
import tapeflow.kernels  # noqa: E402
from importlib import metadata  # noqa: E402

assert pathlib.Path(tapeflow.kernels.__file__).resolve().is_relative_to(pathlib.Path(sys.prefix).resolve()), \
    tapeflow.kernels.__file__
tags = [line.split(": ", 1)[1] for line in metadata.distribution("tapeflow-kernels").read_text("WHEEL").splitlines()
        if line.startswith("Tag: ")]
assert tags and all(t.startswith("cp310-abi3-") for t in tags), tags
if sys.platform.startswith("linux"):
    assert all("manylinux" in t for t in tags), tags
assert not os.path.exists(os.environ.get("CC", "/nonexistent/cc")), "CC must point nowhere in this check"
print("tapeflow-kernels wheel:", ", ".join(tags))
installed = sorted(d.metadata["Name"] for d in metadata.distributions() if d.metadata["Name"].startswith("tapeflow"))
assert installed == ["tapeflow", "tapeflow-autodiff", "tapeflow-core", "tapeflow-kernels"], installed
for dist in installed:   # license files and project URLs in every wheel
    d = metadata.distribution(dist)
    assert any(str(f).endswith("LICENSE") for f in d.files or []), dist
    assert d.metadata.get_all("Project-URL") and d.metadata.get_all("Classifier"), dist

# 2. the README's tour
print("README tour:")
run_tour(readme_tour())

# 3. core + autodiff; the hints for what is missing name commands that work
import tapeflow as tf  # noqa: E402

w = tf.Variable([[1.0, 2.0]])
with tf.GradientTape() as tape:
    loss = tf.reduce_sum(tf.matmul(w, w, transpose_b=True))
assert tape.gradient(loss, w).numpy().tolist() == [[2.0, 4.0]]
print("core + autodiff: ok")
for attr, probe in (("keras", "tf.keras.layers.Dense(2)"), ("data", "tf.data.Dataset.range(3)")):
    try:
        getattr(tf, attr)
        raise AssertionError(f"tf.{attr} should not be there after `pip install tapeflow`")
    except ImportError as e:
        hint = str(e)
    m = re.search(r"pip install (.+?)\s*$", hint)
    assert m, hint
    args = shlex.split(m.group(1))
    print(f"  tf.{attr}: {hint}\n  -> pip install {' '.join(args)}")
    subprocess.run(PIP + ["-q"] + args, check=True)
    run_py(f"import tapeflow as tf; {probe}")

# 4. the full stack
subprocess.run(PIP + ["-q", "tapeflow[all]"], check=True)
print(run_py("""
import os, tempfile
import numpy as np
import tapeflow as tf

(x, y), (xt, yt) = tf.data.datasets.digits()
prep = lambda a: (a / 16.0).astype(np.float32)[..., None]
ds = tf.data.Dataset.from_tensor_slices((prep(x), y.astype(np.int64))).shuffle(256, seed=0).batch(64)
tf.random.set_seed(0)
model = tf.keras.Sequential([tf.keras.Input(shape=(8, 8, 1)), tf.keras.layers.Conv2D(8, 3, activation="relu"),
                             tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
model.compile(optimizer="adam", loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=["accuracy"])
model.fit(ds, epochs=3, verbose=0)
_, acc = model.evaluate(prep(xt), yt.astype(np.int64), verbose=0)
assert acc > 0.8, acc
logdir = tempfile.mkdtemp()
with tf.summary.create_file_writer(logdir).as_default():
    tf.summary.scalar("accuracy", acc, step=0)
assert os.listdir(logdir)
png = tf.io.encode_png(tf.zeros([2, 2, 1], tf.uint8))
assert tf.io.decode_png(png).shape == (2, 2, 1)
import tapeflow.distribute
print(f"tapeflow[all]: digits CNN test accuracy {acc:.3f}; tf.data, tf.summary, tf.io PNG, tf.distribute: ok")
"""))
print("wheel check ok")

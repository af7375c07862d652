"""Run inside a fresh venv by `nox -s install`: what is installed works, what is not says how to install it.

usage: python tests/install_check.py kernels-c,core,autodiff
"""
import subprocess
import sys
import time

installed = set(sys.argv[1].split(","))

t0 = time.perf_counter()
out = subprocess.run([sys.executable, "-X", "importtime", "-c", "import tapeflow"], capture_output=True, text=True)
assert out.returncode == 0, out.stderr
modules = {line.split("|")[-1].strip() for line in out.stderr.splitlines() if "|" in line}
for heavy in ("tapeflow.autodiff", "tapeflow.nn", "tapeflow.data", "tapeflow.kernels._cpu", "cffi"):
    assert heavy not in modules, f"import tapeflow loaded {heavy}"
print(f"import tapeflow: ok ({time.perf_counter() - t0:.2f} s wall incl. interpreter start)")

import tapeflow as tf  # noqa: E402

print(tf.matmul([[2.]], [[2.]]))

checks = {"autodiff": "GradientTape", "nn": "nn", "data": "data"}
for pkg, attr in checks.items():
    if pkg in installed:
        getattr(tf, attr)
        print(f"tf.{attr}: ok")
    else:
        try:
            obj = getattr(tf, attr)
            if attr == "nn":
                obj.Dense  # core's nn ops stand in for tf.nn; the layers must say they are missing
            raise SystemExit(f"tf.{attr} should not be usable without tapeflow-{pkg}")
        except (ImportError, AttributeError) as e:
            assert f"tapeflow-{pkg}" in str(e) and "pip install" in str(e), str(e)
            print(f"tf.{attr} without tapeflow-{pkg}: {e}")

# the version pip recorded is the package's __version__ (pyproject.toml reads it from there)
import importlib  # noqa: E402
import importlib.metadata  # noqa: E402

for folder in sorted(installed):
    module = "tapeflow." + folder.split("-")[0]
    dist = "tapeflow-" + folder.split("-")[0]
    want = importlib.import_module(module).__version__
    assert importlib.metadata.version(dist) == want, (dist, importlib.metadata.version(dist), want)
    print(f"{dist} {want}: ok")

if "autodiff" in installed:
    w = tf.Variable([[1.0]])
    with tf.GradientTape() as tape:
        loss = w * w
    g = tape.gradient(loss, w)
    assert g.numpy().tolist() == [[2.0]], g
    print("GradientTape: ok")
print("install shape ok:", sorted(installed))

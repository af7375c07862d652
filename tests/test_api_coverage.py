"""docs/api-coverage.rst is what tools/api_coverage.py makes now from the committed list of TensorFlow's names
(docs/_data/tf_api_names.txt), so the page stays true; when it fails, run ``python tools/api_coverage.py``."""
from __future__ import annotations

import importlib.util
import pathlib

import tapeflow as tf

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _tool():
    spec = importlib.util.spec_from_file_location("api_coverage", ROOT / "tools" / "api_coverage.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_name_list_is_tensorflows_api():
    header, names = _tool().load_names()
    assert "TensorFlow 2." in header
    assert len(names) == len(set(names)) > 3000
    for n in ("tf.io.TFRecordWriter", "tf.io.gfile.GFile", "tf.data.TFRecordDataset", "tf.train.Example",
              "tf.math.reduce_sum", "tf.keras.layers.Dense", "tf.experimental.numpy.ndarray"):
        assert n in names
    assert not any(n.startswith(("tf.compat.", "tf.raw_ops.")) for n in names)


def test_has_resolves_attribute_paths_on_tapeflow():
    tool = _tool()
    assert tool.has(tf, "tf.matmul") and tool.has(tf, "tf.io.gfile.exists")
    assert not tool.has(tf, "tf.no_such_name") and not tool.has(tf, "tf.io.no_such_name")


def test_the_committed_page_is_up_to_date():
    tool = _tool()
    header, names = tool.load_names()
    want = tool.render(tf, names, header)
    got = (ROOT / "docs" / "api-coverage.rst").read_text()
    assert got == want, "docs/api-coverage.rst is stale: run `python tools/api_coverage.py` and commit the page"
    assert "``tf.io.gfile``" in got and "%" in got
    assert "api-coverage" in (ROOT / "docs" / "index.rst").read_text()

"""Dataset loaders, never touching the network: mirrors are file:// folders the tests fill with IDX
files they write, and urlopen is replaced where a network failure is simulated."""
import gzip
import hashlib
import struct
import subprocess
import sys
import urllib.error

import numpy as np
import pytest
import tapeflow as tf
from tapeflow.data import datasets
from tapeflow.data.datasets import _download, fashion_mnist, mnist


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Any attempt to open a non-file URL fails the test."""
    real = _download.urlopen

    def guarded(url, *a, **k):
        assert str(url).startswith("file://"), f"test tried the network: {url}"
        return real(url, *a, **k)

    monkeypatch.setattr(_download, "urlopen", guarded)


def idx(code, arr):
    return gzip.compress(struct.pack(f">BBBB{arr.ndim}I", 0, 0, code, arr.ndim, *arr.shape) + arr.tobytes())


def make_mirror(folder, n_train=5, n_test=3, seed=0):
    """Write the four MNIST-style files; return (FILES table with their sizes and MD5s, arrays)."""
    rng = np.random.default_rng(seed)
    arrays = {"train_images": rng.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
              "train_labels": rng.integers(0, 10, n_train, dtype=np.uint8),
              "test_images": rng.integers(0, 256, (n_test, 28, 28), dtype=np.uint8),
              "test_labels": rng.integers(0, 10, n_test, dtype=np.uint8)}
    names = {"train_images": "train-images-idx3-ubyte.gz", "train_labels": "train-labels-idx1-ubyte.gz",
             "test_images": "t10k-images-idx3-ubyte.gz", "test_labels": "t10k-labels-idx1-ubyte.gz"}
    folder.mkdir(parents=True, exist_ok=True)
    files = {}
    for key, arr in arrays.items():
        data = idx(0x08, arr)
        (folder / names[key]).write_bytes(data)
        files[key] = (names[key], len(data), hashlib.md5(data).hexdigest())
    return files, arrays


@pytest.mark.parametrize("module", [mnist, fashion_mnist])
def test_load_data_downloads_once_into_the_cache(tmp_path, monkeypatch, module):
    files, arrays = make_mirror(tmp_path / "mirror")
    monkeypatch.setattr(module, "FILES", files)
    monkeypatch.setattr(module, "MIRRORS", [(tmp_path / "mirror").as_uri() + "/"])
    monkeypatch.setenv("TAPEFLOW_DATA_HOME", str(tmp_path / "home"))
    (x_train, _), (_, y_test) = module.load_data()
    assert x_train.dtype == np.uint8 and x_train.shape == (5, 28, 28) and y_test.shape == (3,)
    assert (x_train == arrays["train_images"]).all() and (y_test == arrays["test_labels"]).all()
    cached = sorted(p.name for p in (tmp_path / "home" / module.__name__.rsplit(".", 1)[1]).iterdir())
    assert cached == sorted(f[0] for f in files.values())  # and no partial files beside them

    def offline(url, *a, **k):
        raise urllib.error.URLError("no network")

    monkeypatch.setattr(_download, "urlopen", offline)
    (x2, _), _ = module.load_data()  # from the cache, no download
    assert (x2 == x_train).all()


def test_first_good_mirror_wins_and_bad_downloads_leave_nothing(tmp_path, monkeypatch):
    files, arrays = make_mirror(tmp_path / "good")
    bad = tmp_path / "bad"
    make_mirror(bad, seed=1)  # same names, other bytes: wrong size or MD5
    monkeypatch.setattr(mnist, "FILES", files)
    monkeypatch.setattr(mnist, "MIRRORS", [(tmp_path / "missing").as_uri(), bad.as_uri(), (tmp_path / "good").as_uri()])
    (_, y), _ = mnist.load_data(cache_dir=tmp_path / "cache")
    assert (y == arrays["train_labels"]).all()
    assert not [p for p in (tmp_path / "cache" / "mnist").iterdir() if ".part" in p.name]


def test_all_mirrors_failing_says_how_to_work_offline(tmp_path, monkeypatch):
    files, _ = make_mirror(tmp_path / "good")
    monkeypatch.setattr(mnist, "FILES", files)
    monkeypatch.setattr(mnist, "MIRRORS", [(tmp_path / "nowhere").as_uri()])
    with pytest.raises(tf.errors.UnavailableError) as e:
        mnist.load_data(cache_dir=tmp_path / "cache")
    msg = str(e.value)
    assert "could not download train-images-idx3-ubyte.gz for mnist" in msg
    assert f"place the file ({files['train_images'][1]} bytes, MD5 {files['train_images'][2]})" in msg
    assert str(tmp_path / "cache" / "mnist") in msg and msg.endswith("[Op:LoadData]")
    assert list((tmp_path / "cache" / "mnist").iterdir()) == []


def test_size_and_hash_are_checked(tmp_path, monkeypatch):
    files, _ = make_mirror(tmp_path / "m")
    name, size, md5 = files["train_labels"]
    url = (tmp_path / "m").as_uri()
    with pytest.raises(tf.errors.UnavailableError, match=rf"gave {size} bytes, expected {size + 1}"):
        _download.fetch("t", name, [url], size + 1, md5, tmp_path / "c")
    with pytest.raises(tf.errors.UnavailableError, match="larger than the expected 3 bytes"):
        _download.fetch("t", name, [url], 3, md5, tmp_path / "c")
    with pytest.raises(tf.errors.UnavailableError, match=f"has MD5 {md5}, expected 0000"):
        _download.fetch("t", name, [url], size, "0000", tmp_path / "c")
    assert list((tmp_path / "c" / "t").iterdir()) == []


def test_damaged_cached_file_is_fetched_again(tmp_path, monkeypatch):
    files, arrays = make_mirror(tmp_path / "m")
    monkeypatch.setattr(mnist, "FILES", files)
    monkeypatch.setattr(mnist, "MIRRORS", [(tmp_path / "m").as_uri()])
    mnist.load_data(cache_dir=tmp_path / "c")
    cached = tmp_path / "c" / "mnist" / files["train_images"][0]
    cached.write_bytes(cached.read_bytes()[:100])
    (x, _), _ = mnist.load_data(cache_dir=tmp_path / "c")
    assert (x == arrays["train_images"]).all()


def test_inconsistent_files_are_reported(tmp_path, monkeypatch):
    folder = tmp_path / "m"
    files, _ = make_mirror(folder, n_train=5)
    labels = idx(0x08, np.zeros(4, np.uint8))  # 4 labels for 5 images
    (folder / files["train_labels"][0]).write_bytes(labels)
    files["train_labels"] = (files["train_labels"][0], len(labels), hashlib.md5(labels).hexdigest())
    monkeypatch.setattr(mnist, "FILES", files)
    monkeypatch.setattr(mnist, "MIRRORS", [folder.as_uri()])
    with pytest.raises(tf.errors.DataLossError, match=r"mnist train files disagree: images of shape \(5, 28, 28\), "
                                                     r"labels of shape \(4,\)"):
        mnist.load_data(cache_dir=tmp_path / "c")


def test_published_file_table():
    assert mnist.FILES["train_images"] == ("train-images-idx3-ubyte.gz", 9912422, "f68b3c2dcbeaaa9fbdd348bbdeb94873")
    assert fashion_mnist.FILES["test_labels"][2] == "bb300cfdad3c16e7a12a480ee83cd310"
    assert all(m.startswith("https://") for m in mnist.MIRRORS)


def test_data_home(monkeypatch, tmp_path):
    monkeypatch.setenv("TAPEFLOW_DATA_HOME", str(tmp_path))
    assert datasets.data_home() == tmp_path
    monkeypatch.delenv("TAPEFLOW_DATA_HOME")
    assert datasets.data_home().parts[-2:] == (".tapeflow", "datasets")


# sha256 of images.tobytes() + labels.tobytes() of scikit-learn's load_digits() as uint8 (scikit-learn 1.9.1)
DIGITS_SHA256 = "87ff0c9e40dc7e2c0e34e7257799c2e3f3aec1a016363bb11cad869ec428a826"


def test_digits_ship_with_the_package_and_need_no_scikit_learn():
    # a fresh interpreter where scikit-learn and scipy cannot be imported: the digits still load
    code = ("import sys, hashlib\n"
            "sys.modules['sklearn'] = sys.modules['scipy'] = None\n"
            "from tapeflow.data import datasets\n"
            "(x_train, y_train), (x_test, y_test) = datasets.digits(test_fraction=0.0)\n"
            "assert x_test.shape == (0, 8, 8) and y_test.shape == (0,)\n"
            "order = __import__('numpy').random.default_rng(0).permutation(1797)\n"
            "x, y = x_train[order.argsort()], y_train[order.argsort()]\n"
            "print(x.shape, x.dtype, y.dtype, hashlib.sha256(x.tobytes() + y.tobytes()).hexdigest())\n"
            "print(sorted(m for m in sys.modules if m.startswith(('sklearn', 'scipy')) and sys.modules[m]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"(1797, 8, 8) uint8 uint8 {DIGITS_SHA256}", "[]"]


def test_digits_split():
    (x_train, y_train), (x_test, y_test) = datasets.digits()
    assert x_train.shape == (1438, 8, 8) and x_test.shape == (359, 8, 8) and x_train.dtype == np.uint8
    assert y_train.shape == (1438,) and y_test.shape == (359,) and y_train.dtype == np.uint8
    assert int(x_train.max()) == 16 and sorted(set(y_train.tolist())) == list(range(10))
    (a, _), _ = datasets.digits(seed=0)
    (b, _), _ = datasets.digits(seed=1)
    assert (a == x_train).all() and not (b == x_train).all()
    assert datasets.digits.load_data is datasets.digits
    ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(100)
    assert next(iter(ds))[0].shape == (100, 8, 8)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"test_fraction = 1.0 is not in \[0, 1\)"):
        datasets.digits(test_fraction=1.0)
    with pytest.raises(TypeError, match="test_fraction must be a float"):
        datasets.digits(test_fraction="0.2")

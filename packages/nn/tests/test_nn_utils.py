"""keras.utils: to_categorical, normalize, pad_sequences, set_random_seed, split_dataset, the directory
datasets (files the tests make), get_file (never downloading: the fetcher is replaced), PyDataset."""
import os
import random
import urllib.error

import numpy as np
import pytest

import tapeflow as tf
from nn_testutil import tf_or_none

U = tf.keras.utils


def test_to_categorical():
    np.testing.assert_array_equal(U.to_categorical([0, 2, 1]), np.eye(3, dtype=np.float32)[[0, 2, 1]])
    out = U.to_categorical(np.array([[1], [3]], np.uint8), num_classes=5)
    assert out.shape == (2, 5) and out.dtype == np.float32 and out.argmax(1).tolist() == [1, 3]
    assert U.to_categorical(np.zeros((2, 3), np.int64), 2).shape == (2, 3, 2)
    t = U.to_categorical(tf.constant([1, 0]), 2)
    assert isinstance(t, tf.Tensor) and t.numpy().tolist() == [[0.0, 1.0], [1.0, 0.0]]
    with pytest.raises(ValueError, match=r"in \[0, 2\)"):
        U.to_categorical([0, 2], num_classes=2)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        y = np.array([[2], [0], [1]])
        np.testing.assert_array_equal(U.to_categorical(y), tensorflow.keras.utils.to_categorical(y))


def test_normalize():
    x = np.array([[3.0, 4.0], [0.0, 0.0], [1.0, -1.0]], np.float32)
    np.testing.assert_allclose(U.normalize(x), x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30)
                               * (np.linalg.norm(x, axis=1, keepdims=True) > 0), rtol=1e-6)
    np.testing.assert_allclose(U.normalize(x, axis=0, order=1)[:, 0], [0.75, 0.0, 0.25], rtol=1e-6)
    with pytest.raises(ValueError, match="order"):
        U.normalize(x, order=0)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        x3 = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7
        for axis, order in ((1, 2), (-1, 1), (2, 3)):
            np.testing.assert_allclose(U.normalize(x3, axis, order), tensorflow.keras.utils.normalize(x3, axis, order),
                                       rtol=1e-5)


def test_pad_sequences_as_keras():
    seqs = [[1, 2, 3, 4], [5], [], [6, 7]]
    assert U.pad_sequences(seqs).tolist() == [[1, 2, 3, 4], [0, 0, 0, 5], [0, 0, 0, 0], [0, 0, 6, 7]]
    assert U.pad_sequences(seqs, maxlen=2, padding="post", truncating="post", value=-1).tolist() == \
        [[1, 2], [5, -1], [-1, -1], [6, 7]]
    assert U.pad_sequences(seqs, maxlen=3).tolist()[0] == [2, 3, 4]
    assert U.pad_sequences([[0.5]], maxlen=2, dtype="float32").dtype == np.float32
    with pytest.raises(ValueError, match="padding"):
        U.pad_sequences(seqs, padding="middle")
    tensorflow = tf_or_none()
    if tensorflow is not None:
        for kw in ({}, {"maxlen": 2}, {"maxlen": 3, "padding": "post"}, {"maxlen": 2, "truncating": "post"}):
            np.testing.assert_array_equal(U.pad_sequences(seqs, **kw), tensorflow.keras.utils.pad_sequences(seqs, **kw))


def test_set_random_seed_repeats_everything():
    U.set_random_seed(11)
    a = (random.random(), np.random.rand(), tf.random.uniform([3]).numpy())
    U.set_random_seed(11)
    b = (random.random(), np.random.rand(), tf.random.uniform([3]).numpy())
    assert a[0] == b[0] and a[1] == b[1] and (a[2] == b[2]).all()
    with pytest.raises(ValueError, match="integer"):
        U.set_random_seed(1.5)
    tf.random.set_seed(None)


def test_split_dataset():
    pytest.importorskip("tapeflow.data", reason="these utilities return tapeflow Datasets (tapeflow-data)")
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    y = np.arange(10)
    left, right = U.split_dataset((x, y), left_size=0.7, shuffle=True, seed=1)
    lx = np.stack([e[0] for e in left.as_numpy_iterator()])
    rx = np.stack([e[0] for e in right.as_numpy_iterator()])
    assert len(lx) == 7 and len(rx) == 3
    assert sorted(np.concatenate([lx, rx])[:, 0].tolist()) == x[:, 0].tolist()
    left, right = U.split_dataset(tf.data.Dataset.from_tensor_slices(y), right_size=4)
    assert [int(v) for v in left.as_numpy_iterator()] == [0, 1, 2, 3, 4, 5]
    assert [int(v) for v in right.as_numpy_iterator()] == [6, 7, 8, 9]
    with pytest.raises(ValueError, match="left_size"):
        U.split_dataset(y, left_size=1.5)
    with pytest.raises(ValueError, match="more than"):
        U.split_dataset(y, left_size=6, right_size=6)


def _make_images(root, rng, sizes=((10, 14), (12, 12), (9, 16))):
    from PIL import Image

    made = {}
    for cls in ("b_dog", "a_cat"):
        os.makedirs(os.path.join(root, cls))
        for i, (h, w) in enumerate(sizes):
            arr = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
            path = os.path.join(root, cls, f"{i}.png")
            Image.fromarray(arr).save(path)
            made[path] = arr
    with open(os.path.join(root, "a_cat", "notes.txt"), "w") as f:
        f.write("not an image")
    return made


def test_image_dataset_from_directory(tmp_path, rng):
    pytest.importorskip("tapeflow.data", reason="these utilities return tapeflow Datasets (tapeflow-data)")
    pytest.importorskip("PIL", reason="reading images needs Pillow (the test extra of tapeflow-nn)")
    made = _make_images(str(tmp_path), rng)
    ds = U.image_dataset_from_directory(str(tmp_path), image_size=(8, 8), batch_size=4, shuffle=False,
                                        label_mode="categorical", verbose=False)
    assert ds.class_names == ["a_cat", "b_dog"] and int(ds.cardinality()) == 2
    batches = list(ds)
    assert [tuple(b[0].shape) for b in batches] == [(4, 8, 8, 3), (2, 8, 8, 3)]
    labels = np.concatenate([b[1].numpy() for b in batches])
    assert labels.argmax(1).tolist() == [0, 0, 0, 1, 1, 1]
    # the first image, resized as tf.image.resize (bilinear, half-pixel centres)
    first = batches[0][0].numpy()[0]
    src = made[ds.file_paths[0]].astype(np.float32)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        np.testing.assert_allclose(first, tensorflow.image.resize(src, (8, 8)).numpy(), rtol=1e-5, atol=1e-3)
        kds = tensorflow.keras.utils.image_dataset_from_directory(str(tmp_path), image_size=(8, 8), shuffle=False,
                                                                  batch_size=4, verbose=False)
        np.testing.assert_allclose(first, next(iter(kds))[0].numpy()[0], rtol=1e-5, atol=1e-3)
    # nearest: every output pixel is one of the source pixels of that row/column (half-pixel rule)
    near = U.image_dataset_from_directory(str(tmp_path), image_size=(5, 7), batch_size=None, shuffle=False,
                                          interpolation="nearest", labels=None, verbose=False)
    img0 = next(iter(near)).numpy()
    h, w = src.shape[:2]
    rows = np.minimum(np.floor((np.arange(5) + 0.5) * h / 5).astype(int), h - 1)
    cols = np.minimum(np.floor((np.arange(7) + 0.5) * w / 7).astype(int), w - 1)
    np.testing.assert_array_equal(img0, src[rows][:, cols])
    # a validation split with a seed: the two subsets partition the files
    tr, va = U.image_dataset_from_directory(str(tmp_path), image_size=(4, 4), validation_split=0.34, subset="both",
                                            seed=3, verbose=False)
    assert len(tr.file_paths) == 4 and len(va.file_paths) == 2
    assert sorted(tr.file_paths + va.file_paths) == sorted(made)
    gray = U.image_dataset_from_directory(str(tmp_path), image_size=(4, 4), color_mode="grayscale", verbose=False)
    assert tuple(next(iter(gray))[0].shape)[1:] == (4, 4, 1)
    with pytest.raises(ValueError, match="binary"):  # three labels given for the three cat files
        U.image_dataset_from_directory(str(tmp_path / "a_cat"), label_mode="binary", labels=[0, 1, 2],
                                       image_size=(4, 4), verbose=False)
    with pytest.raises(ValueError, match="seed"):
        U.image_dataset_from_directory(str(tmp_path), validation_split=0.5, subset="training", verbose=False)
    with pytest.raises(ValueError, match="color_mode"):
        U.image_dataset_from_directory(str(tmp_path), color_mode="cmyk", verbose=False)


def test_text_dataset_from_directory(tmp_path):
    pytest.importorskip("tapeflow.data", reason="these utilities return tapeflow Datasets (tapeflow-data)")
    for cls, words in (("neg", "bad awful"), ("pos", "good great")):
        os.makedirs(tmp_path / cls)
        for i in range(3):
            (tmp_path / cls / f"{i}.txt").write_text(f"{words} {i}")
    ds = U.text_dataset_from_directory(str(tmp_path), batch_size=4, shuffle=True, seed=5, max_length=6,
                                       verbose=False)
    texts, labels = [], []
    for t, lab in ds:
        texts += list(t.numpy())
        labels += labels_list(lab)
    assert ds.class_names == ["neg", "pos"] and len(texts) == 6
    assert all(len(t) <= 6 for t in texts)
    assert sorted(zip(labels, texts)) == sorted([(0, b"bad aw")] * 3 + [(1, b"good g")] * 3)
    tensorflow = tf_or_none()
    if tensorflow is not None:
        kds = tensorflow.keras.utils.text_dataset_from_directory(str(tmp_path), shuffle=False, max_length=6,
                                                                 verbose=False)
        ours = U.text_dataset_from_directory(str(tmp_path), shuffle=False, max_length=6, verbose=False)
        kt, kl = next(iter(kds))
        ot, ol = next(iter(ours))
        assert list(ot.numpy()) == list(kt.numpy()) and ol.numpy().tolist() == kl.numpy().tolist()


def labels_list(t):
    return [int(v) for v in t.numpy()]


def test_get_file_uses_the_cache_downloads_and_says_where_to_put_a_file(tmp_path, monkeypatch):
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "kh"))
    calls = []

    def offline(url, path, *a):
        calls.append(url)
        raise urllib.error.URLError("network is unreachable")

    import tapeflow.nn.utils as nu
    monkeypatch.setattr(nu, "urlretrieve", offline)
    expected = tmp_path / "kh" / "datasets" / "thing.bin"
    with pytest.raises(OSError, match=str(expected)):
        nu.get_file("thing.bin", origin="https://example.invalid/thing.bin")
    assert calls == ["https://example.invalid/thing.bin"] and not expected.exists()
    expected.write_bytes(b"payload")
    assert nu.get_file("thing.bin", origin="https://example.invalid/thing.bin") == str(expected)
    import hashlib
    good = hashlib.sha256(b"payload").hexdigest()
    assert nu.get_file("thing.bin", origin="x://y/thing.bin", file_hash=good) == str(expected)
    assert len(calls) == 1  # the cached file was used

    def online(url, path, *a):
        calls.append(url)
        with open(path, "wb") as f:
            f.write(b"payload")

    monkeypatch.setattr(nu, "urlretrieve", online)
    # a stale cached file (wrong hash) is fetched again
    expected.write_bytes(b"old")
    assert nu.get_file("thing.bin", origin="https://example.invalid/thing.bin", file_hash=good) == str(expected)
    assert expected.read_bytes() == b"payload"
    with pytest.raises(ValueError, match="hash does not match"):
        nu.get_file("other.bin", origin="https://example.invalid/other.bin", file_hash="0" * 64)
    assert not (tmp_path / "kh" / "datasets" / "other.bin").exists()
    with pytest.raises(ValueError, match="cache_dir"):
        nu.get_file("a/b.bin", origin="https://example.invalid/b.bin")


def test_get_file_extracts_archives(tmp_path, monkeypatch):
    import tarfile

    import tapeflow.nn.utils as nu

    src = tmp_path / "src"
    (src / "inner").mkdir(parents=True)
    (src / "inner" / "f.txt").write_text("hello")
    archive = tmp_path / "a.tar.gz"
    with tarfile.open(archive, "w:gz") as t:
        t.add(src / "inner", arcname="inner")

    def online(url, path, *a):
        with open(archive, "rb") as fin, open(path, "wb") as fout:
            fout.write(fin.read())

    monkeypatch.setattr(nu, "urlretrieve", online)
    out = nu.get_file("thing", origin="https://example.invalid/a.tar.gz", extract=True, cache_dir=str(tmp_path / "c"))
    assert out == str(tmp_path / "c" / "datasets" / "thing")
    with open(os.path.join(out, "inner", "f.txt")) as f:
        assert f.read() == "hello"


def test_pydataset_arguments():
    with pytest.raises(ValueError, match="workers=1"):
        U.PyDataset(workers=4)
    with pytest.raises(ValueError, match="use_multiprocessing"):
        U.PyDataset(use_multiprocessing=True)
    assert U.Sequence is U.PyDataset and U.PyDataset().workers == 1


# -- keras.datasets: fake files in a temporary KERAS_HOME, never a download ---------------------------------

@pytest.fixture
def keras_home(tmp_path, monkeypatch):
    import tapeflow.nn.utils as nu

    monkeypatch.setenv("KERAS_HOME", str(tmp_path))
    fetched = []

    def offline(url, path, *a):
        fetched.append(url)
        raise urllib.error.URLError("no network in tests")

    monkeypatch.setattr(nu, "urlretrieve", offline)
    (tmp_path / "datasets").mkdir()
    return tmp_path, fetched


def _sha(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_mnist_and_boston_read_keras_cache_files(keras_home, monkeypatch, rng):
    home, fetched = keras_home
    D = tf.keras.datasets
    # offline and no file: the error says which file and where to put it
    with pytest.raises(OSError, match=str(home / "datasets" / "mnist.npz")):
        D.mnist.load_data()
    assert fetched == [D.mnist.ORIGIN]
    xtr = rng.integers(0, 256, size=(5, 28, 28), dtype=np.uint8)
    ytr = rng.integers(0, 10, size=5).astype(np.uint8)
    f = home / "datasets" / "mnist.npz"
    np.savez(f, x_train=xtr, y_train=ytr, x_test=xtr[:2], y_test=ytr[:2])
    monkeypatch.setattr(D.mnist, "FILE_HASH", _sha(f))  # the fake file stands in for Keras's
    (a, b), (c, d) = D.mnist.load_data()
    np.testing.assert_array_equal(a, xtr)
    assert b.dtype == np.uint8 and c.shape == (2, 28, 28) and d.tolist() == ytr[:2].tolist()
    # a cached file whose hash is not Keras's is fetched again (offline: the error again)
    monkeypatch.setattr(D.mnist, "FILE_HASH", "0" * 64)
    with pytest.raises(OSError, match="mnist.npz"):
        D.mnist.load_data()
    x = rng.normal(size=(10, 13)).astype(np.float32)
    y = np.arange(10, dtype=np.float32)
    f = home / "datasets" / "boston_housing.npz"
    np.savez(f, x=x, y=y)
    monkeypatch.setattr(D.boston_housing, "FILE_HASH", _sha(f))
    (xa, ya), (xb, yb) = D.boston_housing.load_data(test_split=0.3)
    order = np.arange(10)
    np.random.RandomState(113).shuffle(order)  # Keras's split: shuffled by seed 113, then cut
    np.testing.assert_array_equal(ya, y[order][:7])
    np.testing.assert_array_equal(yb, y[order][7:])
    assert xa.shape == (7, 13)


def test_fashion_mnist_cifar_and_imdb_layouts(keras_home, monkeypatch, rng):
    import gzip
    import pickle
    import tarfile

    home, fetched = keras_home
    D = tf.keras.datasets
    folder = home / "datasets" / "fashion-mnist"
    with pytest.raises(OSError, match=str(folder / "train-labels-idx1-ubyte.gz")):
        D.fashion_mnist.load_data()
    folder.mkdir(exist_ok=True)
    imgs = rng.integers(0, 256, size=(3, 28, 28), dtype=np.uint8)
    labs = np.array([1, 2, 3], np.uint8)
    for name in D.fashion_mnist.FILES:
        with gzip.open(folder / name, "wb") as f:
            f.write(b"\0" * 8 + labs.tobytes() if "labels" in name else b"\0" * 16 + imgs.tobytes())
    (a, b), (c, d) = D.fashion_mnist.load_data()
    np.testing.assert_array_equal(a, imgs)
    assert b.tolist() == [1, 2, 3] and c.shape == (3, 28, 28)
    # CIFAR-10: Keras's archive name; offline the message names it, then a tar.gz placed there is read
    archive = home / "datasets" / "cifar-10-batches-py-target_archive"
    with pytest.raises(OSError, match=str(archive)):
        D.cifar10.load_data()
    src = home / "build" / "cifar-10-batches-py"
    src.mkdir(parents=True)
    data = rng.integers(0, 256, size=(2, 3072), dtype=np.uint8)
    for name in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        with open(src / name, "wb") as f:
            pickle.dump({b"data": data, b"labels": [3, 7]}, f)
    with tarfile.open(archive, "w:gz") as t:
        t.add(src, arcname="cifar-10-batches-py")
    monkeypatch.setattr(D.cifar10, "FILE_HASH", _sha(archive))
    (a, b), (c, d) = D.cifar10.load_data()
    assert a.shape == (10, 32, 32, 3) and b.shape == (10, 1) and c.shape == (2, 32, 32, 3)
    np.testing.assert_array_equal(a[0], data[0].reshape(3, 32, 32).transpose(1, 2, 0))
    assert d.ravel().tolist() == [3, 7]
    # a pickled batch with anything but arrays is refused
    with open(src / "test_batch", "wb") as f:
        pickle.dump({b"data": data, b"labels": [3, 7], b"x": os.system}, f)
    with tarfile.open(archive, "w:gz") as t:
        t.add(src, arcname="cifar-10-batches-py")
    monkeypatch.setattr(D.cifar10, "FILE_HASH", _sha(archive))
    with pytest.raises(pickle.UnpicklingError, match="only NumPy"):
        D.cifar10.load_data()
    # IMDB: Keras's index shift, start and out-of-vocabulary characters
    f = home / "datasets" / "imdb.npz"
    seqs = np.array([[1, 2, 3], [4, 5], [6]], dtype=object)
    np.savez(f, x_train=seqs, y_train=np.array([0, 1, 0]), x_test=seqs[:2], y_test=np.array([1, 1]))
    monkeypatch.setattr(D.imdb, "FILE_HASH", _sha(f))
    (xa, ya), (xb, yb) = D.imdb.load_data(num_words=8)
    assert sorted(len(s) for s in xa) == [2, 3, 4] and all(s[0] == 1 for s in xa)
    assert max(max(s) for s in list(xa) + list(xb)) < 8 and 2 in [w for s in xa for w in s]  # oov_char
    assert fetched and all("example" not in u for u in fetched)

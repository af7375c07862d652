"""The shared loader of MNIST-style datasets: four gzipped IDX files, fetched and parsed."""
from __future__ import annotations

from tapeflow.core.errors import DataLossError

from ..readers import read_idx
from ._download import fetch

KEYS = ("train_images", "train_labels", "test_images", "test_labels")


def load(dataset: str, files: dict, mirrors, cache_dir=None):
    """``(x_train, y_train), (x_test, y_test)`` as uint8 NumPy arrays."""
    arrays = {}
    for key in KEYS:
        filename, size, md5 = files[key]
        arrays[key] = read_idx(fetch(dataset, filename, mirrors, size, md5, cache_dir))
    for split in ("train", "test"):
        x, y = arrays[f"{split}_images"], arrays[f"{split}_labels"]
        if x.ndim != 3 or y.ndim != 1 or len(x) != len(y):
            raise DataLossError(f"{dataset} {split} files disagree: images of shape {x.shape}, labels of shape "
                                f"{y.shape}; expected (n, rows, cols) and (n,)", "LoadData")
    return ((arrays["train_images"], arrays["train_labels"]), (arrays["test_images"], arrays["test_labels"]))

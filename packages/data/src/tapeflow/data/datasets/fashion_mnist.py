"""Fashion-MNIST (Zalando): 60,000 training and 10,000 test 28x28 uint8 images of clothing, labels 0-9
(T-shirt/top, trouser, pullover, dress, coat, sandal, shirt, sneaker, bag, ankle boot).

Downloaded once (about 30 MB), checked against the published sizes and MD5 sums, into
``data_home()/fashion_mnist``.
"""
from __future__ import annotations

from ._idx_loader import load as _load

MIRRORS = [
    "https://storage.googleapis.com/tensorflow/tf-keras-datasets/",
    "http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",
    "https://raw.githubusercontent.com/zalandoresearch/fashion-mnist/master/data/fashion/",
]
FILES = {
    "train_images": ("train-images-idx3-ubyte.gz", 26421880, "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
    "train_labels": ("train-labels-idx1-ubyte.gz", 29515, "25c81989df183df01b3e8a0aad5dffbe"),
    "test_images": ("t10k-images-idx3-ubyte.gz", 4422102, "bef4ecab320f06d8554ea6380940ec79"),
    "test_labels": ("t10k-labels-idx1-ubyte.gz", 5148, "bb300cfdad3c16e7a12a480ee83cd310"),
}
CLASS_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag",
               "Ankle boot"]


def load_data(cache_dir=None):
    """``(x_train, y_train), (x_test, y_test)``: uint8 arrays of shape (60000, 28, 28), (60000,),
    (10000, 28, 28), (10000,), downloading the IDX files on first use.

    >>> from tapeflow.data.datasets import fashion_mnist
    >>> fashion_mnist.CLASS_NAMES[9]
    'Ankle boot'
    """
    return _load("fashion_mnist", FILES, MIRRORS, cache_dir)

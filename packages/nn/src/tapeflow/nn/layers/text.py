"""Text preprocessing layers as Keras 3's: ``StringLookup``, ``IntegerLookup`` (vocabularies with ``adapt``) and
``TextVectorization`` (standardize, split, n-grams, then a vocabulary lookup).

A vocabulary maps tokens to indices: with ``output_mode="int"`` the mask token (when given) takes index 0, then
``num_oov_indices`` indices for out-of-vocabulary tokens (FarmHash buckets of the token when there are several,
``token mod num_oov_indices`` for integers), then the vocabulary, most frequent first (ties: the greater token
first), as Keras orders an adapted vocabulary.  ``"one_hot"``, ``"multi_hot"``, ``"count"`` (int64) and ``"tf_idf"``
(float32) give vectors of the vocabulary's size (``max_tokens`` with ``pad_to_max_tokens``); tf-idf weights are
``log(1 + documents / (1 + documents with the token))``, the OOV slots the mean weight.

The lookup is one traced host computation (core's ``lookup_table_find`` primitive over string tensors), so these
layers run eagerly and inside ``tf.function``; ``adapt`` counts tokens on the host (as Keras does with NumPy).

>>> import tapeflow as tf
>>> vec = tf.keras.layers.TextVectorization(output_sequence_length=4)
>>> vec.adapt(["the cat sat", "the dog"])
>>> vec.get_vocabulary()
['', '[UNK]', 'the', 'sat', 'dog', 'cat']
>>> vec(["The cat ran!"]).numpy().tolist()
[[2, 5, 1, 0]]
"""
from __future__ import annotations

import collections
import math
from typing import Any

import numpy as np

import tapeflow.core as K
from tapeflow.core.errors import InvalidArgumentError
from tapeflow.core.ops import string_ops as S
from tapeflow.core.ops.string_ops import LookupTable, RaggedTensor, _ragged, lookup, ragged_to_dense

from .. import _args as A
from .base import Layer

_MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")
_PUNCTUATION = r'[!"#$%&()\*\+,-\./:;<=>?@\[\\\]^_`{|}~\']'


def _batches(data):
    """``data`` (a list, array, tensor, RaggedTensor, or an iterable of batches such as a Dataset) as batches."""
    if isinstance(data, (str, bytes, np.ndarray, K.Tensor, RaggedTensor)) or (
            isinstance(data, list) and (not data or not isinstance(data[0], (np.ndarray, K.Tensor)))):
        return [data]
    if hasattr(data, "__iter__"):
        return data
    raise TypeError(f"adapt: data must be a list, an array, a tensor or an iterable of batches (a tf.data.Dataset), "
                    f"got {type(data).__name__}")


class _IndexLookup(Layer):
    """The vocabulary layer StringLookup and IntegerLookup share (Keras' IndexLookup)."""

    _casts_ints = False  # keys stay strings / integers

    def __init__(self, max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                 output_mode, pad_to_max_tokens, sparse, is_string, **kwargs) -> None:
        super().__init__(**kwargs)
        owner = self
        self.max_tokens = A.integer(max_tokens, "max_tokens", owner, lo=1, none_ok=True)
        self.num_oov_indices = A.integer(num_oov_indices, "num_oov_indices", owner, lo=0)
        self.output_mode = A.choice(output_mode, "output_mode", owner, _MODES)
        self.invert = A.boolean(invert, "invert", owner)
        self.pad_to_max_tokens = A.boolean(pad_to_max_tokens, "pad_to_max_tokens", owner)
        if A.boolean(sparse, "sparse", owner):
            raise InvalidArgumentError("sparse=True is not available: tapeflow has no sparse tensors; allowed: "
                                       "sparse=False", type(self).__name__)
        self.sparse = False
        if self.invert and self.output_mode != "int":
            raise InvalidArgumentError(f"invert=True needs output_mode='int', got {self.output_mode!r}",
                                       type(self).__name__)
        if self.pad_to_max_tokens and self.max_tokens is None:
            raise InvalidArgumentError("pad_to_max_tokens=True needs max_tokens", type(self).__name__)
        self._is_string = is_string
        self.mask_token, self.oov_token = mask_token, oov_token
        self._tokens: list = []
        self._idf = None
        self._table = self._inverse = None
        if self.max_tokens is not None and self.max_tokens <= self._token_start():
            raise InvalidArgumentError(f"max_tokens = {self.max_tokens} leaves no room for the vocabulary after "
                                       f"{self._token_start()} mask/OOV indices", type(self).__name__)
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)
        elif idf_weights is not None:
            raise InvalidArgumentError("idf_weights needs a vocabulary", type(self).__name__)
        self.built = True

    # -- keys -------------------------------------------------------------------------------------------
    def _key(self, v):
        if self._is_string:
            if isinstance(v, str):
                return v.encode("utf-8")
            if isinstance(v, (bytes, np.bytes_)):
                return bytes(v)
            raise TypeError(f"{type(self).__name__}: vocabulary entries must be strings, got {v!r:.40}")
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"{type(self).__name__}: vocabulary entries must be integers, got {v!r:.40}")
        return int(v)

    def _show(self, k):
        return k.decode("utf-8", "replace") if isinstance(k, bytes) else k

    def _oov_start(self):
        return 1 if self.mask_token is not None and self.output_mode == "int" else 0

    def _token_start(self):
        return self._oov_start() + self.num_oov_indices

    # -- vocabulary ----------------------------------------------------------------------------------------
    def vocabulary_size(self) -> int:
        """The number of indices: mask (int mode), OOV indices and the vocabulary."""
        return self._token_start() + len(self._tokens)

    def get_vocabulary(self, include_special_tokens=True) -> list:
        """The token of each index (mask and OOV tokens first unless ``include_special_tokens=False``)."""
        vocab = [self._show(k) for k in self._tokens]
        if not include_special_tokens:
            return vocab
        special = [self.oov_token] * self.num_oov_indices
        if self._oov_start():
            special = [self.mask_token] + special
        return special + vocab

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Use ``vocabulary`` (a list, array or file-less tensor of tokens; a leading mask/OOV token as this layer
        puts them is accepted) and, for tf_idf, its ``idf_weights``."""
        name = type(self).__name__
        if isinstance(vocabulary, K.Tensor):
            vocabulary = vocabulary.numpy().tolist()
        elif isinstance(vocabulary, np.ndarray):
            vocabulary = vocabulary.tolist()
        if isinstance(vocabulary, str):
            raise InvalidArgumentError("a vocabulary file is not supported; allowed: a list of tokens", name)
        keys = [self._key(v) for v in vocabulary]
        special = ([self._key(self.mask_token)] if self._oov_start() else []) + \
            ([self._key(self.oov_token)] * self.num_oov_indices if self.oov_token is not None else [])
        had_special = bool(special) and keys[:len(special)] == special
        if had_special:
            keys = keys[len(special):]
        bad = {self._key(t) for t in (self.mask_token, self.oov_token) if t is not None} & set(keys)
        if bad:
            raise InvalidArgumentError(f"the vocabulary holds the special token(s) {sorted(map(repr, bad))} after "
                                       "the special indices; allowed: each special token once, at its index", name)
        if len(set(keys)) != len(keys):
            dup = [k for k, c in collections.Counter(keys).items() if c > 1]
            raise InvalidArgumentError(f"the vocabulary has repeated tokens {dup[:5]!r}", name)
        if self.max_tokens is not None and len(keys) + self._token_start() > self.max_tokens:
            raise InvalidArgumentError(f"the vocabulary has {len(keys) + self._token_start()} entries (with "
                                       f"mask/OOV indices) but max_tokens = {self.max_tokens}", name)
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise InvalidArgumentError("output_mode='tf_idf' needs idf_weights with the vocabulary", name)
            w = [float(v) for v in np.asarray(idf_weights, np.float64).reshape(-1)]
            if len(w) == len(keys) + (len(special) if had_special else 0) and had_special:
                w = w[len(special):]
            if len(w) != len(keys):
                raise InvalidArgumentError(f"idf_weights has {len(w)} entries for {len(keys)} tokens", name)
            self._idf = w
        elif idf_weights is not None:
            raise InvalidArgumentError("idf_weights is only used with output_mode='tf_idf'", name)
        self._tokens = keys
        self._rebuild()

    def _rebuild(self):
        mask = self._key(self.mask_token) if self.mask_token is not None else None
        self._table = LookupTable(self._tokens, offset=self._token_start(), num_oov=self.num_oov_indices,
                                  oov_start=self._oov_start(), mask_key=mask, mask_value=0)
        oov = self._key(self.oov_token) if self.oov_token is not None else None
        self._inverse = LookupTable(self._tokens, offset=self._token_start(), invert=True, oov_key=oov,
                                    mask_key=mask if self._oov_start() else None, mask_value=0)

    # -- adapt ----------------------------------------------------------------------------------------------
    def _documents(self, batch):
        """The documents (lists of keys) of one batch: the rows of a matrix or ragged tensor, each element of
        a vector, one for a scalar."""
        if isinstance(batch, RaggedTensor):
            return [[self._key(v) for v in row] for row in batch.to_list()]
        if isinstance(batch, K.Tensor):
            batch = batch.numpy()
        if isinstance(batch, tuple):
            batch = batch[0]
        arr = np.asarray(batch, dtype=object if self._is_string else None)
        if arr.ndim == 0:
            return [[self._key(arr[()])]]
        if arr.ndim == 1:
            return [[self._key(v)] for v in arr.tolist()]
        return [[self._key(v) for v in row] for row in arr.reshape(arr.shape[0], -1).tolist()]

    def adapt(self, data, batch_size=None, steps=None):
        """Learn the vocabulary (and tf-idf weights) from ``data``: tokens sorted by count, most frequent first."""
        docs = []
        for i, batch in enumerate(_batches(data)):
            if steps is not None and i >= steps:
                break
            docs.extend(self._documents(batch))
        self._adapt_documents(docs)

    def _adapt_documents(self, docs):
        counts = collections.Counter()
        doc_counts = collections.Counter()
        for d in docs:
            counts.update(d)
            doc_counts.update(set(d))
        for t in (self.mask_token, self.oov_token):
            if t is not None:
                counts.pop(self._key(t), None)
        ranked = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        if self.max_tokens is not None:
            ranked = ranked[:self.max_tokens - self._token_start()]
        self._tokens = [k for k, _ in ranked]
        if self.output_mode == "tf_idf":
            n = len(docs)
            self._idf = [float(np.float32(math.log(1 + n / (1 + doc_counts[k])))) for k in self._tokens]
        self._rebuild()

    # -- call ------------------------------------------------------------------------------------------------
    def _depth(self):
        return self.max_tokens if self.pad_to_max_tokens else self.vocabulary_size()

    def _idf_vector(self):
        w = self._idf or []
        mean = float(np.mean(np.asarray(w, np.float32))) if w else 0.0
        vec = [mean] * self._token_start() + list(w)
        vec += [0.0] * (self._depth() - len(vec))
        return K.constant(np.asarray(vec, np.float32))

    def _lookup(self, x):
        if self._table is None:
            self._rebuild()
        if self.invert:
            return lookup(self._inverse, x)
        if not self._is_string and x.dtype.is_floating:
            raise InvalidArgumentError(f"inputs have dtype {x.dtype.name}; allowed: integers", type(self).__name__)
        return lookup(self._table, x)

    def _encode(self, ids, rank):
        """ids as Keras 3 encodes them: one_hot gives a vector per id (a scalar: a batch of one; a trailing axis
        of 1 is dropped), multi_hot / count / tf_idf a vector per sample (a vector of ids is one sample); int64,
        tf_idf float32."""
        depth = self._depth()
        if self.output_mode == "one_hot":
            if rank == 0:
                ids = K.reshape(ids, [1])
            elif rank > 1 and ids.shape[-1] == 1:
                ids = K.squeeze(ids, -1)
            return K.cast(K.one_hot(ids, depth + 1, dtype=K.float32)[..., :depth], K.int64)
        flat = K.reshape(ids, [1]) if rank == 0 else ids
        y = K.reduce_sum(K.one_hot(flat, depth + 1, dtype=K.float32)[..., :depth], axis=-2)  # (index depth: padding)
        if self.output_mode == "multi_hot":
            y = K.minimum(y, 1.0)
        if self.output_mode == "tf_idf":
            return K.multiply(y, self._idf_vector())
        return K.cast(y, K.int64)

    def call(self, inputs):
        if isinstance(inputs, RaggedTensor):
            ids = self._lookup(inputs.flat_values)
            if self.output_mode == "int":
                return _ragged(ids, inputs.row_splits)
            return self._encode(ragged_to_dense(ids, inputs.row_splits, self._depth()), 2)
        x = inputs if isinstance(inputs, K.Tensor) else K.convert_to_tensor(inputs)
        if self.output_mode != "int" and not self._tokens and not self.pad_to_max_tokens:
            raise InvalidArgumentError(f"output_mode={self.output_mode!r} needs a vocabulary before the layer is "
                                       "called: pass vocabulary= or call adapt()", type(self).__name__)
        ids = self._lookup(x)
        return ids if self.output_mode == "int" else self._encode(ids, len(x.shape))

    def __call__(self, inputs, *args, **kwargs):
        if isinstance(inputs, RaggedTensor):
            return self.call(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.output_mode == "int":
            return shape
        if self.output_mode == "one_hot":
            return (1, self._depth()) if not shape else \
                (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (self._depth(),)
        return shape[:-1] + (self._depth(),) if len(shape) > 1 else (self._depth(),)

    def get_config(self):
        cfg = {**super().get_config(), "max_tokens": self.max_tokens, "num_oov_indices": self.num_oov_indices,
               "mask_token": self.mask_token, "oov_token": self.oov_token, "invert": self.invert,
               "output_mode": self.output_mode, "pad_to_max_tokens": self.pad_to_max_tokens, "sparse": self.sparse,
               "vocabulary": self.get_vocabulary(include_special_tokens=False) if self._tokens else None}
        cfg["idf_weights"] = list(self._idf) if self.output_mode == "tf_idf" and self._idf is not None else None
        return cfg


class StringLookup(_IndexLookup):
    """Strings to integer indices (or back with ``invert=True``), or to one-/multi-hot, count and tf-idf vectors,
    over a vocabulary given or learned with ``adapt``, as Keras 3's ``StringLookup``.

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.StringLookup(vocabulary=["a", "b", "c"])
    >>> layer(tf.constant([["a", "c"], ["d", "b"]])).numpy().tolist()
    [[1, 3], [0, 2]]
    >>> layer.get_vocabulary()
    ['[UNK]', 'a', 'b', 'c']
    """

    _casts_ints = False  # keys stay as they are

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]", vocabulary=None,
                 idf_weights=None, invert=False, output_mode="int", pad_to_max_tokens=False, sparse=False,
                 encoding="utf-8", **kwargs) -> None:
        _check_encoding(encoding, "StringLookup")
        for what, tok in (("mask_token", mask_token), ("oov_token", oov_token)):
            if tok is not None and not isinstance(tok, (str, bytes)):
                raise A._type_error("StringLookup", what, tok, "a string or None")
        self.encoding = "utf-8"
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, pad_to_max_tokens, sparse, True, **kwargs)

    def call(self, inputs):
        if not isinstance(inputs, (K.Tensor, RaggedTensor)):
            inputs = K.constant(inputs) if not self.invert else K.convert_to_tensor(inputs)
        if not self.invert and isinstance(inputs, K.Tensor) and not inputs.dtype.is_string:
            raise InvalidArgumentError(f"inputs have dtype {inputs.dtype.name}; allowed: string", "StringLookup")
        return super().call(inputs)

    def get_config(self):
        return {**super().get_config(), "encoding": self.encoding}


class IntegerLookup(_IndexLookup):
    """Integers to indices (or back with ``invert=True``), or to one-/multi-hot, count and tf-idf vectors, over a
    vocabulary given or learned with ``adapt``, as Keras 3's ``IntegerLookup``.

    >>> import tapeflow as tf
    >>> layer = tf.keras.layers.IntegerLookup()
    >>> layer.adapt([12, 36, 12, 7])
    >>> layer(tf.constant([12, 7, 99], tf.int64)).numpy().tolist(), layer.get_vocabulary()
    ([1, 3, 0], [-1, 12, 36, 7])
    """

    _casts_ints = False  # keys stay as they are

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1, vocabulary=None,
                 vocabulary_dtype="int64", idf_weights=None, invert=False, output_mode="int", sparse=False,
                 pad_to_max_tokens=False, **kwargs) -> None:
        if not isinstance(vocabulary_dtype, (str, K.DType)):
            raise A._type_error("IntegerLookup", "vocabulary_dtype", vocabulary_dtype, "'int64' or 'int32'")
        if vocabulary_dtype not in ("int64", "int32", K.int64, K.int32):
            raise InvalidArgumentError(f"vocabulary_dtype = {vocabulary_dtype!r}; allowed: 'int64', 'int32'",
                                       "IntegerLookup")
        for what, tok in (("mask_token", mask_token), ("oov_token", oov_token)):
            if tok is not None and not A._is_int(tok):
                raise A._type_error("IntegerLookup", what, tok, "an int or None")
        self.vocabulary_dtype = K.as_dtype(vocabulary_dtype).name
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary, idf_weights, invert,
                         output_mode, pad_to_max_tokens, sparse, False, **kwargs)

    def call(self, inputs):
        if not isinstance(inputs, (K.Tensor, RaggedTensor)):
            inputs = K.constant(np.asarray(inputs, np.int64))
        out = super().call(inputs)
        if self.invert and isinstance(out, K.Tensor) and out.dtype is not K.as_dtype(self.vocabulary_dtype):
            out = K.cast(out, self.vocabulary_dtype)
        return out

    def get_config(self):
        return {**super().get_config(), "vocabulary_dtype": self.vocabulary_dtype}


class TextVectorization(Layer):
    """Strings to token indices or vectors, as Keras 3's ``TextVectorization``: ``standardize``
    (``"lower_and_strip_punctuation"``, ``"lower"``, ``"strip_punctuation"``, None or a callable), ``split``
    ("whitespace", "character", None or a callable), optional ``ngrams`` (an int n for 1..n, or a tuple of widths),
    then a vocabulary (``adapt`` or ``vocabulary=``).  ``output_mode="int"`` pads (or cuts) the index rows to
    ``output_sequence_length`` (the longest row when None) with 0, the mask ``""``; the other modes give one vector
    per string.

    >>> import tapeflow as tf
    >>> vec = tf.keras.layers.TextVectorization(output_mode="multi_hot", vocabulary=["a", "b"])
    >>> vec(["a b b", "c"]).numpy().tolist()
    [[0, 1, 1], [1, 0, 0]]
    """

    _casts_ints = False

    def __init__(self, max_tokens=None, standardize="lower_and_strip_punctuation", split="whitespace", ngrams=None,
                 output_mode="int", output_sequence_length=None, pad_to_max_tokens=False, vocabulary=None,
                 idf_weights=None, sparse=False, ragged=False, encoding="utf-8", **kwargs) -> None:
        super().__init__(**kwargs)
        name = "TextVectorization"
        for what, v in (("standardize", standardize), ("split", split)):
            if not (v is None or callable(v) or isinstance(v, str)):
                raise A._type_error(name, what, v, "a string, None or a callable")
        _check_encoding(encoding, name)
        A.boolean(pad_to_max_tokens, "pad_to_max_tokens", self)
        A.boolean(sparse, "sparse", self)
        A.integer(max_tokens, "max_tokens", self, lo=1, none_ok=True)
        if not (standardize is None or callable(standardize) or standardize in (
                "lower_and_strip_punctuation", "lower", "strip_punctuation")):
            raise InvalidArgumentError(f"standardize = {standardize!r}; allowed: 'lower_and_strip_punctuation', "
                                       "'lower', 'strip_punctuation', None or a callable", name)
        if not (split is None or callable(split) or split in ("whitespace", "character")):
            raise InvalidArgumentError(f"split = {split!r}; allowed: 'whitespace', 'character', None or a callable",
                                       name)
        if ngrams is not None:
            if A._is_int(ngrams) and int(ngrams) >= 1:
                ngrams = tuple(range(1, int(ngrams) + 1))
            elif isinstance(ngrams, tuple) and ngrams and all(A._is_int(n) and n >= 1 for n in ngrams):
                ngrams = tuple(int(n) for n in ngrams)
            elif not isinstance(ngrams, (int, tuple)) or isinstance(ngrams, bool):
                raise A._type_error(name, "ngrams", ngrams, "None, an int >= 1 or a tuple of them")
            else:
                raise InvalidArgumentError(f"ngrams = {ngrams!r}; allowed: None, an int >= 1 or a tuple of them", name)
            if split is None:
                raise InvalidArgumentError("ngrams needs split (n-grams of tokens)", name)
        self.output_mode = A.choice(output_mode, "output_mode", self, _MODES)
        self.output_sequence_length = A.integer(output_sequence_length, "output_sequence_length", self, lo=1,
                                                none_ok=True)
        if self.output_sequence_length is not None and self.output_mode != "int":
            raise InvalidArgumentError("output_sequence_length is only used with output_mode='int'", name)
        self.ragged = A.boolean(ragged, "ragged", self)
        if self.ragged and self.output_mode != "int":
            raise InvalidArgumentError("ragged=True needs output_mode='int'", name)
        self.standardize, self.split, self.ngrams = standardize, split, ngrams
        self.encoding = encoding
        self._lookup_layer = StringLookup(max_tokens=max_tokens, vocabulary=vocabulary, idf_weights=idf_weights,
                                          pad_to_max_tokens=pad_to_max_tokens, mask_token="",
                                          output_mode=self.output_mode, sparse=sparse, encoding=encoding,
                                          name=f"{self.name}_lookup")
        self.built = True

    @property
    def max_tokens(self):
        return self._lookup_layer.max_tokens

    @property
    def pad_to_max_tokens(self):
        return self._lookup_layer.pad_to_max_tokens

    def get_vocabulary(self, include_special_tokens=True) -> list:
        return self._lookup_layer.get_vocabulary(include_special_tokens)

    def vocabulary_size(self) -> int:
        return self._lookup_layer.vocabulary_size()

    def set_vocabulary(self, vocabulary, idf_weights=None):
        self._lookup_layer.set_vocabulary(vocabulary, idf_weights)

    def _preprocess(self, inputs):
        x = inputs if isinstance(inputs, K.Tensor) else K.constant(np.asarray(inputs, dtype=object)
                                                                  if not isinstance(inputs, (str, bytes)) else inputs)
        if not x.dtype.is_string:
            raise InvalidArgumentError(f"inputs have dtype {x.dtype.name}; allowed: string", "TextVectorization")
        if self.standardize in ("lower", "lower_and_strip_punctuation"):
            x = S.lower(x)
        if self.standardize in ("strip_punctuation", "lower_and_strip_punctuation"):
            x = S.regex_replace(x, _PUNCTUATION, "")
        if callable(self.standardize):
            x = self.standardize(x)
        if self.split is None:
            return x
        if len(x.shape) > 1:
            if x.shape[-1] != 1:
                raise InvalidArgumentError(f"inputs of shape {tuple(x.shape)}: when splitting, the input rank must be "
                                           "1 or the last dimension 1", "TextVectorization")
            x = K.squeeze(x, -1)
        if self.split == "whitespace":
            x = S.split(x)
        elif self.split == "character":
            x = _unicode_split(x)
        else:
            x = self.split(x)
        if self.ngrams is not None:
            x = S.ngrams(x, self.ngrams, separator=" ")
        return x

    def adapt(self, data, batch_size=None, steps=None) -> None:
        """Learn the vocabulary (and tf-idf weights) from ``data`` (strings, or an iterable of batches of them)."""
        docs = []
        for i, batch in enumerate(_batches(data)):
            if steps is not None and i >= steps:
                break
            if isinstance(batch, tuple):
                batch = batch[0]
            tokens = self._preprocess(batch)
            docs.extend(self._lookup_layer._documents(tokens if isinstance(tokens, RaggedTensor) else
                                                      (K.reshape(tokens, [1, -1]) if len(tokens.shape) < 2 and
                                                       self.split is not None else tokens)))
        self._lookup_layer._adapt_documents(docs)

    def call(self, inputs):
        tokens = self._preprocess(inputs)
        out = self._lookup_layer(tokens)
        if self.output_mode != "int":
            return out
        if isinstance(out, RaggedTensor):
            if self.ragged:
                return out
            return ragged_to_dense(out.flat_values, out.row_splits, 0, self.output_sequence_length)
        if self.output_sequence_length is not None and len(out.shape) >= 1:
            n, L = out.shape[-1], self.output_sequence_length
            out = out[..., :L] if n is None or n >= L else \
                K.pad(out, [[0, 0]] * (len(out.shape) - 1) + [[0, L - n]])
        return out

    def __call__(self, inputs, *args, **kwargs) -> Any:
        if not isinstance(inputs, K.Tensor):
            return self.call(inputs)
        return super().__call__(inputs, *args, **kwargs)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.output_mode != "int":
            return (shape[0] if shape else None, self._lookup_layer._depth())
        return (shape[0] if shape else None, self.output_sequence_length)

    def get_config(self):
        lk = self._lookup_layer
        cfg = {**super().get_config(), "max_tokens": lk.max_tokens, "standardize": self.standardize,
               "split": self.split, "ngrams": self.ngrams, "output_mode": self.output_mode,
               "output_sequence_length": self.output_sequence_length, "pad_to_max_tokens": lk.pad_to_max_tokens,
               "sparse": False, "ragged": self.ragged, "encoding": self.encoding,
               "vocabulary": lk.get_vocabulary(include_special_tokens=False) if lk._tokens else None}
        cfg["idf_weights"] = list(lk._idf) if self.output_mode == "tf_idf" and lk._idf is not None else None
        return cfg


def _check_encoding(encoding, name):
    if not isinstance(encoding, str):
        raise A._type_error(name, "encoding", encoding, "'utf-8'")
    if encoding.lower() != "utf-8":
        raise InvalidArgumentError(f"encoding = {encoding!r}; allowed: 'utf-8'", name)


def _unicode_split(x):
    """Each string's characters (UTF-8): a RaggedTensor for a vector, a vector for a scalar."""
    codes = S.unicode_decode(x, "UTF-8")
    if isinstance(codes, RaggedTensor):
        chars = S.unicode_encode(K.expand_dims(codes.flat_values, -1), "UTF-8")
        return _ragged(chars, codes.row_splits)
    return S.unicode_encode(K.expand_dims(codes, -1), "UTF-8")

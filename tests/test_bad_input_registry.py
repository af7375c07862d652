"""Every op refuses Python arguments of the wrong type with a typed error naming the op.

Walks core's op registry: every parameter of a registered op's public function that
takes an integer, a list of integers or a dtype (``axis``, ``shape``, ``dtype``,
``perm``, ``multiples``, ``num_or_size_splits``, ``depth``, ``k``, ... : ``INT``,
``INTS``, ``DTYPE`` below) is called, with valid tensor inputs from the op's spec sample
(tests/specs/*.py) or from ``CALLS`` below, once per wrong class of value: a float, a
str, None (where the parameter's default is not None), a list of floats, a list of
strs, and ``2**64``.  Each call must raise ``TypeError`` (a wrong Python type) or
``InvalidArgumentError`` (a value out of range), with ``[Op:<the op>]`` in the message.

An op with such a parameter that the walk cannot call fails
``test_every_int_or_dtype_parameter_is_walked``, saying what to add here.
"""
from __future__ import annotations

import inspect
import zlib

import numpy as np
import pytest
import tapeflow as tf
from opspec import load_specs
from tapeflow.core.dispatch import REGISTRY

SPECS = load_specs()
BIG = 2 ** 64

# parameters taking one integer
INT = {"axis", "depth", "k", "num", "num_segments", "num_rows", "num_columns", "batch_dims", "num_samples",
       "num_lower", "num_upper", "stride", "begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
       "shrink_axis_mask"}
# parameters taking a list of integers (or one integer)
INTS = {"shape", "dims", "perm", "multiples", "num_or_size_splits", "begin", "end", "size", "strides", "ksize",
        "dilations", "batch_shape", "axes", "input_sizes", "filter_sizes", "orig_input_shape", "output_shape",
        "noise_shape"}
# parameters taking a dtype
DTYPE = {"dtype", "out_type", "output_type"}
WALKED = INT | INTS | DTYPE

# parameters of these names that the walk leaves alone, and why
NOT_WALKED = {
    # tensordot's axes is an int or a pair of axis lists (not one list of ints): walked by hand below
    ("tensordot", "axes"): "axes of tensordot is an int or a pair of lists; see test_tensordot_axes",
    # einsum and meshgrid take **kwargs only
}
# parameters without a default that take None all the same, and why
NONE_OK = {("strided_slice_grad", "strides"): "the gradient of strided_slice passes its strides (None: all 1)"}

# ops whose spec runs through a custom function: how to call them validly (kwargs of the registered function)
_x23 = np.arange(6, dtype=np.float32).reshape(2, 3)
CALLS = {
    "concat": lambda: {"values": [tf.constant(_x23), tf.constant(_x23)], "axis": 0},
    "stack": lambda: {"values": [tf.constant(_x23), tf.constant(_x23)], "axis": 0},
    "gather": lambda: {"params": tf.constant(_x23), "indices": tf.constant([1, 0]), "axis": 1, "batch_dims": 0},
    "top_k": lambda: {"input": tf.constant(_x23), "k": 2},
    "categorical": lambda: {"logits": tf.constant(_x23), "num_samples": 3, "dtype": tf.int64, "seed": 1},
    "stateless_categorical": lambda: {"logits": tf.constant(_x23), "num_samples": 3, "seed": [1, 2],
                                      "dtype": tf.int64},
    "random_normal": lambda: {"shape": [2, 3], "dtype": tf.float32, "seed": 1},
    "random_uniform": lambda: {"shape": [2, 3], "dtype": tf.float32, "seed": 1},
    "truncated_normal": lambda: {"shape": [2, 3], "dtype": tf.float32, "seed": 1},
    "stateless_random_normal": lambda: {"shape": [2, 3], "seed": [1, 2], "dtype": tf.float32},
    "stateless_random_uniform": lambda: {"shape": [2, 3], "seed": [1, 2], "dtype": tf.float32},
    "stateless_truncated_normal": lambda: {"shape": [2, 3], "seed": [1, 2], "dtype": tf.float32},
    "random_gamma": lambda: {"shape": [2], "alpha": [1.0, 2.0], "dtype": tf.float32, "seed": 1},
    "stateless_random_gamma": lambda: {"shape": [2, 3], "seed": [1, 2], "alpha": 1.5, "dtype": tf.float32},
    "random_poisson": lambda: {"shape": [2], "lam": [1.0, 2.0], "dtype": tf.float32, "seed": 1},
    "stateless_random_poisson": lambda: {"shape": [2, 3], "seed": [1, 2], "lam": 1.5, "dtype": tf.int32},
    "stateless_random_binomial": lambda: {"shape": [2, 3], "seed": [1, 2], "counts": 5.0, "probs": 0.5,
                                          "output_dtype": tf.int32},
    "strided_slice": lambda: {"input_": tf.constant(_x23), "begin": [0, 1], "end": [2, 3], "strides": [1, 1]},
    "strided_slice_grad": lambda: {"shape": [2, 3], "begin": [0, 1], "end": [2, 3], "strides": [1, 1],
                                   "dy": tf.constant(_x23[:, 1:])},
    "dropout": lambda: {"x": tf.constant(_x23), "rate": 0.5, "noise_shape": [2, 3], "seed": 1},
    "eye": lambda: {"num_rows": 2, "num_columns": 3, "batch_shape": [2], "dtype": tf.float32},
    "one_hot": lambda: {"indices": tf.constant([0, 2]), "depth": 3, "axis": -1, "dtype": tf.float32},
    "unstack": lambda: {"value": tf.constant(_x23), "num": 2, "axis": 0},
    "split": lambda: {"value": tf.constant(_x23), "num_or_size_splits": [1, 2], "axis": 1, "num": 2},
    "diag": lambda: {"diagonal": tf.constant([1.0, 2.0]), "k": 0, "num_rows": 2},
    "linspace": lambda: {"start": 0.0, "stop": 1.0, "num": 3, "axis": 0},
    "argmax": lambda: {"input": tf.constant(_x23), "axis": 1, "output_type": tf.int64},
    "argmin": lambda: {"input": tf.constant(_x23), "axis": 1, "output_type": tf.int64},
    "count_nonzero": lambda: {"input": tf.constant(_x23), "axis": 1, "dtype": tf.int64},
    "norm": lambda: {"tensor": tf.constant(_x23), "axis": 1},
    # string ops (their specs call tf.strings.*): valid calls over a string tensor
    "reduce_join": lambda: {"inputs": tf.constant([["a", "b"], ["c", "d"]]), "axis": 1},
    "string_to_number": lambda: {"input": tf.constant(["1", "2.5"]), "out_type": tf.float32},
    # tf.image (core's image_ops; their specs call tf.image.*)
    "resize": lambda: {"images": tf.ones([1, 4, 4, 1]), "size": [2, 2]},
    "rot90": lambda: {"image": tf.ones([2, 3, 1]), "k": 1},
    "convert_image_dtype": lambda: {"image": tf.constant([0.5]), "dtype": tf.uint8},
    # tf.io (its specs call tf.io.*)
    "decode_png": lambda: {"contents": tf.io.encode_png(tf.zeros([2, 2, 3], tf.uint8)), "dtype": tf.uint8},
    "decode_image": lambda: {"contents": tf.io.encode_png(tf.zeros([2, 2, 3], tf.uint8)), "dtype": tf.uint8},
    "parse_tensor": lambda: {"serialized": tf.io.serialize_tensor(tf.constant([1.0])), "out_type": tf.float32},
    "extract_patches": lambda: {"images": tf.ones([1, 4, 4, 1]), "sizes": [1, 2, 2, 1], "strides": [1, 1, 1, 1],
                                "rates": [1, 1, 1, 1], "padding": "VALID"},
    # tf.signal (its specs call tf.signal.*)
    "hann_window": lambda: {"window_length": 4, "dtype": tf.float32},
    "hamming_window": lambda: {"window_length": 4, "dtype": tf.float32},
    "frame": lambda: {"signal": tf.constant(_x23), "frame_length": 2, "frame_step": 1, "axis": -1},
    "fftshift": lambda: {"x": tf.constant(_x23), "axes": [0, 1]},
    "ifftshift": lambda: {"x": tf.constant(_x23), "axes": [0, 1]},
    "dct": lambda: {"input": tf.constant(_x23), "axis": -1},
    "idct": lambda: {"input": tf.constant(_x23), "axis": -1},
}

# composite ops whose errors name the primitive that checks the argument, as TensorFlow's do
ALSO = {"zeros": {"Fill"}, "ones": {"Fill"}, "zeros_like": {"Fill"}, "ones_like": {"Fill"},
        "count_nonzero": {"Sum", "Cast"}, "reduce_std": {"ReduceVariance", "Mean"},
        "reduce_variance": {"Mean"}, "reduce_logsumexp": {"Max", "Sum"}, "reduce_euclidean_norm": {"Sum"},
        "squeeze": {"Reshape"}, "expand_dims": {"Reshape"}, "l2_normalize": {"Sum"}, "moments": {"Mean"},
        "norm": {"Sum", "Max", "EuclideanNorm"}, "clip_by_norm": {"Sum"}, "boolean_mask": {"Reshape"},
        "conv1d": {"Conv2D"}, "conv2d_transpose": {"Conv2DBackpropInput"}, "linspace": {"Range"},
        "dropout": {"RandomUniform"}}


def _plain_call(op):
    """kwargs of a valid call from the op's first plain spec (one run through the registered function)."""
    fn = REGISTRY[op].fn
    sig = inspect.signature(fn)
    for spec in (s for s in SPECS if s.op == op and s.fn is None):
        dtype = "float32" if "float32" in spec.dtypes else spec.dtypes[0]
        cases = spec.sample(np.random.default_rng(zlib.crc32(op.encode())), dtype)
        for args, kwargs in cases if isinstance(cases, list) else [cases]:
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError:
                continue
            call = {k: tf.constant(v) if isinstance(v, np.ndarray) and k not in WALKED else v
                    for k, v in bound.arguments.items()}
            return call
    return None


def _valid_call(op):
    if op in CALLS:
        return CALLS[op]()
    return _plain_call(op)


def _walked_params(op):
    params = inspect.signature(REGISTRY[op].fn).parameters
    return [(n, p) for n, p in params.items() if n in WALKED and (op, n) not in NOT_WALKED]


def _bad_values(op, name, param, valid):
    """(label, value) of each wrong class of value for a parameter."""
    if name in DTYPE:
        bad = [("str", "not_a_dtype"), ("float", 1.5), ("list", [tf.float32])]
    else:
        n = len(valid) if isinstance(valid, (list, tuple)) and valid else 1
        bad = [("float", 1.5), ("str", "1"), ("list of floats", [1.5] * n), ("list of strs", ["1"] * n),
               ("2**64", BIG if name in INT else [BIG] * n)]
    if param.default is not None and (op, name) not in NONE_OK:
        bad.append(("None", None))
    return bad


CASES = [(op, name, param) for op in sorted(REGISTRY) for name, param in _walked_params(op)]

def test_every_int_or_dtype_parameter_is_walked():
    missing = [f"{op}({name})" for op, name, _ in CASES if _valid_call(op) is None]
    assert not missing, (f"ops taking an int/int-list/dtype argument that the bad-input walk cannot call: {missing}. "
                         "Add a Spec without fn= in tests/specs/<family>.py, or an entry in CALLS in "
                         "tests/test_bad_input_registry.py (or, with a reason, in NOT_WALKED there).")


def test_the_valid_calls_run():
    """The walk's starting points are valid calls, so a raise below is the bad argument's doing."""
    for op in sorted({op for op, _, _ in CASES}):
        call = _valid_call(op)
        if call is not None:
            REGISTRY[op].fn(**call)


@pytest.mark.parametrize("op,name,param", CASES, ids=[f"{op}-{name}" for op, name, _ in CASES])
def test_wrong_python_types_raise_typed_errors_naming_the_op(op, name, param):
    call = _valid_call(op)
    assert call is not None, "see test_every_int_or_dtype_parameter_is_walked"
    names = {REGISTRY[op].tf_name} | ALSO.get(op, set())
    failures = []
    for label, value in _bad_values(op, name, param, call.get(name)):
        try:
            REGISTRY[op].fn(**{**call, name: value})
        except (TypeError, tf.errors.InvalidArgumentError) as e:
            if not any(f"[Op:{n}]" in str(e) for n in names):
                failures.append(f"{name}={label}: {type(e).__name__} not naming {sorted(names)}: {e}")
        except Exception as e:  # noqa: BLE001 - any other exception is the failure being reported
            failures.append(f"{name}={label}: {type(e).__name__}: {e}")
        else:
            failures.append(f"{name}={label} ({value!r:.30}) was accepted")
    assert not failures, f"{op}: " + "\n".join(failures)


def test_tensordot_axes():
    a = tf.constant(_x23)
    for bad in (1.5, "1", [[1.5], [0]], [["1"], ["0"]], None):
        with pytest.raises((TypeError, tf.errors.InvalidArgumentError), match=r"\[Op:Tensordot\]"):
            tf.tensordot(a, tf.transpose(a), bad)

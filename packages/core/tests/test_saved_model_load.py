"""tf.saved_model.load's ONNX importer: every supported ONNX op, on models built with onnx.helper, against
ONNX Runtime; unsupported ops fail at load time naming the op and the node."""
import os

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import tapeflow as tf
from tapeflow.core.saved_model.load import SUPPORTED_OPS, load_model

F = np.float32
_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
          np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64,
          np.dtype(np.bool_): TensorProto.BOOL, np.dtype(np.uint8): TensorProto.UINT8}


def _r(*shape, lo=-2.0, hi=2.0, seed=0):
    return np.random.default_rng(seed + len(shape) * 7 + sum(shape)).uniform(lo, hi, shape).astype(F)


def _i(*shape, lo=0, hi=4, dtype=np.int64, seed=1):
    return np.random.default_rng(seed + sum(shape)).integers(lo, hi, shape).astype(dtype)


def model_of(op, inputs, consts=(), attrs=None, n_out=1, opset=18, free_batch=True, out_names=None):
    """A one-node model: ``inputs`` (name -> array) are graph inputs (their first dimension free when
    ``free_batch``), ``consts`` (name -> array or None for an absent input) initializers, in the order
    inputs then consts."""
    consts = dict(consts)
    names = list(inputs) + list(consts)
    node_inputs = ["" if (n in consts and consts[n] is None) else n for n in names]
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    outs = out_names or [f"y{k}" for k in range(n_out)]
    node = helper.make_node(op, node_inputs, outs, name=f"the_{op.lower()}", **(attrs or {}))
    gin = []
    for n, a in inputs.items():
        shape = list(a.shape)
        if free_batch and shape:
            shape[0] = None
        gin.append(helper.make_tensor_value_info(n, _TYPES[a.dtype], shape))
    inits = [numpy_helper.from_array(np.asarray(a), n) for n, a in consts.items() if a is not None]
    gout = [helper.make_empty_tensor_value_info(o) for o in outs]
    g = helper.make_graph([node], f"g_{op}", gin, gout, initializer=inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def _typed(model):
    """``model`` with its outputs' types filled in by ONNX's shape inference (the checker wants them)."""
    inferred = onnx.shape_inference.infer_shapes(model)
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)
             if v.type.HasField("tensor_type")}
    for i, o in enumerate(model.graph.output):
        if not o.type.HasField("tensor_type") and o.name in known:
            model.graph.output[i].CopyFrom(known[o.name])
    return model


def check(model, feeds, rtol=1e-5, atol=1e-5):
    """The loaded model's outputs equal ONNX Runtime's (values, dtypes, shapes)."""
    onnx.checker.check_model(_typed(model))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)
    sig = load_model(model)
    got = sig(**{k: tf.constant(v) for k, v in feeds.items()})
    assert list(got) == [o.name for o in model.graph.output]
    for w, g in zip(want, got.values()):
        g = g.numpy()
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        if w.dtype.kind == "f":
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)
    return sig


X = _r(3, 4)
P = _r(3, 4, lo=0.1, hi=3.0)  # positive
U = _r(3, 4, lo=-0.9, hi=0.9)  # inside (-1, 1)
B1, B2 = _i(3, 4, hi=2).astype(bool), _i(3, 4, hi=2, seed=5).astype(bool)
IMG = _r(2, 3, 7, 6)

# (id, op, inputs, consts, attrs, extra) ; extra: n_out, opset, rtol/atol
CASES = [
    *[(op, op, {"x": X}, {}, {}, {}) for op in
      ("Abs", "Neg", "Exp", "Floor", "Ceil", "Sign", "Sin", "Cos", "Tan", "Atan", "Sinh", "Cosh", "Asinh",
       "Tanh", "Sigmoid", "Relu", "Erf", "Softplus", "Softsign", "Identity", "IsNaN", "Reciprocal")],
    ("Round", "Round", {"x": np.array([[0.5, 1.5, -2.5, 2.4, -0.6]], F)}, {}, {}, {}),
    *[(op, op, {"x": P}, {}, {}, {}) for op in ("Log", "Sqrt", "Acosh")],
    *[(op, op, {"x": U}, {}, {}, {}) for op in ("Asin", "Acos", "Atanh")],
    ("IsInf", "IsInf", {"x": np.array([[np.inf, -np.inf, 1.0, np.nan]], F)}, {}, {"detect_negative": 0}, {}),
    ("Not", "Not", {"x": B1}, {}, {}, {}),
    *[(op, op, {"a": X, "b": _r(4, seed=3)}, {}, {}, {}) for op in
      ("Add", "Sub", "Mul", "Div", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")],
    ("Div_int", "Div", {"a": _i(3, 4, lo=-9, hi=9)}, {"b": np.array([2, -3, 4, 5], np.int64)}, {}, {}),
    ("Mod", "Mod", {"a": _i(3, 4, lo=-9, hi=9)}, {"b": np.array([2, -3, 4, 5], np.int64)}, {}, {}),
    ("Mod_fmod", "Mod", {"a": X}, {"b": np.array([0.7, -1.1, 1.5, 0.3], F)}, {"fmod": 1}, {}),
    ("Pow", "Pow", {"a": P, "b": _r(3, 4, seed=4)}, {}, {}, {}),
    *[(op, op, {"a": B1, "b": B2}, {}, {}, {}) for op in ("And", "Or", "Xor")],
    *[(op, op, {"a": _i(3, 4, hi=64, dtype=np.int32), "b": _i(3, 4, hi=64, dtype=np.int32, seed=9)}, {}, {}, {})
      for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor")],
    ("BitwiseNot", "BitwiseNot", {"x": _i(3, 4, hi=64, dtype=np.int32)}, {}, {}, {}),
    ("BitShift", "BitShift", {"a": _i(3, 4, hi=64, dtype=np.uint8)}, {"b": np.array([1, 2, 0, 3], np.uint8)},
     {"direction": "LEFT"}, {}),
    *[(op, op, {"a": X, "b": _r(3, 4, seed=8), "c": _r(4, seed=9)}, {}, {}, {}) for op in ("Max", "Min", "Sum",
                                                                                           "Mean")],
    ("LeakyRelu", "LeakyRelu", {"x": X}, {}, {"alpha": 0.3}, {}),
    ("Elu", "Elu", {"x": X}, {}, {"alpha": 0.5}, {}),
    ("Selu", "Selu", {"x": X}, {}, {}, {}),
    ("HardSigmoid", "HardSigmoid", {"x": X}, {}, {"alpha": 0.3, "beta": 0.4}, {}),
    ("HardSwish", "HardSwish", {"x": _r(3, 4, lo=-5, hi=5)}, {}, {}, {}),
    ("PRelu", "PRelu", {"x": X}, {"slope": _r(4, seed=2)}, {}, {}),
    ("Gelu", "Gelu", {"x": X}, {}, {"approximate": "tanh"}, {"opset": 20}),
    ("Clip", "Clip", {"x": X}, {"lo": np.array(-0.5, F), "hi": np.array(1.0, F)}, {}, {}),
    ("Clip_max_only", "Clip", {"x": X}, {"lo": None, "hi": np.array(0.2, F)}, {}, {}),
    ("Where", "Where", {"c": B1, "a": X, "b": _r(3, 4, seed=5)}, {}, {}, {}),
    ("Cast", "Cast", {"x": X * 3}, {}, {"to": TensorProto.INT32}, {}),
    ("CastLike", "CastLike", {"x": X}, {"like": np.zeros([1], np.float64)}, {}, {}),
    ("Dropout", "Dropout", {"x": X}, {}, {}, {}),
    ("MatMul", "MatMul", {"a": _r(2, 3, 4)}, {"b": _r(4, 5)}, {}, {}),
    ("MatMul_vec", "MatMul", {"a": _r(2, 3, 4)}, {"b": _r(4)}, {}, {}),
    ("Gemm", "Gemm", {"a": _r(4, 3)}, {"b": _r(5, 4), "c": _r(5)}, {"transA": 1, "transB": 1, "alpha": 0.5,
                                                                      "beta": 2.0}, {}),
    ("Einsum", "Einsum", {"a": _r(2, 3, 4), "b": _r(2, 4, 5)}, {}, {"equation": "bij,bjk->bik"}, {}),
    *[(op, op, {"x": P}, {"axes": np.array([1], np.int64)}, {"keepdims": 0}, {}) for op in
      ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp", "ReduceSumSquare",
       "ReduceL1", "ReduceL2", "ReduceLogSum")],
    ("ReduceSum_all", "ReduceSum", {"x": X}, {}, {}, {}),
    ("ReduceMean_attr", "ReduceMean", {"x": _r(2, 3, 4)}, {}, {"axes": [-1, 1]}, {"opset": 17}),
    ("ArgMax", "ArgMax", {"x": X}, {}, {"axis": 1}, {}),
    ("ArgMin_last", "ArgMin", {"x": np.array([[1, 0, 0, 2], [3, 3, 1, 1]], F)}, {},
     {"axis": 1, "keepdims": 0, "select_last_index": 1}, {}),
    ("Softmax", "Softmax", {"x": _r(2, 3, 4)}, {}, {"axis": 1}, {}),
    ("LogSoftmax", "LogSoftmax", {"x": X}, {}, {}, {}),
    ("Softmax_opset11", "Softmax", {"x": _r(2, 3, 4)}, {}, {"axis": 1}, {"opset": 11}),
    ("CumSum", "CumSum", {"x": X}, {"axis": np.array(1, np.int64)}, {"exclusive": 1, "reverse": 1}, {}),
    ("TopK", "TopK", {"x": _r(3, 6)}, {"k": np.array([2], np.int64)}, {"axis": 1}, {"n_out": 2}),
    ("TopK_computed_k", "TopK", {"x": np.array([[3, 1, 3, 2, 1], [0, 5, 5, 5, 2]], F), "k": np.array([3], np.int64)},
     {}, {"axis": 1}, {"n_out": 2}),
    ("TopK_smallest", "TopK", {"x": _r(5, 3)}, {"k": np.array([2], np.int64)}, {"axis": 0, "largest": 0},
     {"n_out": 2, "free_batch": False}),
    ("Reshape", "Reshape", {"x": _r(2, 3, 4)}, {"s": np.array([0, -1, 2], np.int64)}, {}, {}),
    ("Flatten", "Flatten", {"x": _r(2, 3, 4)}, {}, {"axis": 2}, {}),
    ("Transpose", "Transpose", {"x": _r(2, 3, 4)}, {}, {"perm": [2, 0, 1]}, {}),
    ("Squeeze", "Squeeze", {"x": _r(2, 1, 4, 1)}, {"axes": np.array([1, -1], np.int64)}, {}, {}),
    ("Unsqueeze", "Unsqueeze", {"x": X}, {"axes": np.array([0, -1], np.int64)}, {}, {}),
    ("Concat", "Concat", {"a": X, "b": _r(3, 2)}, {}, {"axis": -1}, {}),
    ("Split", "Split", {"x": _r(3, 7)}, {"s": np.array([2, 5], np.int64)}, {"axis": 1}, {"n_out": 2}),
    ("Split_even", "Split", {"x": _r(3, 7)}, {}, {"axis": 1, "num_outputs": 3}, {"n_out": 3}),
    ("Slice", "Slice", {"x": _r(3, 8, 5)}, {"s": np.array([1, -1], np.int64), "e": np.array([7, -9**18], np.int64),
                                           "a": np.array([1, 2], np.int64), "k": np.array([2, -2], np.int64)},
     {}, {}),
    ("Shape", "Shape", {"x": _r(3, 4, 5)}, {}, {"start": 1}, {}),
    ("Size", "Size", {"x": _r(3, 4, 5)}, {}, {}, {"free_batch": False}),
    ("Expand", "Expand", {"x": _r(3, 1)}, {"s": np.array([2, 1, 4], np.int64)}, {}, {}),
    ("Tile", "Tile", {"x": X}, {"r": np.array([2, 3], np.int64)}, {}, {}),
    ("ConstantOfShape", "ConstantOfShape", {}, {"s": np.array([2, 3], np.int64)},
     {"value": numpy_helper.from_array(np.array([1.5], F))}, {}),
    ("Constant", "Constant", {}, {}, {"value_floats": [1.0, 2.5]}, {}),
    ("Range", "Range", {}, {"a": np.array(1, np.int64), "b": np.array(9, np.int64), "c": np.array(3, np.int64)},
     {}, {}),
    ("Pad", "Pad", {"x": X}, {"p": np.array([0, 1, 2, 0], np.int64), "v": np.array(7.0, F)}, {}, {}),
    ("Pad_reflect", "Pad", {"x": X}, {"p": np.array([0, 2, 0, 1], np.int64)}, {"mode": "reflect"}, {}),
    ("Pad_edge", "Pad", {"x": X}, {"p": np.array([1, 2, 0, 1], np.int64)}, {"mode": "edge"}, {}),
    ("Gather", "Gather", {"x": _r(3, 5)}, {"i": np.array([[0, -1], [4, 2]], np.int64)}, {"axis": 1}, {}),
    ("GatherElements", "GatherElements", {"x": _r(3, 5)}, {"i": _i(3, 2, hi=5)}, {"axis": 1}, {}),
    ("GatherND", "GatherND", {"x": _r(3, 4, 5)}, {"i": np.array([[1], [3], [0]], np.int64)}, {"batch_dims": 1}, {}),
    *[(f"ScatterND_{red}", "ScatterND", {"x": _r(4, 3)},
       {"i": np.array([[1], [3]], np.int64), "u": _r(2, 3, seed=6)}, {"reduction": red}, {})
      for red in ("none", "add", "max", "min")],
    ("OneHot", "OneHot", {"i": np.array([[1, 0], [3, -1]], np.int64)},
     {"d": np.array(4, np.int64), "v": np.array([0.0, 2.0], F)}, {"axis": 1}, {}),
    ("Det", "Det", {"x": _r(2, 3, 3)}, {}, {}, {"rtol": 1e-4, "atol": 1e-5}),
    ("NonZero", "NonZero", {"x": np.array([[1, 0, 2], [0, 3, 0]], F)}, {}, {}, {"free_batch": False}),
    ("BatchNormalization", "BatchNormalization", {"x": IMG},
     {"s": _r(3, seed=1), "b": _r(3, seed=2), "m": _r(3, seed=3), "v": _r(3, lo=0.5, hi=2, seed=4)},
     {"epsilon": 1e-3}, {}),
    ("LayerNormalization", "LayerNormalization", {"x": _r(2, 3, 4)}, {"s": _r(3, 4, seed=1), "b": _r(4, seed=2)},
     {"axis": -2}, {"rtol": 1e-4, "atol": 1e-5}),
    ("InstanceNormalization", "InstanceNormalization", {"x": IMG}, {"s": _r(3, seed=1), "b": _r(3, seed=2)}, {},
     {"rtol": 1e-4, "atol": 1e-5}),
    ("GlobalAveragePool", "GlobalAveragePool", {"x": IMG}, {}, {}, {}),
    ("GlobalMaxPool", "GlobalMaxPool", {"x": IMG}, {}, {}, {}),
    ("Conv", "Conv", {"x": IMG}, {"w": _r(4, 3, 3, 2), "b": _r(4)}, {"pads": [1, 0, 2, 1], "strides": [2, 1]},
     {"rtol": 1e-4, "atol": 1e-4}),
    ("Conv_same", "Conv", {"x": IMG}, {"w": _r(4, 3, 3, 2)}, {"auto_pad": "SAME_UPPER", "strides": [2, 2]},
     {"rtol": 1e-4, "atol": 1e-4}),
    ("Conv_dilated", "Conv", {"x": IMG}, {"w": _r(4, 3, 3, 3)}, {"dilations": [2, 1], "pads": [2, 1, 2, 1]},
     {"rtol": 1e-4, "atol": 1e-4}),
    ("Conv_depthwise", "Conv", {"x": IMG}, {"w": _r(6, 1, 3, 3)}, {"group": 3, "pads": [1, 1, 1, 1]},
     {"rtol": 1e-4, "atol": 1e-4}),
    ("Conv_grouped", "Conv", {"x": _r(2, 4, 5, 5)}, {"w": _r(6, 2, 2, 2)}, {"group": 2},
     {"rtol": 1e-4, "atol": 1e-4}),
    ("Conv_1d", "Conv", {"x": _r(2, 3, 9)}, {"w": _r(4, 3, 3)}, {"auto_pad": "SAME_LOWER", "strides": [2]},
     {"rtol": 1e-4, "atol": 1e-4, "free_batch": False}),
    ("ConvTranspose", "ConvTranspose", {"x": _r(2, 3, 4, 5)}, {"w": _r(3, 2, 3, 3), "b": _r(2)},
     {"strides": [2, 2], "pads": [1, 0, 0, 1], "output_padding": [1, 0]}, {"rtol": 1e-4, "atol": 1e-4}),
    ("ConvTranspose_dilated_1d", "ConvTranspose", {"x": _r(2, 3, 6)}, {"w": _r(3, 4, 2)},
     {"strides": [3], "dilations": [2], "pads": [3, 2]}, {"rtol": 1e-4, "atol": 1e-4}),
    ("MaxPool", "MaxPool", {"x": IMG}, {}, {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1]}, {}),
    ("MaxPool_ceil", "MaxPool", {"x": IMG}, {}, {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1}, {}),
    ("AveragePool", "AveragePool", {"x": IMG}, {}, {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, {}),
    ("AveragePool_incl", "AveragePool", {"x": IMG}, {},
     {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "count_include_pad": 1}, {}),
    ("AveragePool_same", "AveragePool", {"x": IMG}, {}, {"kernel_shape": [2, 3], "strides": [2, 2],
                                                         "auto_pad": "SAME_UPPER"}, {}),
    ("Resize_linear", "Resize", {"x": _r(2, 5, 6, 3)}, {"roi": None, "sc": None, "sz": np.array([2, 9, 4, 3],
                                                                                                np.int64)},
     {"mode": "linear", "coordinate_transformation_mode": "half_pixel"}, {"free_batch": False}),
    ("Resize_nearest_nchw", "Resize", {"x": _r(2, 3, 4, 5)}, {"roi": None, "sc": np.array([1, 1, 2, 1.5], F)},
     {"mode": "nearest", "coordinate_transformation_mode": "tf_half_pixel_for_nn", "nearest_mode": "floor"},
     {"free_batch": False}),
    ("Resize_cubic_down_antialias", "Resize", {"x": _r(2, 9, 8, 3)},
     {"roi": None, "sc": None, "sz": np.array([2, 4, 5, 3], np.int64)},
     {"mode": "cubic", "coordinate_transformation_mode": "half_pixel", "cubic_coeff_a": -0.5, "exclude_outside": 1,
      "antialias": 1}, {"free_batch": False, "rtol": 1e-4, "atol": 1e-5}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_onnxruntime(case):
    _, op, inputs, consts, attrs, extra = case
    extra = dict(extra)
    tol = {k: extra.pop(k) for k in ("rtol", "atol") if k in extra}
    model = model_of(op, inputs, consts, attrs, **extra)
    check(model, inputs, **tol)


def test_every_supported_op_has_a_case():
    covered = {c[1] for c in CASES} | {"If", "Loop"}
    assert covered == set(SUPPORTED_OPS)


def test_every_op_the_exporter_emits_is_supported():
    from tapeflow.core.saved_model import onnx_ops

    assert set(onnx_ops.ONNX_OPS) <= set(SUPPORTED_OPS), set(onnx_ops.ONNX_OPS) - set(SUPPORTED_OPS)


def test_several_batch_sizes_one_trace():
    model = model_of("Gemm", {"a": _r(4, 3)}, {"b": _r(3, 5), "c": _r(5)})
    sig = check(model, {"a": _r(1, 3)})
    for n in (1, 3, 8):
        check(model, {"a": _r(n, 3, seed=n)})
        assert sig(a=tf.constant(_r(n, 3)))["y0"].shape == (n, 5)
    assert sig.concrete_function.graph.inputs[0].shape.as_list() == [None, 3]


def _graph(nodes, inputs, outputs, inits=(), name="g"):
    return helper.make_graph(nodes, name, inputs, outputs, initializer=list(inits))


def _vi(name, dtype=TensorProto.FLOAT, shape=None):
    if shape is None:
        return helper.make_empty_tensor_value_info(name)
    return helper.make_tensor_value_info(name, dtype, shape)


def test_dynamic_reshape_from_shape_arithmetic():
    """Other tools' exports compute a Reshape's target from Shape: the known entries are used, the free batch -1."""
    shape_const = numpy_helper.from_array(np.array([-1], np.int64), "minus1")
    idx0 = numpy_helper.from_array(np.array([0], np.int64), "i0")
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "i0"], ["batch"], axis=0),
             helper.make_node("Concat", ["batch", "minus1"], ["target"], axis=0),
             helper.make_node("Reshape", ["x", "target"], ["flat"]),
             helper.make_node("Shape", ["flat"], ["fs"]),
             helper.make_node("ConstantOfShape", ["fs"], ["ones"],
                              value=numpy_helper.from_array(np.array([1.0], F))),
             helper.make_node("Add", ["flat", "ones"], ["y"]),
             helper.make_node("Expand", ["flat", "fs"], ["e"])]
    g = _graph(nodes, [_vi("x", shape=[None, 3, 4])], [_vi("y"), _vi("e")], [shape_const, idx0])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    for n in (1, 5):
        check(model, {"x": _r(n, 3, 4)})


def test_if_maps_to_cond_and_runs_the_branch_taken():
    then_g = _graph([helper.make_node("Mul", ["x", "two"], ["t"])], [], [_vi("t")],
                    [numpy_helper.from_array(np.array(2.0, F), "two")], "then")
    else_g = _graph([helper.make_node("Neg", ["x"], ["e"])], [], [_vi("e")], name="else")
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Greater", ["s", "zero"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    g = _graph(nodes, [_vi("x", shape=[None, 2])], [_vi("y")], [numpy_helper.from_array(np.array(0.0, F), "zero")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sig = check(model, {"x": np.array([[1.0, 2.0]], F)})
    check(model, {"x": np.array([[-1.0, 0.5], [0.0, -3.0]], F)})
    assert any(n.prim.name == "branch" for n in sig.graph.nodes)


def test_loop_maps_to_while_loop():
    """for i < M while cond: acc = acc * x + i (x from the outer scope): ONNX Loop, a trip count and a condition."""
    body = _graph([helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
                   helper.make_node("Mul", ["acc_in", "x"], ["m"]),
                   helper.make_node("Add", ["m", "fi"], ["acc_out"]),
                   helper.make_node("ReduceSum", ["acc_out"], ["tot"], keepdims=0),
                   helper.make_node("Less", ["tot", "limit"], ["c_out"])],
                  [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []), _vi("acc_in", shape=[None, 2])],
                  [_vi("c_out", TensorProto.BOOL, []), _vi("acc_out", shape=[None, 2])], name="body")
    nodes = [helper.make_node("Loop", ["M", "c0", "acc0"], ["acc"], body=body)]
    inits = [numpy_helper.from_array(np.array(6, np.int64), "M"), numpy_helper.from_array(np.array(True), "c0"),
             numpy_helper.from_array(np.array(50.0, F), "limit")]
    g = _graph(nodes, [_vi("x", shape=[None, 2]), _vi("acc0", shape=[None, 2])], [_vi("acc", shape=[None, 2])], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sig = check(model, {"x": np.array([[1.5, 0.5]], F), "acc0": np.array([[1.0, 1.0]], F)})
    check(model, {"x": np.array([[0.1, 0.2], [0.3, 0.4]], F), "acc0": np.zeros([2, 2], F)})
    assert any(n.prim.name == "while_loop" for n in sig.graph.nodes)


def test_loop_carried_value_may_grow():
    """A loop-carried value whose shape changes across iterations (the body declares it [None, 2]): Concat."""
    body = _graph([helper.make_node("Concat", ["acc_in", "x"], ["acc_out"], axis=0),
                   helper.make_node("Identity", ["c_in"], ["c_out"])],
                  [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []), _vi("acc_in", shape=[None, 2])],
                  [_vi("c_out", TensorProto.BOOL, []), _vi("acc_out", shape=[None, 2])], name="body")
    nodes = [helper.make_node("Loop", ["M", "", "x"], ["acc"], body=body)]
    g = _graph(nodes, [_vi("x", shape=[2, 2])], [_vi("acc", shape=[None, 2])],
               [numpy_helper.from_array(np.array(3, np.int64), "M")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sig = check(model, {"x": _r(2, 2)})
    assert sig(x=tf.constant(_r(2, 2)))["acc"].shape == (8, 2)


def test_loop_scan_outputs_are_stacked():
    """ONNX Loop's scan outputs (each iteration's value stacked along a new first axis), as tools write RNNs."""
    body = _graph([helper.make_node("Mul", ["h_in", "w"], ["m"]),
                   helper.make_node("Tanh", ["m"], ["h_out"]),
                   helper.make_node("ReduceSum", ["h_out"], ["total"], keepdims=0),
                   helper.make_node("Identity", ["c_in"], ["c_out"])],
                  [_vi("i", TensorProto.INT64, []), _vi("c_in", TensorProto.BOOL, []), _vi("h_in", shape=[3])],
                  [_vi("c_out", TensorProto.BOOL, []), _vi("h_out", shape=[3]), _vi("h_seq", shape=[3]),
                   _vi("total", shape=[])], name="body")
    body.node.append(helper.make_node("Identity", ["h_out"], ["h_seq"]))
    nodes = [helper.make_node("Loop", ["M", "", "h0"], ["h", "hs", "totals"], body=body)]
    g = _graph(nodes, [_vi("h0", shape=[3]), _vi("w", shape=[3])],
               [_vi("h", shape=[3]), _vi("hs", shape=[None, 3]), _vi("totals", shape=[None])],
               [numpy_helper.from_array(np.array(4, np.int64), "M")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sig = check(model, {"h0": np.array([0.5, -1.0, 2.0], F), "w": np.array([1.5, 0.5, -1.0], F)},
                rtol=1e-6, atol=1e-6)
    assert sig(h0=tf.constant([0.5, -1.0, 2.0]), w=tf.constant([1.5, 0.5, -1.0]))["hs"].shape == (4, 3)


def test_loaded_graph_is_compiled_and_fused():
    """A ConcreteFunction like a traced one: the element-wise chain runs as one fused kernel."""
    nodes = [helper.make_node("Mul", ["x", "x"], ["a"]), helper.make_node("Neg", ["a"], ["b"]),
             helper.make_node("Exp", ["b"], ["c"]), helper.make_node("Add", ["c", "x"], ["y"])]
    g = _graph(nodes, [_vi("x", shape=[None, 3])], [_vi("y")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sig = check(model, {"x": _r(4, 3)})
    assert [n.prim.name for n in sig.graph.nodes] == ["fused_elementwise"]


def test_constant_subgraphs_are_computed_at_load():
    """Nodes over initializers only (here a transpose and a scale of the weight) run once, when the model loads."""
    nodes = [helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
             helper.make_node("Mul", ["wt", "half"], ["ws"]),
             helper.make_node("MatMul", ["x", "ws"], ["y"])]
    inits = [numpy_helper.from_array(_r(5, 3), "w"), numpy_helper.from_array(np.array(0.5, F), "half")]
    g = _graph(nodes, [_vi("x", shape=[None, 3])], [_vi("y")], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    sig = check(model, {"x": _r(2, 3)})
    assert [n.prim.name for n in sig.graph.nodes] == ["matmul"]


def test_unsupported_op_fails_at_load_naming_op_and_node():
    model = model_of("Hardmax", {"x": X})
    with pytest.raises(tf.errors.UnimplementedError, match=r"Hardmax.*'the_hardmax'"):
        load_model(model)


def test_unsupported_op_inside_a_subgraph_fails_at_load():
    then_g = _graph([helper.make_node("Hardmax", ["x"], ["t"], name="inner")], [], [_vi("t")], name="then")
    else_g = _graph([helper.make_node("Identity", ["x"], ["e"])], [], [_vi("e")], name="else")
    nodes = [helper.make_node("If", ["c"], ["y"], name="branchy", then_branch=then_g, else_branch=else_g)]
    g = _graph(nodes, [_vi("x", shape=[2]), _vi("c", TensorProto.BOOL, [])], [_vi("y")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    with pytest.raises(tf.errors.UnimplementedError, match=r"Hardmax.*'branchy/inner'"):
        load_model(model)


def test_op_of_another_domain_fails_at_load():
    node = helper.make_node("FusedMatMul", ["a", "a"], ["y"], name="ms", domain="com.microsoft")
    g = _graph([node], [_vi("a", shape=[2, 2])], [_vi("y")])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18), helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(tf.errors.UnimplementedError, match=r"FusedMatMul \(domain 'com.microsoft'\).*'ms'"):
        load_model(model)


def test_unsupported_attribute_is_a_typed_error_naming_the_node():
    model = model_of("Pad", {"x": X}, {"p": np.array([0, 1, 0, 1], np.int64)}, {"mode": "wrap"}, opset=19)
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"'the_pad' \(Pad\).*mode 'wrap'.*allowed"):
        load_model(model)


def test_load_a_file_and_a_directory(tmp_path):
    model = model_of("Relu", {"x": X}, out_names=["out"])
    path = tmp_path / "relu.onnx"
    onnx.save(model, str(path))
    for where in (path, tmp_path):
        loaded = tf.saved_model.load(str(where))
        assert list(loaded.signatures) == ["serving_default"]
        np.testing.assert_array_equal(loaded(tf.constant(X)).numpy(), np.maximum(X, 0))
        np.testing.assert_array_equal(loaded.signatures["serving_default"](x=tf.constant(X))["out"].numpy(),
                                      np.maximum(X, 0))


def test_signature_arguments_are_checked():
    sig = load_model(model_of("Relu", {"x": X}))
    with pytest.raises(TypeError, match="by keyword"):
        sig(tf.constant(X))
    with pytest.raises(TypeError, match=r"missing \['x'\]"):
        sig(z=tf.constant(X))
    with pytest.raises(TypeError):
        sig(x=tf.constant(_r(3, 5)))  # the signature's shape is [None, 4]


def test_missing_directory_and_bad_file(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf.saved_model.load(str(tmp_path / "nothing"))
    with pytest.raises(tf.errors.NotFoundError, match="no"):
        tf.saved_model.load(str(tmp_path))
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"not a model")
    with pytest.raises(tf.errors.DataLossError):
        tf.saved_model.load(str(bad))


def test_loaded_signature_inside_tf_function():
    sig = load_model(model_of("Softmax", {"x": X}))

    @tf.function
    def f(x):
        return sig(x=x * 2.0)["y0"] + 1.0

    got = f(tf.constant(X)).numpy()
    e = np.exp(2 * X - (2 * X).max(1, keepdims=True))
    np.testing.assert_allclose(got, e / e.sum(1, keepdims=True) + 1.0, rtol=1e-5)


def test_external_data_is_read(tmp_path):
    w = _r(64, 64)
    model = model_of("MatMul", {"x": _r(2, 64)}, {"w": w})
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    assert os.path.exists(tmp_path / "weights.bin")
    loaded = tf.saved_model.load(str(tmp_path / "m.onnx"))
    x = _r(2, 64)
    np.testing.assert_allclose(loaded(tf.constant(x)).numpy(), x @ w, rtol=1e-5, atol=1e-5)


def test_trainable_initializers_become_variables_shared_by_signatures(tmp_path):
    """Initializers the manifest lists under ``trainable_variables`` load as tf.Variables (read by reference:
    an assignment changes what every signature computes), the others as constants."""
    from tapeflow.core.saved_model.export import FORMAT, FORMAT_VERSION, MANIFEST

    w = _r(3, 2)
    one = model_of("MatMul", {"x": _r(2, 3)}, {"w": w}, out_names=["y"])
    two = model_of("Gemm", {"x": _r(2, 3)}, {"w": w, "c": np.ones([2], F)}, {"alpha": 2.0}, out_names=["y"])
    onnx.save(one, str(tmp_path / "one.onnx"))
    onnx.save(two, str(tmp_path / "two.onnx"))
    io = {"inputs": [{"name": "x", "dtype": "float32", "shape": [None, 3]}],
          "outputs": [{"name": "y", "dtype": "float32", "shape": [None, 2]}], "output_structure": "y",
          "trainable_variables": ["w"]}
    manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "default_signature": "one",
                "signatures": {"one": {"file": "one.onnx", **io}, "two": {"file": "two.onnx", **io}}}
    (tmp_path / MANIFEST).write_text(__import__("json").dumps(manifest))
    loaded = tf.saved_model.load(str(tmp_path))
    assert [v.name.split(":")[0] for v in loaded.trainable_variables] == ["w"]
    x = _r(4, 3, seed=3)
    np.testing.assert_allclose(loaded(tf.constant(x)).numpy(), x @ w, rtol=1e-5)
    loaded.trainable_variables[0].assign(w * 3)
    np.testing.assert_allclose(loaded(tf.constant(x)).numpy(), x @ (w * 3), rtol=1e-5)
    np.testing.assert_allclose(loaded.signatures["two"](x=tf.constant(x))["y"].numpy(), 2 * x @ (w * 3) + 1,
                               rtol=1e-5)


def test_manifest_of_another_format_is_refused(tmp_path):
    onnx.save(model_of("Relu", {"x": X}), str(tmp_path / "a.onnx"))
    from tapeflow.core.saved_model.export import MANIFEST

    (tmp_path / MANIFEST).write_text('{"format": "something-else", "format_version": 1, "signatures": {}}')
    with pytest.raises(tf.errors.InvalidArgumentError, match="something-else"):
        tf.saved_model.load(str(tmp_path))


def test_tags_and_options(tmp_path):
    onnx.save(model_of("Relu", {"x": X}), str(tmp_path / "m.onnx"))
    for tags in ("serve", ["serve"], {"serve"}):
        assert tf.saved_model.load(str(tmp_path), tags=tags).signatures
    with pytest.raises(ValueError, match="one tag set"):
        tf.saved_model.load(str(tmp_path), tags=["train"])
    with pytest.raises(TypeError, match="tags"):
        tf.saved_model.load(str(tmp_path), tags=3)
    with pytest.raises(ValueError, match="options"):
        tf.saved_model.load(str(tmp_path), options=object())

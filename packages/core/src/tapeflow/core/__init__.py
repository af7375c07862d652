"""tapeflow.core: tensors, dtypes, devices, the op registry and every core op."""
from __future__ import annotations

__version__ = "0.1.0"

from . import dtypes, errors, devices  # noqa: F401
from .dtypes import (DType, as_dtype, bfloat16, bool_, float16, float32, float64, int8, int16, int32,  # noqa: F401
                     int64, string, uint8, complex64, complex128)
from .tensor import Tensor, TensorShape, constant, convert_to_tensor  # noqa: F401
from .devices import device, list_devices  # noqa: F401
from .dispatch import REGISTRY, hooks, register  # noqa: F401
from . import ops as _ops
from .ops import *  # noqa: F401,F403
from .ops import range_ as range  # noqa: F401,A001
from .variables import IndexedSlices, Variable  # noqa: F401
from . import nest  # noqa: F401
from .tensor_spec import TensorSpec  # noqa: F401
from .function import defun, function, init_scope  # noqa: F401
from .module import Module  # noqa: F401
from .control_flow import case, cond, switch_case, while_loop  # noqa: F401
from .everyday import (Assert, control_dependencies, executing_eagerly, foldl, foldr, get_current_name_scope,  # noqa: F401
                       get_logger, get_static_value, group, inside_function, is_tensor, map_fn, name_scope, no_op,
                       numpy_function, py_function, scan)
from . import version  # noqa: F401
from .init_ops import (constant_initializer, ones_initializer, random_normal_initializer,  # noqa: F401
                       random_uniform_initializer, zeros_initializer)
from .ops import everyday_ops as _everyday_ops
from .ops.everyday_ops import *  # noqa: F401,F403
from .debugging import assert_equal, assert_greater, assert_less, assert_rank  # noqa: F401
from .printing import print_  # noqa: F401  (tf.print: the facade maps it, so no module's print is shadowed)

bool = bool_  # noqa: A001  (tf.bool, as TensorFlow spells it)
half, double = float16, float64

# what `import tapeflow as tf` shows: tensors, dtypes, devices, variables and the ops
# (the registry, hooks and module internals stay under tapeflow.core)
__all__ = ["DType", "as_dtype", "bfloat16", "bool", "bool_", "double", "float16", "float32", "float64", "half",
           "int8", "int16", "int32", "int64", "uint8", "string", "complex64", "complex128", "Tensor", "TensorShape",
           "constant", "convert_to_tensor",
           "device", "list_devices", "IndexedSlices", "Variable", "range", "dtypes", "errors", "nest", "TensorSpec",
           "function", "defun", "init_scope", "Module", "cond", "case", "switch_case", "while_loop",
           "Assert", "control_dependencies", "executing_eagerly", "foldl", "foldr", "get_current_name_scope",
           "get_logger", "get_static_value", "group", "inside_function", "is_tensor", "map_fn", "name_scope",
           "no_op", "numpy_function", "py_function", "scan", "version", "assert_equal", "assert_greater",
           "assert_less", "assert_rank", "constant_initializer", "ones_initializer", "random_normal_initializer",
           "random_uniform_initializer", "zeros_initializer"] + list(_everyday_ops.__all__) + [
    n for n in _ops.__all__ if n != "range_"]

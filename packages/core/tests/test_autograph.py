"""AutoGraph: the converted function keeps Python's semantics (eagerly, with Python values and eager
tensors), and while a graph is traced tensor-dependent if/while/for become cond/while_loop."""
import functools
import inspect
import traceback

import pytest

import tapeflow as tf
from tapeflow.core import autograph
from tapeflow.core.autograph import ConversionError

# ---- a battery of functions: the converted copy must give what the original gives ------------------------


def if_elif_else(x):
    if x > 5:
        y = x * 2
    elif x > 2:
        y = x + 100
    elif x == 0:
        return -1
    else:
        y = x - 1
    return y


def while_count(x):
    n = 0
    while x > 1:
        x = x // 2
        n += 1
    return n, x


def collatz(a):
    counter = 0
    while not tf.equal(a, 1):
        if tf.equal(a % 2, 0):
            a = a // 2
        else:
            a = 3 * a + 1
        counter += 1
    return a, counter


def for_range_break_continue(n):
    total = 0
    for i in range(n):
        if i % 3 == 0:
            continue
        if total > 20:
            break
        total += i
    return total


def for_else(xs, stop):
    found = -1
    for i, v in enumerate(xs):
        if v == stop:
            found = i
            break
    else:
        found = 99
    return found


def return_in_loop(x, limit):
    i = 0
    while i < limit:
        if i * x > 10:
            return i
        i += 1
    return -i


def return_in_nested_loops(n):
    for i in range(n):
        for j in range(n):
            if i * j == 6:
                return i, j
            if j > i:
                break
    return None


def nested_loops_continue(n):
    out = []
    for i in range(n):
        j = 0
        while j < i:
            j += 1
            if j == 2:
                continue
            out.append(i * 10 + j)
    return out


def bool_ops(x, y):
    if x > 0 and not y < 0 or x == -5:
        r = 1
    else:
        r = 0
    z = x and y
    w = (x > 100) or y
    return r, z, w


def early_return_only_in_if(x):
    if x > 0:
        return x
    x = x * 3
    return x + 1


def no_return(xs):
    for v in xs:
        if v:
            xs.append(0)
            break


def while_else(n):
    while n > 0:
        n -= 2
        if n == 3:
            break
    else:
        n = 100
    return n


def deep(x):
    acc = 0
    for i in range(4):
        if i == 1:
            continue
        j = 0
        while True:
            j += 1
            if j > i:
                break
            if x > 2:
                if j == 2:
                    continue
                acc += j
            else:
                acc -= 1
        if acc > 7:
            return acc, i
    return acc, -1


def for_over_tensor(t):
    s = 0
    for row in t:
        s += tf.reduce_sum(row)
    return s


def comprehension_and_lambda(n):
    sq = [i * i for i in range(n) if i % 2]
    f = lambda v: v + 1  # noqa: E731
    return [f(v) for v in sq]


def helper_double(x):
    if x > 0:
        return x * 2
    return x


def calls_helper(x):
    return helper_double(x) + helper_double(-x)


def _values(r):
    if isinstance(r, tf.Tensor):
        return r.numpy().tolist()
    if isinstance(r, (tuple, list)):
        return type(r)(_values(v) for v in r)
    return r


CASES = [
    (if_elif_else, [(7,), (3,), (0,), (1,), (tf.constant(7),), (tf.constant(3),), (tf.constant(0),)]),
    (while_count, [(1,), (37,), (tf.constant(37),), (tf.constant(1.5),)]),
    (collatz, [(tf.constant(12),), (tf.constant(6),), (tf.constant(1),)]),
    (for_range_break_continue, [(0,), (5,), (20,)]),
    (for_else, [([1, 2, 3], 2), ([1, 2, 3], 7), ([], 1)]),
    (return_in_loop, [(1, 20), (5, 3), (0, 4), (tf.constant(3), 10)]),
    (return_in_nested_loops, [(2,), (5,)]),
    (nested_loops_continue, [(5,)]),
    (bool_ops, [(1, 2), (-5, 0), (0, -1), (3, -2), (tf.constant(1), tf.constant(2)),
                (tf.constant(-5), tf.constant(0))]),
    (early_return_only_in_if, [(2,), (-2,), (tf.constant(-2.0),)]),
    (no_return, [([0, 1],), ([0, 0],)]),
    (while_else, [(9,), (8,), (0,)]),
    (deep, [(0,), (3,), (tf.constant(3),)]),
    (for_over_tensor, [(tf.constant([[1, 2], [3, 4]]),), ([1, 2, 3],)]),
    (comprehension_and_lambda, [(6,)]),
    (calls_helper, [(3,), (tf.constant(-4),)]),
]


@pytest.mark.parametrize("fn,calls", CASES, ids=[c[0].__name__ for c in CASES])
def test_converted_function_has_python_semantics(fn, calls):
    conv = autograph.convert(fn)
    assert conv is not fn and autograph.is_converted(conv)
    for args in calls:
        assert _values(conv(*args)) == _values(fn(*args)), args


def test_conversion_really_rewrites_the_statements(monkeypatch):
    """The converted code calls the runtime helpers (so the battery above is not the original code)."""
    from tapeflow.core.autograph import runtime
    seen = []
    for name in ("if_stmt", "while_stmt", "for_stmt"):
        orig = getattr(runtime, name)
        monkeypatch.setattr(runtime, name, functools.partial(lambda o, n, *a: (seen.append(n), o(*a))[1], orig, name))
    autograph.convert(deep)(3)
    assert {"if_stmt", "while_stmt", "for_stmt"} <= set(seen)


def test_calls_are_converted_recursively_but_not_tapeflow_numpy_or_stdlib():
    import numpy as np
    import os.path
    assert autograph.convert(tf.reduce_sum) is tf.reduce_sum
    assert autograph.convert(np.mean) is np.mean
    assert autograph.convert(os.path.join) is os.path.join
    assert autograph.convert(len) is len
    conv = autograph.convert(calls_helper)
    assert conv(3) == 6 - 3
    assert autograph.is_converted(autograph.convert(helper_double))
    assert autograph.convert(helper_double) is autograph.convert(helper_double)  # cached


def test_do_not_convert():
    @autograph.do_not_convert
    def plain(x):
        if x > 0:
            return 1
        return 0

    assert autograph.convert(plain) is plain
    assert autograph.convert(plain)(3) == 1


def test_source_not_available_runs_unconverted():
    namespace = {}
    exec("def g(x):\n    if x:\n        return 1\n    return 2\n", namespace)
    g = namespace["g"]
    assert autograph.convert(g) is g
    lam = eval("lambda x: x + 1")
    assert autograph.convert(lam) is lam


def _make_closure():
    count = 0
    scale = 3

    def bump(x):
        nonlocal count
        for _ in range(x):
            if scale > 2:
                count += scale
        return count

    return bump


def test_closures_and_nonlocal_write_through():
    bump = _make_closure()
    conv = autograph.convert(bump)
    assert conv(2) == 6
    assert bump(1) == 9  # the converted function wrote the same cell the original reads
    assert conv(1) == 12


def test_nested_function_defined_inside_is_converted():
    def outer(n):
        def inner(k):
            s = 0
            while k > 0:
                s += k
                k -= 1
            return s

        if n > 1:
            return inner(n)
        return inner(1) - 10

    conv = autograph.convert(outer)
    assert [conv(n) for n in (0, 1, 4)] == [outer(n) for n in (0, 1, 4)]


class Base:
    def scale(self, x):
        return x * 10


class Child(Base):
    factor = 2

    def scale(self, x, extra=1, *, bias=0):
        if x > 0:
            y = super().scale(x)
        else:
            y = -super().scale(-x)
        for _ in range(extra):
            y += self.factor
        return y + bias

    def __call__(self, x):
        if x > 1:
            return self.scale(x)
        return 0


def test_methods_super_defaults_and_callable_objects():
    c = Child()
    conv = autograph.convert(c.scale)
    assert conv.__self__ is c
    for args, kwargs in [((3,), {}), ((-2,), {"bias": 5}), ((1, 3), {})]:
        assert conv(*args, **kwargs) == c.scale(*args, **kwargs)
    call = autograph.convert(c)
    assert call(5) == c(5) and call(0) == 0


def _decorator(fn):
    fn.tagged = True
    return fn


@_decorator
def decorated(x):
    if x > 0:
        return "pos"
    return "neg"


def test_decorators_are_stripped_when_recompiling():
    conv = autograph.convert(decorated)
    assert conv.tagged and conv(1) == "pos" and conv(-1) == "neg"


def _raises_inside(x):
    if x > 0:
        for i in range(3):
            if i == 2:
                raise KeyError("deep")  # the line the traceback must name
    return x


def test_tracebacks_point_at_the_users_file_and_line():
    conv = autograph.convert(_raises_inside)
    with pytest.raises(KeyError) as info:
        conv(1)
    frame = traceback.extract_tb(info.tb)[-1]
    src, first = inspect.getsourcelines(_raises_inside)
    line = first + next(i for i, s in enumerate(src) if "raise KeyError" in s)
    assert frame.filename == __file__ and frame.lineno == line
    assert "raise KeyError" in frame.line


def _generator(n):
    for i in range(n):
        yield i


def test_generator_is_an_error_naming_file_and_line():
    src, first = inspect.getsourcelines(_generator)
    with pytest.raises(ConversionError, match=rf"test_autograph.py:{first + 2}: a generator \(yield\)"):
        autograph.convert(_generator)


def _uses_generator(n):
    total = 0
    for v in _generator(n):
        total += v
    return total


def test_generator_called_from_converted_code_runs_as_written():
    assert autograph.convert(_uses_generator)(4) == 6


def test_undefined_variable_keeps_pythons_error():
    def f(x):
        if x > 0:
            y = 1
        return y

    conv = autograph.convert(f)
    assert conv(1) == 1
    with pytest.raises(UnboundLocalError, match="'y'"):
        conv(-1) + 1


# ---- graph mode: errors raised before any graph control flow is built -----------------------------------

def _symbolic(dtype, shape=()):
    from tapeflow.core.devices import default_device
    from tapeflow.core.runner import symbolic
    return symbolic(shape, dtype, default_device())


def _trace(fn, *args):
    from tapeflow.core.runner import Graph, tracing
    with tracing(Graph()):
        return autograph.convert(fn)(*args)


def _line_of(fn, text):
    src, first = inspect.getsourcelines(fn)
    return first + next(i for i, s in enumerate(src) if text in s)


def _defined_in_loop(x):
    while x > 0:
        y = x * 2
        x = x - 1
    return y


def _list_in_loop(x):
    values = []
    while x > 0:
        values.append(x)
        x = x - 1
    return values


def _try_around_loop(x):
    try:
        while x > 0:
            x = x - 1
    except ValueError:
        x = 0
    return x


def test_variable_first_defined_in_a_tensor_loop_names_file_and_line():
    line = _line_of(_defined_in_loop, "while x > 0")
    with pytest.raises(ConversionError, match=rf"test_autograph.py:{line}: y is first assigned inside this "
                                              r"while loop.*y must be defined before the loop"):
        _trace(_defined_in_loop, _symbolic(tf.int32))
    assert _defined_in_loop(3) == autograph.convert(_defined_in_loop)(3) == 2  # eagerly it is plain Python


def test_python_list_appended_in_a_tensor_loop_says_use_tensorarray():
    line = _line_of(_list_in_loop, "while x > 0")
    with pytest.raises(ConversionError, match=rf"test_autograph.py:{line}: values is a Python list.*tf.TensorArray"):
        _trace(_list_in_loop, _symbolic(tf.int32))
    assert autograph.convert(_list_in_loop)(2) == [2, 1]


def test_try_spanning_a_tensor_loop_names_file_and_line():
    line = _line_of(_try_around_loop, "while x > 0")
    try_line = _line_of(_try_around_loop, "try:")
    with pytest.raises(ConversionError, match=rf"test_autograph.py:{line}: .*inside the try statement at line "
                                              rf"{try_line}"):
        _trace(_try_around_loop, _symbolic(tf.int32))
    assert autograph.convert(_try_around_loop)(3) == 0


def test_tensor_condition_must_be_a_scalar_bool():
    def f(x):
        if x:
            x = x + 1
        return x

    line = _line_of(f, "if x:")
    with pytest.raises(ConversionError, match=rf"test_autograph.py:{line}: the condition of the if statement is "
                                              r"a float32 tensor of shape \(3,\)"):
        _trace(f, _symbolic(tf.float32, (3,)))


def test_python_conditions_stay_python_while_tracing():
    def f(x, n):
        for i in range(n):
            if n > 2:
                x = x + i
        return x

    from tapeflow.core.runner import Graph, tracing
    g = Graph()
    with tracing(g):
        y = autograph.convert(f)(_symbolic(tf.float32), 3)
    assert y.shape == () and [n.prim.name for n in g.nodes] == ["add"] * 3  # unrolled, no control flow


# ---- graph mode through tf.function: the same values as eagerly ------------------------------------------

@pytest.mark.parametrize("start", [12, 6, 1, 27])
def test_collatz_compiled_returns_eager_values_and_counts(start):
    compiled = tf.function(collatz)
    a, n = compiled(tf.constant(start))
    ea, en = collatz(tf.constant(start))
    assert (int(a), int(n)) == (int(ea), en)


def test_collatz_compiled_is_one_trace_for_every_start():
    compiled = tf.function(collatz)
    counts = [int(compiled(tf.constant(v))[1]) for v in (12, 6, 27)]
    assert counts == [9, 8, 111] and compiled.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("x,limit", [(1, 20), (5, 3), (3, 10)])
def test_return_inside_a_tensor_loop_compiled(x, limit):
    compiled = tf.function(return_in_loop)
    assert int(compiled(tf.constant(x), tf.constant(limit))) == return_in_loop(x, limit)


def _loop_dtype_changes(x):
    while x > 1:
        x = x / 2
    return x


def test_loop_variable_changing_dtype_names_file_and_line():
    line = _line_of(_loop_dtype_changes, "while x > 1")
    with pytest.raises(ConversionError, match=rf"test_autograph.py:{line}: x has dtype int32 before this while "
                                              r"loop but dtype float64 after one iteration.*tf.cast"):
        tf.function(_loop_dtype_changes)(tf.constant(8))

"""tape.on_gradient: the hook tapeflow.distribute uses to all-reduce gradients during the backward pass."""
import tapeflow as tf
from tapeflow.autodiff import tape as _tape


def test_each_gradient_is_reported_once_final_in_reverse_order_and_is_the_one_returned():
    w1, b1, w2, unused = (tf.Variable([[1.0, 2.0], [3.0, 4.0]]), tf.Variable([0.5, -0.5]),
                          tf.Variable([[1.0], [-1.0]]), tf.Variable(3.0))
    seen = []

    def hook(sources):
        assert list(sources) == [w1, b1, w2, unused]
        computed_before = len(seen)

        def watch(j, g):
            seen.append((j, g, computed_before))
        return watch

    _tape.on_gradient[0] = hook
    try:
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(tf.constant([[1.0, 1.0]]), w1) + b1)
            loss = tf.reduce_sum(tf.matmul(h, w2) + w1[0, 0])   # w1 read twice: final only at the end
        grads = tape.gradient(loss, [w1, b1, w2, unused])
    finally:
        _tape.on_gradient[0] = None
    assert [j for j, _, _ in seen] == [2, 1, 0, 3]          # w2 first (read last), the unread one at the end
    for j, g, _ in seen:
        assert g is grads[j]                                  # the very tensor tape.gradient returns
    assert grads[3] is None
    assert grads[0].numpy().tolist() == [[2.0, -1.0], [1.0, -1.0]]


def test_without_a_hook_nothing_is_called():
    assert _tape.on_gradient[0] is None
    x = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        y = x * x
    assert float(tape.gradient(y, x)) == 4.0

"""The seeds' model-building examples (layers, models, optimizers, metrics, checkpoints, summaries)
written with tapeflow, with the outputs the seeds print."""
import os

import numpy as np
import pytest

import tapeflow as tf


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()
    tf.random.set_seed(2024)  # the examples train: their initial weights repeat on every run
    yield
    tf.random.set_seed(None)


@pytest.fixture(scope="module")
def digits():
    """The 8x8 digits tapeflow-data ships (scikit-learn's copy, in its order), as 32-image batches."""
    from tapeflow.data.datasets import _digits_arrays

    images, labels = _digits_arrays()
    x = (images / 16.0).astype(np.float32)[..., None]
    return x, labels.astype(np.int64)


# ---- 003: building models -----------------------------------------------------------------------

def test_sequential_with_declared_input_shape():
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(10, input_shape=(784,)),  # must declare input shape
        tf.keras.layers.Dense(10),
    ])
    assert model.built and model.count_params() == 7850 + 110
    assert model(tf.zeros([3, 784])).shape == (3, 10)


class MNISTModel(tf.keras.Model):
    def __init__(self):
        super(MNISTModel, self).__init__()
        self.dense1 = tf.keras.layers.Dense(units=10)
        self.dense2 = tf.keras.layers.Dense(units=10)

    def call(self, input):
        """Run the model."""
        result = self.dense1(input)
        result = self.dense2(result)
        result = self.dense2(result)  # reuse variables from dense2 layer
        return result


def test_subclassed_model_on_a_blank_image(capsys):
    model = MNISTModel()
    assert repr(model).startswith("<MNISTModel")
    batch = tf.zeros([1, 1, 784])
    print(batch.shape)  # => (1, 1, 784)
    result = model(batch)
    assert capsys.readouterr().out == "(1, 1, 784)\n"
    assert result.shape == (1, 1, 10) and not result.numpy().any()
    # dense2 is used twice but owns one kernel and one bias
    assert [tuple(v.shape) for v in model.variables] == [(784, 10), (10,), (10, 10), (10,)]


def test_the_announcements_track_layer_model_with_implicit_gradients(digits):
    """000: a two-layer model trained with implicit_gradients and apply_gradients."""
    x, y = digits
    x = x.reshape(-1, 64)[:512]
    y = y[:512]

    class Model2(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.layer1 = tf.keras.layers.Dense(units=32, activation="relu")
            self.layer2 = tf.keras.layers.Dense(units=10)

        def call(self, input):
            return self.layer2(self.layer1(input))

    model = Model2()

    def loss_function(model, x, y):
        y_ = model(x)
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=y_))

    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.5)
    onehot = np.eye(10, dtype=np.float32)[y]
    first = float(loss_function(model, x, onehot))
    for epoch in range(30):
        for i in range(0, 512, 64):
            grads = tf.implicit_gradients(loss_function)(model, x[i:i + 64], onehot[i:i + 64])
            optimizer.apply_gradients(grads)
    assert float(loss_function(model, x, onehot)) < 0.3 * first
    assert int(optimizer.iterations) == 30 * 8


def test_mnist_training_loop_with_sparse_softmax_cross_entropy(digits, capsys):
    """003: loss(model, x, y) with tf.losses.sparse_softmax_cross_entropy, grads of model.variables,
    apply_gradients with a global step, and the minimize() shortcut."""
    x, y = digits
    x = x.reshape(-1, 64)
    model = MNISTModel()

    def loss(model, x, y):
        prediction = model(x)
        return tf.losses.sparse_softmax_cross_entropy(labels=y, logits=prediction)

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets)
        return tape.gradient(loss_value, model.variables)

    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.05)
    global_step = tf.train.get_or_create_global_step()
    start = int(global_step)
    print("Initial loss: {:.3f}".format(loss(model, x[:32], y[:32])))
    for epoch in range(5):
        for i in range(0, 1600, 32):
            grads = grad(model, x[i:i + 32], y[i:i + 32])
            optimizer.apply_gradients(zip(grads, model.variables), global_step=tf.train.get_or_create_global_step())
            if i % (200 * 32) == 0:
                print("Loss at step {:04d}: {:.3f}".format(i // 32, loss(model, x[i:i + 32], y[i:i + 32])))
    print("Final loss: {:.3f}".format(loss(model, x, y)))
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("Initial loss: ") and out[-1].startswith("Final loss: ")
    assert float(out[-1].split()[-1]) < float(out[0].split()[-1]) and float(out[-1].split()[-1]) < 0.6
    assert int(global_step) - start == 5 * 50
    # minimize() is equivalent to the grad() and apply_gradients() calls
    before = float(loss(model, x, y))
    for i in range(0, 1600, 32):
        optimizer.minimize(lambda i=i: loss(model, x[i:i + 32], y[i:i + 32]), global_step=global_step)
    assert float(loss(model, x, y)) < before


# ---- 003 / 004: variables and optimizers --------------------------------------------------------

def test_linear_model_with_w_and_b_variables_reaches_3_and_2(capsys):
    class Model(tf.keras.Model):
        def __init__(self):
            super(Model, self).__init__()
            self.W = tf.Variable(5., name='weight')
            self.B = tf.Variable(10., name='bias')

        def predict(self, inputs):
            return inputs * self.W + self.B

    NUM_EXAMPLES = 2000
    tf.random.set_seed(1)
    training_inputs = tf.random_normal([NUM_EXAMPLES])
    noise = tf.random_normal([NUM_EXAMPLES])
    training_outputs = training_inputs * 3 + 2 + noise

    def loss(model, inputs, targets):
        error = model.predict(inputs) - targets
        return tf.reduce_mean(tf.square(error))

    def grad(model, inputs, targets):
        with tf.GradientTape() as tape:
            loss_value = loss(model, inputs, targets)
        return tape.gradient(loss_value, [model.W, model.B])

    model = Model()
    optimizer = tf.train.GradientDescentOptimizer(learning_rate=0.01)
    print("Initial loss: {:.3f}".format(loss(model, training_inputs, training_outputs)))
    for i in range(300):
        grads = grad(model, training_inputs, training_outputs)
        optimizer.apply_gradients(zip(grads, [model.W, model.B]),
                                  global_step=tf.train.get_or_create_global_step())
        if i % 20 == 0:
            print("Loss at step {:03d}: {:.3f}".format(i, loss(model, training_inputs, training_outputs)))
    print("Final loss: {:.3f}".format(loss(model, training_inputs, training_outputs)))
    print("W = {}, B = {}".format(model.W.numpy(), model.B.numpy()))
    out = capsys.readouterr().out.splitlines()
    initial = float(out[0].split()[-1])
    final = float(out[-2].split()[-1])
    assert 55 < initial < 85 and 0.9 < final < 1.15  # the seed: 69.830 -> 1.032 (noise variance ~1)
    assert len(out) == 1 + 15 + 2 and out[1].startswith("Loss at step 000: ")
    assert abs(float(model.W) - 3) < 0.1 and abs(float(model.B) - 2) < 0.1
    assert [v.name for v in model.variables] == ["weight:0", "bias:0"]


def test_r_guide_linear_model_called_directly_with_sgd():
    class Linear(tf.keras.Model):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(5.0, name="weight")
            self.b = tf.Variable(10.0, name="bias")

        def call(self, inputs, mask=None, training=True):
            return inputs * self.w + self.b

    tf.random.set_seed(3)
    x = tf.random.normal([2000])
    y = x * 3 + 2 + tf.random.normal([2000])
    model = Linear()
    optimizer = tf.optimizers.SGD(lr=0.01)
    for _ in range(300):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, [model.w, model.b])
        optimizer.apply_gradients(zip(grads, [model.w, model.b]))
    assert abs(float(model.w) - 3) < 0.1 and abs(float(model.b) - 2) < 0.1
    assert 0.9 < float(loss) < 1.15
    assert repr(model.w).startswith("<tf.Variable 'weight:0' shape=() dtype=float32, numpy=")


# ---- 004: the CNN and its custom training loop --------------------------------------------------

def test_r_guide_cnn_with_unknown_image_size_and_adam_loop(digits):
    x, y = digits
    mnist_model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(filters=16, kernel_size=(3, 3), activation="relu", input_shape=(None, None, 1)),
        tf.keras.layers.Conv2D(filters=16, kernel_size=(3, 3), activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(units=10),
    ])
    assert mnist_model.built and mnist_model.count_params() == 160 + 2320 + 170
    # even without training, call the model and inspect the output
    assert mnist_model(x[:32]).shape == (32, 10)
    dataset = tf.data.Dataset.from_tensor_slices((x[:1024], y[:1024])).shuffle(1000, seed=0).batch(32)
    optimizer = tf.optimizers.Adam()
    loss_object = tf.losses.SparseCategoricalCrossentropy(from_logits=True)
    loss_history = []

    def train_step(images, labels):
        with tf.GradientTape() as tape:
            logits = mnist_model(images, training=True)
            tf.debugging.assert_equal(logits.shape, (32, 10))
            loss_value = loss_object(labels, logits)
        loss_history.append(float(loss_value))
        grads = tape.gradient(loss_value, mnist_model.trainable_variables)
        optimizer.apply_gradients(zip(grads, mnist_model.trainable_variables))

    for epoch in range(3):
        for images, labels in dataset:
            train_step(images, labels)
    assert len(loss_history) == 3 * 32
    assert np.mean(loss_history[-10:]) < np.mean(loss_history[:10])


# ---- 004: object-based saving -----------------------------------------------------------------

def test_checkpoint_of_a_variable(tmp_path, capsys):
    os.chdir(tmp_path)
    x = tf.Variable(10.)
    checkpoint = tf.train.Checkpoint(x=x)
    x.assign(2.)  # assign a new value to the variable and save
    checkpoint_path = "./ckpt/"
    save_path = checkpoint.save(checkpoint_path)
    print(save_path)
    x.assign(11.)  # change the variable after saving
    status = checkpoint.restore(save_path)  # restore values from the checkpoint
    print(x)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "./ckpt/-1"
    assert out[1] == "<tf.Variable 'Variable:0' shape=() dtype=float32, numpy=2.0>"
    status.assert_consumed()


def test_checkpoint_of_model_and_optimizer(tmp_path, digits):
    x, y = digits
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, [3, 3], activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10),
    ])
    optimizer = tf.optimizers.Adam(lr=0.001)
    checkpoint_dir = str(tmp_path / "path" / "to" / "model_dir")
    os.makedirs(checkpoint_dir)
    checkpoint_prefix = os.path.join(checkpoint_dir, "ckpt")
    root = tf.train.Checkpoint(optimizer=optimizer, model=model)

    def step():
        with tf.GradientTape() as tape:
            loss = tf.losses.sparse_softmax_cross_entropy(y[:64], model(x[:64]))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return float(loss)

    step()
    assert root.save(checkpoint_prefix) == checkpoint_prefix + "-1"
    after = [step() for _ in range(3)]
    # a new program: variables are created after restore is called, and restored as they appear
    model2 = tf.keras.Sequential([
        tf.keras.layers.Conv2D(16, [3, 3], activation="relu"),
        tf.keras.layers.GlobalAveragePooling2D(),
        tf.keras.layers.Dense(10),
    ])
    optimizer2 = tf.optimizers.Adam(lr=0.001)
    status = tf.train.Checkpoint(optimizer=optimizer2, model=model2).restore(
        tf.train.latest_checkpoint(checkpoint_dir))
    model, optimizer = model2, optimizer2
    again = [step() for _ in range(3)]
    status.assert_consumed()
    np.testing.assert_allclose(again, after, rtol=1e-5)


# ---- 003 / 004: metrics and summaries ------------------------------------------------------------

def test_mean_metric_2_5_then_5_5(capsys):
    m = tf.metrics.Mean("loss")
    m(0)
    m(5)
    print(m.result())  # => 2.5
    m([8, 9])
    print(m.result())  # => 5.5
    assert capsys.readouterr().out == ("Tensor(2.5, shape=(), dtype=float32)\n"
                                       "Tensor(5.5, shape=(), dtype=float32)\n")


def test_summary_of_loss_every_100_steps(tmp_path):
    import sys
    import types

    # TensorBoard's reader on its own TF stub: reading events needs no TensorFlow
    sys.modules.setdefault("tensorboard.compat.notf", types.ModuleType("tensorboard.compat.notf"))
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    logdir = str(tmp_path / "tb")
    writer = tf.summary.create_file_writer(logdir)
    with writer.as_default():
        for step in range(1, 1001):
            # Calculate loss with your real train function.
            loss = 1 - 0.001 * step
            if step % 100 == 0:
                tf.summary.scalar('loss', loss, step=step)
    writer.close()
    acc = ea.EventAccumulator(logdir)
    acc.Reload()
    events = acc.Scalars("loss")
    assert [e.step for e in events] == list(range(100, 1001, 100))
    assert events[-1].value == pytest.approx(0.0, abs=1e-6) and events[0].value == pytest.approx(0.9)

"""Data-parallel training on the digits with tf.distribute.MultiWorkerMirroredStrategy (MPI).

    python examples/distributed_mnist.py               # one process, one replica
    mpiexec -n 2 python examples/distributed_mnist.py  # two processes, same global batch: same accuracy

Every worker builds the model under ``strategy.scope()`` (rank 0's initial weights are broadcast),
a custom loop runs ``strategy.run`` on each worker's half of every global batch with
``tf.distribute.compute_average_loss``, ``optimizer.apply_gradients`` sums the workers' gradients,
then Keras-style ``fit`` continues with batches it shards by itself.  The chief (rank 0) prints.
"""
from __future__ import annotations

import argparse

import numpy as np

import tapeflow as tf
from tapeflow.data.datasets import digits


def main(argv: list[str] | None = None) -> float:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--global-batch", type=int, default=64)
    args = p.parse_args(argv)

    strategy = tf.distribute.MultiWorkerMirroredStrategy()
    chief = strategy.cluster_resolver.task_id == 0
    (x_train, y_train), (x_test, y_test) = digits()
    x_train = (x_train.reshape(-1, 64) / 16.0).astype(np.float32)
    x_test = (x_test.reshape(-1, 64) / 16.0).astype(np.float32)
    y_train, y_test = y_train.astype(np.int64), y_test.astype(np.int64)

    tf.random.set_seed(0)
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(64, activation="relu", input_shape=(64,)),
                                     tf.keras.layers.Dense(10)])
        optimizer = tf.optimizers.SGD(0.2)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
    gb = args.global_batch

    def step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        with tf.GradientTape() as tape:
            loss = tf.distribute.compute_average_loss(loss_fn(y, model(x, training=True)), global_batch_size=gb)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    n = len(x_train) // gb * gb   # whole global batches
    for epoch in range(args.epochs):
        batches = [(x_train[i:i + gb], y_train[i:i + gb]) for i in range(0, n, gb)]
        total = 0.0
        for x, y in strategy.experimental_distribute_dataset(batches):
            total += float(strategy.reduce("SUM", strategy.run(step, args=(tf.constant(x), tf.constant(y))),
                                           axis=None))
        if chief:
            print(f"custom loop epoch {epoch + 1}: mean loss {total / len(batches):.4f}")

    model.compile(optimizer=optimizer, loss=tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    history = model.fit(x_train[:n], y_train[:n], batch_size=gb, epochs=args.epochs, verbose=0, seed=1)
    logits = model.predict(x_test, verbose=0)
    accuracy = float(np.mean(np.argmax(logits, axis=1) == y_test))
    if chief:
        print(f"fit: loss {history.history['loss'][-1]:.4f}, train accuracy {history.history['accuracy'][-1]:.4f}")
        print(f"workers: {strategy.num_replicas_in_sync}; final test accuracy: {accuracy:.4f}")
    return accuracy


if __name__ == "__main__":
    main()

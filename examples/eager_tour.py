"""The eager tour: the seeds' core examples, run with tapeflow, printing what the seeds print."""
import numpy as np

import tapeflow as tf


def section(title: str) -> None:
    print(f"\n== {title} ==")


section("Operations run immediately")
x = [[2.]]
m = tf.matmul(x, x)
print(m)
print("hello, {}".format(m))

section("Tensors and NumPy")
a = tf.constant([[1, 2], [3, 4]])
print(a)
b = tf.add(a, 1)
print(b)
print(a * b)
c = np.multiply(a, b)
print(c)
print(a.numpy())

section("Python control flow: the Collatz sequence from 6")
a = tf.constant(6)
while a != 1:
    if a % 2 == 0:
        a = a // 2
    else:
        a = 3 * a + 1
    print(a)

section("Iterating a tensor")
grid = tf.constant([[1.0, 2.0], [3.0, 4.0]])  # (not x: x is a list above, and a name keeps one type)
for i in range(grid.shape[0]):
    for j in range(grid.shape[1]):
        print(grid[i, j])
for row in grid:
    print(row)

section("Instant errors")
try:
    tf.gather([0, 1, 2], 7)
except tf.errors.InvalidArgumentError as e:
    print(f"InvalidArgumentError: {e}")

section("Devices")
print([d.name for d in tf.config.list_devices()])
with tf.device("/cpu:0"):
    y = tf.matmul(m, m)
print(y, y.device)

try:
    grad_tape = tf.GradientTape
except ImportError as e:
    print(f"\n({e})")
else:
    section("Gradients")
    w = tf.Variable([[1.0]])
    with grad_tape() as tape:
        loss = w * w
    print(tape.gradient(loss, [w]))

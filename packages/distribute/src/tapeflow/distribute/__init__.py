"""tapeflow.distribute (``tf.distribute``): data-parallel training over MPI processes and local devices.

:class:`MultiWorkerMirroredStrategy` runs one replica per process of an MPI job
(``mpiexec -n N python train.py``; a plain ``python train.py`` is one replica);
:class:`MirroredStrategy` runs one replica per device of this process.  Both give
TensorFlow's API: ``scope()``, ``run``, ``reduce``, ``gather``,
``experimental_distribute_dataset``, ``get_strategy()``, ``get_replica_context()``;
``optimizer.apply_gradients`` sums the replicas' gradients before the update and
Keras-style ``fit`` shards its batches by itself (tapeflow-nn, when installed).

>>> import tapeflow as tf
>>> strategy = tf.distribute.MultiWorkerMirroredStrategy()
>>> with strategy.scope():
...     w = tf.Variable([1.0, 2.0])
>>> def step(x):
...     with tf.GradientTape() as tape:
...         loss = tf.distribute.compute_average_loss(tf.reduce_sum(w * x, axis=1), global_batch_size=2)
...     g = tape.gradient(loss, w)
...     return tf.distribute.get_replica_context().all_reduce("SUM", g)
>>> strategy.run(step, args=(tf.constant([[1.0, 1.0], [3.0, 1.0]]),)).numpy().tolist()
[2.0, 1.0]
"""
from __future__ import annotations

__version__ = "0.1.0"

from ._collective import DEFAULT_BYTES_PER_PACK
from ._strategy import (
    CommunicationOptions,
    DistributedDataset,
    MirroredStrategy,
    MPIClusterResolver,
    MultiWorkerMirroredStrategy,
    PerReplica,
    ReduceOp,
    ReplicaContext,
    Strategy,
    compute_average_loss,
    get_replica_context,
    get_strategy,
    has_strategy,
    in_cross_replica_context,
    scale_regularization_loss,
)
from ._strategy import _current_strategy, _is_chief, _update_context  # noqa: F401  (tapeflow-nn's hooks)


# the public names are documented (and their examples run) as tapeflow.distribute's
for _obj in (CommunicationOptions, DistributedDataset, MirroredStrategy, MPIClusterResolver,
             MultiWorkerMirroredStrategy, PerReplica, ReduceOp, ReplicaContext, Strategy, compute_average_loss,
             get_replica_context, get_strategy, has_strategy, in_cross_replica_context, scale_regularization_loss):
    _obj.__module__ = __name__
del _obj


class experimental:
    """``tf.distribute.experimental``: :class:`CommunicationOptions`.

    >>> import tapeflow as tf
    >>> tf.distribute.experimental.CommunicationOptions().bytes_per_pack
    0
    """

    CommunicationOptions = CommunicationOptions


__all__ = ["CommunicationOptions", "DEFAULT_BYTES_PER_PACK", "DistributedDataset", "MirroredStrategy",
           "MPIClusterResolver", "MultiWorkerMirroredStrategy", "PerReplica", "ReduceOp", "ReplicaContext",
           "Strategy", "compute_average_loss", "experimental", "get_replica_context", "get_strategy",
           "has_strategy", "in_cross_replica_context", "scale_regularization_loss"]

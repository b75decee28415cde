"""Distribution for the Trainer: the strategies `--distribute` names, which worker of a
multi-worker cluster this process is, and the few collectives the Trainer needs around Keras
fit (a barrier, and a check that every worker agrees on a value).

Multi-worker training (`--distribute multi-worker`) is TensorFlow's
`MultiWorkerMirroredStrategy`: the same `captioner train ...` command runs on every worker,
each with its own `TF_CONFIG`

    {"cluster": {"worker": ["host0:port", "host1:port"]}, "task": {"type": "worker", "index": 0}}

(worker 0 is the chief unless the cluster names a "chief" task). Every training step's
gradients are all-reduced, so the weights stay identical on every worker; each global batch
is split between the workers. Only the chief writes the run directory and the model; the
other workers write their checkpoints to temporary folders (TensorFlow wants every worker to
save, since saving may read variables through collectives) that are removed at the end.
Without `TF_CONFIG` the strategy trains on this process alone.

No TensorFlow at import time (the CLI imports the recipes to build `-h`).
"""

import dataclasses
import logging
import os
import shutil
import tempfile

log = logging.getLogger(__name__)

STRATEGIES = ("none", "mirrored", "multi-worker")


@dataclasses.dataclass(frozen=True)
class WorkerRole:
    """This process's place in the cluster: task type and index, how many workers, chief or not."""

    task_type: str | None = None
    index: int = 0
    workers: int = 1
    chief: bool = True

    @property
    def name(self):
        return f"{self.task_type or 'worker'} {self.index}"

    @property
    def distributed(self):
        return self.workers > 1


def strategy_for(name):
    """The tf.distribute strategy of `--distribute NAME`. Create it first thing in a process:
    MultiWorkerMirroredStrategy configures the collective ops, which TensorFlow allows only
    before any other op runs."""
    import tensorflow as tf

    if name == "mirrored":
        # All GPUs, or else every logical CPU device (e.g. CPUs split for testing).
        gpus = tf.config.list_logical_devices("GPU")
        return tf.distribute.MirroredStrategy(devices=[d.name for d in (gpus or tf.config.list_logical_devices("CPU"))])
    if name == "multi-worker":
        return _multi_worker_strategy()
    return tf.distribute.get_strategy()


def _multi_worker_strategy():
    """MultiWorkerMirroredStrategy with the `reduce` Keras 3's fit expects of it (TF 2.21,
    Keras 3.15; keras-team/keras#20329):

    * a nest of values is reduced leaf by leaf: fit reduces the first batch across replicas to
      build the model, and a batch of named inputs is a dict, which the strategy refuses
      ("Attempt to convert a value ({'annotations': PerReplica...}) ... to a Tensor");
    * a scalar reduced along `axis=0` is reduced as a scalar: fit averages each step's logs
      (the loss) with `reduce("MEAN", v, axis=0)`, which fails on a scalar ("Invalid
      reduction dimension 0 for input with 0 dimensions")."""
    import tensorflow as tf

    class MultiWorkerMirroredStrategy(tf.distribute.MultiWorkerMirroredStrategy):
        def reduce(self, reduce_op, value, axis):
            base = super(MultiWorkerMirroredStrategy, self).reduce

            def one(v):
                local = self.experimental_local_results(v)
                scalar = bool(local) and getattr(local[0], "shape", None) is not None and len(local[0].shape) == 0
                return base(reduce_op, v, None if scalar else axis)

            return tf.nest.map_structure(one, value)

    return MultiWorkerMirroredStrategy()


def worker_role(strategy):
    """The WorkerRole of this process under `strategy` (None or a one-process strategy: the
    only worker, chief)."""
    import tensorflow as tf

    if strategy is None or not isinstance(strategy, tf.distribute.MultiWorkerMirroredStrategy):
        return WorkerRole()
    resolver = strategy.cluster_resolver
    if resolver is None or not resolver.task_type:
        return WorkerRole()
    spec = resolver.cluster_spec().as_dict()
    task_type, index = resolver.task_type, int(resolver.task_id or 0)
    workers = len(spec.get("chief", [])) + len(spec.get("worker", []))
    chief = task_type == "chief" or (task_type == "worker" and index == 0 and "chief" not in spec)
    return WorkerRole(task_type, index, workers, chief)


def gather(strategy, values):
    """`values` (a list of numbers) of every worker: an array (replicas, len(values)), one row
    per replica (one per worker on CPUs). A collective: every worker must call it, in the same
    order as its other collectives."""
    import numpy as np
    import tensorflow as tf

    mine = tf.constant([float(v) for v in values], tf.float64)
    per_replica = strategy.run(lambda: tf.identity(mine)[tf.newaxis])
    return np.asarray(strategy.gather(per_replica, axis=0))


def barrier(strategy, role, what):
    """Wait until every worker gets here (no-op for one worker)."""
    if role.distributed:
        log.info("%s: waiting for the other workers (%s)", role.name, what)
        gather(strategy, [role.index])


def agree(strategy, role, value, what):
    """Check that every worker has the same `value` (a number); RuntimeError naming `what` on
    every worker otherwise (so they all stop, none waits forever for the others)."""
    if not role.distributed:
        return value
    seen = gather(strategy, [value])[:, 0]
    if not (seen == seen[0]).all():
        raise RuntimeError(f"the workers disagree on {what}: {sorted(set(seen.tolist()))}")
    return value


def worker_directory(output_dir, role, resume):
    """Where this worker writes its run directory: the chief `output_dir`; another worker a new
    temporary folder (removed by `remove_worker_directory`), which on `resume` starts as a copy
    of the files of the chief's `output_dir` (its committed checkpoint, vocabularies, history),
    so every worker restores the same epoch (checked after restoring)."""
    if role.chief:
        return os.fspath(output_dir)
    directory = tempfile.mkdtemp(prefix=f"captioner-{(role.task_type or 'worker')}{role.index}-")
    if resume and os.path.isdir(output_dir):
        for name in os.listdir(output_dir):
            path = os.path.join(output_dir, name)
            if os.path.isfile(path) and not name.startswith(".tmp-") and not name.endswith(".keras"):
                shutil.copy2(path, os.path.join(directory, name))
    log.info("%s: not the chief; checkpoints go to %s (removed at the end)", role.name, directory)
    return directory


def remove_worker_directory(directory, role):
    if not role.chief:
        shutil.rmtree(directory, ignore_errors=True)

"""One module per `captioner train TASK`: its config dataclass, data, model, evaluation and
export; `captioner.training.trainer.Trainer` does the rest. Keep TensorFlow imports inside
functions (the CLI imports these modules to build `-h`)."""

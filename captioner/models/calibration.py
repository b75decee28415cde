"""Temperature scaling for the classifiers that show a probability (VQA, entailment, document and
activity classifiers): their probabilities are softmax(logits / T), one scalar T > 0 saved in the
model's config (Guo et al. 2017, "On Calibration of Modern Neural Networks").

T = 1 is the model as trained (and what a file saved before this gives). `captioner model
calibrate` fits T on dev (`captioner.metrics.confidence.fit_temperature`) and saves it; T > 1
softens an over-confident model. The argmax, hence every label and answer, stays the same.

`Calibrated` is a mixin placed before the class that defines `get_config` / `from_config` in the
model's bases: it adds ``temperature`` to the config when it is not 1 and takes it back on load,
so the constructors keep their parameter lists.
"""

from __future__ import annotations

import math

import tensorflow as tf


class Calibrated:
    temperature = 1.0  # class default: every model, and every file saved before calibration, is T = 1

    def set_temperature(self, temperature):
        t = float(temperature)
        if not (math.isfinite(t) and t > 0):
            raise ValueError(f"temperature {temperature!r}: must be a finite number > 0")
        self.temperature = t
        for attr in [a for a in vars(self) if a.startswith("_compiled_")]:  # traced with the old T
            del self.__dict__[attr]

    def calibrated_softmax(self, logits, axis=-1):
        """softmax(logits / T) in float32 (the graph op every probability of the model goes through)."""
        logits = tf.cast(logits, tf.float32)
        if self.temperature != 1.0:
            logits = logits / self.temperature
        return tf.nn.softmax(logits, axis)

    def get_config(self):
        config = super().get_config()
        if self.temperature != 1.0:
            config["temperature"] = self.temperature
        return config

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        temperature = config.pop("temperature", 1.0)
        model = super().from_config(config)
        model.set_temperature(temperature)
        return model

"""Re-save bundled models the lean way (issue 39): float16 weights, the pip-package backbone by
reference, no optimizer state; nothing else changed.

    python scripts/store_lean.py --model assets/models/flickr8k_vqa.keras [--model ...]

Each file is loaded (safe mode), saved again with `captioner.models.storage.save_model`
(atomically), loaded back in this process to check that it loads, and its card gets this
command and ``extra.storage`` (bytes before and after, the stored dtypes, the backbone package
and checksum). Whether the outputs stay the same is measured on each model's dev data
(``assets/benchmarks/float16_storage.json`` says how).
"""

from __future__ import annotations

import argparse
import os
import sys



def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", action="append", required=True, help="a .keras file (rewritten in place); repeat")
    args = parser.parse_args(argv)

    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.model_card import ModelCard
    from captioner.models.keras_archive import check_keras_archive
    from captioner.models.storage import drop_training_state, save_model, storage_record

    for path in args.model:
        check_keras_archive(path)
        before = os.path.getsize(path)
        model = keras.models.load_model(path)
        uncompiled = drop_training_state(model)
        save_model(model, path)
        keras.models.load_model(path)  # loads back
        record = {**storage_record(model, path), "bytes_before": before, "optimizers_dropped": uncompiled}
        ModelCard.record_step(path, "scripts/store_lean.py", ["--model", path], extra={"storage": record})
        print(f"{path}: {before / 1e6:.1f} MB -> {record['bytes'] / 1e6:.1f} MB, weights {record['weights']}, "
              f"backbone {'by reference' if isinstance(record.get('backbone'), dict) else record.get('backbone', '-')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

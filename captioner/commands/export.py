"""`captioner export MODEL --format saved_model|tflite --output DIR_OR_FILE`

Exports a saved image captioner or translator (.keras) so that it runs without captioner:

* ``saved_model``: a TensorFlow SavedModel directory. Image captioner: ``serving_default`` takes
  a string tensor (batch,) of encoded JPEG/PNG bytes, plus optional ``beam_size``, ``alpha``,
  ``max_length`` (defaults: the model's), and returns ``caption``, ``score``, ``words``,
  ``attention``, ``hypotheses``, ... (decoding, resizing, the backbone, the beam search and the
  vocabulary are all inside). Translator: ``serving_default`` takes sentences (batch,) and
  returns ``translation``. Load it with ``tf.saved_model.load(DIR)``; ``saved_model_cli show
  --dir DIR --all`` describes it.
* ``tflite`` (image captioners): ``--part backbone`` (default) writes the feature extractor,
  uint8 pixels (1, h, w, 3) -> grid; ``--part captioner`` the backbone and the beam search at the
  model's settings (pixels -> tokens, scores, lengths, attention; needs the Flex delegate).
"""

import argparse
import os
import sys


def register(subparsers):
    p = subparsers.add_parser("export", help="export a model as a TensorFlow SavedModel or TFLite file",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("model", metavar="MODEL", help="a .keras image captioner or translator")
    p.add_argument("--format", "-f", choices=("saved_model", "tflite"), default="saved_model")
    p.add_argument("--output", "-o", required=True,
                   help="SavedModel folder (new, empty, or an earlier export, which is replaced; any other folder is "
                        "refused) or .tflite file (written atomically)")
    p.add_argument("--part", choices=("backbone", "captioner"), default="backbone",
                   help="tflite: the backbone alone (default) or the whole captioner")
    p.add_argument("--quantize", choices=("dynamic",), default=None,
                   help="tflite: dynamic-range quantisation (int8 weights); measured against float32 by "
                        "scripts/bench_quantized.py")
    p.set_defaults(func=run)


def load_exportable(path):
    """The ImageCaptioner or Seq2Seq in `path` (safe mode); InputError naming the file otherwise."""
    import captioner.layers.image_preprocessing  # noqa: F401  (registers what saved backbones refer to)
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.seq2seq import Translator

    return load_model_file(path, (ImageCaptioner, Translator), "an image captioner or a translator")


def run(args):
    from captioner.errors import InputError

    if args.format == "saved_model":
        from captioner.export.saved_model import check_export_target

        check_export_target(args.output)  # before the model loads: a folder of other files is refused
    elif os.path.isdir(args.output):
        raise InputError(f"--output {args.output}: is a directory; a TFLite model is one file")
    if args.quantize and args.format != "tflite":
        raise InputError(f"--quantize {args.quantize}: a TFLite option (--format tflite)")
    model = load_exportable(args.model)
    if args.format == "saved_model":
        from captioner.export.saved_model import export_saved_model

        try:
            export_saved_model(model, args.output, source=args.model)
        except ValueError as exc:  # a model the graph cannot hold (a rescorer, a missing tensorflow-text, ...)
            raise InputError(f"{args.model}: {exc}") from None
        size = sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(args.output) for f in fs)
        print(f"wrote SavedModel {args.output} ({size / 1e6:.1f} MB); see: saved_model_cli show --dir "
              f"{args.output} --all", file=sys.stderr)
        return 0
    from captioner.models.image_captioner import ImageCaptioner

    if not isinstance(model, ImageCaptioner):
        raise InputError(f"{args.model}: --format tflite exports image captioners only, this is a "
                         f"{type(model).__name__}")
    from captioner.export.tflite import write_tflite

    try:
        size = write_tflite(model, args.output, args.part, args.quantize)
    except OSError as exc:  # the output's folder (read-only, a path under a file, ...)
        raise InputError(f"--output {args.output}: cannot be written ({exc.strerror or exc})") from None
    except Exception as exc:  # the converter's own errors (unsupported ops and the like)
        raise InputError(f"{args.model}: the {args.part} does not convert to TFLite "
                         f"({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''})") from None
    print(f"wrote TFLite {args.part} {args.output} ({size / 1e6:.1f} MB)", file=sys.stderr)
    return 0

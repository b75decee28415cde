"""`captioner pipeline caption --input GLOB --output PREFIX [--model M] [Beam pipeline options]`

Batch captioning as an Apache Beam pipeline (RunInference), on any Beam runner: the
DirectRunner or Prism on this machine, Dataflow, Flink or Spark on a cluster. Options this
command does not know (`--runner DataflowRunner --project P --region R ...`) are Beam's
pipeline options. See `captioner.pipelines.caption` for the stages.
"""

import argparse
import sys

DESCRIPTION = (
    "Caption image files or URIs (any filesystem Beam reads: local, gs://, s3://, hdfs://, ...) with an Apache "
    "Beam pipeline: RunInference loads the model once per worker and batches images (BatchElements); one JSON "
    'line per input file, {"image", "caption", "score"} or {"image", "error"} for a file that cannot be read '
    "(a bad image never fails the pipeline), in shards PREFIX-SSSSS-of-NNNNN.jsonl. Every other option is "
    "passed to Beam as a pipeline option, e.g. --runner DirectRunner (the default), --runner PrismRunner, "
    "--runner DataflowRunner --project P --region R --temp_location gs://B/tmp. Exit status 1 when some "
    "input got an error row."
)
LOCAL_RUNNERS = (None, "DirectRunner", "PrismRunner", "direct", "prism", "SwitchingDirectRunner",
                 "BundleBasedDirectRunner", "FnApiRunner")


def register(subparsers):
    p = subparsers.add_parser("pipeline", help="batch work on Apache Beam (Direct, Prism, Dataflow, Flink, Spark)",
                              description="Batch work as Apache Beam pipelines; `pipeline caption -h` for its options.")
    sub = p.add_subparsers(dest="pipeline", metavar="PIPELINE")
    c = sub.add_parser("caption", help="caption image files/URIs with RunInference, JSON lines shards",
                       description=DESCRIPTION, allow_abbrev=False)
    c.add_argument("--input", "-i", action="append", required=True, metavar="GLOB",
                   help="image files: a glob, a folder (its image files, recursed) or a URI of any filesystem "
                        "Beam reads; repeat for more")
    c.add_argument("--output", "-o", required=True, metavar="PREFIX",
                   help="output prefix (local or a URI): shards PREFIX-SSSSS-of-NNNNN.jsonl")
    c.add_argument("--model", "-m", default=None,
                   help="saved ImageCaptioner .keras file, local or a URI (default: "
                        "assets/models/flickr8k_attention.keras in the repository)")
    c.add_argument("--beam-size", "-k", type=int, default=None, help="beam width (default: the model's)")
    c.add_argument("--alpha", type=float, default=None, help="length penalty: score / length**alpha "
                                                             "(default: the model's)")
    c.add_argument("--max-length", type=int, default=None, help="max generated words (default: the model's)")
    c.add_argument("--batch-size", "-b", type=int, default=32,
                   help="largest batch of images per model call (BatchElements adapts the size up to it)")
    c.add_argument("--min-batch-size", type=int, default=1, help="smallest batch BatchElements forms")
    c.add_argument("--num-shards", type=int, default=0, help="output shards (0: the runner decides)")
    c.add_argument("--decode-threads", type=int, default=4, help="image decoding threads per batch")
    c.add_argument("--no-progress", action="store_true", help="no progress bar (it is drawn for local runners only)")
    c.add_argument("--objects", action=argparse.BooleanOptionalAction, default=True,
                   help="object tags constrain the captions and rows list them, as `captioner caption` (default: on)")
    c.set_defaults(func=run_caption, pass_unknown_args=True)
    p.set_defaults(func=lambda args: p.print_help() or 2)


def run_caption(args):
    import logging

    if not getattr(args, "verbose", False):
        logging.getLogger("apache_beam").setLevel(logging.WARNING)  # its per-stage INFO lines (-v shows them)
    import apache_beam as beam
    from apache_beam.options.pipeline_options import PipelineOptions, StandardOptions

    from captioner.commands.caption import resolve_model
    from captioner.errors import InputError
    from captioner.errors import check_non_negative, check_search_options
    from captioner.pipelines.caption import (build_caption_pipeline, count_inputs, counters, input_patterns, is_local,
                                             output_run)

    for name in ("beam_size", "max_length", "batch_size", "min_batch_size", "decode_threads"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    check_non_negative("--alpha", args.alpha)
    check_search_options(args)
    check_non_negative("--num-shards", args.num_shards)
    if args.min_batch_size > args.batch_size:
        raise InputError(f"--min-batch-size {args.min_batch_size} is larger than --batch-size {args.batch_size}")
    model = args.model if args.model is not None and not is_local(args.model) else resolve_model(args.model)
    options = PipelineOptions(list(getattr(args, "unknown_args", [])))
    runner = options.view_as(StandardOptions).runner
    total = None
    if runner in LOCAL_RUNNERS and not args.no_progress:
        total = count_inputs(input_patterns(args.input))
    with output_run(args.output):  # one run per local prefix; a killed run's beam-temp-* removed
        pipeline = beam.Pipeline(options=options)
        build_caption_pipeline(pipeline, args.input, args.output, model, beam_size=args.beam_size, alpha=args.alpha,
                               max_length=args.max_length, min_batch_size=args.min_batch_size,
                               max_batch_size=args.batch_size, num_shards=args.num_shards,
                               decode_threads=args.decode_threads, progress_total=total, objects=args.objects)
        result = pipeline.run()
        state = result.wait_until_finish()
    counts = counters(result)
    where = f"{args.output}-*"
    if counts["captioned"] is None:
        print(f"pipeline {state} ({runner or 'DirectRunner'}) -> {where}", file=sys.stderr)
        return 0
    print(f"captioned {counts['captioned']} images, {counts['failed'] or 0} failed -> {where} "
          f"(pipeline {state} on {runner or 'DirectRunner'})", file=sys.stderr)
    return 1 if counts["failed"] else 0

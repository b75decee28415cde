"""`captioner video PATHS... --model M --output OUT.jsonl`: caption or label video clips."""

import sys


def register(subparsers):
    p = subparsers.add_parser(
        "video", help="caption video clips or label their activity with a bundled video model",
        description="Run a video model (assets/models/video_caption.keras or video_classify.keras) over clips "
                    "(files, folders, globs). Writes one JSON line per clip: its caption (with beams and attention "
                    "over the sampled frames) or its label with probabilities, or an error for a clip that cannot "
                    "be read. Exit status 1 if any clip failed.",
    )
    p.add_argument("paths", nargs="+", help="video files, folders (recursed) or globs")
    p.add_argument("--model", "-m", required=True, help="a video .keras model (captioner or classifier)")
    p.add_argument("--output", "-o", required=True, help="JSON lines file to write")
    p.add_argument("--beam-size", type=int, default=None, help="captioner: beam width (default: the model's)")
    p.add_argument("--max-length", type=int, default=None, help="captioner: max generated words")
    p.add_argument("--top", type=int, default=5, help="classifier: probabilities kept per clip")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args):
    from tqdm.auto import tqdm

    from captioner.errors import ImageError, InputError
    from captioner.features.video import list_videos
    from captioner.models.video_captioner import VideoCaptioner
    from captioner.models.loading import load_video_model
    from captioner.resumable import ResumableJsonl

    for name in ("batch_size", "top", "beam_size", "max_length"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    paths = list_videos(args.paths)
    if not paths:
        print(f"captioner video: no videos found in {' '.join(args.paths)}", file=sys.stderr)
        return 2
    model = load_video_model(args.model)
    is_captioner = isinstance(model, VideoCaptioner)
    # Rows go to OUTPUT.partial as each batch ends (locked; a rerun after a kill goes on after
    # the rows it finds there) and it becomes OUTPUT when every clip is done.
    with ResumableJsonl(args.output) as out:
        done = out.rows
        if len(done) > len(paths):
            raise out.mismatch(len(paths), f"these {len(paths)} clips")
        for k, row in enumerate(done):
            if row.get("source") != paths[k]:
                raise out.mismatch(k, paths[k])
        if done:
            print(f"{out.partial}: resuming after {len(done)} clips", file=sys.stderr)
        failed = sum("error" in row for row in done)
        bar = tqdm(total=len(paths), initial=len(done), unit="clip", desc="video", disable=args.no_progress,
                   dynamic_ncols=True)
        for start in range(len(done), len(paths), args.batch_size):
            batch = paths[start:start + args.batch_size]
            rows = {}
            clips = []
            for path in batch:
                try:
                    clips.append(model.prepare(path))
                except ImageError as exc:
                    rows[path] = {"source": path, "error": str(exc)}
            if clips:
                if is_captioner:
                    results = model.caption(clips, beam_size=args.beam_size, max_length=args.max_length,
                                            batch_size=args.batch_size)
                    rows.update({r.source: r.to_json() for r in results})
                else:
                    results = model.classify(clips, batch_size=args.batch_size)
                    rows.update({r.source: r.to_json(top=args.top) for r in results})
            for path in batch:
                if "error" in rows[path]:
                    failed += 1
                    print(f"  failed: {rows[path]['error']}", file=sys.stderr)
            out.write([rows[path] for path in batch])
            bar.update(len(batch))
            bar.set_postfix(failed=failed)
        bar.close()
        out.finish()
    print(f"{len(paths) - failed} of {len(paths)} clips {'captioned' if is_captioner else 'labelled'}, "
          f"{failed} failed -> {args.output}")
    return 1 if failed else 0

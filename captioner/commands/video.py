"""`captioner video PATHS... [--task caption|classify] [--model M] --output OUT.jsonl
[--attention-dir DIR]`: caption or label video clips."""

import argparse
import os
import sys

from captioner.bundled import default_path

DEFAULT_MODELS = {  # the real-scene models (the registry's defaults); the generated-shapes ones are shapes_video_*.keras
    "caption": default_path("video-caption"),
    "classify": default_path("video-classify"),
}


def register(subparsers):
    p = subparsers.add_parser(
        "video", help="caption video clips or label their activity with a bundled video model",
        description="Run a video model over clips (files, folders, globs). By default the bundled real-scene "
                    "captioner (assets/models/flickr8k_video_caption.keras) or, with --task classify, the activity "
                    "classifier (flickr8k_video_activity.keras); the generated-shapes models are "
                    "shapes_video_caption.keras and shapes_video_classify.keras. Writes one JSON line per clip: its "
                    "caption (with beams and attention over the sampled frames) or its label with probabilities, "
                    "or an error for a clip that cannot be read. Exit status 1 if any clip failed.",
    )
    p.add_argument("paths", nargs="+", help="video files, folders (recursed) or globs")
    p.add_argument("--task", choices=sorted(DEFAULT_MODELS), default=None,
                   help="which bundled model to use when --model is not given (default caption); with --model, "
                        "the model's kind must match")
    p.add_argument("--model", "-m", default=None, help="a video .keras model (captioner or classifier)")
    p.add_argument("--attention-dir", default=None,
                   help="captioner: also write one PNG per clip showing which sampled frames each word looked at "
                        "(DIR/<clip stem>-<hash of its path>.png, as `captioner caption` names overlays)")
    p.add_argument("--output", "-o", required=True, help="JSON lines file to write")
    p.add_argument("--beam-size", type=int, default=None, help="captioner: beam width (default: the model's)")
    p.add_argument("--max-length", type=int, default=None, help="captioner: max generated words")
    p.add_argument("--top", type=int, default=5, help="classifier: probabilities kept per clip")
    p.add_argument("--objects", action=argparse.BooleanOptionalAction, default=True,
                   help="captioner: name what the backbone's ImageNet head sees in the clip's frames, as "
                        "`captioner caption` does (rows list them as \"objects\"; --no-objects: the captioner alone)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--no-progress", action="store_true")
    p.set_defaults(func=run)


def run(args):
    from tqdm.auto import tqdm

    from captioner.errors import ImageError, InputError, check_search_options
    from captioner.features.video import list_videos
    from captioner.models.video_captioner import VideoCaptioner
    from captioner.models.loading import load_video_model
    from captioner.resumable import batch_output

    for name in ("batch_size", "top", "beam_size", "max_length"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1, got {value}")
    check_search_options(args)
    paths = list_videos(args.paths)
    if not paths:
        print(f"captioner video: no videos found in {' '.join(args.paths)}", file=sys.stderr)
        return 2
    model_path = args.model or DEFAULT_MODELS[args.task or "caption"]
    if args.model is None and not os.path.exists(model_path):
        raise InputError(f"{model_path}: the bundled video model is missing (git lfs pull, or pass --model)")
    model = load_video_model(model_path)
    is_captioner = isinstance(model, VideoCaptioner)
    if args.task is not None and (args.task == "caption") != is_captioner:
        raise InputError(f"{model_path} is a {'captioner' if is_captioner else 'classifier'}, not a model for "
                         f"--task {args.task}")
    if args.attention_dir and not is_captioner:
        raise InputError("--attention-dir shows a caption's attention over frames: it needs a video captioner")
    if args.attention_dir:
        os.makedirs(args.attention_dir, exist_ok=True)
    # Rows go to OUTPUT.partial as each batch ends (locked; a rerun after a kill goes on after
    # the rows it finds there) and it becomes OUTPUT when every clip is done.
    with batch_output(args.output, paths, what=f"these {len(paths)} clips",
                      same=lambda row, path: row.get("source") == path) as out:
        failed = sum("error" in row for row in out.done)
        bar = tqdm(total=len(paths), initial=len(out.done), unit="clip", desc="video", disable=args.no_progress,
                   dynamic_ncols=True)
        for start in range(0, len(out.todo), args.batch_size):
            batch = out.todo[start:start + args.batch_size]
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
                                            batch_size=args.batch_size, objects=args.objects)
                    rows.update({r.source: r.to_json() for r in results})
                    if args.attention_dir:
                        for r in results:
                            try:
                                rows[r.source]["attention_png"] = write_attention_strip(args.attention_dir, r)
                            except (OSError, ValueError) as exc:  # the caption stands; only its picture is lost
                                rows[r.source]["attention_error"] = f"attention PNG not written: {exc}"
                                print(f"  {r.source}: attention PNG not written: {exc}", file=sys.stderr)
                else:
                    results = model.classify(clips, batch_size=args.batch_size)
                    rows.update({r.source: r.to_json(top=args.top) for r in results})
            for path in batch:
                if "error" in rows[path]:
                    failed += 1
                    print(f"  failed: {rows[path]['error']}", file=sys.stderr)
            for path in batch:
                out.write(rows[path])
            out.flush()
            bar.update(len(batch))
            bar.set_postfix(failed=failed)
        bar.close()
    print(f"{len(paths) - failed} of {len(paths)} clips {'captioned' if is_captioner else 'labelled'}, "
          f"{failed} failed -> {args.output}")
    return 1 if failed else 0


def write_attention_strip(folder, result):
    """The frame-attention strip of one captioned clip as FOLDER/<clip stem>-<hash>.png: the
    name `captioner caption --attention-dir` gives an image's overlay (stable across runs, and
    two clips of one name in different folders do not collide)."""
    from captioner.inference.batch import attention_png_name
    from captioner.visualize.frame_attention import save_frame_attention_png

    path = os.path.join(folder, attention_png_name(result.source))
    return save_frame_attention_png(path, result.frames, result.tokens, result.attention,
                                    timestamps=result.timestamps, title=result.text)

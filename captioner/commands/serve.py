"""`captioner serve [--host 127.0.0.1] [--port 8000] [--models TASK[=PATH] ...]`

An HTTP JSON API over the bundled models (or the files given with --models, loaded once at
start-up; a request can never name a file to load):

  POST /v1/caption    multipart field `image` (or JSON {"image_base64": ...}), optional beam_size,
                      alpha, max_length -> {"caption", "score", "hypotheses", "attention"}
  POST /v1/translate  JSON {"text": ...} -> {"translation", "score", "hypotheses", ...}
  POST /v1/entail     JSON {"premise", "hypothesis"} -> {"label", "probabilities", ...}
  POST /v1/ask        multipart `image` + `question` (or JSON) -> {"answer", "probability", "top_k"}
  POST /v1/classify   JSON {"text", "format": auto|post|bbc|text} -> {"label", "probabilities", "read_as",
                      "sentences", "sentence_weights", "truncated"}
  POST /v1/summarize  JSON {"text"} (an article), optional beam_size, alpha, max_length -> {"headline", "score"}
  POST /v1/transliterate  JSON {"text"} (romanized), optional beam_size, alpha -> {"text", "words", "warnings"}
  POST /v1/respond    JSON {"turns": [{"speaker": USER|SYSTEM, "utterance"}, ...]}, optional beam_size, alpha,
                      max_length -> {"response", "score", "hypotheses", "turn_attention"}
  POST /v1/generate   JSON {"prompt", "temperature", "top_k", "length", "seed", "num_samples", "beam_size"}
                      (all optional) -> {"continuations"}
  GET  /healthz       the models and the batches run;   GET /docs, /openapi.json: the API

Video captioning and activities are not served: a video is a file of minutes to decode and sample
frames from (`captioner video` reads files and folders in batch).

Requests that arrive together are batched into one model call (--max-batch, --max-wait-ms);
--max-queue waiting requests per task, then 503. Captions are pipelined: the backbone runs on
the next batch while the beam search decodes this one (--no-pipeline: one after the other).
Binds to 127.0.0.1 unless --host says otherwise.

  curl -F image=@assets/samples/cat.jpg http://127.0.0.1:8000/v1/caption
"""

import argparse
import sys


def register(subparsers):
    p = subparsers.add_parser("serve", help="serve the models over HTTP (FastAPI): caption, translate, entail, ask, "
                              "classify, summarize, transliterate, respond, generate",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--models", nargs="+", default=None, metavar="TASK[=PATH]",
                   help="tasks to serve (caption, translate, entail, ask, classify, summarize, transliterate, respond, "
                        "generate), each with the bundled model or TASK=PATH to a .keras file (default: all nine "
                        "bundled defaults)")
    p.add_argument("--max-batch", type=int, default=32, help="requests per model call (default 32)")
    p.add_argument("--max-wait-ms", type=float, default=5.0,
                   help="how long a request waits for others to share its model call (default 5)")
    p.add_argument("--max-queue", type=int, default=256, help="waiting requests per task before 503 (default 256)")
    p.add_argument("--max-body-mb", type=float, default=10.0, help="largest request body (default 10 MB)")
    p.add_argument("--max-pixels", type=int, default=40_000_000, help="largest image, width * height (default 40M)")
    p.add_argument("--max-decode-pixels", type=int, default=80_000_000,
                   help="pixels of the images decoded at once over all requests; an upload that does not fit "
                        "now gets 503 (default 80M: twice --max-pixels)")
    p.add_argument("--body-timeout", type=float, default=60.0,
                   help="seconds a request body may take to arrive, else 408 (default 60)")
    p.add_argument("--max-connections", type=int, default=64,
                   help="open connections at once; past it new ones get 503 (default 64)")
    p.add_argument("--allowed-hosts", nargs="+", default=None, metavar="NAME",
                   help="Host header names to answer (default: localhost, 127.0.0.1 and ::1 when bound to loopback, "
                        "which stops DNS-rebinding pages; any name when bound elsewhere); '*' for any")
    p.add_argument("--no-pipeline", dest="pipeline", action="store_false",
                   help="caption batches run backbone then beam search in one call, instead of the backbone of "
                        "the next batch overlapping the search of this one (less memory, lower throughput)")
    p.set_defaults(func=run)


def parse_models(entries):
    """["caption", "translate=path.keras"] -> {"caption": None, "translate": "path.keras"}."""
    from captioner.errors import InputError
    from captioner.serving.app import TASKS

    if not entries:
        return dict.fromkeys(TASKS)
    out = {}
    for entry in entries:
        task, _, path = entry.partition("=")
        task = task.strip()
        if task not in TASKS:
            raise InputError(f"--models {entry!r}: unknown task {task!r}; tasks are {', '.join(TASKS)}")
        if task in out:
            raise InputError(f"--models: {task} given twice")
        out[task] = path.strip() or None
    return out


def run(args):
    from captioner.errors import InputError

    import math

    from captioner.serving.app import LOOPBACK_HOSTS

    for name in ("port", "max_batch", "max_queue", "max_pixels", "max_decode_pixels", "max_connections"):
        if getattr(args, name) < 1:
            raise InputError(f"--{name.replace('_', '-')} must be >= 1")
    if not (math.isfinite(args.max_wait_ms) and args.max_wait_ms >= 0):  # before any model loads
        raise InputError(f"--max-wait-ms must be a finite number >= 0, got {args.max_wait_ms}")
    if not (math.isfinite(args.body_timeout) and args.body_timeout > 0):
        raise InputError(f"--body-timeout must be a finite number of seconds > 0, got {args.body_timeout}")
    if not (math.isfinite(args.max_body_mb) and args.max_body_mb > 0):
        raise InputError(f"--max-body-mb must be a finite number > 0 (0 would turn the limit off), got {args.max_body_mb}")
    if args.allowed_hosts is not None:
        allowed = None if "*" in args.allowed_hosts else tuple(args.allowed_hosts)
    else:
        allowed = LOOPBACK_HOSTS if args.host.strip("[]") in LOOPBACK_HOSTS or args.host.startswith("127.") else None
    spec = parse_models(args.models)
    import uvicorn

    from captioner.serving.app import Limits, create_app, load_models, warm_up

    models = load_models(spec)
    print(f"captioner serve: warming up {', '.join(models)}", file=sys.stderr, flush=True)
    warm_up(models)
    limits = Limits(max_body_bytes=int(args.max_body_mb * 1024 * 1024), max_pixels=args.max_pixels,
                    max_batch=args.max_batch, max_wait_ms=args.max_wait_ms, max_queue=args.max_queue, pipeline=args.pipeline,
                    allowed_hosts=allowed, max_decode_pixels=args.max_decode_pixels,
                    body_timeout_s=args.body_timeout)
    app = create_app(models, limits)
    print(f"captioner serve: http://{args.host}:{args.port} (docs at /docs)", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", access_log=False,
                limit_concurrency=args.max_connections, timeout_keep_alive=5)
    return 0

"""The HTTP JSON API (FastAPI): caption, translate, entail, ask, healthz; OpenAPI at /docs.

    app = create_app(load_models({"caption": None, "translate": None}))   # None: the bundled model
    uvicorn.run(app, host="127.0.0.1", port=8000)

* Models are loaded once, before the app is made, from the bundled files or paths the operator
  gives (`captioner serve --models task=path`); no request can name a file to load.
* Each task has a `Batcher`: requests that arrive together are one model call.
* Limits: request bodies over `max_body_bytes` get 413 (checked on Content-Length and while
  the body streams in), images over `max_pixels` get 413, a full queue 503.
* Every error is JSON ``{"error": message}`` with a 4xx status for bad input (400 unreadable
  image or empty text, 413 too large, 415 wrong content type, 422 malformed fields) and 503
  when busy; anything unexpected is a 500 ``{"error": "internal error"}``, logged, without a
  traceback in the answer.
"""


import asyncio
import base64
import binascii
import contextlib
import dataclasses
import json
import logging
from pathlib import Path

import numpy as np

from captioner.errors import CaptionerError, ImageError, InputError
from captioner.serving.batcher import Batcher, QueueFull

log = logging.getLogger(__name__)

# each with its default from captioner.bundled; not served: video captioning and activities (a video
# upload is a file of minutes to decode with its own frame sampling: `captioner video` reads files)
TASKS = ("caption", "translate", "entail", "ask", "classify", "summarize", "transliterate", "respond", "generate")


def default_model_path(task):
    """The model `task` is served with unless --models names another: the registry's default
    (`captioner.bundled`), the same one the CLI, the app and the pipeline use."""
    from captioner.bundled import default_path

    return default_path(task)


@dataclasses.dataclass
class Limits:
    max_body_bytes: int = 10 * 1024 * 1024   # a request body (an upload or its base64 JSON)
    max_pixels: int = 40_000_000             # width * height of an uploaded image
    max_text_chars: int = 2000               # a sentence, premise, hypothesis or question
    max_document_chars: int = 100_000        # a post or an article to classify or give a headline
    max_beam_size: int = 10
    max_length: int = 60                     # (or the model's own default, if longer)
    max_batch: int = 32                      # requests per model call
    max_wait_ms: float = 5.0                 # how long the first request of a batch waits for more
    max_queue: int = 256                     # waiting requests per task before 503
    pipeline: bool = True                    # captioner: backbone of batch n+1 overlaps the search of batch n
    allowed_hosts: tuple | None = None       # Host header names served (None: any); `serve` on loopback: loopback names
    max_decode_pixels: int = 80_000_000      # pixels of the images being decoded at once (all requests); past it: 503
    body_timeout_s: float = 60.0             # a request body must arrive within this, else 408


class HTTPError(Exception):
    def __init__(self, status, message):
        super().__init__(message)
        self.status = status
        self.message = message


# ----------------------------------------------------------------------------- models


def load_models(spec):
    """{task: path or None (the bundled model)} -> {task: (loaded model, path)}; InputError for an
    unknown task or a file that is not a model of that task."""
    from captioner.models.loading import load_model_file

    loaders = {
        "caption": ("captioner.models.image_captioner", "ImageCaptioner", "an image captioner"),
        "translate": ("captioner.models.seq2seq_ensemble", ("Seq2Seq", "Seq2SeqEnsemble"), "a translation model"),
        "entail": ("captioner.models.entailment", ("EntailmentClassifier", "EntailmentEnsemble"), "an entailment model"),
        "ask": ("captioner.models.vqa_model", "VQAModel", "a VQA model"),
        "classify": ("captioner.models.document_classifier", ("DocumentClassifier", "DocumentEnsemble"),
                     "a document classifier"),
        "summarize": ("captioner.models.seq2seq_ensemble", ("Seq2Seq", "Seq2SeqEnsemble"), "a headline model"),
        "transliterate": ("captioner.models.seq2seq_ensemble", ("Seq2Seq", "Seq2SeqEnsemble"),
                          "a transliteration model"),
        "respond": ("captioner.models.dialogue_responder", "DialogueResponder", "a dialogue model"),
        "generate": ("captioner.models.language_model", "LanguageModel", "a language model"),
    }
    import importlib

    import captioner.layers.image_preprocessing  # noqa: F401  (registers what saved backbones refer to)

    out = {}
    for task, path in spec.items():
        if task not in loaders:
            raise InputError(f"--models: unknown task {task!r}; tasks are {', '.join(TASKS)}")
        module, names, what = loaders[task]
        module = importlib.import_module(module)
        classes = tuple(getattr(module, n) for n in ((names,) if isinstance(names, str) else names))
        path = str(path or default_model_path(task))
        model = load_model_file(path, classes, what)
        if task == "transliterate":
            from captioner.models.seq2seq import check_transliterator

            check_transliterator(model, f"--models transliterate={path}")
        out[task] = (model, path)
    return out


def _round(x, digits=5):
    return np.round(np.asarray(x, dtype=np.float64), digits).tolist()


class PixelBudget:
    """The pixels of the images decoded at once, over all requests: a decode takes its image's
    pixels (read from the header) before it starts and gives them back when done; one that does
    not fit now is refused (503, try again) instead of growing the server's memory."""

    def __init__(self, limit):
        import threading

        self.limit = int(limit)
        self.used = 0
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def take(self, pixels, name="image"):
        with self._lock:
            if self.used + pixels > self.limit:
                raise HTTPError(503, f"{name}: the server is decoding other images ({self.used} of {self.limit} "
                                     "pixels in flight); try again shortly")
            self.used += pixels
        try:
            yield
        finally:
            with self._lock:
                self.used -= pixels


def decode_image(data, limits, name="image", budget=None):
    """Upload bytes -> RGB PIL image (`captioner.features.images.decode_image_bytes`), refusing
    non-images (400), too many pixels (413) and, with a `PixelBudget`, an image that does not fit
    in the pixels being decoded now (503)."""
    from captioner.features.images import TooManyPixels, decode_image_bytes

    try:
        return decode_image_bytes(data, name, limits.max_pixels, f"the limit is {limits.max_pixels} pixels",
                                  reserve=None if budget is None else (lambda pixels: budget.take(pixels, name)))
    except TooManyPixels as exc:
        raise HTTPError(413, str(exc)) from None
    except ImageError as exc:
        raise HTTPError(400, str(exc)) from None


# ----------------------------------------------------------------------------- batch functions


def caption_stages(model):
    """The captioner in two stages for a pipelined `Batcher`: the backbone, then the beam search
    (one batch's backbone overlaps the previous batch's search).

    encode: items [(pixels uint8 (h, w, 3), (beam_size, alpha, max_length[, style]))] -> [(settings,
    indices, pixels, features)], one group per setting; search: that -> [Caption] in item order."""
    def encode(items):
        groups = {}
        for i, (_, settings) in enumerate(items):
            groups.setdefault(settings, []).append(i)
        encoded = []
        for settings, idx in groups.items():
            pixels = np.stack([items[i][0] for i in idx])
            encoded.append((settings, idx, pixels, model.encode(pixels)))  # features (b, regions, d)
        return len(items), encoded

    objects = getattr(model, "can_tag_objects", False)  # object tags as `captioner caption` (captioner.tagging)

    def search(state):
        count, encoded = state
        results = [None] * count
        for settings, idx, pixels, features in encoded:
            out = model.generate_from_features(features, *settings[:3], objects=objects, pixels=pixels,
                                               style=settings[3] if len(settings) > 3 else None)
            for i, caption in zip(idx, model.decode_outputs(out)):
                results[i] = caption
        return results

    return [encode, search]


def caption_batch(model):
    """items [(pixels uint8 (h, w, 3), (beam_size, alpha, max_length))] -> [Caption], in one call."""
    encode, search = caption_stages(model)
    return lambda items: search(encode(items))


def translate_batch(model):
    """items [(text, (beam_size, alpha, max_length))] -> [Translation] (a headline: its article's)."""
    return grouped(lambda texts, s: model.translate(texts, beam_size=s[0], alpha=s[1], max_length=s[2]))


def grouped(run_group):
    """A batch function over items [(input, settings)]: the items of equal settings in one call,
    `run_group([inputs], settings) -> [results]`; results in the items' order."""
    def run(items):
        results = [None] * len(items)
        groups = {}
        for i, (_, settings) in enumerate(items):
            groups.setdefault(settings, []).append(i)
        for settings, idx in groups.items():
            for i, r in zip(idx, run_group([items[i][0] for i in idx], settings)):
                results[i] = r
        return results
    return run


def transliterate_batch(model):
    """items [(line, (beam_size, alpha))] -> [LineResult], as `captioner transliterate` writes them (one
    word cache for the server's life, bounded as the command's)."""
    from captioner.inference.transliteration import transliterate_text

    cache = {}
    return grouped(lambda lines, s: transliterate_text(model, lines, beam_size=s[0], alpha=s[1], cache=cache))


def respond_batch(model):
    """items [([(speaker, utterance)], (beam_size, alpha, max_length))] -> [Response]."""
    return grouped(lambda contexts, s: model.respond(contexts, beam_size=s[0], alpha=s[1], max_length=s[2]))


def generate_batch(model):
    """items [(prompt, (length, temperature, top_k, seed, num_samples, beam_size))] -> [[texts]]: one
    prompt per model call (the prompt's own length; a call samples its num_samples together)."""
    def run(items):
        return [model.generate(prompt, length=s[0], temperature=s[1], top_k=s[2], seed=s[3], num_samples=s[4],
                               beam_size=s[5]) for prompt, s in items]
    return run


def entail_batch(model):
    def run(items):
        return model.entail([p for p, _ in items], [h for _, h in items])
    return run


def ask_batch(model):
    """items [(pixels, question, encoded question)] -> [VQAAnswer], as `captioner ask` answers them (the
    backbone's ImageNet head on: "what is this?", "is there a dog?" of an unfamiliar photo)."""
    from captioner.text.vocabulary import PAD_ID

    def run(items):
        width = max(len(enc[0]) for _, _, enc in items)
        ids = np.full((len(items), width), PAD_ID, np.int32)  # (B, T)
        for j, (_, _, enc) in enumerate(items):
            ids[j, : len(enc[0])] = enc[0]
        pixels = np.stack([px for px, _, _ in items])
        out = model.predict_ids(pixels, ids, np.arange(len(items)))
        answers = [model.make_answer(q, enc, out["probabilities"][j], out["attention"][j])
                   for j, (_, q, enc) in enumerate(items)]
        return model.answer_objects(pixels, np.arange(len(items)), answers)
    return run


def classify_batch(model):
    """items [text as the model reads it] -> [DocumentClassification]."""
    return model.classify


# a headline is a translation of its article: the same batch of Seq2Seq searches, grouped by settings
BATCH_FUNCTIONS = {"caption": caption_stages, "translate": translate_batch, "entail": entail_batch, "ask": ask_batch,
                   "classify": classify_batch, "summarize": translate_batch, "transliterate": transliterate_batch,
                   "respond": respond_batch, "generate": generate_batch}


# ----------------------------------------------------------------------------- body size


class BodyLimit:
    """ASGI middleware: 413 JSON for a body over `limit` bytes, declared (Content-Length) or
    streamed (the body is read here, at most `limit` bytes, then handed on)."""

    def __init__(self, app, limit, timeout_s=None):
        self.app = app
        self.limit = limit
        self.timeout_s = timeout_s  # the whole body must arrive within this (a silent upload holds memory)

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            return await _send_json(send, 413, {"error": f"request body of {int(declared)} bytes is over the limit "
                                                         f"of {self.limit}"})
        chunks, size = [], 0
        loop = asyncio.get_running_loop()
        deadline = None if self.timeout_s is None else loop.time() + self.timeout_s
        while True:
            try:
                message = await (receive() if deadline is None else
                                 asyncio.wait_for(receive(), max(deadline - loop.time(), 0.0)))
            except asyncio.TimeoutError:
                return await _send_json(send, 408, {"error": f"the request body did not arrive within "
                                                             f"{self.timeout_s:g} s"})
            if message["type"] != "http.request":  # the client went away
                return
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await _send_json(send, 413, {"error": f"request body is over the limit of {self.limit} bytes"})
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()  # after the body: wait for a disconnect

        await self.app(scope, replay, send)


LOOPBACK_HOSTS = ("localhost", "127.0.0.1", "::1")


class HostCheck:
    """ASGI middleware: 400 JSON for a request whose Host header names none of `allowed` (a server
    bound to loopback must not answer a page that DNS-rebinds its own name to 127.0.0.1)."""

    def __init__(self, app, allowed):
        self.app = app
        self.allowed = {h.lower().strip("[]") for h in allowed}

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        raw = dict(scope.get("headers") or []).get(b"host", b"").decode("latin-1").strip().lower()
        name = raw[1:raw.index("]")] if raw.startswith("[") and "]" in raw else raw.rsplit(":", 1)[0] if \
            raw.count(":") == 1 else raw
        if name not in self.allowed:
            return await _send_json(send, 400, {"error": f"Host {raw or '(none)'!r} is not served here; allowed: "
                                                         f"{', '.join(sorted(self.allowed))} (captioner serve "
                                                         "--allowed-hosts)"})
        return await self.app(scope, receive, send)


async def _send_json(send, status, payload):
    body = json.dumps(payload).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


# ----------------------------------------------------------------------------- the app


def create_app(models, limits=None, batchers=None):
    """The FastAPI app over `models` = {task: (model, path)} (from `load_models`; tests may pass
    any object with the task's methods). `batchers` overrides the Batcher of a task (tests)."""
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, Field, StrictFloat, StrictInt

    Number = StrictFloat | StrictInt  # JSON 0.5 or 1, never true / "1": a boolean is no setting
    from starlette.exceptions import HTTPException as StarletteHTTPException

    limits = limits or Limits()
    pixel_budget = PixelBudget(max(limits.max_decode_pixels, limits.max_pixels))
    batchers = dict(batchers or {})
    for task, (model, _) in models.items():
        if task not in batchers:
            run = BATCH_FUNCTIONS[task](model)
            if task == "caption" and not limits.pipeline:
                run = caption_batch(model)
            batchers[task] = Batcher(run, max_batch=limits.max_batch,
                                     max_wait_ms=limits.max_wait_ms, max_queue=limits.max_queue, name=task)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        for b in batchers.values():
            b.close()

    app = FastAPI(title="captioner", version="1", lifespan=lifespan,
                  description="Image captioning, translation, entailment and visual question answering with "
                              "attention models. Requests that arrive together are batched into one model call.")
    app.state.batchers = batchers
    app.state.limits = limits

    @app.exception_handler(HTTPError)
    async def _http_error(request, exc):
        return JSONResponse({"error": exc.message}, status_code=exc.status)

    @app.exception_handler(QueueFull)
    async def _queue_full(request, exc):
        return JSONResponse({"error": f"{exc}; try again shortly"}, status_code=503, headers={"Retry-After": "1"})

    @app.exception_handler(CaptionerError)
    async def _input_error(request, exc):
        return JSONResponse({"error": str(exc)}, status_code=400)

    @app.exception_handler(RequestValidationError)
    async def _validation(request, exc):
        problems = [f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()]
        return JSONResponse({"error": "invalid request: " + "; ".join(problems)}, status_code=422)

    @app.exception_handler(StarletteHTTPException)
    async def _starlette(request, exc):
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def _unexpected(request, exc):
        log.error("unexpected error on %s: %s: %s", request.url.path, type(exc).__name__, exc)
        return JSONResponse({"error": "internal error"}, status_code=500)

    def model_of(task):
        if task not in models:
            raise HTTPError(404, f"this server has no {task} model (started with --models {', '.join(models)})")
        return models[task][0]

    def settings(model, beam_size, alpha, max_length):
        beam_size = model.beam_size if beam_size is None else beam_size
        alpha = model.alpha if alpha is None else alpha
        max_length = model.max_length if max_length is None else max_length
        if not 1 <= beam_size <= limits.max_beam_size:
            raise HTTPError(422, f"beam_size must be 1..{limits.max_beam_size}, got {beam_size}")
        most = max(limits.max_length, int(model.max_length))  # a model's own default is always allowed
        if not 1 <= max_length <= most:
            raise HTTPError(422, f"max_length must be 1..{most}, got {max_length}")
        if not 0.0 <= alpha <= 5.0:
            raise HTTPError(422, f"alpha must be 0..5, got {alpha}")
        return int(beam_size), float(alpha), int(max_length)

    def text_field(name, value, limit=None):
        """A request's text: non-empty, UTF-8 encodable, at most `limit` characters (a sentence's by default)."""
        limit = limits.max_text_chars if limit is None else limit
        if not isinstance(value, str) or not value.strip():
            raise HTTPError(400, f"{name}: empty text")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate ("\ud800") that JSON can carry and UTF-8 cannot
            raise HTTPError(400, f"{name}: not valid Unicode text (a lone surrogate code point)") from None
        if len(value) > limit:
            raise HTTPError(413, f"{name}: {len(value)} characters, more than the limit of {limit}")
        return value

    async def read_image_request(request):
        """(image bytes, other fields) of a multipart upload (field `image`) or a JSON body
        {"image_base64": ...}."""
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if kind == "multipart/form-data":
            try:
                form = await request.form(max_files=1, max_fields=10)
            except Exception as exc:
                raise HTTPError(400, f"malformed multipart body ({type(exc).__name__})") from None
            upload = form.get("image")
            if upload is None or isinstance(upload, str):
                raise HTTPError(422, "multipart field 'image' (a file) is missing")
            data = await upload.read()
            fields = {k: v for k, v in form.items() if k != "image" and isinstance(v, str)}
        elif kind == "application/json":
            fields = await read_json(request)
            encoded = fields.pop("image_base64", None)
            if not isinstance(encoded, str):
                raise HTTPError(422, "JSON field 'image_base64' (a base64 string) is missing")
            try:
                data = base64.b64decode(encoded.split(",", 1)[1] if encoded.startswith("data:") else encoded,
                                        validate=True)
            except (binascii.Error, ValueError):
                raise HTTPError(400, "image_base64: not valid base64") from None
        else:
            raise HTTPError(415, "send multipart/form-data with an 'image' file, or JSON {\"image_base64\": ...}")
        return data, fields

    async def read_json(request):
        try:
            body = json.loads(await request.body())
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise HTTPError(400, "the body is not valid JSON") from None
        except RecursionError:
            raise HTTPError(400, "the JSON body is nested too deeply") from None
        if not isinstance(body, dict):
            raise HTTPError(422, "the JSON body must be an object")
        return body

    def number(fields, name, kind):
        value = fields.get(name)
        if value is None or value == "":
            return None
        if isinstance(value, bool):  # JSON true is not 1
            raise HTTPError(422, f"{name} must be a {kind.__name__}, got {json.dumps(value)}")
        try:
            if kind is int and isinstance(value, float) and not value.is_integer():
                raise ValueError
            return kind(value)
        except (TypeError, ValueError):
            raise HTTPError(422, f"{name} must be a {kind.__name__}, got {value!r}") from None

    async def pixels_of(request, model):
        from starlette.concurrency import run_in_threadpool

        data, fields = await read_image_request(request)
        h, w = model.input_size

        def load():
            from captioner.features.images import model_pixels

            return model.load_pixels(model_pixels(decode_image(data, limits, budget=pixel_budget), (h, w)))
        return await run_in_threadpool(load), fields

    class CaptionHypothesis(BaseModel):
        caption: str
        score: float

    class CaptionAttention(BaseModel):
        words: list[str] = Field(description="the caption's words, then <end>: one map each")
        grid: list[int] = Field(description="(h, w) of each map")
        maps: list[list[list[float]]] = Field(description="(steps, h, w) attention weights")

    class CaptionResponse(BaseModel):
        caption: str
        score: float = Field(description="log-probability / length**alpha")
        hypotheses: list[CaptionHypothesis]
        attention: CaptionAttention
        objects: list[dict] = Field(default=[], description="object tags of the backbone's ImageNet head "
                                                            "(word, synset, name, probability)")

    caption_body = {"content": {
        "multipart/form-data": {"schema": {"type": "object", "required": ["image"], "properties": {
            "image": {"type": "string", "format": "binary"}, "beam_size": {"type": "integer"},
            "alpha": {"type": "number"}, "max_length": {"type": "integer"}, "style": {"type": "string"}}}},
        "application/json": {"schema": {"type": "object", "required": ["image_base64"], "properties": {
            "image_base64": {"type": "string"}, "beam_size": {"type": "integer"}, "alpha": {"type": "number"},
            "max_length": {"type": "integer"}, "style": {"type": "string"}}}}}, "required": True}

    @app.post("/v1/caption", response_model=CaptionResponse, openapi_extra={"requestBody": caption_body},
              summary="Caption an image (multipart field 'image', or JSON {'image_base64': ...})")
    async def caption(request: Request):
        model = model_of("caption")
        pixels, fields = await pixels_of(request, model)
        key = settings(model, number(fields, "beam_size", int), number(fields, "alpha", float),
                       number(fields, "max_length", int))
        style = fields.get("style") or None
        styles = model.style_options
        if style is not None and (not isinstance(style, str) or style not in styles):
            raise HTTPError(422, f"style {style!r}: this captioner writes "
                                 f"{', '.join(styles) if styles else 'one style (it has no styles)'}")
        result = await batchers["caption"].submit((pixels, (*key, style)))
        grid = list(model.grid_shape) if model.feature == "grid" else [1, 1]
        return {"caption": result.text, "score": result.score,
                "hypotheses": [{"caption": t, "score": s} for t, s in result.hypotheses],
                "attention": {"words": list(result.tokens) + ["<end>"] * (len(result.attention) - len(result.tokens)),
                              "grid": grid, "maps": _round(result.attention)},
                "objects": list(getattr(result, "objects", []) or [])}

    class SearchFields(BaseModel):  # a request's search settings (None: the model's own)
        beam_size: StrictInt | None = None
        alpha: Number | None = None
        max_length: StrictInt | None = None

    class TextSearchRequest(SearchFields):  # a translation's or a headline's: the text and the search settings
        text: str

    class TranslateResponse(BaseModel):
        translation: str
        score: float
        hypotheses: list[dict]
        source_tokens: list[str]
        attention: list[list[float]] | None = Field(description="(target steps, source tokens)")

    @app.post("/v1/translate", response_model=TranslateResponse, summary="Translate one sentence")
    async def translate(body: TextSearchRequest):
        model = model_of("translate")
        text = text_field("text", body.text)
        if not model.source_tokens(text):
            raise HTTPError(400, "text: no words")
        result = await batchers["translate"].submit((text, settings(model, body.beam_size, body.alpha, body.max_length)))
        return {"translation": result.text, "score": result.score,
                "hypotheses": [{"translation": t, "score": s} for t, s in result.hypotheses],
                "source_tokens": result.source_tokens,
                "attention": None if result.attention is None else _round(result.attention)}

    class EntailRequest(BaseModel):
        premise: str
        hypothesis: str

    class EntailResponse(BaseModel):
        label: str
        probabilities: dict[str, float]
        premise_tokens: list[str]
        hypothesis_tokens: list[str]

    @app.post("/v1/entail", response_model=EntailResponse,
              summary="Classify a premise/hypothesis pair: ENTAILMENT, NEUTRAL or CONTRADICTION")
    async def entail(body: EntailRequest):
        from captioner.models.entailment import entail_tokens

        model_of("entail")
        premise, hypothesis = text_field("premise", body.premise), text_field("hypothesis", body.hypothesis)
        for name, text in (("premise", premise), ("hypothesis", hypothesis)):
            if not entail_tokens(text):
                raise HTTPError(400, f"{name}: no words")
        result = await batchers["entail"].submit((premise, hypothesis))
        return {"label": result.label, "probabilities": result.probabilities,
                "premise_tokens": result.premise_tokens, "hypothesis_tokens": result.hypothesis_tokens}

    ask_body = {"content": {
        "multipart/form-data": {"schema": {"type": "object", "required": ["image", "question"], "properties": {
            "image": {"type": "string", "format": "binary"}, "question": {"type": "string"}}}},
        "application/json": {"schema": {"type": "object", "required": ["image_base64", "question"], "properties": {
            "image_base64": {"type": "string"}, "question": {"type": "string"}}}}}, "required": True}

    @app.post("/v1/ask", openapi_extra={"requestBody": ask_body},
              summary="Answer a question about an image (field 'question' with 'image' or 'image_base64')")
    async def ask(request: Request):
        model = model_of("ask")
        pixels, fields = await pixels_of(request, model)
        question = text_field("question", fields.get("question"))
        try:
            encoded = model.encode_question(question)
        except InputError as exc:
            raise HTTPError(400, f"question: {exc}") from None
        result = await batchers["ask"].submit((pixels, question, encoded))
        return result.to_json()

    class DocumentRequest(BaseModel):
        text: str
        format: str = Field("auto", description="auto (a Usenet post when it starts with headers holding a "
                                                "Subject, else text), post, bbc or text: as `captioner classify`")

    class ClassifyResponse(BaseModel):
        label: str
        probabilities: dict[str, float]
        read_as: str
        sentences: list[str]
        sentence_weights: list[float]
        truncated: bool

    def document_field(body):
        from captioner.data.document_reading import read_document_text

        text = text_field("text", body.text, limits.max_document_chars)
        try:
            return read_document_text(text, body.format, where="text")
        except InputError as exc:
            raise HTTPError(400, str(exc)) from None

    @app.post("/v1/classify", response_model=ClassifyResponse,
              summary="Classify a document (a post, an article) with its sentence attention")
    async def classify(body: DocumentRequest):
        model_of("classify")
        text, read_as = document_field(body)
        if not model_of("classify").read(text)[0]:
            raise HTTPError(400, "text: no words to classify")
        result = (await batchers["classify"].submit(text)).to_json()
        result.pop("word_weights")
        return {**result, "read_as": read_as}

    class SummarizeResponse(BaseModel):
        headline: str
        score: float

    @app.post("/v1/summarize", response_model=SummarizeResponse, summary="Write a headline for an article")
    async def summarize(body: TextSearchRequest):
        model = model_of("summarize")
        text = text_field("text", body.text, limits.max_document_chars)
        if not model.source_tokens(text):
            raise HTTPError(400, "text: no words")
        result = await batchers["summarize"].submit((text, settings(model, body.beam_size, body.alpha,
                                                                    body.max_length)))
        return {"headline": result.text, "score": result.score}

    class TransliterateRequest(BaseModel):
        text: str
        beam_size: StrictInt | None = None
        alpha: Number | None = None

    class TransliterateResponse(BaseModel):
        text: str
        words: list[dict] = Field(description="each Latin word read: its source and the model's candidates "
                                              "[[text, score]], best first")
        warnings: list[str]

    @app.post("/v1/transliterate", response_model=TransliterateResponse,
              summary="Romanized text -> native script, word by word (as `captioner transliterate`)")
    async def transliterate(body: TransliterateRequest):
        model = model_of("transliterate")
        text = text_field("text", body.text)
        beam_size, alpha, _ = settings(model, body.beam_size, body.alpha, None)
        result = await batchers["transliterate"].submit((text, (beam_size, alpha)))
        return {"text": result.text, "warnings": result.warnings,
                "words": [{"source": w, "candidates": [[t, float(sc)] for t, sc in hyps]} for w, hyps in result.words]}

    class Turn(BaseModel):
        speaker: str = Field(description="USER or SYSTEM")
        utterance: str

    class RespondRequest(SearchFields):
        turns: list[Turn] = Field(description="the dialogue so far, oldest first")

    class RespondResponse(BaseModel):
        response: str
        score: float
        hypotheses: list[dict]
        turn_attention: list[float] = Field(description="mean attention over the turns read, oldest first")

    @app.post("/v1/respond", response_model=RespondResponse,
              summary="The next SYSTEM turn of a dialogue (as `captioner respond`)")
    async def respond(body: RespondRequest):
        model = model_of("respond")
        if not body.turns or len(body.turns) > 100:
            raise HTTPError(400, f"turns: give 1 to 100 turns, got {len(body.turns)}")
        turns = []
        for i, turn in enumerate(body.turns):
            if turn.speaker not in ("USER", "SYSTEM"):
                raise HTTPError(400, f"turns[{i}].speaker: USER or SYSTEM, got {turn.speaker[:20]!r}")
            turns.append((turn.speaker, text_field(f"turns[{i}].utterance", turn.utterance)))
        key = settings(model, body.beam_size, body.alpha, body.max_length)
        result = await batchers["respond"].submit((turns, key))
        return {"response": result.text, "score": result.score,
                "hypotheses": [{"response": t, "score": sc} for t, sc in result.hypotheses],
                "turn_attention": _round(result.turn_attention.mean(0), 4)}

    class GenerateRequest(BaseModel):
        prompt: str = ""
        temperature: Number = 1.0
        top_k: StrictInt = 0
        length: StrictInt | None = Field(None, description="tokens (default: 300 characters / 30 words)")
        seed: StrictInt = 0
        num_samples: StrictInt = 1
        beam_size: StrictInt = 1

    class GenerateResponse(BaseModel):
        continuations: list[str]

    @app.post("/v1/generate", response_model=GenerateResponse,
              summary="Continue a prompt with a language model (as `captioner generate`)")
    async def generate(body: GenerateRequest):
        from captioner.models.language_model import GENERATION_BOUNDS, check_generation

        model = model_of("generate")
        prompt = text_field("prompt", body.prompt) if body.prompt else ""
        length = (300 if model.level == "char" else 30) if body.length is None else body.length
        most = 2000 if model.level == "char" else 200
        bounds = {**GENERATION_BOUNDS, "temperature": (0, 5), "top_k": (0, len(model.vocabulary)), "length": (1, most),
                  "num_samples": (1, 10), "beam_size": (1, limits.max_beam_size)}  # narrower than the CLI's
        try:
            check_generation({"temperature": body.temperature, "top_k": body.top_k, "length": length,
                              "num_samples": body.num_samples, "beam_size": body.beam_size, "seed": body.seed}, bounds)
        except InputError as exc:
            raise HTTPError(422, str(exc)) from None
        try:
            model.prompt_ids(prompt)  # a character the model does not know: its error, before the queue
        except InputError as exc:
            raise HTTPError(400, f"prompt: {exc}") from None
        key = (length, float(body.temperature), body.top_k, body.seed, body.num_samples, body.beam_size)
        return {"continuations": await batchers["generate"].submit((prompt, key))}

    @app.get("/healthz", summary="Liveness, the models loaded and the batches run so far")
    async def healthz():
        return {"status": "ok", "models": {task: Path(path).name for task, (_, path) in models.items()},
                "batches": {task: {"calls": b.calls, "requests": sum(b.batch_sizes), "waiting": b.waiting,
                                   "stage_seconds": [round(t, 3) for t in b.stage_seconds]}
                            for task, b in batchers.items()}}

    if limits.max_body_bytes:
        app.add_middleware(BodyLimit, limit=limits.max_body_bytes, timeout_s=limits.body_timeout_s)
    if limits.allowed_hosts is not None:
        app.add_middleware(HostCheck, allowed=limits.allowed_hosts)  # added last: runs first
    return app


def warm_up(models):
    """One tiny call per model so that the first request does not pay for tracing."""
    for task, (model, _) in models.items():
        if task == "caption":
            # batch 1, then 2: the backbone's function is relaxed to any batch size, so no
            # request pays for tracing later
            h, w = model.input_size
            for n in (1, 2):
                caption_batch(model)([(np.zeros((h, w, 3), np.uint8), (model.beam_size, model.alpha, model.max_length))] * n)
        elif task == "translate":
            translate_batch(model)([("a", (model.beam_size, model.alpha, model.max_length))])
        elif task == "entail":
            entail_batch(model)([("a man", "a man")])
        elif task == "ask":
            h, w = model.input_size
            ask_batch(model)([(np.zeros((h, w, 3), np.uint8), "what", model.encode_question("what"))])
        elif task == "transliterate":
            transliterate_batch(model)([("a", (model.beam_size, model.alpha))])
        elif task == "respond":
            respond_batch(model)([([("USER", "hello")], (model.beam_size, model.alpha, model.max_length))])

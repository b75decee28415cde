"""The HTTP API: answers equal the model's own, bad input is a JSON 4xx, a full queue a 503,
an unexpected failure a JSON 500 without a traceback, and concurrent requests share model
calls. Tiny random captioner for the fast tests; the four bundled models in one slow test."""

import asyncio
import base64
import io
import time
from pathlib import Path

import httpx
import numpy as np
import pytest
from fastapi.testclient import TestClient
from PIL import Image

from captioner.serving.app import Limits, caption_batch, create_app, load_models, warm_up
from captioner.serving.batcher import Batcher
from support.subword import tiny_subword_translator
from support.tiny_captioner import build_tiny_captioner, make_images

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "assets" / "samples"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    model = build_tiny_captioner(max_length=6)
    good, broken = make_images(tmp_path_factory.mktemp("serve_images"))
    return model, good, broken


def _client(model, limits=None, batchers=None):
    # raise_server_exceptions=False: see what a real client sees (Starlette's 500 page path included)
    return TestClient(create_app({"caption": (model, "tiny.keras")}, limits or Limits(), batchers=batchers),
                      raise_server_exceptions=False)


def test_caption_multipart_and_base64_equal_the_model(tiny):
    model, good, _ = tiny
    want = model.caption(good[:2])
    with _client(model) as client:
        r = client.post("/v1/caption", files={"image": open(good[0], "rb")})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["caption"] == want[0].text
        assert body["score"] == pytest.approx(want[0].score, abs=1e-5)
        assert [h["caption"] for h in body["hypotheses"]] == [t for t, _ in want[0].hypotheses]
        assert body["attention"]["grid"] == list(model.grid_shape)
        np.testing.assert_allclose(body["attention"]["maps"], want[0].attention, atol=1e-4)
        assert len(body["attention"]["words"]) == len(want[0].attention)
        data = base64.b64encode(open(good[1], "rb").read()).decode()
        # a "model" field is not an option: the server only ever uses the model it loaded
        r = client.post("/v1/caption", json={"image_base64": data, "model": "/etc/passwd"})
        assert r.status_code == 200 and r.json()["caption"] == want[1].text
        r = client.post("/v1/caption", json={"image_base64": data, "beam_size": 1, "max_length": 3})
        assert r.json()["caption"] == model.caption(good[1:2], beam_size=1, max_length=3)[0].text
        health = client.get("/healthz").json()
        assert health["status"] == "ok" and health["batches"]["caption"]["requests"] == 3
        assert "/v1/caption" in client.get("/openapi.json").json()["paths"]


def test_bad_input_is_a_json_4xx(tiny):
    model, good, broken = tiny
    with _client(model, Limits(max_body_bytes=200_000, max_pixels=80 * 80)) as client:
        cases = [
            (client.post("/v1/caption", files={"image": open(broken[0], "rb")}), 400),  # truncated JPEG
            (client.post("/v1/caption", files={"image": ("notes.jpg", b"not an image")}), 400),
            (client.post("/v1/caption", files={"image": ("empty.jpg", b"")}), 400),
            (client.post("/v1/caption", data={"beam_size": "2"}, files={"other": ("a.jpg", b"x")}), 422),
            (client.post("/v1/caption", json={"image_base64": "%%%"}), 400),
            (client.post("/v1/caption", json={"image": "x"}), 422),
            (client.post("/v1/caption", json=[1, 2]), 422),
            (client.post("/v1/caption", content=b"{not json", headers={"content-type": "application/json"}), 400),
            (client.post("/v1/caption", content=b"x", headers={"content-type": "text/plain"}), 415),
            (client.post("/v1/caption", files={"image": open(good[0], "rb")}, data={"beam_size": "99"}), 422),
            (client.post("/v1/caption", files={"image": open(good[0], "rb")}, data={"beam_size": "two"}), 422),
            # issue 66 item 9: a boolean is no beam size (JSON true was read as 1)
            (client.post("/v1/caption", json={"image_base64": base64.b64encode(open(good[0], "rb").read()).decode(),
                                              "beam_size": True}), 422),
            (client.post("/v1/caption", files={"image": open(good[0], "rb")}, data={"style": "web"}), 422),
            (client.post("/v1/translate", json={"text": "a dog"}), 404),  # no translator loaded
            (client.get("/v1/nothing"), 404),
        ]
        big = io.BytesIO()
        Image.fromarray(np.zeros((100, 100, 3), np.uint8)).save(big, format="PNG")
        cases.append((client.post("/v1/caption", files={"image": ("big.png", big.getvalue())}), 413))  # pixels
        cases.append((client.post("/v1/caption", files={"image": ("x.jpg", b"\xff" * 300_000)}), 413))  # body
        for response, status in cases:
            assert response.status_code == status, (status, response.text)
            assert response.headers["content-type"] == "application/json"
            assert isinstance(response.json()["error"], str) and "Traceback" not in response.text


def test_oversize_streamed_body_without_content_length_is_413(tiny):
    model, _, _ = tiny
    with _client(model, Limits(max_body_bytes=1000)) as client:
        r = client.post("/v1/caption", content=iter([b"a" * 600, b"b" * 600]),
                        headers={"content-type": "application/json"})
        assert r.status_code == 413 and "limit" in r.json()["error"]


def test_an_unexpected_failure_is_a_json_500_without_traceback(tiny):
    model, good, _ = tiny

    def broken(items):
        raise RuntimeError("secret internals")

    with _client(model, batchers={"caption": Batcher(broken, name="caption")}) as client:
        r = client.post("/v1/caption", files={"image": open(good[0], "rb")})
        assert r.status_code == 500 and r.json() == {"error": "internal error"}
        assert "secret" not in r.text and "Traceback" not in r.text


async def _concurrent(app, files, count):
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
        return await asyncio.gather(*[client.post("/v1/caption", files={"image": files[i % len(files)]})
                                      for i in range(count)])


def test_concurrent_requests_share_model_calls(tiny):
    model, good, _ = tiny
    files = [open(p, "rb").read() for p in good]
    batcher = Batcher(caption_batch(model), max_batch=16, max_wait_ms=300, name="caption")
    app = create_app({"caption": (model, "tiny.keras")}, Limits(), batchers={"caption": batcher})
    responses = asyncio.run(_concurrent(app, files, 8))
    assert [r.status_code for r in responses] == [200] * 8
    want = [c.text for c in model.caption(good)]
    assert [r.json()["caption"] for r in responses] == [want[i % len(good)] for i in range(8)]
    assert sum(batcher.batch_sizes) == 8
    assert batcher.calls <= 2, batcher.batch_sizes  # one model call for most, not eight


def test_a_full_queue_is_503(tiny):
    model, good, _ = tiny
    run = caption_batch(model)

    def slow(items):
        time.sleep(0.5)
        return run(items)

    batcher = Batcher(slow, max_batch=1, max_wait_ms=0, max_queue=1, name="caption")
    app = create_app({"caption": (model, "tiny.keras")}, Limits(), batchers={"caption": batcher})
    responses = asyncio.run(_concurrent(app, [open(good[0], "rb").read()], 6))
    codes = sorted(r.status_code for r in responses)
    assert set(codes) <= {200, 503} and 503 in codes and 200 in codes, codes
    busy = [r for r in responses if r.status_code == 503][0]
    assert "queue is full" in busy.json()["error"] and busy.headers.get("retry-after") == "1"


def test_serve_command_defaults_and_models_option():
    from captioner.cli import build_parser
    from captioner.commands.serve import parse_models
    from captioner.errors import InputError

    args = build_parser().parse_args(["serve"])
    assert args.host == "127.0.0.1" and args.port == 8000
    assert parse_models(None) == {"caption": None, "translate": None, "entail": None, "ask": None, "classify": None,
                                  "summarize": None, "transliterate": None, "respond": None, "generate": None}
    assert parse_models(["caption=m.keras", "entail"]) == {"caption": "m.keras", "entail": None}
    for bad in (["video"], ["caption", "caption=x.keras"]):
        with pytest.raises(InputError):
            parse_models(bad)


@pytest.mark.slow
def test_the_bundled_models_answer():
    models = load_models(dict.fromkeys(("caption", "translate", "entail", "ask", "classify", "summarize")))
    warm_up(models)
    with TestClient(create_app(models)) as client:
        r = client.post("/v1/caption", files={"image": open(SAMPLES / "cat.jpg", "rb")})
        assert r.status_code == 200
        want = models["caption"][0].caption([str(SAMPLES / "cat.jpg")], objects=True)[0]  # tags, as `captioner caption`
        assert r.json()["caption"] == want.text and r.json()["objects"] == want.objects
        assert sorted(models["caption"][0].style_options) == ["auto", "flickr8k", "web"]
        for style in models["caption"][0].style_options:  # the default captioner's styles, per request
            r = client.post("/v1/caption", files={"image": open(SAMPLES / "cat.jpg", "rb")}, data={"style": style})
            want = models["caption"][0].caption([str(SAMPLES / "cat.jpg")], objects=True, style=style)[0]
            assert r.status_code == 200 and r.json()["caption"] == want.text, style
        r = client.post("/v1/caption", files={"image": open(SAMPLES / "cat.jpg", "rb")}, data={"style": "news"})
        assert r.status_code == 422 and "flickr8k, web, auto" in r.json()["error"]
        r = client.post("/v1/translate", json={"text": "A dog runs on the beach."})
        assert r.json()["translation"] == models["translate"][0].translate(["A dog runs on the beach."])[0].text
        r = client.post("/v1/entail", json={"premise": "A man is playing a guitar.",
                                            "hypothesis": "A man is playing an instrument."})
        assert r.json()["label"] in ("ENTAILMENT", "NEUTRAL", "CONTRADICTION")
        # /v1/ask answers photos with the photo model (captioner.bundled's default), as `captioner ask` does
        assert models["ask"][1].endswith("photo_vqa.keras")
        image = SAMPLES / "grace_hopper.jpg"
        r = client.post("/v1/ask", files={"image": open(image, "rb")}, data={"question": "what color is the hat?"})
        assert r.status_code == 200 and r.json()["answer"]
        assert client.post("/v1/ask", files={"image": open(image, "rb")}).status_code == 400  # no question
        for question in ("is there a dog?", "what is this?"):  # the ImageNet head answers, as in `captioner ask`
            r = client.post("/v1/ask", files={"image": open(SAMPLES / "coffee.jpg", "rb")}, data={"question": question})
            want = models["ask"][0].answer(str(SAMPLES / "coffee.jpg"), question, objects=True)
            assert r.status_code == 200 and r.json()["answer"] == want.answer and r.json()["from_tag"], question
        # a post and an article, read and answered as `captioner classify` and `captioner summarize` do
        from captioner.commands.classify import read_for_model

        post = SAMPLES / "text" / "newsgroup_post.txt"
        text, read_as, _ = read_for_model(str(post))
        r = client.post("/v1/classify", json={"text": post.read_text(encoding="utf-8")})
        want = models["classify"][0].classify([text])[0]
        assert r.status_code == 200 and r.json()["label"] == want.label and r.json()["read_as"] == read_as == "post"
        assert r.json()["probabilities"] == pytest.approx(want.probabilities, abs=1e-5)
        article = "The government announced new funding for schools on Monday, the education minister said."
        r = client.post("/v1/summarize", json={"text": article})
        assert r.status_code == 200 and r.json()["headline"] == models["summarize"][0].translate([article])[0].text
        assert client.post("/v1/classify", json={"text": "   "}).status_code == 400
        assert client.post("/v1/classify", json={"text": "a b", "format": "pdf"}).status_code == 400
        for task in ("classify", "summarize"):  # a lone surrogate, as JSON can carry it: 400, never a 500
            r = client.post(f"/v1/{task}", content=b'{"text": "a post \\ud800 about bikes"}',
                            headers={"content-type": "application/json"})
            assert r.status_code == 400 and "surrogate" in r.json()["error"], (task, r.text)


@pytest.mark.slow
def test_the_bundled_text_generators_answer_as_their_commands():
    """/v1/transliterate, /v1/respond and /v1/generate on the bundled models: the answers of
    `captioner transliterate`, `respond` and `generate` for the same input and settings."""
    from captioner.inference.transliteration import transliterate_text

    models = load_models(dict.fromkeys(("transliterate", "respond", "generate")))
    warm_up(models)
    with TestClient(create_app(models)) as client:
        model = models["transliterate"][0]
        r = client.post("/v1/transliterate", json={"text": "namaste, aap kaise hain?"})
        want = transliterate_text(model, ["namaste, aap kaise hain?"])[0]
        assert r.status_code == 200 and r.json()["text"] == want.text and not want.text.isascii()
        assert [w["source"] for w in r.json()["words"]] == ["namaste", "aap", "kaise", "hain"]
        r = client.post("/v1/transliterate", json={"text": "नमस्ते"})  # nothing Latin: copied, with a warning
        assert r.status_code == 200 and r.json()["text"] == "नमस्ते" and r.json()["warnings"]
        model = models["respond"][0]
        turns = [{"speaker": "USER", "utterance": "I want to book a table for two."}]
        r = client.post("/v1/respond", json={"turns": turns, "beam_size": 2})
        want = model.respond([[("USER", "I want to book a table for two.")]], beam_size=2)[0]
        assert r.status_code == 200 and r.json()["response"] == want.text and len(r.json()["turn_attention"]) == 1
        assert client.post("/v1/respond", json={"turns": []}).status_code == 400
        assert client.post("/v1/respond", json={"turns": [{"speaker": "BOT", "utterance": "hi"}]}).status_code == 400
        model = models["generate"][0]
        body = {"prompt": "a dog", "temperature": 0.8, "seed": 3, "num_samples": 2, "length": 12}
        r = client.post("/v1/generate", json=body)
        want = model.generate("a dog", length=12, temperature=0.8, seed=3, num_samples=2)
        assert r.status_code == 200 and r.json()["continuations"] == want
        for bad in ({"temperature": -1}, {"num_samples": 11}, {"length": 0}, {"top_k": -2}, {"seed": -1}):
            assert client.post("/v1/generate", json={"prompt": "a", **bad}).status_code == 422, bad
        r = client.post("/v1/generate", json={"prompt": "a", "num_samples": 11})  # the CLI's check, narrower bounds
        assert r.json()["error"] == "num_samples 11: must be at most 10"
        assert client.get("/healthz").json()["models"]["transliterate"] == "dakshina_hi_translit.keras"


def test_pipelined_and_serial_servers_answer_alike(tiny):
    model, good, _ = tiny
    answers = {}
    for pipeline in (True, False):
        app = create_app({"caption": (model, "tiny.keras")}, Limits(pipeline=pipeline))
        assert len(app.state.batchers["caption"].stages) == (2 if pipeline else 1)
        responses = asyncio.run(_concurrent(app, [open(p, "rb").read() for p in good], 6))
        assert [r.status_code for r in responses] == [200] * 6
        answers[pipeline] = [(r.json()["caption"], round(r.json()["score"], 4)) for r in responses]
    assert answers[True] == answers[False]
    assert [c for c, _ in answers[True]] == [model.caption(good)[i % len(good)].text for i in range(6)]


def test_serve_no_pipeline_option():
    from captioner.cli import build_parser

    assert build_parser().parse_args(["serve"]).pipeline is True
    assert build_parser().parse_args(["serve", "--no-pipeline"]).pipeline is False


def test_translate_with_a_subword_model_answers_in_words():
    model = tiny_subword_translator(("Ein Mann läuft über die Straße.", "Zwei Hunde."))
    with TestClient(create_app({"translate": (model, "spm.keras")}, Limits())) as client:
        r = client.post("/v1/translate", json={"text": "Zwei Hunde laufen."})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["source_tokens"] == ["Zwei", "Hunde", "laufen."]
    assert body["translation"] == model.translate(["Zwei Hunde laufen."])[0].text and "\u2581" not in body["translation"]
    assert all(len(row) == 3 for row in body["attention"])
    # a model whose own max_length passes the server's limit (a subword model counts pieces) answers
    # at its default; a request for more than both is refused
    long = type(model).from_config({**model.get_config(), "max_length": 70})
    long.set_weights(model.get_weights())
    with TestClient(create_app({"translate": (long, "spm.keras")}, Limits(max_length=60))) as client:
        assert client.post("/v1/translate", json={"text": "Zwei Hunde."}).status_code == 200
        r = client.post("/v1/translate", json={"text": "Zwei Hunde.", "max_length": 71})
        assert r.status_code == 422 and "1..70" in r.json()["error"]
        for field in ("beam_size", "alpha", "max_length"):  # issue 66 item 9: true is not 1
            assert client.post("/v1/translate", json={"text": "Zwei Hunde.", field: True}).status_code == 422
        assert client.post("/v1/translate", json={"text": "Zwei Hunde.", "alpha": 1}).status_code == 200


def test_client_errors_are_4xx_never_500(tiny):
    """Issue 40 item 6: a lone surrogate in a text field, JSON nested 100,000 deep."""
    model, good, _ = tiny
    app = create_app({"caption": (model, "tiny.keras"), "translate": (object(), "stand-in.keras")}, Limits())
    with TestClient(app) as client:
        r = client.post("/v1/translate", content=b'{"text": "\\ud800"}', headers={"content-type": "application/json"})
        assert r.status_code == 400 and "surrogate" in r.json()["error"]
        deep = b"[" * 100_000 + b"]" * 100_000
        r = client.post("/v1/caption", content=deep, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "nested too deeply" in r.json()["error"]


def test_only_the_allowed_host_names_are_served(tiny):
    """Issue 40 item 7 (DNS rebinding): `serve` bound to loopback answers loopback names only."""
    from captioner.serving.app import LOOPBACK_HOSTS

    model, good, _ = tiny
    app = create_app({"caption": (model, "tiny.keras")}, Limits(allowed_hosts=LOOPBACK_HOSTS))
    for base, status in (("http://localhost:8000", 200), ("http://127.0.0.1:8000", 200), ("http://[::1]:8000", 200),
                         ("http://rebound.example:8000", 400), ("http://127.0.0.1.evil.example", 400)):
        with TestClient(app, base_url=base) as client:
            r = client.get("/healthz")
            assert r.status_code == status, base
            if status == 400:
                assert "not served here" in r.json()["error"]


def test_serve_refuses_bad_limits_in_one_line_before_loading(capsys):
    """Issue 40 item 8: --max-wait-ms -1 was a traceback after the models loaded, --max-body-mb 0 turned the
    limit off."""
    from captioner.cli import main

    for argv in (["--max-wait-ms", "-1"], ["--max-wait-ms", "nan"], ["--max-body-mb", "0"], ["--max-body-mb", "-1"]):
        assert main(["serve", "--models", "caption=/nonexistent.keras", *argv]) == 2
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1 and argv[0] in err, err


def test_decoded_pixels_in_flight_are_bounded():
    """Issue 40 item 4: six concurrent 40-megapixel PNGs took the server from 1.8 to 6.3 GB."""
    from captioner.serving.app import HTTPError, PixelBudget, decode_image

    buf = io.BytesIO()
    Image.new("RGB", (300, 200), (10, 20, 30)).save(buf, "PNG")
    budget = PixelBudget(100_000)
    assert decode_image(buf.getvalue(), Limits(), budget=budget).size == (300, 200)
    assert budget.used == 0  # given back
    with budget.take(50_000):  # another request is decoding
        with pytest.raises(HTTPError) as caught:
            decode_image(buf.getvalue(), Limits(), budget=budget)  # 60,000 more do not fit now
        assert caught.value.status == 503
    assert budget.used == 0


def test_a_body_that_stops_arriving_gets_408():
    """Issue 40 item 5: a client that sends 9 of 10 MiB and then nothing held its memory forever."""
    from captioner.serving.app import BodyLimit

    sent = []

    async def app(scope, receive, send):  # never reached
        raise AssertionError("the app was called")

    async def receive():
        if not sent:
            sent.append("first")
            return {"type": "http.request", "body": b"x" * 1000, "more_body": True}
        await asyncio.sleep(3600)  # a silent client

    messages = []

    async def send(message):
        messages.append(message)

    scope = {"type": "http", "headers": [(b"content-length", b"10000")]}
    start = time.perf_counter()
    asyncio.run(BodyLimit(app, limit=1 << 20, timeout_s=0.3)(scope, receive, send))
    assert time.perf_counter() - start < 30
    assert messages[0]["status"] == 408 and b"did not arrive" in messages[1]["body"]

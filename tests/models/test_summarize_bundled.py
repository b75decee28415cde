"""End to end on the bundled headline model (slow; skipped when the file is absent): a real BBC
dev article and a paragraph written for the test, through the model and through the CLI."""

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "assets" / "models" / "bbc_headlines.keras"
BBC = REPO.parent / "shared" / "datasets" / "bbc-news" / "bbc"

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not MODEL.exists(), reason=f"bundled model {MODEL} not present")]

OWN = ("Airbus said on Thursday that it delivered 735 aircraft in 2023, more than any year since 2019, "
       "as airlines rushed to replace older jets. The European planemaker expects demand to stay strong.")


@pytest.fixture(scope="module")
def model():
    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.models.seq2seq import Seq2Seq

    m = keras.models.load_model(MODEL)
    assert isinstance(m, Seq2Seq) and m.kind == "attention"
    return m


def test_bundled_headline_model_writes_headlines_with_attention(model):
    out = model.translate([OWN, ""])
    assert out[1].text == ""
    h = out[0]
    assert 2 <= len(h.tokens) <= model.max_length and h.finished, h.text
    assert h.attention.shape == (len(h.tokens) + 1, len(h.source_tokens))
    assert abs(float(h.attention[0].sum()) - 1.0) < 1e-4
    # the card's dev figures are real: the model beats nothing by accident, but it must score above zero
    card = json.loads(MODEL.with_suffix(".json").read_text())
    assert card["task"] == "summarize" and card["metrics"]["split"] == "dev"


@pytest.mark.skipif(not BBC.is_dir(), reason="BBC News data not present")
def test_bundled_model_on_bbc_dev_articles_through_the_cli(tmp_path):
    from captioner.cli import main
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.metrics.rouge_f1 import corpus_rouge_f1

    _, dev = split_bbc_headlines(load_bbc_headlines(BBC).pairs)
    dev = dev[:40]
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": p.id, "text": p.source}) + "\n" for p in dev) + "{bad\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["summarize", "--model", str(MODEL), "--input", str(src), "--output", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(dev) + 1 and rows[-1]["summary"] is None
    assert [r["id"] for r in rows[:-1]] == [p.id for p in dev]
    rouge = corpus_rouge_f1([p.target for p in dev], [r["summary"] for r in rows[:-1]])
    assert rouge["rouge1"] > 5.0, rouge.scores  # far above chance on real articles

"""End to end on the bundled headline models (slow; each skipped when its file is absent): real
dev sources and a paragraph written for the test, through the model and through the CLI, and
the card's claim that the model beats the lead-N baseline checked on the model's own output."""

import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODELS = REPO / "assets" / "models"
DATASETS = REPO.parent / "shared" / "datasets"
BBC = DATASETS / "bbc-news" / "bbc"
NEWS = DATASETS / "news-category" / "News_Category_Dataset_v3.json"

pytestmark = pytest.mark.slow

OWN = {  # text written for the test, of the kind each model reads
    "bbc_headlines": ("Airbus said on Thursday that it delivered 735 aircraft in 2023, more than any year since 2019, "
                      "as airlines rushed to replace older jets. The European planemaker expects demand to stay strong."),
    "news_headlines": "Airbus delivered 735 aircraft in 2023 as airlines rushed to replace older jets.",
}
NAMES = sorted(OWN)


def _dev(name):
    if name == "bbc_headlines":
        from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines

        if not BBC.is_dir():
            pytest.skip("BBC News data not present")
        return split_bbc_headlines(load_bbc_headlines(BBC).pairs)
    from captioner.data.news_category import load_news_category, split_news_category

    if not NEWS.is_file():
        pytest.skip("News Category data not present")
    return split_news_category(load_news_category(NEWS).pairs)


@pytest.fixture(scope="module", params=NAMES)
def bundled(request):
    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.models.seq2seq import Translator

    path = MODELS / f"{request.param}.keras"
    if not path.exists():
        pytest.skip(f"bundled model {path} not present")
    m = keras.models.load_model(path)
    assert isinstance(m, Translator) and m.kind == "attention"
    return request.param, path, m


def test_bundled_headline_model_writes_headlines_with_attention(bundled):
    name, path, model = bundled
    out = model.translate([OWN[name], ""])
    assert out[1].text == ""
    h = out[0]
    assert 2 <= len(h.tokens) <= model.max_length and h.finished, h.text
    assert h.attention.shape == (len(h.tokens) + 1, len(h.source_tokens))
    assert abs(float(h.attention[0].sum()) - 1.0) < 1e-4
    assert {"airbus", "735", "aircraft", "jets"} & {w.lower() for w in h.tokens}, h.text  # the source's words
    card = json.loads(path.with_suffix(".json").read_text())
    assert card["task"] == "summarize" and card["metrics"]["split"] == "dev"


def test_bundled_model_on_dev_sources_through_the_cli_beats_lead_n(bundled, tmp_path):
    """The first 60 dev pairs through `captioner summarize` (plus a broken row, reported and
    skipped): one row per row, in order, and ROUGE-L above lead-N on the same pairs, N being
    the card's (chosen on train)."""
    from captioner.cli import main
    from captioner.metrics.rouge_f1 import corpus_rouge_f1

    name, path, _ = bundled
    _, dev = _dev(name)
    dev = dev[:60]
    src = tmp_path / "docs.jsonl"
    src.write_text("".join(json.dumps({"id": p.id, "text": p.source}) + "\n" for p in dev) + "{bad\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["summarize", "--model", str(path), "--input", str(src), "--output", str(out)]) == 1  # the bad row
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(dev) + 1 and rows[-1]["summary"] is None
    assert [r["id"] for r in rows[:-1]] == [p.id for p in dev]
    references = [p.target for p in dev]
    rouge = corpus_rouge_f1(references, [r["summary"] for r in rows[:-1]])
    n = json.loads(path.with_suffix(".json").read_text())["metrics"]["lead_n"]
    lead = corpus_rouge_f1(references, [" ".join(p.source.split()[:n]) for p in dev])
    assert rouge["rougeL"] > lead["rougeL"], (rouge.scores, lead.scores)

"""The data and the figure of `captioner train summarize`: the headline datasets split as the
recipe splits them (`load_headline_data`) and ROUGE-1/2/L F1 of a model's headlines on a list of
pairs (`evaluate_rouge`, rouge-score's scorer through `captioner.metrics.rouge_f1`)."""


def load_headline_data(c):
    """-> ({dataset: (train pairs, dev pairs)}, description)."""
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.data.news_category import load_news_category, split_news_category

    out, desc = {}, {}
    if c.data in ("bbc", "both"):
        corpus = load_bbc_headlines(c.bbc)
        out["bbc"] = split_bbc_headlines(corpus.pairs)
        desc["bbc"] = {"folder": c.bbc, "read": corpus.summary(), "split": "captioner.data.headlines hash rule, "
                       "salt bbc-news, 10% dev", "train": len(out["bbc"][0]), "dev": len(out["bbc"][1])}
    if c.data in ("news-category", "both"):
        corpus = load_news_category(c.news_category)
        out["news-category"] = split_news_category(corpus.pairs)
        desc["news-category"] = {"file": c.news_category, "read": corpus.summary(), "split": "hash rule, salt "
                                 "news-category, 10% dev", "train": len(out["news-category"][0]),
                                 "dev": len(out["news-category"][1])}
    return out, desc


def evaluate_rouge(model, pairs, beam_size, alpha, limit=None, no_repeat_ngram=None):
    """ROUGE-1/2/L F1 (x100) of the model's headlines for [HeadlinePair] -> (scores, headlines)."""
    from captioner.metrics.rouge_f1 import corpus_rouge_f1

    pairs = pairs[:limit] if limit else pairs
    kwargs = {} if no_repeat_ngram is None else {"no_repeat_ngram": no_repeat_ngram}
    outs = model.translate([p.source for p in pairs], beam_size=beam_size, alpha=alpha, **kwargs)
    hyps = [o.text for o in outs]
    result = corpus_rouge_f1([p.target for p in pairs], hyps)
    scores = {k: round(v, 2) for k, v in result.scores.items()}
    return {**scores, "pairs": len(pairs), "beam_size": beam_size, "alpha": alpha, "rouge": result.tool}, hyps

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


def headline_dev_sets(bbc, news_category, limit=None):
    """{corpus name: dev pairs} of the BBC News folder and/or the News Category file (a falsy path
    skips that corpus), each cut at its first `limit` pairs (what a model trained with --dev-limit
    was selected on); the dev splits `train summarize` holds out."""
    from captioner.data.headlines import load_bbc_headlines, split_bbc_headlines
    from captioner.data.news_category import load_news_category, split_news_category
    from captioner.errors import InputError

    if limit is not None and limit < 1:
        raise InputError(f"--dev-limit {limit}: must be >= 1")
    sets = {}
    if bbc:
        sets["bbc"] = split_bbc_headlines(load_bbc_headlines(bbc).pairs)[1][:limit]
    if news_category:
        sets["news-category"] = split_news_category(load_news_category(news_category).pairs)[1][:limit]
    if not sets:
        raise InputError("--bbc '' and --news-category '': no corpus left to score")
    return sets


def evaluate_rouge(model, pairs, beam_size=None, alpha=None, limit=None, **settings):
    """ROUGE-1/2/L F1 (x100) of the model's headlines for [HeadlinePair] -> (scores, headlines).
    beam_size / alpha: None for the model's; `settings`: the other decoding settings `translate`
    takes (no_repeat_ngram, copy_distinct)."""
    from captioner.metrics.rouge_f1 import corpus_rouge_f1

    pairs = pairs[:limit] if limit else pairs
    beam_size = model.beam_size if beam_size is None else beam_size
    alpha = model.alpha if alpha is None else alpha
    settings = {k: v for k, v in settings.items() if v is not None}
    outs = model.translate([p.source for p in pairs], beam_size=beam_size, alpha=alpha, **settings)
    hyps = [o.text for o in outs]
    result = corpus_rouge_f1([p.target for p in pairs], hyps)
    scores = {k: round(v, 2) for k, v in result.scores.items()}
    return {**scores, "pairs": len(pairs), "beam_size": beam_size, "alpha": alpha, "rouge": result.tool}, hyps

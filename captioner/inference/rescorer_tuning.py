"""Tuning a transliteration model's n-best re-ranker (`LexiconRescorer`) on half of a dev lexicon:
what `captioner model tune-rescorer` runs.

1. The model decodes every distinct dev romanization once per (beam, alpha) setting and keeps
   its whole n-best list with the model's scores (cached as JSON in a cache folder: re-runs only
   re-tune).
2. Knowledge from the TRAINING lexicon only: its native words (with their summed attestation
   counts) and a character Kneser-Ney LM over them. The dev file is used for tuning and
   reporting, never as a lexicon.
3. The tuning half is the dev romanizations at even positions (file order of first
   appearance), the held-out half the odd ones. The feature weights are fitted on the tuning
   half (method "maxent", the default: a log-linear re-ranker trained by maximum conditional
   likelihood of the right candidates among each n-best, Charniak and Johnson 2005 style, the
   model's weight then scaled to 1; "grid": the grid point of best tuning-half top-1); the
   discrete choices (beam, alpha, LM order, LM over types or attestation counts) by tuning-half
   top-1 (ties: the smaller beam, then lower CER). Reported on the held-out half (the honest
   figure), on all of dev, and, as a check of the method, 2-fold: the same procedure fitted on
   the odd half and scored on the even half.
   Features: the model's score, the LM's per-character and whole-word log-probability, the
   length; "known word" features are left out of the fit (0): the Dakshina split is by native
   word, so no dev reference is a training word and dev can only teach that real words are
   wrong (an artifact of the split, not of the task).
4. Optionally the model is loaded, the chosen rescorer, beam and alpha are set on it and it is
   saved (atomically); its network weights are not touched. The figures are then re-checked by
   decoding with the saved model (`evaluate_transliteration`, the path the CLI and the app use).
"""

import collections
import functools
import itertools
import json
import os
import sys
import time

import numpy as np

LM_WEIGHTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0)
LM_SUM_WEIGHTS = (0.0, 0.02, 0.05, 0.1, 0.15, 0.2)
LENGTH_WEIGHTS = (-0.1, -0.05, 0.0, 0.05, 0.1)


def decode_nbest(model, roms, beam, alpha, batch_size=256):
    """{romanized: [[text, log_prob, length, finished, score], ...] best first} with the model's search."""
    from captioner.decoding.generator import hypothesis_words
    from captioner.models.seq2seq import join_tokens

    toks = {r: model.source_tokens(r) for r in roms}
    order = sorted(roms, key=lambda r: len(toks[r]))
    rows = {}
    for s in range(0, len(order), batch_size):
        chunk = order[s:s + batch_size]
        out = model.generate(model.encode_sources([toks[r][:model.max_source_length] for r in chunk]), beam, alpha)
        for b, r in enumerate(chunk):
            hyps = []
            for k in range(out["tokens"].shape[1]):
                if not np.isfinite(out["scores"][b, k]):
                    continue
                words, _ = hypothesis_words(model.target_vocabulary, out["tokens"][b, k])
                hyps.append([join_tokens(words, model.target_tokenizer), float(out["log_probs"][b, k]),
                             int(out["lengths"][b, k]), bool(out["finished"][b, k]), float(out["scores"][b, k])])
            rows[r] = hyps
    return rows


def cached_nbest(load_model, roms, beam, alpha, cache_dir):
    """({romanized: n-best}, decoding seconds) of one (beam, alpha): read from `cache_dir` when it
    holds them, else decoded with `load_model()` (called only then) and written there."""
    from captioner.io import write_json

    path = os.path.join(cache_dir, f"nbest_b{beam}_a{float(alpha)}.json") if cache_dir else None
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
        if data["romanized"] == roms:
            return {r: h for r, h in zip(data["romanized"], data["nbest"])}, data.get("seconds")
    model = load_model()
    started = time.perf_counter()
    rows = decode_nbest(model, roms, beam, alpha)
    seconds = time.perf_counter() - started
    if path:
        os.makedirs(cache_dir, exist_ok=True)
        write_json(path, {"beam": beam, "alpha": float(alpha), "seconds": seconds, "romanized": roms,
                          "nbest": [rows[r] for r in roms]})
    return rows, seconds


def training_words(train_path):
    """{native word: summed attestations} of the training lexicon."""
    from captioner.data.dakshina import load_dakshina

    counts = collections.Counter()
    for p in load_dakshina(train_path):
        counts[p.native] += p.attestations
    return dict(counts)


class Table:
    """The n-best lists of one decoding setting as arrays: features (N, K, F), correct (N, K)."""

    def __init__(self, nbest, roms, lexicon, rescorer):
        from captioner.decoding.rescoring import FEATURES
        from captioner.metrics.transliteration import edit_distance

        self.K = max(len(nbest[r]) for r in roms)
        n, F = len(roms), len(FEATURES)
        self.feats = np.zeros((n, self.K, F))
        self.valid = np.zeros((n, self.K), bool)
        self.correct = np.zeros((n, self.K), bool)
        self.edits = np.zeros((n, self.K))
        self.ref_len = np.zeros((n, self.K))
        for i, r in enumerate(roms):
            hyps = nbest[r]
            refs = lexicon[r]
            texts = [h[0] for h in hyps]
            f = rescorer.features(texts, [h[4] for h in hyps])
            self.feats[i, :len(hyps)] = f
            self.valid[i, :len(hyps)] = True
            for k, t in enumerate(texts):
                self.correct[i, k] = t in refs
                d, L = min((edit_distance(t, ref), len(ref)) for ref in refs)
                self.edits[i, k], self.ref_len[i, k] = d, L

    def evaluate(self, weights, rows):
        """weights (F,) -> {"top-1", "top-5", "CER", "words"} on the given row indices."""
        scores = np.where(self.valid, self.feats @ weights, -np.inf)[rows]  # (n, K)
        order = np.argsort(-scores, axis=1, kind="stable")  # ties: the beam's order
        correct = np.take_along_axis(self.correct[rows], order, 1)
        best = order[:, 0]
        idx = np.arange(len(rows))
        return {"top-1": round(100 * correct[:, 0].mean(), 2), "top-5": round(100 * correct[:, :5].any(1).mean(), 2),
                "CER": round(100 * self.edits[rows][idx, best].sum() / self.ref_len[rows][idx, best].sum(), 2),
                "words": int(len(rows))}


def fit_maxent(table, rows, l2=1e-3):
    """Weights of a log-linear re-ranker: maximize, over the inputs of `rows` whose n-best holds a
    right candidate, log sum_{right c} p(c) with p = softmax over the n-best of w . features; the
    "model" weight is then scaled to 1 (the ranking is the same). Features: model, lm, lm_sum, length."""
    from scipy.optimize import minimize

    from captioner.decoding.rescoring import FEATURES

    use = [FEATURES.index(f) for f in ("model", "lm", "lm_sum", "length")]
    model_only = np.zeros(len(FEATURES))
    model_only[FEATURES.index("model")] = 1.0
    rows = np.asarray([r for r in rows if table.correct[r].any()], dtype=int)
    if not len(rows):
        print("no n-best holds a right candidate: the model's score alone", file=sys.stderr)
        return model_only
    X, valid, right = table.feats[rows][:, :, use], table.valid[rows], table.correct[rows]

    def loss(w):
        s = np.where(valid, X @ w, -1e30)  # (n, K)
        m = s.max(1, keepdims=True)
        p = np.exp(s - m) * valid
        z = p.sum(1)
        pr = (p * right).sum(1)
        value = -(np.log(pr) - np.log(z)).mean() + l2 * (w[1:] ** 2).sum()
        grad_s = p / z[:, None] - (p * right) / pr[:, None]  # d value / d s
        grad = np.einsum("nk,nkf->f", grad_s, X) / len(rows) + 2 * l2 * np.r_[0, w[1:]]
        return value, grad

    x0 = np.zeros(len(use))
    x0[0] = 1.0
    res = minimize(loss, x0, jac=True, method="L-BFGS-B")
    if res.x[0] <= 0:
        print(f"the fitted model weight is {res.x[0]:.4g} <= 0: the model's score alone", file=sys.stderr)
        return model_only
    w = np.zeros(len(FEATURES))
    w[use] = res.x / res.x[0]
    return w


def fit_grid(table, rows):
    """The grid point of best top-1 on `rows` (ties: lower CER, then fewer non-zero weights)."""
    from captioner.decoding.rescoring import FEATURES

    fi = {f: i for i, f in enumerate(FEATURES)}
    best = None
    for w_lm, w_sum, w_len in itertools.product(LM_WEIGHTS, LM_SUM_WEIGHTS, LENGTH_WEIGHTS):
        w = np.zeros(len(FEATURES))
        w[fi["model"]], w[fi["lm"]], w[fi["lm_sum"]], w[fi["length"]] = 1.0, w_lm, w_sum, w_len
        got = table.evaluate(w, rows)
        key = (got["top-1"], -got["CER"], -int(np.count_nonzero(w)))
        if best is None or key > best[0]:
            best = (key, w)
    return best[1]


def tune_rescorer(model_path, train, dev, settings=((10, 1.0),), lm_orders=(3, 4, 5, 6), method="maxent",
                  cache_dir=None, output=None):
    """Tune (see the module's text); `settings`: (beam, alpha) pairs decoded and tuned over. Returns the
    report (figures, choice, every setting tried); with `output`, also saves the model with the chosen
    rescorer there and adds "saved_model" (its decoded dev figures)."""
    from captioner.data.dakshina import load_dakshina, romanized_lexicon
    from captioner.decoding.rescoring import FEATURES, LexiconRescorer

    lexicon = romanized_lexicon(load_dakshina(dev))
    roms = list(lexicon)
    tune_rows = np.arange(0, len(roms), 2)
    held_rows = np.arange(1, len(roms), 2)
    all_rows = np.arange(len(roms))
    words = training_words(train)
    train_roms = {p.romanized for p in load_dakshina(train)}
    overlap = sum(r in train_roms for r in roms)
    native_overlap = len({w for refs in lexicon.values() for w in refs} & set(words))
    print(f"training words: {len(words)}; dev romanizations also in train: {overlap} of {len(roms)}; "
          f"dev native words also in train: {native_overlap}", file=sys.stderr, flush=True)

    settings = [(int(b), float(a)) for b, a in settings]

    @functools.cache
    def load_model():  # the model file is read once: for the settings not cached, and for `output`
        from captioner.models.seq2seq import load_translator

        return load_translator(model_path)

    decoded = {}
    for beam, alpha in settings:
        decoded[beam, alpha] = cached_nbest(load_model, roms, beam, alpha, cache_dir)
        print(f"n-best of beam {beam}, alpha {alpha}: {len(roms)} words", file=sys.stderr, flush=True)

    fi = {f: i for i, f in enumerate(FEATURES)}
    fit = fit_maxent if method == "maxent" else fit_grid
    best, best_reverse, baselines, tried = None, None, {}, []
    for order in lm_orders:
        for lm_counts in (False, True):
            rescorer = LexiconRescorer(words, lm_order=order, lm_counts=lm_counts)
            for (beam, alpha), (nbest, _) in decoded.items():
                table = Table(nbest, roms, lexicon, rescorer)
                w0 = np.zeros(len(FEATURES))
                w0[fi["model"]] = 1.0
                baselines[beam, alpha] = {name: table.evaluate(w0, rows) for name, rows in
                                          (("tune", tune_rows), ("held_out", held_rows), ("dev", all_rows))}
                setting = dict(beam=beam, alpha=alpha, lm_order=order, lm_counts=lm_counts)
                for rows, other, slot in ((tune_rows, held_rows, "best"), (held_rows, tune_rows, "reverse")):
                    w = fit(table, rows)
                    got = table.evaluate(w, rows)
                    key = (got["top-1"], -beam, -got["CER"])  # a tie: the cheaper decoding, then CER
                    entry = (key, {**setting, "weights": {f: round(float(w[fi[f]]), 4) for f in FEATURES
                                                           if w[fi[f]] != 0}}, table, w)
                    if slot == "best":
                        tried.append({**entry[1], "tune": got, "held_out": table.evaluate(w, other)})
                        best = entry if best is None or key > best[0] else best
                    else:
                        best_reverse = entry if best_reverse is None or key > best_reverse[0] else best_reverse
                print(f"LM order {order}, counts {lm_counts}, beam {beam}, alpha {alpha}: tune top-1 "
                      f"{tried[-1]['tune']['top-1']} (best so far {best[0][0]}: {best[1]})", file=sys.stderr, flush=True)
    _, choice, table, w = best
    # the weights as stored (rounded), so the figures are those of the saved model
    w = np.array([choice["weights"].get(f, 0.0) for f in FEATURES])
    figures = {name: table.evaluate(w, rows) for name, rows in
               (("tune", tune_rows), ("held_out", held_rows), ("dev", all_rows))}
    _, reverse_choice, reverse_table, reverse_w = best_reverse
    reverse = {"chosen": reverse_choice, "fitted_on_odd": reverse_table.evaluate(reverse_w, held_rows),
               "scored_on_even": reverse_table.evaluate(reverse_w, tune_rows)}
    report = {
        "model": model_path, "train": train, "dev": dev,
        "split": "dev: tuning half = even positions of the distinct romanizations, held-out half = odd",
        "training_words": len(words), "dev_romanizations": len(roms),
        "dev_romanizations_in_train": overlap, "dev_native_words_in_train": native_overlap,
        "grid": {"settings": [list(s) for s in settings], "lm_orders": ",".join(map(str, lm_orders)), "lm_counts": [False, True],
                 "method": method, "grid": {"lm": LM_WEIGHTS, "lm_sum": LM_SUM_WEIGHTS, "length": LENGTH_WEIGHTS}},
        "without_rescorer": {f"beam{b}_alpha{a}": v for (b, a), v in baselines.items()},
        "method": method, "chosen": choice, "with_rescorer": figures, "two_fold_check": reverse,
        "every_setting": tried,
        "decode_seconds": {f"beam{b}_alpha{a}": (round(s, 1) if s else None) for (b, a), (_, s) in decoded.items()},
    }
    if output:
        import captioner  # noqa: F401
        from captioner.inference.transliteration import evaluate_transliteration
        from captioner.models.seq2seq import load_translator

        model = load_model()
        model.beam_size, model.alpha = choice["beam"], choice["alpha"]
        model.rescorer = LexiconRescorer(words, lm_order=choice["lm_order"], lm_counts=choice["lm_counts"],
                                         weights=choice["weights"])
        from captioner.models.storage import save_model

        save_model(model, output)
        reloaded = load_translator(output)
        started = time.perf_counter()
        scores, _ = evaluate_transliteration(reloaded, lexicon, choice["beam"])
        report["saved_model"] = {"file": output, "bytes": os.path.getsize(output),
                                 "dev_decoded": {**scores, "seconds": round(time.perf_counter() - started, 1)}}
        print(f"wrote {output} ({os.path.getsize(output) / 1e6:.1f} MB); decoded dev: {scores}", file=sys.stderr, flush=True)
    return report

"""Sentence pairs for the seq2seq recipes (translate, entail --task generate): the held-out
splits, length-bucketed batches with the copy-word <unk> augmentation, and sacrebleu scoring."""

import collections
import time


def add_split_arguments(parser):
    """The options that rebuild `captioner train translate`'s splits of an Anki TSV or a Multi30k folder
    (for the tools that score a trained translator on them), with the same defaults."""
    parser.add_argument("--format", required=True, choices=("anki", "multi30k"))
    parser.add_argument("--data", required=True, help="anki: the TSV file; multi30k: the folder")
    parser.add_argument("--source", default="en", help="multi30k: source language")
    parser.add_argument("--target", default="de", help="multi30k: target language")
    parser.add_argument("--reverse", action="store_true", help="anki: column 2 -> column 1 (French -> English)")
    parser.add_argument("--dev-size", type=int, default=1000, help="multi30k: as `train translate` (default 1000)")
    parser.add_argument("--dev-fraction", type=float, default=0.03, help="anki: as `train translate`")
    parser.add_argument("--test-fraction", type=float, default=0.05, help="anki: as `train translate`")


def load_translation_data(args):
    """-> (train pairs, dev pairs, eval pairs, eval split name, data description, source lang)."""
    from captioner.data.multi30k import load_multi30k, read_parallel
    from captioner.data.tsv_pairs import load_anki_pairs, split_by_key
    from captioner.errors import InputError

    if args.format == "anki":
        pairs = load_anki_pairs(args.data, reverse=args.reverse)
        english = (lambda p: p.target) if args.reverse else (lambda p: p.source)
        other = (lambda p: p.source) if args.reverse else (lambda p: p.target)
        splits = split_by_key(pairs, key=english, fractions={"dev": args.dev_fraction, "test": args.test_fraction},
                              exclusive=other)
        desc = {"file": args.data, "pairs": len(pairs), "split": "md5 buckets of the English sentence",
                "dev_fraction": args.dev_fraction, "test_fraction": args.test_fraction,
                "held_out_dropped_for_source_overlap": len(splits["dropped"])}
        return splits["train"], splits["dev"], splits["test"], "test", desc, ("fr" if args.reverse else "en")
    if args.format == "multi30k":
        train = load_multi30k(args.data, "train", args.source, args.target)
        evals = load_multi30k(args.data, "val", args.source, args.target)
        if args.dev_size >= len(train):
            raise InputError(f"--dev-size {args.dev_size} leaves no training data ({len(train)} pairs)")
        dev, train = train[-args.dev_size:], train[:-args.dev_size]
        desc = {"folder": args.data, "train": "train minus its last %d lines" % args.dev_size,
                "dev": "last %d train lines" % args.dev_size, "eval": "val"}
        return train, dev, evals, "val", desc, args.source
    files = args.data.split(",")
    if len(files) != 2 or not args.eval or len(args.eval.split(",")) != 2:
        raise InputError("--format parallel needs --data SRC,TGT and --eval SRC,TGT")
    train = read_parallel(*files)
    evals = read_parallel(*args.eval.split(","))
    dev = read_parallel(*args.dev.split(",")) if args.dev else evals
    return train, dev, evals, "eval", {"train": files, "eval": args.eval, "dev": args.dev or args.eval}, ""


def grouped_references(pairs):
    """[(source, [reference, ...])] in first-seen order: all translations of a source in a split."""
    refs = collections.OrderedDict()
    for p in pairs:
        refs.setdefault(p.source, []).append(p.target)
    return list(refs.items())


def copyable_positions(src_tokens, tgt_tokens, min_share=0.8):
    """Where a pair has the same word on both sides, as a translation of itself: for each pair,
    [(source position, target position)] of the words that occur exactly once on each side and
    are "copy words" of the corpus: alphanumeric, and in at least `min_share` of the pairs whose
    source has them the target has them too, and vice versa (so French "a" / English "a", which
    are different words, are not; "tom", "paris" and "1984" are)."""
    both, in_src, in_tgt = collections.Counter(), collections.Counter(), collections.Counter()
    for s, t in zip(src_tokens, tgt_tokens):
        ss, ts = set(s), set(t)
        in_src.update(ss)
        in_tgt.update(ts)
        both.update(ss & ts)
    copy = {w for w, n in both.items()
            if w.isalnum() and n >= min_share * in_src[w] and n >= min_share * in_tgt[w]}
    out = []
    for s, t in zip(src_tokens, tgt_tokens):
        sc, tc = collections.Counter(s), collections.Counter(t)
        out.append([(s.index(w), t.index(w)) for w in sc if w in copy and sc[w] == 1 and tc[w] == 1])
    return out


def copyable_spans(src_pieces, tgt_pieces, min_share=0.8):
    """`copyable_positions` for subword (SentencePiece) pairs: for each pair,
    [((source start, end), (target start, end))], the piece spans of the letters-and-digits cores
    of the words written alike on both sides (once each, alphanumeric, "copy words" of the corpus
    as `copyable_positions` decides on the cores: "Tom", "Paris", "1984"). The target positions
    count pieces without the <start> the encoded targets begin with."""
    from captioner.text.subword import core_spans

    src_spans = [core_spans(p) for p in src_pieces]
    tgt_spans = [core_spans(p) for p in tgt_pieces]
    words = copyable_positions([[w for w, _, _ in s] for s in src_spans], [[w for w, _, _ in t] for t in tgt_spans],
                               min_share)
    return [[((ss[i][1], ss[i][2]), (ts[j][1], ts[j][2])) for i, j in pairs]
            for ss, ts, pairs in zip(src_spans, tgt_spans, words)]


def hide_spans(ids, spans, start=0):
    """``ids`` with each (a, b) span of ``spans`` (non-overlapping; offset by ``start``) replaced by
    one <unk>: a word of several pieces becomes one unknown word."""
    from captioner.text.vocabulary import UNK_ID

    out = list(ids)
    for a, b in sorted(spans, reverse=True):
        out[start + a:start + b] = [UNK_ID]
    return out


def shared_word_positions(src_tokens, tgt_tokens, words):
    """Summaries and headlines: for each pair, [(source positions, target position)] of the
    words of ``words`` (a set) that occur in the target exactly once and in the source at least
    once; every source occurrence is listed, so replacing them all by <unk> hides the word
    wherever the model could attend to it. (The translator's :func:`copyable_positions`
    instead keeps words written alike in both languages, once on each side.)"""
    out = []
    for s, t in zip(src_tokens, tgt_tokens):
        tc = collections.Counter(t)
        where = collections.defaultdict(list)
        for i, w in enumerate(s):
            if w in words and tc[w] == 1:
                where[w].append(i)
        out.append([(where[w], t.index(w)) for w in where])
    return out


class BucketedBatches:
    """Encoded (source, target) id sequences in batches of similar source length, each padded to
    its own longest sequence; batch order shuffled anew every epoch.

    With `copy_positions` (from `copyable_positions` or `shared_word_positions`: a source position
    or a list of them, and a target position counting words; the target sequences start with
    <start>) and `copy_unk_rate` > 0, each such word pair is replaced by
    <unk> on both sides with that probability, drawn anew every epoch.

    With `copy_spans` (from `copyable_spans`, subword pairs) instead, each chosen word's piece span
    becomes one <unk> on both sides (the sequences get shorter).

    With `weights` (one float per pair), each batch is (inputs, targets, sample weights (B, 1)):
    Keras scales each pair's per-token losses by its weight (transliteration: how many annotators wrote it)."""

    def __init__(self, sources, targets, batch_size, seed=0, copy_positions=None, copy_unk_rate=0.0, weights=None,
                 copy_spans=None):
        import numpy as np

        self.sources, self.targets = sources, targets
        self.batch_size = batch_size
        self.seed = seed
        self.copy_positions = copy_positions
        self.copy_unk_rate = float(copy_unk_rate)
        self.copy_spans = copy_spans
        self.src_len = np.array([len(s) for s in sources])
        self.tgt_len = np.array([len(t) for t in targets])
        self.weights = None if weights is None else np.asarray(weights, np.float32)
        if self.weights is not None and self.weights.shape != (len(sources),):
            raise ValueError(f"{self.weights.shape[0]} weights for {len(sources)} pairs")

    def __len__(self):
        return -(-len(self.sources) // self.batch_size)

    def batches(self, epoch=0, seed=None):
        """One pass, in the order of (seed, epoch) alone (seed: the constructor's by default)."""
        import numpy as np

        from captioner.text.vocabulary import UNK_ID

        rng = np.random.default_rng((self.seed if seed is None else seed) + epoch)
        # sort by source length with random tie-breaks, cut into batches, shuffle the batches
        order = np.lexsort((rng.random(len(self.sources)), self.src_len))
        chunks = [order[i:i + self.batch_size] for i in range(0, len(order), self.batch_size)]
        for j in rng.permutation(len(chunks)):
            idx = chunks[j]
            if self.copy_unk_rate and self.copy_spans:
                yield self._span_batch(idx, rng)
                continue
            src = np.zeros((len(idx), self.src_len[idx].max()), np.int32)  # (B, S)
            tgt = np.zeros((len(idx), self.tgt_len[idx].max()), np.int32)  # (B, T+1)
            for r, i in enumerate(idx):
                src[r, :self.src_len[i]] = self.sources[i]
                tgt[r, :self.tgt_len[i]] = self.targets[i]
                if self.copy_unk_rate and self.copy_positions and self.copy_positions[i]:
                    for sp, tp in self.copy_positions[i]:
                        if rng.random() < self.copy_unk_rate:
                            src[r, sp] = UNK_ID
                            tgt[r, tp + 1] = UNK_ID
            if self.weights is None:
                yield {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]
            else:
                yield {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:], self.weights[idx, None]


    def _span_batch(self, idx, rng):
        """One batch with each `copy_spans` word hidden behind one <unk> with probability P."""
        import numpy as np

        pairs = []
        for i in idx:
            chosen = [span for span in self.copy_spans[i] if rng.random() < self.copy_unk_rate]
            pairs.append((hide_spans(self.sources[i], [s for s, _ in chosen]),
                          hide_spans(self.targets[i], [t for _, t in chosen], start=1)))  # after <start>
        src = np.zeros((len(idx), max(len(s) for s, _ in pairs)), np.int32)  # (B, S)
        tgt = np.zeros((len(idx), max(len(t) for _, t in pairs)), np.int32)  # (B, T+1)
        for r, (s, t) in enumerate(pairs):
            src[r, :len(s)], tgt[r, :len(t)] = s, t
        if self.weights is None:
            return {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:]
        return {"source": src, "tokens": tgt[:, :-1]}, tgt[:, 1:], self.weights[idx, None]


def corpus_bleu(hypotheses, references, lowercase=True):
    """sacrebleu corpus BLEU, 13a tokenization, lower-cased unless ``lowercase=False`` (cased
    BLEU, sacrebleu without -lc); references: [[ref, ...], ...] per hypothesis (any number
    each). Returns (score, signature string)."""
    import sacrebleu

    n = max((len(r) for r in references), default=1)
    streams = [[r[k] if k < len(r) else None for r in references] for k in range(n)]
    bleu = sacrebleu.metrics.BLEU(lowercase=bool(lowercase))
    result = bleu.corpus_score(hypotheses, streams)
    return float(result.score), str(bleu.get_signature())


def evaluate_bleu(model, eval_refs, beam_size, alpha, limit=None, batch_size=64, coverage_penalty=None, cased=False):
    """Translate the sources of [(source, [refs])] and score them. Returns dict + hypotheses.

    ``cased`` (models trained on cased text): "BLEU" is cased BLEU (sacrebleu 13a, no -lc) and
    "BLEU_lc" the lower-cased BLEU of the same hypotheses, with both signatures; otherwise
    "BLEU" is the lower-cased BLEU."""
    items = eval_refs[:limit] if limit else eval_refs
    t = time.perf_counter()
    outs = model.translate([s for s, _ in items], beam_size=beam_size, alpha=alpha, batch_size=batch_size,
                           coverage_penalty=coverage_penalty)
    seconds = time.perf_counter() - t
    hyps = [o.text for o in outs]
    refs = [r for _, r in items]
    score, signature = corpus_bleu(hyps, refs, lowercase=not cased)
    out = {"BLEU": round(score, 2), "sentences": len(items), "beam_size": beam_size, "alpha": alpha,
           "decode_seconds": round(seconds, 1), "sacrebleu": signature}
    if cased:
        score_lc, signature_lc = corpus_bleu(hyps, refs, lowercase=True)
        out.update({"cased": True, "BLEU_lc": round(score_lc, 2), "sacrebleu_lc": signature_lc})
    if coverage_penalty is not None:
        out["coverage_penalty"] = coverage_penalty
    return out, hyps

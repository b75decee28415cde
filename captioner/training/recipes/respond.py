"""`captioner train respond`: a hierarchical dialogue response model (HRED with attention over
the turns, or with --attend words over the words of the turns) on the Schema-Guided Dialogue files.

    captioner train respond --train-dir ../shared/datasets/sgd/train --dev-dir ../shared/datasets/sgd/dev \\
        --output-dir runs/sgd_dialogue --model-out assets/models/sgd_dialogue.keras

Every SYSTEM turn with a turn before it is an example: the last --context-turns turns in, the
turn out. The model is selected on held-out train dialogues (a hash-chosen --select-fraction of
them, never trained on) by BLEU; the card reports BLEU (sacrebleu) and distinct-1/2 on the
first --eval-limit examples of the dev dialogues.
"""

import dataclasses
import hashlib
import logging

from captioner.training.config import TrainConfig, option
from captioner.training.trainer import ArrayBatches, Recipe

NAME = "respond"
HELP = "train a hierarchical dialogue response model (HRED + attention over the turns or their words) on SGD dialogues"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(TrainConfig):
    train_dir: str = option(help="folder of SGD dialogues_NNN.json (train)")
    dev_dir: str = option(help="folder of SGD dialogues_NNN.json (dev: reported)")
    train_files: int | None = option(None, help="read only the first N train files")
    select_fraction: float = option(0.03, help="share of train dialogues held out for model selection")
    context_turns: int = option(3, help="turns before the response that the model reads")
    attend: str = option("turns", choices=("turns", "words"),
                         help="what the decoder attends over: the context encoder's turn annotations, or the "
                              "word annotations of the last turns")
    max_words: int = option(30, help="words per context turn (its speaker token included)")
    max_response: int = option(30, help="response words trained on; decoding stops at this many + 10")
    min_count: int = option(3)
    max_vocab: int = option(8000)
    embedding_dim: int = option(64)
    units: int = option(64, help="utterance encoder GRU units per direction")
    context_units: int = option(128, help="context encoder GRU units per direction")
    decoder_units: int = option(256)
    attention_units: int = option(128)
    dropout: float = option(0.2)
    beam_size: int = option(4, help="beam of the final evaluation and the saved model")
    alpha: float = option(1.0)
    select_limit: int = option(400, help="held-out train examples decoded (greedy) per epoch")
    eval_limit: int = option(2000, help="dev examples scored at the end")
    epochs: int = 10
    batch_size: int = 64


def _held_out(dialogue_id, fraction):
    return int(hashlib.sha256(f"sgd-select\0{dialogue_id}".encode()).hexdigest()[:8], 16) < fraction * 2**32


def score_responses(hypotheses, references):
    """BLEU (sacrebleu, one reference each) and distinct-1/2 (%) of generated responses."""
    from captioner.metrics.distinct import distinct_n
    from captioner.training.translation_data import corpus_bleu

    bleu, signature = corpus_bleu(hypotheses, [[r] for r in references])
    return {"BLEU": round(bleu, 2), "distinct_1": round(100 * distinct_n(hypotheses, 1), 2),
            "distinct_2": round(100 * distinct_n(hypotheses, 2), 2), "responses": len(hypotheses),
            "sacrebleu": signature}


class Respond(Recipe):
    task = "dialogue"
    metric = "select_BLEU"
    verbose = 2

    def prepare(self, trainer):
        import numpy as np

        from captioner.data.sgd import load_sgd, response_examples
        from captioner.models.dialogue_responder import SPEAKER_TOKENS, utterance_tokens
        from captioner.text import Vocabulary

        c = self.cfg
        dialogues = load_sgd(c.train_dir, c.train_files)
        train_d = [d for d in dialogues if not _held_out(d.dialogue_id, c.select_fraction)]
        select_d = [d for d in dialogues if _held_out(d.dialogue_id, c.select_fraction)]
        train = response_examples(train_d, c.context_turns)
        train = train[:: max(1, len(train) // c.limit)][: c.limit] if c.limit else train
        self.select = response_examples(select_d, c.context_turns)[: c.select_limit]
        self.dev = response_examples(load_sgd(c.dev_dir), c.context_turns)[: c.eval_limit]

        def build():
            vocab = Vocabulary.build([utterance_tokens(u) for d in train_d for _, u in d.turns], min_count=c.min_count,
                                     max_size=c.max_vocab - len(SPEAKER_TOKENS))
            return Vocabulary(vocab.tokens + tuple(SPEAKER_TOKENS.values()), metadata=vocab.metadata)

        self.vocab = trainer.cached("vocabulary.json", build)
        self.first = None
        self.first = self.build_model(c.seed)
        x = self.first.context_ids([e.context for e in train])
        t = self.vocab.encode_batch([utterance_tokens(e.response)[: c.max_response] for e in train])
        if t.shape[1] < c.max_response + 2:  # one width for every batch
            t = np.pad(t, [(0, 0), (0, c.max_response + 2 - t.shape[1])])
        self.train_batches = ArrayBatches({"context": x, "tokens": t[:, :-1]}, t[:, 1:], c.batch_size)
        self.selection = f"BLEU (sacrebleu, greedy) on {len(self.select)} examples of held-out train dialogues"
        self.desc = {"train_dir": c.train_dir, "dev_dir": c.dev_dir, "train_dialogues": len(train_d),
                     "select_dialogues": len(select_d), "train_examples": len(train),
                     "select_examples": len(self.select), "dev_examples_scored": len(self.dev),
                     "example": f"each SYSTEM turn after the first turn; its last {c.context_turns} turns as context"}
        log.info("train %d examples, select %d, dev %d; vocabulary %d", len(train), len(self.select), len(self.dev),
                 len(self.vocab))
        return {"vocab_size": len(self.vocab), "data": self.desc}

    def build_model(self, seed):
        import keras

        from captioner.models.dialogue_responder import DialogueNetwork, DialogueResponder

        if self.first is not None and seed == self.cfg.seed:
            return self.first
        c = self.cfg
        keras.utils.set_random_seed(seed)
        network = DialogueNetwork(c.embedding_dim, c.units, c.context_units, c.decoder_units, c.attention_units,
                                  c.dropout, c.attend)
        return DialogueResponder(self.vocab, network, context_turns=c.context_turns, max_words=c.max_words,
                                 beam_size=c.beam_size, alpha=c.alpha, max_length=c.max_response + 10,
                                 training_config={"seed": seed})

    def steps_per_pass(self):
        return len(self.train_batches)

    def batches(self, epoch, seed):
        return self.train_batches.batches(epoch, seed)

    def _decode(self, model, examples, beam_size):
        return [r.text for r in model.respond([e.context for e in examples], beam_size=beam_size)]

    def evaluate_dev(self, model):
        hyps = self._decode(model, self.select, 1)
        return {"select_BLEU": score_responses(hyps, [e.response for e in self.select])["BLEU"]}

    def evaluate(self, model, trainer):
        from captioner.io import write_json

        c, refs = self.cfg, [e.response for e in self.dev]
        metrics = {"split": "dev"}
        hyps = self._decode(model, self.dev, c.beam_size)
        metrics[f"dev_beam{c.beam_size}"] = score_responses(hyps, refs)
        metrics["dev_greedy"] = score_responses(self._decode(model, self.dev, 1), refs)
        metrics["dev_BLEU"] = metrics[f"dev_beam{c.beam_size}"]["BLEU"]
        self.samples = [{"dialogue_id": e.dialogue_id, "turn": e.turn, "context": [list(t) for t in e.context],
                         "reference": e.response, "response": h} for e, h in zip(self.dev[:30], hyps[:30])]
        write_json(trainer.run_dir.path("dev_samples.json"), self.samples)
        return metrics

    def card_data(self, trainer):
        return self.desc

    def card_extra(self):
        return {"samples": self.samples[:10],
                "load": "import captioner, keras; m = keras.models.load_model(PATH); m.respond([[('USER', text)]])"}


RECIPE = Respond

"""`captioner train translate`: attention (Bahdanau) or fixed-context (Sutskever / RNNencdec)
sentence-to-sentence models, on Anki/Tatoeba pairs, Multi30k or any parallel line files.

    captioner train translate --format anki --data ../shared/datasets/anki-fra-eng/fra.txt \\
        --reverse --output-dir runs/anki_fr_en --model-out assets/models/anki_fr_en.keras

    captioner train translate --format multi30k --data ../shared/datasets/multi30k \\
        --source en --target de --output-dir runs/multi30k_en_de

Held-out data:
* anki: deterministic splits by the English sentence (md5 buckets: dev 3%, test 5%), so no
  English sentence is in two splits; a held-out pair whose other-language side also occurs in
  train is dropped. Model selection on dev, the reported BLEU on test; a source with several
  translations in its split is scored against all of them.
* multi30k: the last --dev-size train lines select the model, the reported BLEU is on `val`.
* parallel: --data SRC,TGT train files and --eval SRC,TGT (and optionally --dev SRC,TGT).

BLEU is sacrebleu's corpus BLEU (13a) on detokenized text, lower-cased for the default models
(they write lower case); a --cased model reports cased BLEU (no -lc, what selects the model)
and the lower-cased BLEU beside it (BLEU_lc). Signatures in the metrics file.

Subwords: --subword spm-unigram|spm-bpe trains one SentencePiece model per side on the training
pairs only (after --limit; dev and held-out text never seen), at most --subword-vocab pieces
each; the model's bytes go into the Seq2Seq config (base64), the vocabularies are all the
pieces (--min-count/--max-vocab do not apply) and --max-source-length / --max-target-length
count pieces. --cased keeps the case of the text (words or pieces). Training stops early on dev BLEU (beam decoding), and
--time-budget stops it after that many minutes, keeping the best epoch.
"""

import dataclasses
import logging

from captioner.training.config import option
from captioner.training.seq2seq_recipe import Seq2SeqConfig, Seq2SeqRecipe

NAME = "translate"
HELP = "train an attention (Bahdanau) or fixed-context (Sutskever) translator"
log = logging.getLogger(__name__)


@dataclasses.dataclass(kw_only=True)
class Config(Seq2SeqConfig):
    format: str = option(choices=("anki", "multi30k", "parallel"))
    data: str = option(help="anki: the TSV file; multi30k: the folder; parallel: SRC,TGT train files")
    reverse: bool = option(False, help="anki: translate column 2 -> column 1 (e.g. French -> English)")
    source: str = option("en", help="multi30k source language")
    target: str = option("de", help="multi30k target language")
    eval: str | None = option(None, help="parallel: SRC,TGT files of the reported held-out set")
    dev: str | None = option(None, help="parallel: SRC,TGT files for model selection (default: the --eval files)")
    dev_size: int = option(1000, help="multi30k: train lines held out for model selection")
    dev_fraction: float = option(0.03, help="anki: English sentences held out as dev")
    test_fraction: float = option(0.05, help="anki: English sentences held out as test")
    split_elisions: str = option("auto", choices=("auto", "yes", "no"),
                                 help="split French elisions (l'afrique -> l' afrique) on the source side; "
                                      "auto: for French")
    copy_unk_rate: float = option(0.0, metavar="P", help=(
        "teach the model to pass through words it has never seen (names): in each batch, replace a word "
        "written the same on both sides (tom, paris, 1984) by <unk> on both sides with probability P, so an "
        "unknown source word yields <unk>, which decoding then replaces with the source word it attends to "
        "(0: off); with --subword, the pieces of such a word (its letters and digits) become one <unk>"))
    attention_lambda: float = option(0.0, metavar="L", help=(
        "attention kind: add the doubly stochastic attention penalty (the captioner's, Xu et al. 2015) over "
        "the source words, weight L, so that every source word is attended to (0: off)"))
    subword: str = option("none", choices=("none", "spm-unigram", "spm-bpe"), help=(
        "none: whole-word vocabularies; spm-unigram / spm-bpe: a SentencePiece model per side, trained on the "
        "training pairs only and stored inside the saved model's config"))
    subword_vocab: int = option(8000, metavar="N", help="--subword: most pieces of each SentencePiece model")
    cased: bool = option(False, help="keep the case of source and target text (default: lower-case both)")


class Translate(Seq2SeqRecipe):
    task = "translate"

    def load_pairs(self):
        from captioner.training.translation_data import load_translation_data

        return load_translation_data(self.cfg)


RECIPE = Translate

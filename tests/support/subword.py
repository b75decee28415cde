"""Test helper: a tiny random-weight Seq2Seq over a SentencePiece vocabulary trained on a few
German sentences (cased), for the subword tests of the CLI, the server and the model."""

import keras

from captioner.models.seq2seq import Seq2Seq
from captioner.text import Vocabulary
from captioner.text.subword import piece_vocabulary, to_base64, train_sentencepiece
from captioner.text.vocabulary import SPECIAL_TOKENS


def tiny_subword_translator(sentences=("Ein Mann läuft über die Straße.", "Zwei Hunde spielen."), vocab_size=40):
    keras.utils.set_random_seed(0)
    tok = {"spm": to_base64(train_sentencepiece(list(sentences) * 5, vocab_size)), "lower": False}
    v = Vocabulary(SPECIAL_TOKENS + tuple(piece_vocabulary(tok["spm"])))
    return Seq2Seq.of(v, v, embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2, max_length=6,
                   source_tokenizer=tok, target_tokenizer=tok)

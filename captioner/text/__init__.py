"""Text utilities: tokenization and the JSON vocabulary.

The tokenizer functions import nothing heavy; the vocabulary names (which need Keras)
are imported on first access, so ``from captioner.text import tokenize`` stays cheap.
"""

from captioner.text.tokenizer import char_tokenize, detokenize, tf_tokenize, tokenize

_VOCABULARY_NAMES = (
    "PAD",
    "START",
    "END",
    "UNK",
    "PAD_ID",
    "START_ID",
    "END_ID",
    "UNK_ID",
    "SPECIAL_TOKENS",
    "Vocabulary",
    "VocabularyLookup",
)

__all__ = ["tokenize", "char_tokenize", "detokenize", "tf_tokenize", *_VOCABULARY_NAMES]


def __getattr__(name):
    """Import the vocabulary module (and Keras) only when one of its names is used."""
    if name in _VOCABULARY_NAMES:
        from captioner.text import vocabulary

        return getattr(vocabulary, name)
    raise AttributeError(f"module 'captioner.text' has no attribute {name!r}")


def __dir__():
    return sorted(list(globals()) + list(_VOCABULARY_NAMES))

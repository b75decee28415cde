"""Generated documents for the HAN tests: a newsgroups-layout corpus whose groups differ in
one or two topic words per post, and a tiny trained DocumentClassifier."""

import random
from pathlib import Path

TOPICS = {"rec.autos": ["engine", "brake", "clutch", "sedan"], "sci.space": ["orbit", "rocket", "lunar", "nasa"],
          "sci.med": ["doctor", "vaccine", "clinic", "allergy"]}
FILLER = ["the", "a", "of", "and", "to", "is", "it", "that", "for", "on", "with", "was", "we", "they"]


def make_text(group, rng, sentences=4):
    """Sentences of filler words; one sentence carries the group's topic words."""
    topic_at = rng.randrange(sentences)
    out = []
    for s in range(sentences):
        words = [rng.choice(FILLER) for _ in range(rng.randint(3, 7))]
        if s == topic_at:
            words.insert(rng.randrange(len(words)), rng.choice(TOPICS[group]))
        out.append(" ".join(words).capitalize() + ".")
    return " ".join(out)


def make_corpus(root: Path, per_group=16, seed=0):
    """root/20news-bydate-train/<group>/<id> posts, and a dev list (the last 4 of each group)."""
    rng = random.Random(seed)
    dev = []
    for group in TOPICS:
        for i in range(per_group):
            path = root / "20news-bydate-train" / group / str(100 + i)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"From: u{i}@example.edu\nSubject: note {i}\n\n{make_text(group, rng)}\n", encoding="utf-8")
            if i >= per_group - 4:
                dev.append(f"{group}/{100 + i}")
    (root / "dev.txt").write_text("".join(d + "\n" for d in dev))
    return root / "20news-bydate-train", root / "dev.txt"


def tiny_classifier(seed=0, train_steps=0):
    """A tiny DocumentClassifier over the generated vocabulary (trained a few steps if asked)."""
    import keras
    import numpy as np

    from captioner.data.documents import to_hierarchy
    from captioner.models.document_classifier import DocumentClassifier
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(seed)
    vocab = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", ".") + tuple(FILLER) +
                       tuple(w for ws in TOPICS.values() for w in ws))
    labels = sorted(TOPICS)
    model = DocumentClassifier.of(vocab, labels, embedding_dim=8, word_units=6, sentence_units=6, attention_units=8,
                               dropout=0.0, max_sentences=6, max_words=9)
    if train_steps:
        from captioner.training.trainer import classifier_compile_args

        rng = random.Random(seed)
        groups = [labels[i % len(labels)] for i in range(96)]
        x = model.encode([to_hierarchy(make_text(g, rng), 6, 9) for g in groups])
        y = np.array([labels.index(g) for g in groups])
        model.compile(optimizer=keras.optimizers.Adam(0.02), **classifier_compile_args())
        model.fit({"document": x}, y, batch_size=32, epochs=train_steps, verbose=0)
    return model

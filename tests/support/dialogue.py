"""Generated dialogues in the published SGD layout for the dialogue tests: the SYSTEM turn
depends on the USER turn before it (restaurants get asked for a time, flights for a date)."""

import json
import random
from pathlib import Path

CITIES = ["paris", "rome", "tokyo", "lima"]
FLOWS = {
    "restaurant": [("USER", "I want a table in {city}."), ("SYSTEM", "What time would you like?"),
                   ("USER", "At seven please."), ("SYSTEM", "Your table in {city} is booked.")],
    "flight": [("USER", "I need a flight to {city}."), ("SYSTEM", "Which date do you fly?"),
               ("USER", "Next monday."), ("SYSTEM", "Your flight to {city} is booked.")],
}


def make_dialogues(n, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        kind, city = rng.choice(sorted(FLOWS)), rng.choice(CITIES)
        turns = [{"speaker": s, "utterance": u.format(city=city), "frames": []} for s, u in FLOWS[kind]]
        out.append({"dialogue_id": f"{i // 10 + 1}_{i:05d}", "services": [kind], "turns": turns})
    return out


def make_sgd(root: Path, train=60, dev=12, seed=0):
    """root/train/dialogues_00K.json and root/dev/dialogues_001.json."""
    for split, n, files in (("train", train, 2), ("dev", dev, 1)):
        folder = root / split
        folder.mkdir(parents=True, exist_ok=True)
        dialogues = make_dialogues(n, seed + (split == "dev"))
        per = (n + files - 1) // files
        for k in range(files):
            (folder / f"dialogues_{k + 1:03d}.json").write_text(json.dumps(dialogues[k * per:(k + 1) * per], indent=1))
        (folder / "schema.json").write_text("[]")
    return root / "train", root / "dev"


def tiny_responder(seed=0, train_epochs=0, context_turns=3, attend="turns"):
    """A tiny DialogueResponder over the generated dialogues' words (trained if asked)."""
    import keras
    import numpy as np

    from captioner.data.sgd import Dialogue, response_examples
    from captioner.models.dialogue_responder import SPEAKER_TOKENS, DialogueResponder, utterance_tokens
    from captioner.text import Vocabulary

    keras.utils.set_random_seed(seed)
    dialogues = [Dialogue(d["dialogue_id"], tuple((t["speaker"], t["utterance"]) for t in d["turns"]))
                 for d in make_dialogues(80, seed)]
    vocab = Vocabulary.build([utterance_tokens(u) for d in dialogues for _, u in d.turns])
    vocab = Vocabulary(vocab.tokens + tuple(SPEAKER_TOKENS.values()))
    model = DialogueResponder.of(vocab, embedding_dim=12, units=10, context_units=10, decoder_units=24,
                              attention_units=10, dropout=0.0, context_turns=context_turns, max_words=10,
                              beam_size=3, max_length=10, attend=attend)
    if train_epochs:
        from captioner.models.caption_decoder_model import masked_sparse_ce

        examples = response_examples(dialogues, context_turns)
        x = model.context_ids([e.context for e in examples])
        t = vocab.encode_batch([utterance_tokens(e.response) for e in examples])
        model.compile(optimizer=keras.optimizers.Adam(0.01), loss=masked_sparse_ce)
        model.fit({"context": x, "tokens": t[:, :-1]}, t[:, 1:], batch_size=32, epochs=train_epochs, verbose=0)
        assert np.isfinite(model.evaluate({"context": x, "tokens": t[:, :-1]}, t[:, 1:], verbose=0))
    return model

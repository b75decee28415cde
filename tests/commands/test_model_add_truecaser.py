"""`captioner model add-truecaser` on a tiny translator and a tiny Anki file: the table is learned from
the training targets only, goes into the model's config, the card records the step, and the
lower-cased output is what it was."""

import json
import warnings

import keras

import captioner  # noqa: F401
from captioner.model_card import ModelCard
from captioner.models.seq2seq import Seq2Seq
from captioner.text.vocabulary import Vocabulary

NAMES = ["Tom", "Mary", "Paris", "Berlin", "John", "Anna"]


def test_add_truecaser_learns_from_train_targets_and_records_the_step(tmp_path):
    from captioner.cli import main
    lines = []
    for i in range(200):  # English <TAB> French; --reverse: French -> English
        a, b = NAMES[i % 6], NAMES[(i // 6) % 6]
        lines.append(f"{a} sees {b} in Paris {i}.\t{a} voit {b} à Paris {i}.\tCC-BY")
    data = tmp_path / "fra.txt"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    keras.utils.set_random_seed(0)
    english = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", ".", "sees", "in") + tuple(n.lower() for n in NAMES))
    french = Vocabulary(("<pad>", "<start>", "<end>", "<unk>", ".", "voit", "à") + tuple(n.lower() for n in NAMES))
    model = Seq2Seq.of(french, english, embedding_dim=8, units=8, attention_units=8, dropout=0.0, beam_size=2,
                    max_length=6, source_tokenizer={"split_elisions": True})
    path = tmp_path / "m.keras"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        model.save(path)
    ModelCard(model="m.keras", task="translate", command="captioner train translate ...", seed=0).save(path)
    assert main(["model", "add-truecaser", "--model", str(path), "--format", "anki", "--data", str(data), "--reverse"]) == 0
    loaded = keras.models.load_model(path)
    table = loaded.target_tokenizer["truecase"]
    # every name is written capitalized away from the start of the sentence; "sees" never is
    assert table == {n.lower(): n for n in NAMES}
    card = json.loads((tmp_path / "m.json").read_text())
    assert card["command"][-1].startswith("captioner model add-truecaser --model ")
    truecase = card["extra"]["truecase"]
    assert truecase["table_entries"] == 6 and truecase["before"]["BLEU_lc"] == truecase["after"]["BLEU_lc"]
    assert "test_beam2_truecased" in card["metrics"]
    out = loaded.translate(["Tom voit Mary à Paris 3."])[0]
    assert out.text[:1] == out.text[:1].upper()
    assert all(w in NAMES or w.lower() not in table for w in out.tokens)

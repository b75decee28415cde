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

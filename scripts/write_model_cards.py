"""Write the Markdown model card beside every bundled model, generated from its JSON card.

    python scripts/write_model_cards.py           # writes assets/models/NAME.md
    python scripts/write_model_cards.py --check   # exit 1 naming the pages that are not up to date

The JSON card (``NAME.json``, `captioner.model_card.ModelCard`) stays the one record; the page
(``NAME.md``, Hugging Face's model-card layout) is derived from it and from the registry
(`captioner/bundled.py`), so a test can check it is current.
"""

from __future__ import annotations

import argparse
import os
import sys



def pages():
    """{path of NAME.md: its text} for every bundled model."""
    from captioner.bundled import MODELS
    from captioner.model_card import ModelCard, to_markdown

    out = {}
    for model in MODELS:
        card = ModelCard.load(model.bundled_path)
        out[str(model.bundled_path.with_suffix(".md"))] = to_markdown(card, model.title, model.task, model.default)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that every page is up to date")
    args = parser.parse_args(argv)
    from captioner.io import write_text

    stale = []
    for path, text in pages().items():
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != text:
            stale.append(path)
            if not args.check:
                write_text(path, text)
    if args.check and stale:
        print("not up to date (python scripts/write_model_cards.py): " + ", ".join(stale), file=sys.stderr)
        return 1
    print(f"{'checked' if args.check else 'wrote'} {len(pages())} model cards ({len(stale)} changed)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python
"""Batch captioning as a script: the same options and engine as `captioner caption`.

    python scripts/caption_images.py photos/ --output captions.jsonl --attention-dir attention/
    python scripts/caption_images.py 'data/**/*.jpg' --shard 3/8 --output part-3.jsonl

Run `python scripts/caption_images.py -h` for every option.
"""

import sys

if __name__ == "__main__":
    from captioner.commands.caption import main

    sys.exit(main())

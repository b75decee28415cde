"""`ModelCard`: the one schema of the JSON file beside every model (`NAME.keras` -> `NAME.json`).

A card says how a model was made and what it reached on held-out data, so that the CLI, the
app and the README read one place and never keep a second copy:

    task       one of TASKS ("caption", "translate", "entail", "vqa", "video-caption", ...)
    command    the exact command that trained the model (str), or the commands in order (list),
               the training command last
    seed       the training seed
    data       what it was trained and selected on (files, splits, counts)
    config     the full training configuration (the recipe's dataclass as a dict)
    metrics    held-out metrics; ``metrics["split"]`` names the split they were measured on
    notes      free text (str or list of str)
    extra      everything else a card records (sweeps, baselines, previous bundled model, ...)

Cards written before this schema (``dev_metrics`` instead of ``metrics``, free-form task
names, a separate ``commands`` list, extra keys at the top level) are read through
:meth:`ModelCard.from_dict`, which maps them onto it; nothing they held is dropped (unknown keys
go to ``extra``, a free-form task name to ``extra["task_as_written"]``).

This module imports nothing heavy and only its siblings ``errors`` and ``io``, relatively, so
that the app can load it by file path without importing the ``captioner`` package (whose
``__init__`` imports TensorFlow): see ``apps/common.py:model_card_class``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from typing import Any

from .errors import InputError  # relative: see the module docstring

SCHEMA_VERSION = 1

TASKS = ("caption", "translate", "entail", "vqa", "video-caption", "video-classify", "transliterate",
         "summarize", "language-model", "classify", "dialogue")

# task names of the cards written before this schema
_LEGACY_TASKS = {
    "image captioning": "caption",
    "translation": "translate",
    "3-way entailment (sick labels)": "entail",
    "entailment": "entail",
    "visual question answering": "vqa",
    "video captioning": "video-caption",
    "video activity classification": "video-classify",
}


def card_path(model_path) -> str:
    """The card of a model file: the same path with `.json` instead of `.keras`."""
    base, ext = os.path.splitext(os.fspath(model_path))
    return base + ".json" if ext in (".keras", ".h5", "") else os.fspath(model_path) + ".json"


@dataclasses.dataclass
class ModelCard:
    model: str
    task: str
    command: str | list[str] | None = None
    seed: int | None = None
    data: dict[str, Any] = dataclasses.field(default_factory=dict)
    config: dict[str, Any] = dataclasses.field(default_factory=dict)
    metrics: dict[str, Any] = dataclasses.field(default_factory=dict)
    notes: str | list[str] = ""
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"ModelCard task must be one of {TASKS}, got {self.task!r}")
        if not isinstance(self.model, str) or not self.model:
            raise ValueError(f"ModelCard model must be the model's file name, got {self.model!r}")
        if isinstance(self.command, list):
            if not all(isinstance(c, str) and c for c in self.command):
                raise ValueError(f"ModelCard command must be a string or a list of strings, got {self.command!r}")
        elif self.command is not None and not isinstance(self.command, str):
            raise ValueError(f"ModelCard command must be a string or a list of strings, got {self.command!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"ModelCard seed must be an integer, got {self.seed!r}")
        for name in ("data", "config", "metrics", "extra"):
            if not isinstance(getattr(self, name), dict):
                raise ValueError(f"ModelCard {name} must be a JSON object, got {getattr(self, name)!r}")
        split = self.metrics.get("split")
        if split is not None and not isinstance(split, str):
            raise ValueError(f"ModelCard metrics['split'] must name a split (a string), got {split!r}")
        if not isinstance(self.notes, str) and not (
                isinstance(self.notes, list) and all(isinstance(n, str) for n in self.notes)):
            raise ValueError(f"ModelCard notes must be a string or a list of strings, got {self.notes!r}")
        if not isinstance(self.schema, int) or self.schema > SCHEMA_VERSION:
            raise ValueError(f"ModelCard schema {self.schema!r} is newer than this code reads ({SCHEMA_VERSION})")

    # ---- what readers want ----
    @property
    def training_command(self) -> str | None:
        """The command that trained the model: of several, the last `captioner train ...` one
        (a card may list steps after training, e.g. a decoding-settings sweep), else the last."""
        commands = self.commands
        trains = [c for c in commands if c.lstrip().startswith("captioner train")]
        return (trains or commands or [None])[-1]

    @property
    def commands(self) -> list[str]:
        """Every command, in the order they were run (feature extraction first, ...)."""
        if self.command is None:
            return []
        return list(self.command) if isinstance(self.command, list) else [self.command]

    @property
    def split(self) -> str | None:
        """The held-out split the metrics were measured on (e.g. "flickr8k dev")."""
        return self.metrics.get("split")

    # ---- (de)serialization ----
    def to_dict(self) -> dict[str, Any]:
        out = dataclasses.asdict(self)
        if not out["extra"]:
            del out["extra"]
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any], source: str = "model card") -> ModelCard:
        """A card from its JSON object; old-schema cards are mapped onto this one."""
        if not isinstance(d, dict):
            raise InputError(f"{source}: a model card is a JSON object, got {type(d).__name__}")
        d = dict(d)
        fields = {f.name for f in dataclasses.fields(cls)}
        extra = d.pop("extra", None) or {}
        if not isinstance(extra, dict):
            raise InputError(f"{source}: not a model card: 'extra' must be a JSON object, got {extra!r}")
        extra = dict(extra)
        written = d.pop("task", "")
        task = written if isinstance(written, str) else ""
        task = _LEGACY_TASKS.get(task.strip().lower(), task)
        if task != written:
            extra.setdefault("task_as_written", written)
        if "metrics" not in d and "dev_metrics" in d:
            d["metrics"] = d.pop("dev_metrics")
        commands = d.get("commands")
        if isinstance(commands, list) and commands and all(isinstance(c, str) for c in commands) \
                and d.get("command") in (None, commands[-1]):
            d["command"] = d.pop("commands")  # the old separate list, the last one being `command`
        kwargs = {}
        for key, value in d.items():
            if key in fields:
                kwargs[key] = value
            elif key in extra and extra[key] != value:
                raise InputError(f"{source}: not a model card: {key!r} is both a top-level key and in 'extra'")
            else:
                extra[key] = value
        if "model" not in kwargs:
            raise InputError(f"{source}: a model card needs 'model' (the model's file name)")
        try:
            return cls(task=task, extra=extra, **kwargs)
        except (TypeError, ValueError) as exc:
            raise InputError(f"{source}: not a model card: {exc}") from None

    @classmethod
    def load(cls, path) -> ModelCard:
        """Read the card at `path` (a `.json`), or the card beside a model file."""
        path = os.fspath(path)
        if not path.endswith(".json"):
            path = card_path(path)
        from .errors import text_file_errors

        with text_file_errors(path):
            with open(path, encoding="utf-8") as f:
                try:
                    data = json.load(f)
                except json.JSONDecodeError as exc:
                    raise InputError(f"{path}: not valid JSON ({exc})") from None
        return cls.from_dict(data, source=path)

    @classmethod
    def find(cls, model_path) -> ModelCard | None:
        """The card beside `model_path`, or None where there is none."""
        path = card_path(model_path)
        return cls.load(path) if os.path.exists(path) else None

    @classmethod
    def record_step(cls, model_path, script, argv, extra=None, metrics=None) -> ModelCard | None:
        """After a script has rewritten a trained model: append ``python SCRIPT ARGV...`` (or
        ``captioner ARGV...`` for SCRIPT "captioner", a command) to the
        card's commands and merge ``extra`` and ``metrics`` into it (None where the model has no
        card). Returns the saved card."""
        import shlex

        card = cls.find(model_path)
        if card is None:
            return None
        line = " ".join(shlex.quote(str(a)) for a in [script, *argv])
        card.command = card.commands + [line if script == "captioner" else "python " + line]
        card.extra = {**(card.extra or {}), **(extra or {})}
        if metrics:
            card.metrics = {**(card.metrics or {}), **metrics}
        card.save(model_path)
        return card

    def save(self, path) -> str:
        """Write the card atomically to `path` (a `.json`) or beside a model file; returns the path."""
        from .io import write_json

        path = os.fspath(path)
        if not path.endswith(".json"):
            path = card_path(path)
        write_json(path, without_absolute_paths(self.to_dict()))
        return path


# an absolute path in a card's text: at its start or after a space, '=', a quote or '(' (not a URL's '//')
_ABSOLUTE = re.compile(r"""(^|[\s=("'])(/(?!/)[^\s"')]+)""")


def without_absolute_paths(obj, start=None):
    """`obj` (a card's dict) with every absolute path in its strings made relative to `start` (default:
    the working directory, a clone's root when the commands run from there): a card names no path of
    the machine it was made on, and its commands rerun from a clone."""
    start = start or os.getcwd()
    if isinstance(obj, str):
        return _ABSOLUTE.sub(lambda m: m.group(1) + os.path.relpath(m.group(2), start), obj)
    if isinstance(obj, dict):
        return {k: without_absolute_paths(v, start) for k, v in obj.items()}
    if isinstance(obj, list):
        return [without_absolute_paths(v, start) for v in obj]
    return obj


# Hugging Face's pipeline tag of each task (the model-card metadata a model hub reads)
PIPELINE_TAGS = {"caption": "image-to-text", "translate": "translation", "entail": "text-classification",
                 "vqa": "visual-question-answering", "video-caption": "video-text-to-text",
                 "video-classify": "video-classification", "transliterate": "text2text-generation",
                 "summarize": "summarization", "language-model": "text-generation",
                 "classify": "text-classification", "dialogue": "text2text-generation"}


def _scalars(metrics, prefix=""):
    """(name, value) of every number or short string in `metrics`, nested dicts flattened one level."""
    rows = []
    for key, value in metrics.items():
        name = f"{prefix}{key}"
        if isinstance(value, bool) or value is None:
            continue
        if isinstance(value, (int, float)):
            rows.append((name, f"{value:g}" if isinstance(value, float) else str(value)))
        elif isinstance(value, str) and len(value) <= 200 and key != "split":
            rows.append((name, value))
        elif isinstance(value, dict) and not prefix:
            rows.extend(_scalars(value, prefix=f"{name}."))
    return rows


def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def to_markdown(card, title, command, default):
    """A Markdown model card (Hugging Face's layout: metadata, intended use, how to use, held-out
    results, training, storage, notes and limitations) generated from `card`; `title`, the
    `captioner COMMAND` that runs the model and whether it is that command's default come from the
    registry (`captioner/bundled.py`). Written by ``scripts/write_model_cards.py``."""
    name = card.model
    lines = ["---", "library_name: keras", f"pipeline_tag: {PIPELINE_TAGS.get(card.task, card.task)}",
             f"tags: [captioner, attention, {card.task}]", "---", "", f"# {title}", "",
             f"*Generated from `{os.path.splitext(name)[0]}.json` by `python scripts/write_model_cards.py`: "
             "edit the JSON card, not this page.*", "",
             "## Intended use", "",
             f"{title}: the {'default' if default else 'alternative'} model of `captioner {command}`"
             f"{'' if default else f' (`--model assets/models/{name}`)'}. It was trained and selected only on "
             f"the data below; read the held-out split and the notes before using it elsewhere.", "",
             "## How to use", "", "```bash",
             f".venv/bin/captioner {command} --model assets/models/{name} ...   # captioner {command} -h for the rest",
             "```", "", "```python", "import captioner, keras",
             f'model = keras.models.load_model("assets/models/{name}")  # safe mode on', "```", ""]
    rows = _scalars(card.metrics)
    lines += ["## Held-out results", "", f"Split: {card.split or 'not recorded'}.", ""]
    if rows:
        lines += ["| metric | value |", "| --- | --- |"] + [f"| {_cell(k)} | {_cell(v)} |" for k, v in rows] + [""]
    lines += ["## Training", "", f"Seed: {card.seed if card.seed is not None else 'not recorded'}. "
              "The commands, in the order they were run:", "", "```bash", *card.commands, "```", ""]
    data = _scalars(card.data)
    if data:
        lines += ["Data:", ""] + [f"- {_cell(k)}: {_cell(v)}" for k, v in data] + [""]
    storage = (card.extra or {}).get("storage")
    if isinstance(storage, dict):
        backbone = storage.get("backbone")
        where = (f"by reference to the pip package `{backbone.get('package')}=={backbone.get('version')}` "
                 f"(weights file sha256 `{backbone.get('sha256', '')[:16]}...`), rebuilt from it on load"
                 if isinstance(backbone, dict) else (backbone or "no backbone"))
        dtypes = ", ".join(f"{n} {d}" for d, n in sorted(storage.get("weights", {}).items()))
        lines += ["## Storage", "", f"{storage.get('bytes', 0) / 1e6:.1f} MB; weight arrays: {dtypes}; "
                  f"backbone: {where}.", ""]
    examples = (card.extra or {}).get("examples_on_real_input")
    if isinstance(examples, dict) and examples.get("rows"):
        lines += ["## Examples on real input", "",
                  "What the model said on input it never saw (`assets/samples/`), recorded as it came, good or "
                  "bad, by `python scripts/card_examples.py`:", "", "```bash", *examples.get("commands", []), "```",
                  "", "| input | output |", "| --- | --- |"]
        lines += [f"| {_cell(row[0])} | {_cell(str(row[1]).replace(chr(10), '<br>'))} |"  # a line break stays one
                  for row in examples["rows"] if len(row) == 2] + [""]
    notes = card.notes if isinstance(card.notes, list) else [card.notes] if card.notes else []
    if notes:
        lines += ["## Notes and limitations", ""] + [f"- {_cell(n)}" for n in notes] + [""]
    return "\n".join(lines)

"""Training configuration as dataclasses, and the `captioner train TASK` options generated from them.

Every field of a config dataclass is one command-line option: `learning_rate` is
`--learning-rate`, its type and default are the field's, and the field's metadata gives the
rest (`help`, `choices`, `metavar`, `nargs`, `action`, `flag`). A `bool` field is a
store-true flag. A field without a default is a required option. A recipe that changes only
a default redefines the field (`epochs: int = 30`); its help text is inherited from the base
class's field. No TensorFlow here: `captioner train -h` must stay fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import typing


def option(default=dataclasses.MISSING, help=None, **meta):
    """A config field with its command-line metadata (help, choices, metavar, nargs, action, flag).

    ``cli=False``: a setting with a default that is not a command-line option of this config (a base
    config's setting that only some recipes offer: a subclass's config makes it one by declaring
    the field again with its help)."""
    if help is not None:
        meta["help"] = help
    if isinstance(default, list):
        return dataclasses.field(default_factory=lambda: list(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


@dataclasses.dataclass(kw_only=True)
class TrainConfig:
    """What every run has; each recipe's config extends it (and may change the defaults)."""

    output_dir: str = option(help="run directory: checkpoints, logs, vocabularies, model")
    model_out: str | None = option(None, help="final .keras file (default OUTPUT_DIR/model.keras)")
    epochs: int = option(20)
    batch_size: int = option(64)
    learning_rate: float = option(1e-3)
    patience: int = option(3, help="stop after this many epochs without improvement of the selection metric")
    lr_decay: float = option(1.0, help="multiply the learning rate by this after each epoch without dev "
                                       "improvement (1: constant; 0.5 halves it on every plateau)")
    time_budget: float | None = option(None, help="minutes; stop training then (best epoch kept)")
    seed: int = option(1)
    limit: int | None = option(None, help="use only the first N training examples (smoke runs; for "
                                          "`train lm --level char`, N characters)")
    resume: bool = option(False, help="continue from OUTPUT_DIR's last checkpoint")


def _metadata(cls, name):
    """The field's metadata, inherited from the nearest base class that documents it."""
    for klass in cls.__mro__:
        for f in dataclasses.fields(klass) if dataclasses.is_dataclass(klass) else ():
            if f.name == name and f.metadata:
                return f.metadata
    return {}


def _scalar_type(hint):
    """int for `int`, `Optional[int]`, `int | None`; None for lists and bools."""
    args = [a for a in typing.get_args(hint) if a is not type(None)]
    if args and typing.get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        hint = args[0]
    return hint if hint in (int, float, str) else None


def add_arguments(parser, config_cls):
    """Add one option per field of `config_cls` to `parser` (in field order)."""
    hints = typing.get_type_hints(config_cls)
    for f in dataclasses.fields(config_cls):
        meta = dict(_metadata(config_cls, f.name))
        if not meta.pop("cli", True):
            continue
        flag = meta.pop("flag", "--" + f.name.replace("_", "-"))
        kwargs = {"dest": f.name, "help": meta.pop("help", None)}
        hint = hints[f.name]
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if hint is bool:
            kwargs["action"] = "store_true"
        else:
            kwargs.update(meta)
            if "action" not in meta or meta["action"] != "append":
                kwargs["type"] = _scalar_type(hint) or str
            if required:
                kwargs["required"] = True
            else:
                kwargs["default"] = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        parser.add_argument(flag, **kwargs)
    return parser


def from_args(config_cls, args):
    """The config of parsed `args` (an argparse namespace holding at least every field)."""
    return config_cls(**{f.name: getattr(args, f.name) for f in dataclasses.fields(config_cls)
                         if _metadata(config_cls, f.name).get("cli", True)})


class HelpFormatter(argparse.RawDescriptionHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """The recipe's docstring as written, and each option's default."""

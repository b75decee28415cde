"""Constructors that take settings in groups, configs that stay flat.

A model with many settings takes them as a few frozen dataclasses (a `Seq2SeqNetwork`, a
`DecoderDesign`, ...) so that its constructor names what it is built from, while its saved config
keeps one flat dict (every file saved before still loads). `group_settings` is the one translation
from the flat keys to the groups; `GroupedSettings` gives a Keras class its `of(**flat)` and the
`from_config` that uses it.
"""

from __future__ import annotations

import dataclasses


def group_settings(settings: dict, groups: dict) -> dict:
    """{name: group(**its fields)} for each dataclass of `groups` ({name: dataclass}), taking those
    fields out of `settings` (a flat config, changed in place: what is left belongs elsewhere)."""
    return {name: group(**{f.name: settings.pop(f.name) for f in dataclasses.fields(group) if f.name in settings})
            for name, group in groups.items()}


class GroupedSettings:
    """Mixin: ``GROUPS = {"network": SomeNetwork, ...}`` names the constructor's grouped keywords;
    ``cls.of(*args, **flat)`` builds from flat settings (each field to its group, the rest as they
    are), and ``from_config`` reads a saved flat config through it."""

    GROUPS: dict = {}

    @classmethod
    def of(cls, *args, **settings):
        groups = group_settings(settings, cls.GROUPS)
        return cls(*args, **groups, **settings)

    @classmethod
    def from_config(cls, config):
        return cls.of(**config)

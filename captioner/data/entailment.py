"""Entailment pairs for training: SICK (train minus a dev part, trial reported) or SNLI jsonl splits."""


def sick_split(path, train_split="TRAIN", dev_fraction=0.1):
    """{"train", "dev"} pairs of a SICK file's `train_split`: the dev part chosen by md5 of pair_ID
    (what `captioner train entail --format sick` trains and selects on)."""
    from captioner.data.sick import load_sick
    from captioner.data.tsv_pairs import split_by_key

    return split_by_key(load_sick(path, splits=[train_split]), key=lambda p: p.pair_id,
                        fractions={"dev": dev_fraction})


def load_entailment_data(cfg):
    """The splits of `captioner train entail`: (train, dev, eval pairs, eval name, description).

    cfg (the recipe's config) says: ``format`` "sick" (``data`` the SICK txt file; train on its
    ``train_split`` minus a ``dev_fraction`` chosen by md5 of pair_ID, report on ``eval_split``;
    ``add_reverse_pairs``: also every train pair swapped, labelled entailment_BA) or "snli"
    (``data`` the train jsonl, ``dev`` the dev jsonl, ``eval`` the reported one, default dev)."""
    from captioner.data.sick import load_sick, reversed_pairs
    from captioner.data.snli import load_snli
    from captioner.errors import InputError

    if cfg.format == "sick":
        parts = sick_split(cfg.data, cfg.train_split, cfg.dev_fraction)
        desc = {"file": cfg.data, "train": f"{cfg.train_split} minus dev", "dev": f"{cfg.dev_fraction:g} of "
                f"{cfg.train_split} by md5 of pair_ID", "eval": cfg.eval_split}
        train = parts["train"]
        if cfg.add_reverse_pairs:
            train = train + reversed_pairs(train)
            desc["train"] += ", plus each of those pairs reversed (label: entailment_BA)"
        return train, parts["dev"], load_sick(cfg.data, splits=[cfg.eval_split]), cfg.eval_split, desc
    if not cfg.dev:
        raise InputError("--format snli needs --dev DEV.jsonl")
    if cfg.add_reverse_pairs:
        raise InputError("--add-reverse-pairs needs --format sick (SNLI has no reverse judgments)")
    dev = load_snli(cfg.dev, "dev")
    evals = load_snli(cfg.eval, "eval") if cfg.eval else dev
    return (load_snli(cfg.data, "train"), dev, evals, "eval" if cfg.eval else "dev",
            {"train": cfg.data, "dev": cfg.dev, "eval": cfg.eval or cfg.dev})

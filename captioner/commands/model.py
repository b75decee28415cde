"""`captioner model ensemble|set-defaults|add-truecaser|slim-backbone|tune-rescorer|store-lean|
fit-tagger|learn-words`: tools that make or change a model file after training.

    captioner model ensemble runs/s1/m.keras runs/s2/m.keras --output ensemble.keras [--combine product|mixture]
        [--beam-size K --alpha A]
    captioner model set-defaults --model M.keras [--beam-size K] [--alpha A] [--no-repeat-ngram N]
        [--copy argmax|distinct]

``ensemble`` joins two or more models of one kind into one `.keras` file whose members are
decoded together in the one beam search: image captioners of one backbone and one vocabulary
(`CaptionDecoderEnsemble`: the backbone runs once per image) or Seq2Seq models (translators,
transliterators, headline models) with the same vocabularies and tokenizers (`Seq2SeqEnsemble`:
what they share is saved once); or document classifiers (HANs) that read a text alike
(`DocumentEnsemble`: their label probabilities combined, their attention averaged). --combine
defaults to product for decoders, mixture for classifiers. Each member is loaded in safe mode;
the ensemble takes the first member's decoding defaults unless given, is written atomically,
loaded back in safe mode, and its output on a probe input (a generated image, source ids, or a
text) compared with the one before saving.
Its card lists every member's commands (from the members' cards) and then this one; each member's
whole card is kept under ``extra.members``.

``set-defaults`` rewrites the decoding defaults saved in a model, keeping its weights: beam width
and length penalty of an image captioner or a Seq2Seq model, n-gram blocking and distinct copies
of a Seq2Seq model. The card gets the command, the old and new settings under
``extra.decoding_defaults``; its metrics stay as they were measured (re-measure them).

``add-truecaser`` gives a lower-cased word translator a truecaser learned from its cased
training targets (`captioner.text.truecase.learn_truecase`: each vocabulary word's most frequent
form away from the start of a sentence), the training split rebuilt exactly as `captioner train
translate` builds it; cased and lower-cased sacreBLEU before and after on its held-out split
(the lower-cased output must not change) go into the card (``extra.truecase``, ``metrics``).

``slim-backbone`` drops an unused ImageNet classifier from the backbone saved inside a pixel model
(models saved before `Backbone.feature_model`), after checking on random pixels that the features
are bit-identical; sizes before and after go into ``extra.slim_backbone``.

``tune-rescorer`` fits a transliteration model's n-best re-ranker (a character LM and the word list
of the TRAINING lexicon, `LexiconRescorer`) on the even half of a Dakshina dev lexicon's distinct
romanizations, reports it on the odd half and on all of dev (and the other way round, as a
check), choosing beam, alpha, LM order and LM over types or counts on the tuning half
(`captioner.inference.rescorer_tuning`); decoded n-best lists can be cached (--cache-dir). With
--output the model is saved there with the chosen rescorer, beam and alpha, its card following,
and the figures are checked again by decoding with the saved file.

``store-lean`` re-saves models the lean way: float16 weights, the pip-package backbone by
reference, no optimizer state; each file is loaded back in the process, and its card gets the
bytes before and after, the stored dtypes and the backbone's package and checksum
(``extra.storage``). Outputs stay the same within float16 rounding
(``assets/benchmarks/float16_storage.json`` measures it on each bundled model's dev data).

``fit-tagger`` fits a captioner's object tagger to the photos it was trained on (its known
ImageNet classes, its familiar-photo test, the search that steers captions) or, with
--from-model, copies an image captioner's settings to a video captioner or a VQA model of the
same photos; ``learn-words`` teaches an image captioner words its training captions never gave it
from folders of photos of them (DCC's lexical classifiers). The library and the details:
`captioner.inference.tagger_fitting`; the settings go into ``extra.object_tagger`` /
``extra.learned_words``.

``fit-styles`` lets a captioner trained on several corpora (`captioner train caption --corpus ...`) choose
its style per photo (``--style auto``): k-means centroids of each corpus's training photos' pooled
features (`captioner.tagging.style_choice`), a photo written in the style of its nearest one; the
share of each corpus's dev photos given their own corpus's style goes into ``extra.style_chooser``.

``calibrate`` fits one temperature T (softmax(logits / T), Guo et al. 2017) of a VQA model, an
entailment model or a document classifier on its dev data by the negative log-likelihood
(`captioner.inference.calibration`), saves it in the model and, for a VQA model, re-chooses its
"don't know" threshold on the new probabilities. Accuracy, NLL and expected calibration error
(15 bins) before and after go into ``extra.calibration``; labels and answers do not change.

Every tool rewrites the file atomically (one `.keras`, safe-mode loadable) and appends its command
to the model's card.
"""

from __future__ import annotations

import os
import sys

NAME = "model"
SEQ2SEQ_SETTINGS = ("beam_size", "alpha", "no_repeat_ngram", "copy_distinct")
CAPTIONER_SETTINGS = ("beam_size", "alpha")


def register(subparsers):
    import argparse

    p = subparsers.add_parser(NAME, help="make or change a model file: ensemble, set-defaults, add-truecaser, "
                              "slim-backbone, tune-rescorer, store-lean, fit-tagger, learn-words",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    tools = p.add_subparsers(dest="tool", metavar="TOOL")
    e = tools.add_parser("ensemble", help="join models of one kind into one ensemble .keras file",
                         description=__doc__.split("\n\n")[2])
    e.add_argument("members", nargs="+", help="two or more image captioner, Seq2Seq or document classifier .keras files")
    e.add_argument("--output", required=True, help="the ensemble .keras file (written atomically)")
    e.add_argument("--combine", choices=("product", "mixture"),
                   help="product (mean log-probability) or mixture (mean probability) of the members' distributions "
                   "(default: product for decoders, mixture for classifiers)")
    e.add_argument("--beam-size", type=int, help="default: the first member's")
    e.add_argument("--alpha", type=float, help="default: the first member's")
    e.set_defaults(func=_writing(run_ensemble, "output"))
    d = tools.add_parser("set-defaults", help="rewrite a model's saved decoding defaults, keeping its weights",
                         description=__doc__.split("\n\n")[3])
    d.add_argument("--model", required=True, help="an image captioner or Seq2Seq .keras file (rewritten in place)")
    d.add_argument("--beam-size", type=int)
    d.add_argument("--alpha", type=float)
    d.add_argument("--no-repeat-ngram", type=int, help="Seq2Seq only")
    d.add_argument("--style", help="image captioner trained on several corpora: the style it writes by default")
    d.add_argument("--copy", choices=("argmax", "distinct"), help="Seq2Seq only: an <unk> copies the most attended "
                   "source word, or the most attended one not yet written")
    d.set_defaults(func=_writing(run_set_defaults, "model"))
    t = tools.add_parser("add-truecaser", help="give a lower-cased word translator a truecaser from its training "
                         "targets", description=__doc__.split("\n\n")[4])
    t.add_argument("--model", required=True, help="a word-level Seq2Seq translator .keras (rewritten in place)")
    from captioner.training.translation_data import add_split_arguments

    add_split_arguments(t)
    t.add_argument("--beam-size", type=int, default=None, help="default: the model's")
    t.add_argument("--dry-run", action="store_true", help="measure only; leave the file and its card alone")
    t.set_defaults(func=_writing(run_add_truecaser, "model"))
    b = tools.add_parser("slim-backbone", help="drop an unused ImageNet classifier from a pixel model's backbone",
                         description=__doc__.split("\n\n")[5])
    b.add_argument("--model", required=True, help="a pixel model .keras file (rewritten in place)")
    b.add_argument("--seed", type=int, default=0, help="seed of the random pixels the check uses")
    b.set_defaults(func=_writing(run_slim_backbone, "model"))
    r = tools.add_parser("tune-rescorer", help="fit a transliteration model's n-best re-ranker on half of dev",
                         description=__doc__.split("\n\n")[6])
    datasets = os.path.join("..", "shared", "datasets", "dakshina-hi")
    r.add_argument("--model", required=True, help="a character-level transliteration .keras file")
    r.add_argument("--train", default=os.path.join(datasets, "hi.translit.sampled.train.tsv"),
                   help="the training lexicon (the rescorer's word list and LM)")
    r.add_argument("--dev", default=os.path.join(datasets, "hi.translit.sampled.dev.tsv"),
                   help="the dev lexicon (tuned on its even half, reported on its odd half)")
    r.add_argument("--settings", default="10:1.0", help="beam:alpha,... decoded and tuned over (default 10:1.0)")
    r.add_argument("--lm-orders", default="3,4,5,6", help="character LM orders tried (default 3,4,5,6)")
    r.add_argument("--method", default="maxent", choices=("maxent", "grid"),
                   help="the weights: maximum-likelihood log-linear re-ranker, or the best grid point")
    r.add_argument("--cache-dir", help="keep the decoded n-best lists here (JSON; a re-run only re-tunes)")
    r.add_argument("--json", help="write the figures here")
    r.add_argument("--output", help="save the model with the chosen rescorer here (atomically)")
    r.set_defaults(func=_writing(run_tune_rescorer, "output"))
    lean = tools.add_parser("store-lean", help="re-save models with float16 weights, the backbone by reference and no "
                            "optimizer state", description=__doc__.split("\n\n")[7])
    lean.add_argument("--model", action="append", required=True, help="a .keras file (rewritten in place); repeat")
    lean.set_defaults(func=_writing(run_store_lean, "model"))
    _add_tagger_tools(tools, __doc__.split("\n\n")[8])
    y = tools.add_parser("fit-styles", help="fit --style auto: each photo written in the style of the corpus it is "
                         "most like", description=__doc__.split("\n\n")[9])
    y.add_argument("--model", required=True, help="an image captioner trained on several corpora (rewritten in place)")
    y.add_argument("--corpus", action="append", required=True, metavar="FORMAT:DIR[:train=..][:dev=..]",
                   help="each corpus it was trained on, as `captioner train caption --corpus` took it")
    y.add_argument("--features", required=True, help="a `captioner extract` store of their photos (the model's backbone)")
    y.add_argument("--centroids", type=int, default=16, help="k-means centroids per corpus (default 16)")
    y.add_argument("--fallback", help="the style of a photo unlike every corpus (e.g. web); the others then need a "
                   "margin: --keep of their dev photos stay in their style (default: none, the nearest corpus)")
    y.add_argument("--keep", type=float, default=0.9, help="with --fallback: the share of each other corpus's dev "
                   "photos written in its own style (default 0.9)")
    y.add_argument("--make-default", action="store_true", help="also make 'auto' the style it writes by default")
    y.set_defaults(func=_writing(run_fit_styles, "model"))
    from captioner.inference.calibration import add_dev_options

    c = tools.add_parser("calibrate", help="fit a classifier's temperature on dev so that its probabilities mean "
                         "what they say", description=__doc__.split("\n\n")[10])
    c.add_argument("--model", required=True, help="a VQA model, an entailment model or a document classifier "
                   "(rewritten in place)")
    add_dev_options(c)
    c.add_argument("--report", help="also write the figures (JSON, with the reliability bins) here")
    c.set_defaults(func=_writing(run_calibrate, "model"))
    p.set_defaults(func=lambda args: p.print_help() or 2)


def _add_tagger_tools(tools, description):
    f = tools.add_parser("fit-tagger", help="fit a captioner's object tagger to its training photos, or copy one's",
                         description=description)
    f.add_argument("--model", required=True, help="a captioner .keras file, image or video, or a VQA model "
                   "(rewritten in place)")
    f.add_argument("--images", help="a text file naming the training photos, one per line")
    f.add_argument("--corpus", action="append", metavar="FORMAT:DIR[:train=..]",
                   help="instead of --images/--image-dir/--captions: the training photos and captions of a corpus "
                        "(repeat; as `captioner train caption --corpus` takes them)")
    f.add_argument("--image-dir", help="the folder those names are in")
    f.add_argument("--features", help="a `captioner extract` store holding those photos (instead of running the "
                   "backbone over them; it must be the captioner's backbone)")
    f.add_argument("--from-model", help="instead of fitting: copy the tagger settings of this captioner")
    f.add_argument("--min-images", type=int, default=3)
    f.add_argument("--bonus", type=float, default=8.0, help="nats on a novel object's word (times its probability)")
    f.add_argument("--threshold", type=float, default=0.5, help="a tag at least this probable is confident")
    f.add_argument("--search", choices=("bonus", "constrained"), default="bonus",
                   help="how a steering tag enters the beam search: a bonus on its word, or a constraint")
    f.add_argument("--deadline", type=int, default=0,
                   help="constrained: one tag's word within the caption's first N words (0: anywhere)")
    f.add_argument("--known-probability", type=float, default=None, help="a class is seen on a training photo when "
                   "its tag is at least this probable (default: --threshold)")
    f.add_argument("--familiar-centroids", type=int, default=64,
                   help="k-means centroids of the training photos for the familiar-photo test (0: none)")
    f.add_argument("--familiar-test", choices=("centroids", "subspace"), default="centroids",
                   help="familiar = close to one of --familiar-centroids k-means centroids, or little outside the "
                   "span of the training photos' top --familiar-dims principal directions")
    f.add_argument("--familiar-dims", type=int, default=64,
                   help="subspace: principal directions of the training photos' features")
    f.add_argument("--familiar-quantile", type=float, default=0.05,
                   help="this share of held-out training photos falls below the familiar threshold")
    f.add_argument("--captions", help="the photos' captions (Flickr8k.token.txt format): a class is known only from "
                   "photos whose captions name it (the captioner learned its word)")
    f.add_argument("--describe", choices=("sentence", "object"), default="sentence",
                   help="object: an unfamiliar photo's caption is its steering object alone ('a photo of ...')")
    f.add_argument("--batch-size", type=int, default=32)
    f.set_defaults(func=_writing(run_fit_tagger, "model"))
    w = tools.add_parser("learn-words", help="teach an image captioner words from folders of photos of them",
                         description=description)
    w.add_argument("--model", required=True, help="an image captioner .keras file (rewritten in place)")
    w.add_argument("--words", required=True, help="a folder of folders, one per word, of photos that show it")
    w.add_argument("--negatives", required=True, help="a text file naming photos, one per line (the training photos)")
    w.add_argument("--image-dir", required=True, help="the folder the --negatives names are in")
    w.add_argument("--captions", help="the --negatives photos' captions (Flickr8k.token.txt format): a photo whose "
                   "captions name a word is a photo of it")
    w.add_argument("--search", choices=("bonus", "constrained"), help="also set the tagger's search")
    w.add_argument("--strength", type=float, default=0.002, help="inverse L2 strength of the regressions")
    w.add_argument("--scales", type=int, nargs="+", default=[], metavar="PX",
                   help="also read each photo enlarged to these input sides (e.g. 390: 13x13 cells, where small "
                        "objects fill a cell; tagging then runs the backbone once more per scale)")
    w.add_argument("--batch-size", type=int, default=32)
    w.set_defaults(func=_writing(run_learn_words, "model"))


def _writing(run, flag):
    """`run` reading, changing and writing the file(s) of `args.<flag>` under one exclusive lock
    (`captioner.io.exclusive_writer`): a second tool on the same model is refused with one line, so
    neither change is lost; an output that is one of the tool's inputs is refused first."""
    import functools

    @functools.wraps(run)
    def wrapped(args):
        from captioner.io import check_output_not_input, exclusive_writer

        value = getattr(args, flag, None)
        paths = value if isinstance(value, list) else [value]
        if flag == "output":
            inputs = [*getattr(args, "members", []), *(getattr(args, name, None) for name in ("model", "train", "dev"))]
            check_output_not_input(value, inputs)
        with exclusive_writer(paths, flag=f"--{flag}"):
            return run(args)

    return wrapped


def _argv_after(args, tool):
    """The command line's arguments after `captioner model TOOL` (what the card records)."""
    argv = list(getattr(args, "argv", None) or sys.argv[1:])
    return argv[argv.index(tool) + 1:] if tool in argv else argv


def _load(path, classifiers=False):
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.seq2seq import Translator

    if classifiers:
        from captioner.models.document_classifier import DocumentClassifier, DocumentEnsemble

        return load_model_file(path, (ImageCaptioner, Translator, DocumentClassifier, DocumentEnsemble),
                               "an image captioner, a Seq2Seq model or a document classifier")
    return load_model_file(path, (ImageCaptioner, Translator), "an image captioner or a Seq2Seq model")


def build_ensemble(paths, combine=None, beam_size=None, alpha=None):
    """The ensemble of the models at `paths` (all image captioners, all Seq2Seq models, or all
    document classifiers). InputError names the member that cannot join the first."""
    import keras

    from captioner.errors import InputError
    from captioner.models.caption_decoder_ensemble import CaptionDecoderEnsemble
    from captioner.models.caption_decoder_model import CaptionDecoderModel
    from captioner.models.document_classifier import DocumentClassifier, DocumentEnsemble
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.seq2seq_ensemble import Seq2SeqEnsemble

    if len(paths) < 2:
        raise InputError("an ensemble needs two or more members")
    models = [_load(p, classifiers=True) for p in paths]
    first = models[0]
    for path, model in zip(paths, models):
        if isinstance(model, (Seq2SeqEnsemble, DocumentEnsemble)) or (
                isinstance(model, ImageCaptioner) and not isinstance(model.decoder, CaptionDecoderModel)):
            raise InputError(f"{path}: is an ensemble already; join single models")
        if type(model) is not type(first) and not (isinstance(model, ImageCaptioner) and
                                                    isinstance(first, ImageCaptioner)):
            raise InputError(f"{path}: a {type(model).__name__}, {paths[0]} a {type(first).__name__}: "
                             "members must be of one kind")
    if isinstance(first, DocumentClassifier):
        if beam_size is not None or alpha is not None:
            raise InputError("--beam-size and --alpha are decoding settings: document classifiers have none")
        try:
            return DocumentEnsemble(models, combine=combine)
        except ValueError as exc:  # "member 2 reads its input differently from member 1: its vocabulary ..."
            raise InputError(f"{' '.join(paths)}: {exc}") from None
    combine = combine or "product"
    if isinstance(first, ImageCaptioner):
        for path, model in zip(paths, models):
            if model.backbone.name != first.backbone.name or model.grid_shape != first.grid_shape:
                raise InputError(f"{path}: reads {model.backbone.name} {model.grid_shape} features, {paths[0]} "
                                 f"{first.backbone.name} {first.grid_shape}: members must share a backbone")
            if list(model.vocabulary.tokens) != list(first.vocabulary.tokens):
                raise InputError(f"{path}: its vocabulary differs from {paths[0]}'s: an ensemble needs one vocabulary")
        decoder = CaptionDecoderEnsemble([m.decoder for m in models], combine=combine)
        return ImageCaptioner(first.backbone, decoder, first.vocabulary,
                              beam_size=first.beam_size if beam_size is None else beam_size,
                              alpha=first.alpha if alpha is None else alpha, max_length=first.max_length,
                              training_config={**first.training_config,
                                               "ensemble_of": [os.path.basename(p) for p in paths], "combine": combine})
    keras.backend.clear_session(free_memory=False)
    try:
        return Seq2SeqEnsemble.of(models, combine=combine, beam_size=beam_size, alpha=alpha)
    except ValueError as exc:  # "member i has other vocabularies / another tokenizer than member 0"
        raise InputError(f"{' '.join(paths)}: {exc}") from None


PROBE_TEXT = ("Subject: a probe\n\nThe ensemble reads this text before it is saved and after it is loaded back. "
              "Its label probabilities must agree.")


def _probe(model):
    """One input the model decodes: a generated image, a few source ids, or a text."""
    import numpy as np

    from captioner.models.document_classifier import DocumentEnsemble
    from captioner.models.image_captioner import ImageCaptioner

    if isinstance(model, DocumentEnsemble):
        return [PROBE_TEXT]
    if isinstance(model, ImageCaptioner):
        return np.random.default_rng(0).integers(0, 256, (1, *model.input_size, 3)).astype("uint8")
    return np.array([[4, 5, 6, 7]], np.int32) % len(model.source_vocabulary)


def _output(model, probe):
    from captioner.models.document_classifier import DocumentEnsemble

    if isinstance(model, DocumentEnsemble):
        [result] = model.classify(probe)
        return {"tokens": [result.label], "scores": list(result.probabilities.values())}
    return model.generate(probe)


def _same_output(before, after, atol=0.05):
    """Same tokens (a classifier: label), or scores (probabilities) within `atol` (float16 storage
    may move a score in its third decimal)."""
    import numpy as np

    tokens = [np.asarray(x["tokens"] if isinstance(x, dict) else x.tokens) for x in (before, after)]
    scores = [np.asarray(x["scores"] if isinstance(x, dict) else x.scores) for x in (before, after)]
    return np.array_equal(*tokens) or np.allclose(*scores, atol=atol)


def ensemble_card(output, paths, model, argv):
    """The ensemble's ModelCard: the members' commands in order, then the joining command."""
    import shlex

    from captioner.model_card import ModelCard, card_path
    from captioner.models.document_classifier import DocumentEnsemble
    from captioner.models.image_captioner import ImageCaptioner

    cards = {}
    for path in paths:
        if os.path.exists(card_path(path)):
            cards[os.path.basename(path)] = ModelCard.load(path)
    commands = [c for card in cards.values() for c in card.commands]
    commands.append("captioner model ensemble " + " ".join(shlex.quote(a) for a in argv))
    first = cards.get(os.path.basename(paths[0]))
    captioner = isinstance(model, ImageCaptioner)
    classifier = isinstance(model, DocumentEnsemble)
    combine = model.decoder.combine if captioner else model.combine
    config = {"members": [os.path.basename(p) for p in paths], "combine": combine}
    if not classifier:
        config.update(beam_size=model.beam_size, alpha=model.alpha, max_length=model.max_length)
    if captioner:
        config["backbone"] = model.backbone.name
    if classifier:
        task, notes = "classify", (f"{len(paths)} document classifiers that read a text alike; {combine} of their "
                                   "label probabilities, the mean of their sentence and word attention (DocumentEnsemble)")
    else:
        kind = ("captioners of one backbone and vocabulary" if captioner else
                "Seq2Seq models of one vocabulary and tokenizer")
        task = "caption" if captioner else "translate"
        notes = (f"{len(paths)} {kind}, decoded together in one beam search ({combine} of their next-word "
                 f"distributions; {type(model.decoder if captioner else model).__name__})")
    return ModelCard(
        model=os.path.basename(output), task=(first.task if first else task),
        command=commands, data=first.data if first else {}, config=config, notes=notes,
        extra={"members": {name: card.to_dict() for name, card in cards.items()},
               "members_without_card": [os.path.basename(p) for p in paths if os.path.basename(p) not in cards]})


def make_ensemble(paths, output, combine=None, beam_size=None, alpha=None, argv=None):
    """Build, save (atomically), load back and check the ensemble; write its card. Returns the
    loaded ensemble."""
    from captioner.errors import InputError
    from captioner.models.storage import save_model

    if not str(output).endswith(".keras"):
        raise InputError(f"--output {output}: must end in .keras")
    ensemble = build_ensemble(paths, combine, beam_size, alpha)
    probe = _probe(ensemble)
    before = _output(ensemble, probe)
    save_model(ensemble, output)
    loaded = _load(output, classifiers=True)
    if not _same_output(before, _output(loaded, probe)):
        raise InputError(f"{output}: decodes differently once loaded back")
    argv = list(argv if argv is not None else [*paths, "--output", output])
    ensemble_card(output, paths, loaded, argv).save(output)
    return loaded


def run_ensemble(args):
    from captioner.models.document_classifier import DocumentEnsemble
    from captioner.models.image_captioner import ImageCaptioner

    model = make_ensemble(args.members, args.output, args.combine, args.beam_size, args.alpha,
                          argv=_argv_after(args, "ensemble"))
    combine = model.decoder.combine if isinstance(model, ImageCaptioner) else model.combine
    decoding = "" if isinstance(model, DocumentEnsemble) else f", beam {model.beam_size}, alpha {model.alpha}"
    print(f"wrote {args.output}: {len(args.members)} members ({combine}){decoding}, "
          f"{os.path.getsize(args.output) / 1e6:.1f} MB; loaded back in safe mode, same output on a probe input")
    return 0


def set_defaults(path, beam_size=None, alpha=None, no_repeat_ngram=None, copy=None, argv=None, style=None):
    """Rewrite `path`'s decoding defaults in place; returns (old, new) settings."""
    import numpy as np

    from captioner.errors import InputError
    from captioner.model_card import ModelCard
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.storage import save_model

    model = _load(path)
    if isinstance(model, ImageCaptioner):
        if no_repeat_ngram is not None or copy is not None:
            raise InputError(f"{path}: an image captioner has no n-gram blocking or copies: only --beam-size "
                             "and --alpha")
        settings = CAPTIONER_SETTINGS + (("style",) if model.styles else ())
        old = {k: getattr(model, k) for k in settings}
        model.set_search_defaults(old["beam_size"] if beam_size is None else beam_size,
                                  old["alpha"] if alpha is None else alpha, model.max_length)
        if style is not None:
            model.set_style(style)
        new_model = model  # the defaults are plain attributes in its config; the weights stay as they are
    else:
        if style is not None:
            raise InputError(f"{path}: --style is a setting of an image captioner trained on several corpora")
        settings = SEQ2SEQ_SETTINGS
        old = {k: getattr(model, k) for k in settings}
        config = model.get_config()
        for key, value in (("beam_size", beam_size), ("alpha", alpha), ("no_repeat_ngram", no_repeat_ngram),
                           ("copy_distinct", None if copy is None else copy == "distinct")):
            if value is not None:
                config[key] = value
        new_model = type(model).from_config(config)
        new_model.set_weights(model.get_weights())
        probe = _probe(model)
        np.testing.assert_array_equal(new_model.encode(probe)[0].numpy(), model.encode(probe)[0].numpy())
    save_model(new_model, path)
    new = {k: getattr(new_model, k) for k in settings}
    ModelCard.record_step(path, "captioner", ["model", "set-defaults", *(argv if argv is not None else ["--model", path])],
                          extra={"decoding_defaults": {"before": old, "after": new}})
    return old, new


def run_set_defaults(args):
    old, new = set_defaults(args.model, args.beam_size, args.alpha, args.no_repeat_ngram, args.copy,
                            argv=_argv_after(args, "set-defaults"), style=args.style)
    print(f"{args.model}: {old} -> {new}")
    return 0


def run_add_truecaser(args):
    import types

    from captioner.errors import InputError
    from captioner.model_card import ModelCard
    from captioner.models.seq2seq import load_translator
    from captioner.models.storage import save_model
    from captioner.text.tokenizer import WordPreprocessor
    from captioner.text.truecase import learn_truecase
    from captioner.training.translation_data import evaluate_bleu, grouped_references, load_translation_data

    model = load_translator(args.model)
    settings = model.target_tokenizer
    if settings.get("spm") or settings.get("chars") or not settings.get("lower", True):
        raise InputError(f"{args.model}: not a lower-cased word translator (its target tokenizer is {settings}); "
                         "nothing to truecase")
    data = types.SimpleNamespace(format=args.format, data=args.data, source=args.source, target=args.target,
                                 reverse=args.reverse, dev_size=args.dev_size, dev_fraction=args.dev_fraction,
                                 test_fraction=args.test_fraction, eval=None, dev=None)
    train, _, held_out, split, _, _ = load_translation_data(data)
    vocabulary = set(model.target_vocabulary.tokens) | set(model.source_vocabulary.tokens)
    table = learn_truecase((WordPreprocessor.of(settings).as_written(p.target) for p in train),
                           keep=vocabulary)
    print(f"truecase table: {len(table):,} of {len(vocabulary):,} vocabulary words have a form of their own, "
          f"from {len(train):,} {split}-free training targets")
    beam = args.beam_size or model.beam_size
    refs = grouped_references(held_out)
    before, _ = evaluate_bleu(model, refs, beam, model.alpha, cased=True)
    config = model.get_config()
    config["target_tokenizer"] = {**settings, "truecase": table}
    cased = type(model).from_config(config)
    cased.set_weights(model.get_weights())
    after, _ = evaluate_bleu(cased, refs, beam, model.alpha, cased=True)
    if abs(after["BLEU_lc"] - before["BLEU_lc"]) > 0.05:
        raise InputError(f"{args.model}: truecasing changed the lower-cased output: BLEU_lc {before['BLEU_lc']} -> "
                         f"{after['BLEU_lc']}; the file is left as it was")
    print(f"{split} ({after['sentences']} sentences, beam {beam}): cased BLEU {before['BLEU']} -> {after['BLEU']}, "
          f"lower-cased {before['BLEU_lc']} -> {after['BLEU_lc']}")
    if args.dry_run:
        return 0
    save_model(cased, args.model)
    ModelCard.record_step(
        args.model, "captioner", ["model", "add-truecaser", *_argv_after(args, "add-truecaser")],
        extra={"truecase": {"rule": "unigram truecaser (captioner.text.truecase): most frequent non-initial form in "
                                    "the cased training targets; else the source's form; first word capitalized",
                            "table_entries": len(table), "training_targets": len(train), "before": before,
                            "after": after}},
        metrics={f"{split}_beam{beam}_truecased": after})
    return 0


def run_slim_backbone(args):
    import keras
    import numpy as np

    from captioner.errors import InputError
    from captioner.model_card import ModelCard
    from captioner.models.keras_archive import check_keras_archive
    from captioner.models.pixel_model import PixelModel
    from captioner.models.storage import save_model

    check_keras_archive(args.model)
    model = keras.models.load_model(args.model, compile=False)
    if not isinstance(model, PixelModel):
        raise InputError(f"{args.model}: not a pixel model (got {type(model).__name__}); nothing to slim")
    slim = model.without_classifier()
    if slim is model:
        print(f"{args.model}: the backbone has no classifier; left as it is")
        return 0
    pixels = np.random.default_rng(args.seed).integers(0, 256, (2, *model.input_size, 3)).astype(np.uint8)
    np.testing.assert_array_equal(slim.features(pixels).numpy(), model.features(pixels).numpy())
    before = os.path.getsize(args.model)
    params = {"before": int(model.count_params()), "after": int(slim.count_params())}
    save_model(slim, args.model)
    after = os.path.getsize(args.model)
    ModelCard.record_step(args.model, "captioner", ["model", "slim-backbone", *_argv_after(args, "slim-backbone")],
                          extra={"slim_backbone": {"bytes": {"before": before, "after": after}, "parameters": params}})
    print(f"{args.model}: {before / 1e6:.1f} MB -> {after / 1e6:.1f} MB, "
          f"{params['before']:,} -> {params['after']:,} parameters")
    return 0


def run_tune_rescorer(args):
    import json

    from captioner.inference.rescorer_tuning import tune_rescorer
    from captioner.errors import InputError
    from captioner.io import write_json
    from captioner.model_card import ModelCard, card_path

    try:
        settings = [(int(b), float(a)) for b, a in (item.split(":") for item in args.settings.split(","))]
        orders = [int(o) for o in args.lm_orders.split(",")]
    except ValueError:
        raise InputError(f"--settings {args.settings!r} / --lm-orders {args.lm_orders!r}: expected "
                         "BEAM:ALPHA,... and N,...") from None
    if any(b < 1 for b, _ in settings) or any(o < 1 for o in orders):
        raise InputError("beam widths and LM orders must be >= 1")
    report = tune_rescorer(args.model, args.train, args.dev, settings, orders, args.method, args.cache_dir,
                           args.output)
    print(json.dumps({"chosen": report["chosen"], "with_rescorer": report["with_rescorer"]}, ensure_ascii=False))
    if args.json:
        write_json(args.json, report)
    if args.output:
        card = ModelCard.find(args.model)
        if card is not None and os.path.abspath(card_path(args.output)) != os.path.abspath(card_path(args.model)):
            card.save(args.output)  # the card follows the model (atomically)
        ModelCard.record_step(args.output, "captioner", ["model", "tune-rescorer", *_argv_after(args, "tune-rescorer")],
                              extra={"rescorer": {"chosen": report["chosen"], "with_rescorer": report["with_rescorer"],
                                                  "saved_model": report["saved_model"]}})
    return 0


def run_store_lean(args):
    import keras

    import captioner  # noqa: F401  registers the classes
    from captioner.model_card import ModelCard
    from captioner.models.keras_archive import check_keras_archive
    from captioner.models.storage import drop_training_state, save_model, storage_record

    for path in args.model:
        check_keras_archive(path)
        before = os.path.getsize(path)
        model = keras.models.load_model(path)
        uncompiled = drop_training_state(model)
        save_model(model, path)
        keras.models.load_model(path)  # loads back
        record = {**storage_record(model, path), "bytes_before": before, "optimizers_dropped": uncompiled}
        ModelCard.record_step(path, "captioner", ["model", "store-lean", "--model", path], extra={"storage": record})
        print(f"{path}: {before / 1e6:.1f} MB -> {record['bytes'] / 1e6:.1f} MB, weights {record['weights']}, "
              f"backbone {'by reference' if isinstance(record.get('backbone'), dict) else record.get('backbone', '-')}")
    return 0


def run_fit_tagger(args):
    from captioner.errors import InputError
    from captioner.inference.tagger_fitting import copy_tagger, fit_tagger
    from captioner.model_card import ModelCard

    argv = ["model", "fit-tagger", *_argv_after(args, "fit-tagger")]
    if args.from_model:
        extra = copy_tagger(args.model, args.from_model)
        ModelCard.record_step(args.model, "captioner", argv, extra=extra)
        print(f"{args.model}: tagger settings of {args.from_model} ({extra['object_tagger']['known']} known classes)")
        return 0
    if args.corpus:
        from captioner.data.caption_corpora import corpus_photos

        if args.images or args.captions:
            raise InputError("give --corpus, or --images/--image-dir/--captions, not both")
        args.images, args.captions = corpus_photos(args.corpus)
    elif not (args.images and args.image_dir):
        raise InputError("give --images and --image-dir, or --corpus (fit), or --from-model (copy)")
    options = ("features", "min_images", "bonus", "threshold", "search", "deadline", "known_probability",
               "familiar_centroids", "familiar_test", "familiar_dims", "familiar_quantile", "captions", "describe",
               "batch_size")
    extra, used, skipped = fit_tagger(args.model, args.images, args.image_dir,
                                      **{name: getattr(args, name) for name in options})
    ModelCard.record_step(args.model, "captioner", argv, extra=extra)
    print(f"{args.model}: {extra['object_tagger']['known']} known classes from {used} photos ({skipped} skipped); "
          f"{args.search} search, bonus {args.bonus}, threshold {args.threshold}, deadline {args.deadline}")
    return 0


def run_learn_words(args):
    from captioner.inference.tagger_fitting import learn_words
    from captioner.model_card import ModelCard

    extra, words, used, skipped = learn_words(args.model, args.words, args.negatives, args.image_dir,
                                              captions=args.captions, search=args.search, strength=args.strength,
                                              batch_size=args.batch_size, scales=args.scales)
    ModelCard.record_step(args.model, "captioner", ["model", "learn-words", *_argv_after(args, "learn-words")],
                          extra=extra)
    for word, r in words.items():
        print(f"{word}: {r['photos']} photos of it, 5-fold F1 {r['cv_f1']}, cut-off {r['cutoff']}")
    print(f"{args.model}: learned {len(words)} word(s) from {used} photos ({len(skipped)} skipped)")
    return 0


def run_fit_styles(args):
    import numpy as np

    from captioner.errors import InputError
    from captioner.features.store import FeatureStore
    from captioner.tagging.style_choice import StyleChooser, fit_style_centroids
    from captioner.model_card import ModelCard
    from captioner.models.image_captioner import ImageCaptioner
    from captioner.models.loading import load_model_file
    from captioner.models.storage import save_model, storage_record
    from captioner.data.caption_corpora import parse_corpus

    model = load_model_file(args.model, ImageCaptioner, "an image captioner")
    corpora = [parse_corpus(spec) for spec in args.corpus]
    missing = [c.style for c in corpora if c.style not in model.styles]
    if len(corpora) < 2 or missing:
        raise InputError(f"{args.model}: writes the styles {model.styles or 'of one corpus'}; give two or more of its "
                         f"corpora (not {missing})" if missing else "give two or more --corpus")
    with FeatureStore(args.features, backbone=model.backbone.name) as store:
        def pooled(paths):
            return store.load([os.path.basename(p) for p in paths], grid=False)["pooled"].astype("float32")

        train = {c.style: pooled(c.load("train").image_paths) for c in corpora}
        dev = {c.style: pooled(c.load("dev").image_paths) for c in corpora}
    try:
        if not 0 < args.keep <= 1:
            raise ValueError(f"--keep {args.keep}: must be in (0, 1]")
        config = fit_style_centroids(train, k=args.centroids, fallback=args.fallback, held_out=dev, keep=args.keep)
        model.set_style_chooser(config)
    except ValueError as exc:
        raise InputError(f"{args.model}: {exc}") from None
    chooser = StyleChooser(config)
    own = {style: round(100.0 * float(np.mean([c == style for c in chooser.choose(x)])), 1) for style, x in dev.items()}
    before = model.style
    if args.make_default:
        model.set_style("auto")
    save_model(model, args.model)
    record = {"corpora": [c.style for c in corpora], "centroids_per_corpus": args.centroids,
              "fallback": args.fallback, "margins": config["margins"],
              "train_photos": {s: len(x) for s, x in train.items()},
              "dev_photos_given_their_own_style_percent": own, "default_style": {"before": before, "after": model.style},
              "storage": storage_record(model, args.model)}
    ModelCard.record_step(args.model, "captioner", ["model", "fit-styles", *_argv_after(args, "fit-styles")],
                          extra={"style_chooser": record})
    print(f"{args.model}: style auto from {args.centroids} centroids per corpus; dev photos given their own corpus's "
          f"style: " + ", ".join(f"{s} {v}%" for s, v in own.items()) + f"; default style {model.style}")
    return 0


def run_calibrate(args):
    from captioner.errors import InputError
    from captioner.inference import calibration
    from captioner.io import write_json
    from captioner.model_card import ModelCard
    from captioner.models.document_classifier import DocumentClassifier, DocumentEnsemble
    from captioner.models.entailment import EntailmentClassifier, EntailmentEnsemble
    from captioner.models.loading import load_model_file
    from captioner.models.storage import save_model, storage_record
    from captioner.models.video_classifier import VideoClassifier
    from captioner.models.vqa_model import VQAModel

    model = load_model_file(args.model, (VQAModel, EntailmentClassifier, EntailmentEnsemble, DocumentClassifier,
                                         DocumentEnsemble, VideoClassifier),
                            "a VQA model, an entailment model, a document or an activity classifier")
    try:
        dev = calibration.dev_set(model, args)
    except InputError as exc:
        raise InputError(f"{args.model}: {exc}") from None
    record = calibration.calibrate(model, dev)
    save_model(model, args.model)
    record["storage"] = storage_record(model, args.model)
    if args.report:
        write_json(args.report, record)
    ModelCard.record_step(args.model, "captioner", ["model", "calibrate", *_argv_after(args, "calibrate")],
                          extra={"calibration": record})
    b, a = record["before"], record["after"]
    print(f"{args.model}: temperature {record['temperature']['after']:g}; dev ECE {b['ece']:.3f} -> {a['ece']:.3f}, "
          f"NLL {b['nll']:.3f} -> {a['nll']:.3f}, accuracy {a['accuracy']:.2f}%"
          + (f"; don't know below p = {record['dont_know']['min_probability']['after']:.2f}" if "dont_know" in record
             else ""))
    return 0

"""`captioner train caption --scst`: self-critical sequence training (Rennie et al. 2017) of a
trained image captioner. The self-critical half (init model, one example per image, rewards,
selection on dev CIDEr, card) is `captioner.training.self_critical.SelfCritical`, shared with
`train video-caption --scst`; cross-entropy training's recipe (`caption_xe.Caption`) keeps its
data, features, decoding and export. What is the image captioner's own:

* the decoder, its vocabulary and its backbone are --init-model's, an `ImageCaptioner` whose
  decoder is one `CaptionDecoderModel` (an ensemble is decoded, not trained);
* the rows are the training images, their inputs the cached annotations;
* the reward's document frequencies come from every reference of the training split (before --limit);
  with several --corpus, CIDEr-D per corpus (each corpus's df from its references) and each image
  sampled from its corpus's style token.
"""

import logging

from captioner.training.recipes.caption_xe import Caption
from captioner.training.self_critical import SelfCritical, tokenized_references

log = logging.getLogger(__name__)


class CaptionSCST(SelfCritical, Caption):
    # -- data ---------------------------------------------------------------------------------
    summary_keys = ("kind", "vocab_size", "annotation_dim", "projection_dim", "embedding_dim", "units",
                    "attention_units")

    def before_data(self, trainer, train):
        self.init_model()
        if not self.corpora:
            self.df_references = tokenized_references(train.captions[p] for p in train.image_paths)
            return
        from captioner.errors import InputError

        styles = sorted(getattr(self.init.decoder, "styles", {}) or {})
        if sorted(self.styles) != styles:
            raise InputError(f"--init-model {self.cfg.init_model} writes the styles {styles or 'none'}, but the "
                             f"--corpus specs are {sorted(self.styles)}: give the corpora it was trained on")
        corpus = train.metadata["corpus"]  # CIDEr-D per corpus: each corpus's df from its own references
        self.df_references = [tokenized_references(train.captions[p] for p in train.image_paths if corpus[p] == i)
                              for i in range(len(self.corpora))]

    def decoder_kind(self):
        return self.init.decoder.kind

    def backbone_name(self):
        return self.init.backbone.name  # its decoder reads those features, whatever --backbone says

    def build_vocabulary(self, train):
        return self.init.vocabulary

    def prepare(self, trainer):
        info = super().prepare(trainer)
        self._check_init_model()
        return info

    def load_init_model(self):
        from captioner.errors import InputError
        from captioner.models.caption_decoder_model import CaptionDecoderModel
        from captioner.models.image_captioner import ImageCaptioner
        from captioner.models.loading import load_model_file

        init = load_model_file(self.cfg.init_model, ImageCaptioner, "an image captioner (ImageCaptioner)")
        if not isinstance(init.decoder, CaptionDecoderModel):
            raise InputError(f"--init-model {self.cfg.init_model}: its decoder is a {type(init.decoder).__name__}; "
                             "self-critical training continues one captioner: train each member, then join them "
                             "(`captioner model ensemble`)")
        return init

    def init_decoder(self):
        return self.init.decoder

    def _check_init_model(self):
        from captioner.errors import InputError

        init, path = self.init, self.cfg.init_model
        if init.backbone.name != self.backbone:
            raise InputError(f"--init-model {path} reads {init.backbone.name} features, but --features "
                             f"{self.cfg.features} holds {self.backbone} features")
        if init.decoder.annotation_dim != self.train_feats.shape[-1]:
            raise InputError(f"--init-model {path} takes {init.decoder.annotation_dim}-d annotations, --features "
                             f"gives {self.train_feats.shape[-1]}-d")

    # -- the rows: training images ------------------------------------------------------------
    def scst_rows(self):
        return len(self.train_feats)

    def scst_inputs(self, rows):
        inputs = {"annotations": self.train_feats[rows]}
        if self.corpora:  # each row sampled from its corpus's style token
            inputs["start"] = self._row_starts()[1][rows]
        return inputs

    def scst_groups(self):
        """The corpus index of each training row (several corpora), else None."""
        return self._row_starts()[0] if self.corpora else None

    def _row_starts(self):
        """(corpus index, style token id) of each training row, as arrays (`start_ids`, in row order)."""
        if not hasattr(self, "_starts"):
            import numpy as np

            starts = self.start_ids(self.train_set)
            rows = [starts[p] for p in self.train_set.image_paths]
            self._starts = (np.array([c for c, _ in rows], np.int64), np.array([i for _, i in rows], np.int32))
        return self._starts

    def scst_references(self):
        return tokenized_references(self.train_set.captions[p] for p in self.train_set.image_paths)  # rows trained on

    def row_name(self, row):
        return self.train_set.image_paths[row]

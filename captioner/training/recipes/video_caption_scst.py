"""`captioner train video-caption --scst`: self-critical sequence training of a trained video
captioner. The self-critical half (init model, one example per row, rewards, selection on dev
CIDEr, card) is `captioner.training.self_critical.SelfCritical`, the same as the image captioner's;
cross-entropy training's recipe (`video_caption_xe.VideoCaption`) keeps its data, decoding, held-out
scoring and export. What is the video captioner's own:

* --init-model is a `VideoCaptioner` (`captioner train video-caption`'s model); its backbone,
  feature kind (pooled or grid), frames per clip and vocabulary are used whatever --backbone,
  --feature, --num-frames, --fps say (each one that differs is logged);
* the rows are the training clips of every --data dataset, their inputs the cached per-frame
  features and their frame masks;
* the reward's document frequencies come from every training clip's references (before --limit).
"""

import logging

from captioner.training.recipes.video_caption_xe import VideoCaption
from captioner.training.self_critical import SelfCritical, tokenized_references

log = logging.getLogger(__name__)


class VideoCaptionSCST(SelfCritical, VideoCaption):
    summary_keys = ("vocab_size", "feature_dim", "feature", "projection_dim", "embedding_dim", "units",
                    "attention_units")

    # -- data ---------------------------------------------------------------------------------
    def before_data(self, trainer):
        c, init = self.cfg, self.init_model()
        settings = {"backbone": init.backbone.name, "feature": init.feature, "num_frames": init.num_frames,
                    "fps": init.sample_fps or None}
        for key, value in settings.items():  # what its decoder reads, whatever the options say
            if getattr(c, key) != value:
                log.info("--%s %s: the init model's %s is used", key.replace("_", "-"), getattr(c, key), value)
                setattr(c, key, value)

    def build_vocabulary(self):
        return self.init.vocabulary

    def prepare(self, trainer):
        from captioner.errors import InputError

        info = super().prepare(trainer)
        self.df_references = tokenized_references(refs for e in self.sets for refs in e["train_references"])
        width = self.init.model.feature_dim
        if self.feats.shape[-1] != width:
            raise InputError(f"--init-model {self.cfg.init_model} takes {width}-d frame features, --data gives "
                             f"{self.feats.shape[-1]}-d")
        return info

    def load_init_model(self):
        from captioner.models.loading import load_model_file
        from captioner.models.video_captioner import VideoCaptioner

        return load_model_file(self.cfg.init_model, VideoCaptioner, "a video captioner (VideoCaptioner)")

    def init_decoder(self):
        return self.init.model

    # -- the rows: training clips -------------------------------------------------------------
    def scst_rows(self):
        return len(self.feats)

    def scst_inputs(self, rows):
        return {"features": self.feats[rows], "mask": self.mask[rows]}

    def scst_references(self):
        return tokenized_references(self.train_set.captions[p] for p in self.train_set.image_paths)  # rows trained on

    def row_name(self, row):
        return self.train_set.image_paths[row]

"""Saving a trained video captioner: one file without optimizer state, same captions after loading."""

import zipfile

import keras
import numpy as np

from captioner.models.caption_decoder_model import masked_sparse_ce
from captioner.models.video_caption_model import VideoCaptionModel
from captioner.text import Vocabulary
from captioner.training.recipes.video_caption import Config
from captioner.training.recipes.video_caption_xe import VideoCaption
from captioner.training.trainer import inference_copy


def test_saved_video_captioner_has_no_optimizer_state_and_same_captions(tmp_path):
    vocab = Vocabulary.build([["a", "dog", "runs"], ["a", "cat", "sits"]], min_count=1)
    keras.utils.set_random_seed(0)
    model = VideoCaptionModel(len(vocab), 1280, units=16, projection_dim=8, embedding_dim=8, attention_units=8)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=masked_sparse_ce)
    x = np.random.default_rng(0).normal(size=(2, 3, 1280)).astype("float32")
    mask = np.ones((2, 3), bool)
    tokens = np.array([vocab.encode(["a", "dog", "runs"], add_start=True, add_end=True),
                       vocab.encode(["a", "cat", "sits"], add_start=True, add_end=True)], np.int32)
    model.fit({"features": x, "mask": mask, "tokens": tokens[:, :-1]}, tokens[:, 1:], epochs=2, verbose=0)
    assert model.optimizer.variables  # the trained model has optimizer state to leave out
    recipe = VideoCaption(Config(output_dir=str(tmp_path), data=[], num_frames=3, beam_size=2, max_length=6))
    recipe.vocab = vocab
    path = str(tmp_path / "video.keras")
    recipe.export(inference_copy(model)).save(path)  # what the Trainer saves
    with zipfile.ZipFile(path) as z:
        import h5py

        with z.open("model.weights.h5") as f, h5py.File(f, "r") as h5:
            names = []
            h5.visit(names.append)
    assert not [n for n in names if "optimizer" in n]
    loaded = keras.models.load_model(path)
    expected = model.generate(x, mask, beam_size=2, max_length=6)["tokens"].numpy()
    got = loaded.model.generate(x, mask, beam_size=2, max_length=6)["tokens"].numpy()
    np.testing.assert_array_equal(got, expected)

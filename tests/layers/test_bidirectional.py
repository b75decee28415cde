"""safe_bidirectional: encoders built while Keras deserializes (inside its object-sharing scope,
as `load_model` does) get their own forward and backward layers. Plain keras Bidirectional there
is handed stale layers when CPython reuses the ids of collected objects (6 of 60 encoders here)."""

import gc

from keras.src.saving.serialization_lib import ObjectSharingScope

from captioner.layers.sentence_encoder import SentenceEncoder
from captioner.layers.text_encoder import TextEncoder


def test_encoders_built_inside_the_object_sharing_scope_get_their_own_layers():
    seen = set()
    gc.freeze()  # what is alive now (TensorFlow's large heap) is left out of the collections below: fast
    try:
        _build_and_collect(seen)
    finally:
        gc.unfreeze()


def _build_and_collect(seen):
    with ObjectSharingScope():
        for i in range(60):
            enc = TextEncoder(20, embedding_dim=4, units=4, cell="gru", bidirectional=True) if i % 2 else \
                SentenceEncoder(8, units=4, attention_units=4)
            bi = enc.rnns[0] if i % 2 else enc.rnn
            assert not bi.forward_layer.go_backwards and bi.backward_layer.go_backwards
            assert bi.forward_layer is not bi.backward_layer
            layers = (id(bi.forward_layer), id(bi.backward_layer))
            assert not seen & set(layers)  # never a layer of an earlier (still alive) encoder
            seen |= set(layers)
            del enc, bi
            gc.collect()
            seen.clear()

"""captioner: attention encoder-decoder models in Keras 3.

Importing the package registers every captioner Keras layer and model, so that

    import captioner, keras
    model = keras.models.load_model("assets/models/flickr8k_attention.keras")

works in a fresh process with safe mode on.
"""

__version__ = "0.1.0"

from captioner import layers, models  # noqa: E402,F401  (registers the Keras classes)

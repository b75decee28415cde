"""Loading a captioner `.keras` file for a task, safely and with errors that name the file."""

import os

from captioner.errors import InputError


def load_model_file(path, expected, what, hint=""):
    """`keras.models.load_model(path)` with safe mode on, checked to be an `expected` instance.

    `expected` is a class or a tuple of classes, `what` names the kind of model in messages
    ("an image captioner"), `hint` is appended to the not-found message (e.g. the command that
    makes the model). Raises InputError naming `path` when the file is missing, cannot be
    loaded, or holds another kind of model.
    """
    import keras

    from captioner.models.keras_archive import check_keras_archive

    path = os.fspath(path)
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory, not a model file")
    if not os.path.isfile(path):
        raise InputError(f"{path}: model file not found{hint}")
    check_keras_archive(path)  # sizes declared in the zip, before Keras inflates anything
    try:
        model = keras.models.load_model(path)
    except Exception as exc:  # Keras raises ValueError / TypeError / OSError / KeyError for a bad file
        raise InputError(f"{path}: cannot load as {what} ({type(exc).__name__}: {exc})") from None
    if not isinstance(model, expected):
        raise InputError(f"{path}: holds a {type(model).__name__}, not {what}")
    return model


def load_video_model(path):
    """Load a bundled video model (`VideoCaptioner` or `VideoClassifier`) safely."""
    from captioner.models.video_captioner import VideoCaptioner
    from captioner.models.video_classifier import VideoClassifier

    return load_model_file(path, (VideoCaptioner, VideoClassifier), "a captioner video model")

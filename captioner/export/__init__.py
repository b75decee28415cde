"""Export: a saved `.keras` model -> a TensorFlow SavedModel (runs without captioner) or TFLite.

Thin over `captioner.models`: `saved_model.export_saved_model` wraps a loaded `ImageCaptioner`
(bytes in, caption out, everything in one graph) or `Seq2Seq` (string in, string out);
`tflite` converts the backbone (feature extraction on a device) and tries the whole captioner.
`captioner export MODEL --format saved_model|tflite --output PATH` is the command.
"""

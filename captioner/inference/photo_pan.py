"""The image captioner on the photos behind photo-pan clips: the yardstick of a video
captioner trained on pans and zooms over photos (`scripts/compare_photo_pan.py`,
`captioner train video-caption --compare-image-model`)."""

import os


def compare_with_image_captioner(image_model, sources_csv, images_dir, references, clip_ids, beam_size=3,
                                 batch_size=32):
    """Caption the photos behind photo-pan clips with an image captioner and score them
    against the clips' references (the photos' own captions).

    `references` {clip path: [captions]}, `clip_ids` {clip path: clip id}; `image_model` a
    path or a loaded `ImageCaptioner`. Returns {"scores": evaluate_captions dict, "photos": n,
    "captions": {clip id: caption}}."""
    import keras

    import captioner  # noqa: F401  (registers the model classes)
    from captioner.data.photo_pan_video import source_photos
    from captioner.metrics import evaluate_captions

    if isinstance(image_model, (str, os.PathLike)):
        from captioner.models.keras_archive import check_keras_archive

        check_keras_archive(image_model)  # the zip's declared sizes, before Keras inflates anything
        model = keras.models.load_model(image_model)
    else:
        model = image_model
    paths = list(references)
    photos = source_photos(sources_csv, images_dir, [clip_ids[p] for p in paths])
    results = model.caption(photos, beam_size=beam_size, batch_size=batch_size)
    hyps = {p: r.text for p, r in zip(paths, results)}
    scores = evaluate_captions({p: references[p] for p in paths}, hyps, tool="auto", meteor=True)
    return {"model": os.fspath(image_model) if isinstance(image_model, (str, os.PathLike)) else type(model).__name__,
            "beam_size": beam_size, "photos": len(paths), "scores": scores,
            "captions": {clip_ids[p]: hyps[p] for p in paths[:50]}}

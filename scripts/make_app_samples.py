"""Write the app's VQA and video samples into assets/samples/ (deterministic; run from the repo root).

    python scripts/make_app_samples.py [--out assets/samples]

* ``easy_vqa/``: a few easy-VQA test images (PyPI package ``easy-vqa``, MIT) copied as they
  are, and ``questions.json``: {file: [[question, answer], ...]} with easy-VQA's own test
  questions about each, which the VQA page offers as suggestions (the bundled VQA model
  knows only easy-VQA's shapes, colours and question forms).
* ``video/``: two real clips, the first seconds of two of the shared real clips
  (``--real-clips``: the OpenMMLab mmaction2 test videos, Apache-2.0), every second frame,
  scaled to at most 256 pixels wide, re-encoded as VP8 WebM (browsers play it, OpenCV reads it);
* ``video/shapes/``: small generated clips (captioner.data.synthetic_video.render_clip: one
  coloured shape moving over a noisy background, 64x64, 16 frames at 12 fps) written as
  VP8 WebM; a seed not used for the training set.
"""

import argparse
import json
import os
import shutil

import numpy as np

EASY_VQA_IMAGES = ("2", "3", "11")  # test images: a blue triangle, a yellow circle, a black rectangle
CLIPS = (  # (motion, colour, shape)
    ("left", "red", "circle"),
    ("grow", "blue", "square"),
    ("bounce", "yellow", "triangle"),
)
CLIP_SEED = 20261122
CLIP_FPS = 12
REAL_CLIPS = (  # (file in --real-clips, sample name, seconds kept)
    ("demo_demo.mp4", "arm_wrestling.webm", 3.0),
    ("tests_data_test.mp4", "cleaning_a_pool.webm", 3.0),
)
REAL_WIDTH = 256
REAL_STEP = 2  # every second frame (half the frame rate): OpenCV's VP8 bit rate is fixed, this keeps files small


def write_easy_vqa(out):
    from captioner.data.easy_vqa import easy_vqa_data_dir

    src = os.path.join(easy_vqa_data_dir(), "test")
    with open(os.path.join(src, "questions.json"), encoding="utf-8") as f:
        rows = json.load(f)
    folder = os.path.join(out, "easy_vqa")
    os.makedirs(folder, exist_ok=True)
    questions = {}
    for image_id in EASY_VQA_IMAGES:
        name = f"easy_vqa_test_{image_id}.png"
        shutil.copyfile(os.path.join(src, "images", f"{image_id}.png"), os.path.join(folder, name))
        questions[name] = [[q, a] for q, a, i in rows if str(i) == image_id]
    with open(os.path.join(folder, "questions.json"), "w", encoding="utf-8") as f:
        json.dump(questions, f, indent=1)
        f.write("\n")
    return sorted(questions)


def write_clips(out):
    from captioner.data.synthetic_video import captions_for, render_clip, write_video

    folder = os.path.join(out, "video", "shapes")
    os.makedirs(folder, exist_ok=True)
    rng = np.random.default_rng(CLIP_SEED)
    names = []
    for motion, color, shape in CLIPS:
        frames = render_clip(motion, color, shape, rng, num_frames=16, size=64)  # (16, 64, 64, 3) RGB
        name = captions_for(motion, color, shape)[0].replace(" ", "_") + ".webm"
        write_video(os.path.join(folder, name), frames, CLIP_FPS, codec="VP80")
        names.append(name)
    return names


def write_real_clips(out, real_clips_dir):
    """The first seconds of each REAL_CLIPS file, every REAL_STEP-th frame, at most REAL_WIDTH wide, as VP8 WebM."""
    import cv2

    from captioner.data.synthetic_video import write_video

    folder = os.path.join(out, "video")
    os.makedirs(folder, exist_ok=True)
    names = []
    for source, name, seconds in REAL_CLIPS:
        cap = cv2.VideoCapture(os.path.join(real_clips_dir, source))
        fps = cap.get(cv2.CAP_PROP_FPS) or 25.0
        frames = []
        for k in range(round(seconds * fps)):
            ok, bgr = cap.read()
            if not ok:
                break
            if k % REAL_STEP:
                continue
            h, w = bgr.shape[:2]
            if w > REAL_WIDTH:
                bgr = cv2.resize(bgr, (REAL_WIDTH, round(h * REAL_WIDTH / w / 2) * 2), interpolation=cv2.INTER_AREA)
            frames.append(bgr[..., ::-1])
        cap.release()
        if not frames:
            raise SystemExit(f"{source}: no frames could be read")
        write_video(os.path.join(folder, name), np.stack(frames), fps / REAL_STEP, codec="VP80")
        names.append(name)
    return names


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="assets/samples")
    parser.add_argument("--real-clips", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared",
                                                             "datasets", "real-clips"))
    args = parser.parse_args(argv)
    for name in write_easy_vqa(args.out) + write_clips(args.out) + write_real_clips(args.out, args.real_clips):
        print(name)


if __name__ == "__main__":
    main()

"""The bundled models: one registry that every entry point reads its default model from.

The CLI commands (`--model` defaults), the HTTP server (`captioner serve`), the Beam pipeline
and the Streamlit app all take a task's default from `default_model(task)`, so a model swapped
here is swapped everywhere. A default can be pointed elsewhere with its environment variable
(for example ``CAPTIONER_VQA_MODEL=my_vqa.keras``). How each model was made and what it scored
is in its card (``NAME.json`` beside ``NAME.keras``), never repeated here.

Standard library only: the app reads this before it imports TensorFlow.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
MODELS_DIR = REPO_ROOT / "assets" / "models"
ASSETS_DIR = REPO_ROOT / "assets"

# Everything under assets/ is cloned by every user, with every old version of it: a model added or
# retrained has to fit this budget (tests/test_bundled.py checks it). Issue 39: 504 MB of models
# before lean storage (float16 weights, the package backbone by reference); all 17 re-saved
# lean (`captioner model store-lean`): 172 MB of models.
ASSETS_BUDGET_BYTES = 190_000_000  # 175.2 MB once all 17 models were re-saved lean (session 28)


# ... and every version ever committed stays in a full clone's history (issue 70 item 7: 1.44 GB of
# assets/ blobs over 69 model versions when this was set). A ratchet: the room above today's history
# is what the next submissions may add (about one captioner and one small model); a new model version
# replaces the old one at the end of an issue, and raising this is a decision its commit states.
ASSETS_HISTORY_BUDGET_BYTES = 1_480_000_000  # 1,444.9 MB of assets/ blobs reachable from main (session 47)


def assets_bytes(root=ASSETS_DIR):
    """Bytes of every file under `root` (assets/), what a clone downloads of it today."""
    return sum(p.stat().st_size for p in Path(root).rglob("*") if p.is_file())


def assets_history_bytes(repo=REPO_ROOT):
    """Bytes of every version of every file under assets/ reachable from HEAD (raw blob sizes: what a
    full clone keeps, before git's compression), or None outside a full git clone."""
    import subprocess

    def git(*args, stdin=None):
        return subprocess.run(["git", "-C", str(repo), *args], input=stdin, capture_output=True, text=True,
                              check=True).stdout

    try:
        if git("rev-parse", "--is-shallow-repository").strip() != "false":
            return None
        objects = "".join(line.split(" ")[0] + "\n" for line in git("rev-list", "--objects", "HEAD", "--", "assets").splitlines())
        sizes = git("cat-file", "--batch-check=%(objecttype) %(objectsize)", stdin=objects)
    except (OSError, subprocess.CalledProcessError):
        return None
    return sum(int(size) for kind, size in (line.split() for line in sizes.splitlines()) if kind == "blob")


@dataclasses.dataclass(frozen=True)
class BundledModel:
    key: str          # the app's name for it
    title: str
    file: str         # under assets/models/
    task: str         # the command that runs it: caption, ask, translate, ..., video-caption, video-classify
    env_var: str      # overrides the path (every entry point)
    train_task: str   # `captioner train TRAIN_TASK` made it
    default: bool = False  # the task's default model

    @property
    def bundled_path(self) -> Path:
        return MODELS_DIR / self.file

    @property
    def path(self) -> Path:
        """The bundled file, or the file the environment variable names (relative to the repository root)."""
        override = os.environ.get(self.env_var)
        if not override:
            return self.bundled_path
        path = Path(override)
        return path if path.is_absolute() else REPO_ROOT / path


MODELS = (
    BundledModel("caption", "Soft-attention captioner (Flickr8k sentences and web alt-text)",
                 "flickr8k_web_attention.keras", "caption", "CAPTIONER_CAPTION_MODEL", "caption", default=True),
    BundledModel("caption_flickr8k", "Flickr8k soft-attention captioner (self-critical)", "flickr8k_attention.keras",
                 "caption", "CAPTIONER_CAPTION_FLICKR8K_MODEL", "caption"),
    BundledModel("vqa", "Photos (Flickr8k and web questions)", "photo_vqa.keras", "ask",
                 "CAPTIONER_VQA_MODEL", "vqa", default=True),
    BundledModel("vqa_easy", "easy-VQA shapes (toy)", "easy_vqa.keras", "ask",
                 "CAPTIONER_EASY_VQA_MODEL", "vqa"),
    BundledModel("translate_en_de", "English -> German (Multi30k)", "multi30k_en_de.keras", "translate",
                 "CAPTIONER_TRANSLATE_EN_DE_MODEL", "translate", default=True),
    BundledModel("translate_fr_en", "French -> English (Anki/Tatoeba)", "anki_fr_en.keras", "translate",
                 "CAPTIONER_TRANSLATE_FR_EN_MODEL", "translate"),
    BundledModel("transliterate", "Romanized Hindi -> Devanagari (Dakshina)", "dakshina_hi_translit.keras",
                 "transliterate", "CAPTIONER_TRANSLITERATE_MODEL", "transliterate", default=True),
    BundledModel("summarize", "BBC News: article -> headline", "bbc_headlines.keras", "summarize",
                 "CAPTIONER_SUMMARIZE_MODEL", "summarize", default=True),
    BundledModel("summarize_news", "News Category: description -> headline", "news_headlines.keras", "summarize",
                 "CAPTIONER_SUMMARIZE_NEWS_MODEL", "summarize"),
    BundledModel("entail", "SICK entailment classifier", "sick_entailment.keras", "entail",
                 "CAPTIONER_ENTAIL_MODEL", "entail", default=True),
    BundledModel("classify", "20 Newsgroups hierarchical attention network", "newsgroups_han.keras", "classify",
                 "CAPTIONER_CLASSIFY_MODEL", "classify", default=True),
    BundledModel("dialogue", "SGD hierarchical dialogue model", "sgd_dialogue.keras", "respond",
                 "CAPTIONER_DIALOGUE_MODEL", "respond", default=True),
    BundledModel("lm_char", "Tiny Shakespeare character language model", "shakespeare_char_lm.keras", "generate",
                 "CAPTIONER_CHAR_LM_MODEL", "lm", default=True),
    BundledModel("lm_word", "Flickr8k caption word language model", "flickr8k_word_lm.keras", "generate",
                 "CAPTIONER_WORD_LM_MODEL", "lm"),
    BundledModel("video_caption", "Video captioner (real scenes)", "flickr8k_video_caption.keras", "video-caption",
                 "CAPTIONER_VIDEO_CAPTION_MODEL", "video-caption", default=True),
    BundledModel("video_classify", "Activity classifier (real scenes)", "flickr8k_video_activity.keras",
                 "video-classify", "CAPTIONER_VIDEO_CLASSIFY_MODEL", "video-classify", default=True),
    BundledModel("video_caption_shapes", "Generated shapes: captioner (toy)", "shapes_video_caption.keras",
                 "video-caption", "CAPTIONER_SHAPES_VIDEO_CAPTION_MODEL", "video-caption"),
    BundledModel("video_classify_shapes", "Generated shapes: motion classifier (toy)", "shapes_video_classify.keras",
                 "video-classify", "CAPTIONER_SHAPES_VIDEO_CLASSIFY_MODEL", "video-classify"),
)
BY_KEY = {m.key: m for m in MODELS}
TASKS = tuple(dict.fromkeys(m.task for m in MODELS))


def default_model(task) -> BundledModel:
    """The one default model of `task` (a command name: caption, ask, translate, ...)."""
    found = [m for m in MODELS if m.task == task and m.default]
    if len(found) != 1:
        raise KeyError(f"no default bundled model for task {task!r}; tasks are {', '.join(TASKS)}")
    return found[0]


def default_path(task) -> str:
    """The path of `task`'s default model (its environment variable honoured), as a string."""
    return str(default_model(task).path)


def models_for(task):
    """The bundled models of `task`, the default first."""
    return sorted((m for m in MODELS if m.task == task), key=lambda m: not m.default)

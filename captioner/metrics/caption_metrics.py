"""Caption metrics for a whole corpus: BLEU-1..4, METEOR, ROUGE-L, CIDEr(-D).

Two tools, and every result says which produced it (BLEU from different tools is not
comparable):

- ``"coco-caption"``: the toolkit papers report with (``pycocoevalcap``). Captions are
  tokenized by its Stanford PTB tokenizer (lower-cased, punctuation removed), then scored
  by its Bleu, Rouge and Cider classes and its METEOR 1.5 jar. Needs ``java`` on PATH.
  SPICE is skipped (it downloads models and fails offline).
- ``"python"``: no Java. Lower-cased, punctuation-free :func:`captioner.text.tokenize`
  tokens, scored by this package's BLEU / ROUGE-L / CIDEr-D (same conventions as
  coco-caption; figures agree closely but not exactly because the tokenizers differ).
  METEOR comes from NLTK's ``meteor_score`` (a METEOR 1.0-style reimplementation: exact,
  stem and WordNet-synonym matches, no paraphrases; mean of sentence scores) when WordNet
  can be read, either NLTK's own data or the Debian ``wordnet-base`` files in
  ``/usr/share/wordnet``; otherwise METEOR is ``None`` and ``notes`` says why. It is
  lower than, and not comparable to, coco-caption's METEOR.

The coco METEOR jar runs as a child ``java`` process for the duration of one call and is
always closed and reaped afterwards (see :class:`_MeteorProcess`), so repeated calls
leave no processes behind. Starting it loads WordNet and the paraphrase table (~10 s on
two cores), so code that evaluates several times in a row (a beam sweep, the final
evaluation at several beams) opens a :func:`meteor_session`: every call inside it shares
one process, started on first use and closed when the block ends.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Mapping

from captioner.errors import CaptionerError, InputError
from captioner.metrics.bleu import corpus_bleu
from captioner.metrics.cider import corpus_cider
from captioner.metrics.rouge import corpus_rouge_l
from captioner.text.wordnet import load_wordnet


__all__ = ["evaluate_captions", "java_available", "meteor_session", "METRIC_NAMES"]

METRIC_NAMES = ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr")

# Seconds to wait for a Java tool before giving up on it.
_JAVA_TIMEOUT_S = 600
# Line separators that would break the one-caption-per-line protocols of the jars.
_LINE_BREAKS = str.maketrans({c: " " for c in "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"})


def java_available() -> bool:
    """Whether a ``java`` executable is on PATH (needed by ``tool="coco"``)."""
    return shutil.which("java") is not None


# --------------------------------------------------------------------------- validation
def _validate(references, hypotheses) -> list:
    """Check the inputs; return the evaluated keys in hypothesis order."""
    if not isinstance(references, Mapping) or not isinstance(hypotheses, Mapping):
        raise InputError("references and hypotheses must be dicts keyed by item (e.g. image path)")
    if not hypotheses:
        raise InputError("no hypotheses to evaluate")
    if not references:
        raise InputError("no references given")
    missing = [k for k in hypotheses if k not in references]
    if missing:
        shown = ", ".join(repr(k) for k in missing[:5])
        raise InputError(f"{len(missing)} hypothesis key(s) have no references, e.g. {shown}")
    for key, hyp in hypotheses.items():
        if not isinstance(hyp, str):
            raise InputError(f"hypothesis for {key!r} must be a string, got {type(hyp).__name__}")
        refs = references[key]
        if isinstance(refs, str) or not isinstance(refs, (list, tuple)) or not refs:
            raise InputError(f"references for {key!r} must be a non-empty list of strings")
        for ref in refs:
            if not isinstance(ref, str):
                raise InputError(f"a reference for {key!r} is {type(ref).__name__}, not a string")
    return list(hypotheses)


# --------------------------------------------------------------------------- coco-caption
def _jar(module: str, name: str) -> str:
    """Absolute path of a jar shipped beside a pycocoevalcap module (a namespace package)."""
    import importlib

    path = os.path.join(os.path.dirname(importlib.import_module(module).__file__), name)
    if not os.path.isfile(path):
        raise CaptionerError(f"pycocoevalcap is missing {path}")
    return path


def _ptb_tokenize(captions: dict) -> dict:
    """Tokenize ``{key: [caption, ...]}`` exactly as pycocoevalcap's PTBTokenizer does.

    Same jar, class, flags (``-preserveLines -lowerCase``) and removed punctuation; the
    input file goes to a private temp dir (pycocoevalcap writes it inside its own
    package directory, which may be read-only).
    """
    from pycocoevalcap.tokenizer.ptbtokenizer import PUNCTUATIONS

    punctuation = set(PUNCTUATIONS)
    keys = [k for k, caps in captions.items() for _ in caps]
    lines = [c.translate(_LINE_BREAKS) for caps in captions.values() for c in caps]
    jar = _jar("pycocoevalcap.tokenizer.ptbtokenizer", "stanford-corenlp-3.4.1.jar")
    with tempfile.TemporaryDirectory(prefix="captioner-ptb-") as tmp:
        path = os.path.join(tmp, "captions.txt")
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(lines))
        cmd = ["java", "-Dfile.encoding=UTF-8", "-cp", jar, "edu.stanford.nlp.process.PTBTokenizer",
               "-preserveLines", "-lowerCase", path]
        try:
            done = subprocess.run(cmd, capture_output=True, timeout=_JAVA_TIMEOUT_S, check=False)
        except subprocess.TimeoutExpired:
            raise CaptionerError(f"PTB tokenizer (java) did not finish in {_JAVA_TIMEOUT_S} s") from None
    if done.returncode != 0:
        raise CaptionerError(f"PTB tokenizer (java) failed: {done.stderr.decode(errors='replace')[-500:]}")
    out_lines = done.stdout.decode("utf-8").split("\n")
    if len(out_lines) < len(lines):
        raise CaptionerError(f"PTB tokenizer returned {len(out_lines)} lines for {len(lines)} captions")
    result: dict = {k: [] for k in captions}
    for key, line in zip(keys, out_lines):
        result[key].append(" ".join(w for w in line.rstrip().split(" ") if w and w not in punctuation))
    return result


class _MeteorProcess:
    """The coco-caption METEOR 1.5 jar as a context-managed child process.

    Same command line (plus ``-Dfile.encoding=UTF-8``) and stdio protocol as
    ``pycocoevalcap.meteor.Meteor``; reimplemented because that class has no close()
    (it kills its process only in ``__del__``, which deadlocks if a previous call failed
    while holding its lock) and never drains the child's stderr pipe. Here stderr goes
    to a temp file (quoted in errors), and ``__exit__`` closes stdin, waits, kills if
    needed and reaps the process.
    """

    def __enter__(self):
        jar = _jar("pycocoevalcap.meteor.meteor", "meteor-1.5.jar")
        self._stderr = tempfile.TemporaryFile()
        cmd = ["java", "-Dfile.encoding=UTF-8", "-Xmx2G", "-jar", jar, "-", "-", "-stdio", "-l", "en", "-norm"]
        self._proc = subprocess.Popen(
            cmd, cwd=os.path.dirname(jar), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr
        )
        return self

    def __exit__(self, *exc):
        proc = self._proc
        try:
            if proc.stdin and not proc.stdin.closed:
                proc.stdin.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout:
            proc.stdout.close()
        self._stderr.close()
        return False

    def _stderr_tail(self) -> str:
        self._stderr.seek(0)
        return self._stderr.read().decode(errors="replace")[-800:]

    def _send(self, line: str) -> None:
        try:
            self._proc.stdin.write((line + "\n").encode("utf-8"))
            self._proc.stdin.flush()
        except OSError:
            raise CaptionerError(f"METEOR (java) stopped: {self._stderr_tail()}") from None

    def _receive(self) -> str:
        line = self._proc.stdout.readline()
        if not line:
            raise CaptionerError(f"METEOR (java) stopped: {self._stderr_tail()}")
        return line.decode("utf-8").strip()

    def score(self, references: list[list[str]], hypotheses: list[str]) -> tuple[float, list[float]]:
        """Corpus METEOR (aggregated statistics, as coco) and per-item scores, in [0, 1]."""

        def clean(s: str) -> str:
            return " ".join(s.replace("|||", "").split())

        stats = []
        for refs, hyp in zip(references, hypotheses):
            self._send(" ||| ".join(["SCORE", " ||| ".join(clean(r) for r in refs), clean(hyp)]))
            stats.append(self._receive())
        self._send(" ||| ".join(["EVAL"] + stats))
        per_item = [float(self._receive()) for _ in stats]
        return float(self._receive()), per_item


class _MeteorSession:
    """One METEOR process shared by the calls inside a :func:`meteor_session` block: started on
    first use, restarted if it died, closed by :meth:`close`. Calls from several threads take
    turns; a forked child (whose pipes are its parent's) gets a process of its own instead."""

    def __init__(self):
        self.pid = os.getpid()
        self._lock = threading.Lock()
        self._process: _MeteorProcess | None = None

    def score(self, references: list[list[str]], hypotheses: list[str]) -> tuple[float, list[float]]:
        with self._lock:
            if self._process is None:
                self._process = _MeteorProcess().__enter__()
            try:
                return self._process.score(references, hypotheses)
            except BaseException:  # a half-answered protocol cannot be reused: the next call starts afresh
                self._close()
                raise

    def _close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            process.__exit__(None, None, None)

    def close(self) -> None:
        with self._lock:
            self._close()


_session: _MeteorSession | None = None


@contextlib.contextmanager
def meteor_session():
    """Share one coco-caption METEOR process between the :func:`evaluate_captions` calls made
    inside the block (in this process, from any thread); it is closed and reaped when the
    block ends, also on an exception. Nested blocks share the outer one. Costs nothing when no
    call inside needs METEOR.

    Example::

        with meteor_session():
            for beam in (1, 3, 5):
                scores[beam] = evaluate_captions(refs, captions_at(beam), tool="coco")
    """
    global _session
    if _session is not None and _session.pid == os.getpid():
        yield
        return
    outer, _session = _session, _MeteorSession()
    try:
        yield
    finally:
        session, _session = _session, outer
        session.close()


def _meteor(references: list[list[str]], hypotheses: list[str]) -> float:
    """Corpus METEOR by the open session's process, or by a process of its own."""
    session = _session
    if session is not None and session.pid == os.getpid():
        return session.score(references, hypotheses)[0]
    with _MeteorProcess() as process:
        return process.score(references, hypotheses)[0]


def _coco_scores(refs: list[list[str]], hyps: list[str], meteor: bool, notes: list[str]) -> dict:
    """Scores by pycocoevalcap on PTB-tokenized captions (keys are item positions)."""
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.cider.cider import Cider
    from pycocoevalcap.rouge.rouge import Rouge

    gts = _ptb_tokenize({i: list(r) for i, r in enumerate(refs)})
    res = _ptb_tokenize({i: [h] for i, h in enumerate(hyps)})
    bleu, _ = Bleu(4).compute_score(gts, res, verbose=0)
    rouge, _ = Rouge().compute_score(gts, res)
    cider, _ = Cider().compute_score(gts, res)
    scores = {f"BLEU-{n}": float(bleu[n - 1]) for n in range(1, 5)}
    scores["ROUGE-L"] = float(rouge)
    scores["CIDEr"] = float(cider)
    if meteor:
        scores["METEOR"] = _meteor([gts[i] for i in range(len(hyps))], [res[i][0] for i in range(len(hyps))])
    else:
        scores["METEOR"] = None
        notes.append("METEOR skipped (meteor=False)")
    notes.append("SPICE not computed (needs downloads)")
    return scores


# --------------------------------------------------------------------------- python fallback
def _python_scores(refs: list[list[str]], hyps: list[str], meteor: bool, notes: list[str]) -> dict:
    """Scores by this package's implementations on lower-cased, punctuation-free tokens."""
    from captioner.text.tokenizer import tokenize

    ref_tokens = [[tokenize(r) for r in rs] for rs in refs]
    hyp_tokens = [tokenize(h) for h in hyps]
    bleu = corpus_bleu(ref_tokens, hyp_tokens).bleu
    scores = {f"BLEU-{n}": bleu[n - 1] for n in range(1, 5)}
    scores["ROUGE-L"], _ = corpus_rouge_l(ref_tokens, hyp_tokens)
    scores["CIDEr"], _ = corpus_cider(ref_tokens, hyp_tokens)
    scores["METEOR"] = None
    if not meteor:
        notes.append("METEOR skipped (meteor=False)")
    else:
        wordnet, reason = load_wordnet()
        if wordnet is None:
            notes.append(f"METEOR not computed: {reason}")
        else:
            from nltk.translate.meteor_score import meteor_score

            values = [meteor_score(r, h, wordnet=wordnet) for r, h in zip(ref_tokens, hyp_tokens)]
            scores["METEOR"] = sum(values) / len(values)
            notes.append("METEOR from nltk.translate.meteor_score (METEOR 1.0 style, not comparable to coco-caption's)")
    return scores


# --------------------------------------------------------------------------- public API
def evaluate_captions(references, hypotheses, tool: str = "auto", meteor: bool = True) -> dict:
    """Score generated captions against references over a whole corpus.

    Args:
        references: ``{key: [reference caption, ...]}``, raw text. Keys without a
            hypothesis are ignored (CIDEr's document frequencies come from the
            references of the evaluated items only).
        hypotheses: ``{key: generated caption}``, raw text; every key needs references.
        tool: ``"coco"`` (pycocoevalcap, needs Java), ``"python"`` (no Java), or
            ``"auto"`` (coco when ``java`` is on PATH).
        meteor: compute METEOR (coco's starts a JVM that takes ~10 s to load, once per
            call, or once per :func:`meteor_session` block).

    Returns:
        ``{"BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "METEOR", "ROUGE-L", "CIDEr"}`` as
        percentages (x100: BLEU-4 21.3, CIDEr 55.0; METEOR may be None), plus
        ``"tool"`` (``"coco-caption"`` or ``"python"``), ``"n"`` (items scored) and
        ``"notes"`` (list of strings: what was skipped or approximated). CIDEr of a
        single item is 0 by construction (every idf is log(1) = 0).

    Raises:
        InputError: empty inputs, a hypothesis without references, non-string captions.
        CaptionerError: ``tool="coco"`` without Java, or a Java tool failing.
    """
    if tool not in ("auto", "coco", "python"):
        raise InputError(f"tool must be 'auto', 'coco' or 'python', got {tool!r}")
    keys = _validate(references, hypotheses)
    if tool == "auto":
        tool = "coco" if java_available() else "python"
    if tool == "coco" and not java_available():
        raise CaptionerError("tool='coco' needs java on PATH (Debian: default-jre-headless); use tool='python'")
    refs = [list(references[k]) for k in keys]
    hyps = [hypotheses[k] for k in keys]
    notes: list[str] = []
    if tool == "coco":
        scores = _coco_scores(refs, hyps, meteor, notes)
        name = "coco-caption"
    else:
        scores = _python_scores(refs, hyps, meteor, notes)
        name = "python"
    result = {m: (None if scores[m] is None else 100.0 * float(scores[m])) for m in METRIC_NAMES}
    result.update(tool=name, n=len(keys), notes=notes)
    return result

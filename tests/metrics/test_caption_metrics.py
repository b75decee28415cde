"""evaluate_captions: input checks, the python fallback, and the coco-caption toolkit (needs Java)."""

import os

import pytest

from captioner.errors import CaptionerError, InputError
from captioner.metrics import METRIC_NAMES, evaluate_captions, java_available, meteor_session
from captioner.metrics import caption_metrics
from captioner.metrics.caption_metrics import _MeteorProcess, _ptb_tokenize
from captioner.text.wordnet import load_wordnet

REFERENCES = {
    "img1.jpg": ["A dog runs on the grass.", "A brown dog is running outside.", "The dog runs across a field."],
    "img2.jpg": ["Two children play in the snow.", "Kids playing in snow.", "Two kids in the snow, playing!"],
    "img3.jpg": ["A man rides a bike down the road.", "A cyclist on a road.", "Man riding a bicycle on a street."],
    "img4.jpg": ["A girl in a pink dress climbs stairs.", "A little girl going up the stairs.", "A child climbing stairs."],
    "img5.jpg": ["A black dog jumps over a log.", "A dog leaping over a fallen tree.", "Black dog jumping in the woods."],
    "img6.jpg": ["People walk down a busy street.", "A crowd on a city street.", "Many people walking in a city."],
    "img7.jpg": ["A surfer rides a large wave.", "A man surfing in the ocean.", "Surfer on a wave."],
    "img8.jpg": ["Two dogs play with a ball in the grass.", "Dogs playing with a red ball.", "Two dogs and a ball."],
}
HYPOTHESES = {
    "img1.jpg": "A dog is running on the grass.",
    "img2.jpg": "Two kids play in the snow.",
    "img3.jpg": "A man riding a bike on a road.",
    "img4.jpg": "A girl is climbing the stairs.",
    "img5.jpg": "A dog jumps over a log.",
    "img6.jpg": "A group of people walk on a street.",
    "img7.jpg": "A man is surfing a wave.",
    "img8.jpg": "A dog plays with a ball.",
}

needs_java = pytest.mark.skipif(not java_available(), reason="java not on PATH: the coco-caption toolkit cannot run")


def _child_pids():
    """Pids of this process's children (zombies included), read from /proc."""
    me = os.getpid()
    children = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # after "pid (comm) "
        if int(fields[1]) == me:
            children.append(int(entry))
    return children


# ---------------------------------------------------------------- input checks
@pytest.mark.parametrize(
    "refs, hyps, message",
    [
        ({}, {}, "no hypotheses"),
        ({"a": ["x"]}, {}, "no hypotheses"),
        ({}, {"a": "x"}, "no references"),
        ({"a": ["x"]}, {"b": "x"}, "have no references, e.g. 'b'"),
        ({"a": []}, {"a": "x"}, "non-empty list"),
        ({"a": "x y"}, {"a": "x"}, "non-empty list"),
        ({"a": ["x"]}, {"a": ["x"]}, "must be a string"),
        ({"a": ["x", 3]}, {"a": "x"}, "not a string"),
        ([("a", ["x"])], {"a": "x"}, "dicts"),
    ],
)
def test_input_errors(refs, hyps, message):
    with pytest.raises(InputError, match=message):
        evaluate_captions(refs, hyps, tool="python")


def test_unknown_tool():
    with pytest.raises(InputError, match="tool"):
        evaluate_captions(REFERENCES, HYPOTHESES, tool="sacrebleu")


# ---------------------------------------------------------------- python fallback
def test_python_perfect_match_scores_100():
    refs = {"a": ["A dog runs on the green grass."], "b": ["Two kids play in the deep snow!"]}
    hyps = {"a": "a dog runs on the green grass", "b": "Two kids play in the deep snow."}
    result = evaluate_captions(refs, hyps, tool="python")
    assert result["tool"] == "python" and result["n"] == 2
    for name in ("BLEU-1", "BLEU-2", "BLEU-3", "BLEU-4", "ROUGE-L"):
        assert result[name] == pytest.approx(100.0)
    assert result["CIDEr"] == pytest.approx(1000.0)  # 10 per item on coco's scale, x100


def test_python_result_shape_and_scale():
    result = evaluate_captions(REFERENCES, HYPOTHESES, tool="python", meteor=False)
    assert set(METRIC_NAMES) <= set(result) and {"tool", "n", "notes"} <= set(result)
    assert result["n"] == len(HYPOTHESES)
    assert 0 < result["BLEU-4"] < result["BLEU-1"] <= 100
    assert result["METEOR"] is None and any("METEOR" in note for note in result["notes"])


def test_extra_reference_keys_are_ignored():
    refs = dict(REFERENCES, unused=["Something else entirely."])
    with_extra = evaluate_captions(refs, HYPOTHESES, tool="python", meteor=False)
    without = evaluate_captions(REFERENCES, HYPOTHESES, tool="python", meteor=False)
    assert with_extra == without


def test_python_meteor_uses_wordnet_or_says_why():
    result = evaluate_captions(REFERENCES, HYPOTHESES, tool="python")
    wordnet, reason = load_wordnet()
    if wordnet is None:
        assert result["METEOR"] is None
        assert any(reason in note for note in result["notes"])
    else:
        assert 0 < result["METEOR"] <= 100
        perfect = evaluate_captions({"a": ["a dog runs on the grass"]}, {"a": "a dog runs on the grass"}, tool="python")
        assert perfect["METEOR"] > 99


# ---------------------------------------------------------------- coco-caption toolkit
@pytest.fixture(scope="module")
def coco_result():
    if not java_available():
        pytest.skip("java not on PATH: the coco-caption toolkit cannot run")
    return evaluate_captions(REFERENCES, HYPOTHESES, tool="coco")


@needs_java
def test_coco_result_shape(coco_result):
    assert coco_result["tool"] == "coco-caption" and coco_result["n"] == len(HYPOTHESES)
    for name in METRIC_NAMES:
        assert isinstance(coco_result[name], float)
    assert 0 < coco_result["METEOR"] < 100
    assert 0 < coco_result["BLEU-4"] < coco_result["BLEU-1"] <= 100


@needs_java
def test_python_bleu_agrees_with_coco(coco_result):
    python = evaluate_captions(REFERENCES, HYPOTHESES, tool="python", meteor=False)
    for n in range(1, 5):
        assert python[f"BLEU-{n}"] == pytest.approx(coco_result[f"BLEU-{n}"], abs=0.5)
    assert python["ROUGE-L"] == pytest.approx(coco_result["ROUGE-L"], abs=0.5)
    assert python["CIDEr"] == pytest.approx(coco_result["CIDEr"], abs=2.0)


@needs_java
def test_auto_picks_coco_when_java_is_present():
    assert evaluate_captions(REFERENCES, HYPOTHESES, meteor=False)["tool"] == "coco-caption"


@needs_java
def test_ptb_tokenizer_matches_coco_conventions():
    out = _ptb_tokenize({"k": ["A Dog, running!", "", "Don't stop -- now."]})
    assert out == {"k": ["a dog running", "", "do n't stop now"]}


@pytest.fixture
def own_meteor(monkeypatch):
    """Outside the suite's shared METEOR process (tests/conftest.py): calls start their own,
    as in a program with no meteor_session open. -> the child pids alive before the test."""
    monkeypatch.setattr(caption_metrics, "_session", None)
    return set(_child_pids())


@needs_java
def test_coco_meteor_is_repeatable_and_leaves_no_process(coco_result, own_meteor, meteor_starts):
    again = evaluate_captions(REFERENCES, HYPOTHESES, tool="coco")
    assert again["METEOR"] == pytest.approx(coco_result["METEOR"])
    assert again["BLEU-4"] == pytest.approx(coco_result["BLEU-4"])
    assert len(meteor_starts) == 1
    assert set(_child_pids()) <= own_meteor


@needs_java
def test_a_meteor_session_shares_one_process_restarts_a_dead_one_and_closes_it(coco_result, own_meteor,
                                                                               meteor_starts):
    """One session's life in one test (each METEOR start costs a JVM, ~5 s): calls share its
    process, nested sessions use the outer one, a process that died is named by the call that finds
    it and replaced by the next, and an exception closes the session and its process."""
    half = dict(list(HYPOTHESES.items())[:4])
    with pytest.raises(RuntimeError, match="stop"), meteor_session():
        first = evaluate_captions(REFERENCES, HYPOTHESES, tool="coco")
        with meteor_session():  # nested: the outer block's process
            second = evaluate_captions(REFERENCES, half, tool="coco")
        assert evaluate_captions(REFERENCES, HYPOTHESES, tool="coco", meteor=False)["METEOR"] is None
        third = evaluate_captions(REFERENCES, HYPOTHESES, tool="coco")
        assert len(meteor_starts) == 1 and set(_child_pids()) > own_meteor
        meteor_starts[0]._proc.kill()
        meteor_starts[0]._proc.wait()
        with pytest.raises(CaptionerError, match="METEOR"):  # the call that finds it dead says so
            evaluate_captions(REFERENCES, HYPOTHESES, tool="coco")
        again = evaluate_captions(REFERENCES, HYPOTHESES, tool="coco")  # and the next starts a new one
        assert len(meteor_starts) == 2
        raise RuntimeError("stop")
    assert set(_child_pids()) <= own_meteor and caption_metrics._session is None
    alone = evaluate_captions(REFERENCES, half, tool="coco")  # no session: a process of its own
    assert len(meteor_starts) == 3 and set(_child_pids()) <= own_meteor
    assert first["METEOR"] == pytest.approx(coco_result["METEOR"]) == pytest.approx(third["METEOR"])
    assert again["METEOR"] == pytest.approx(coco_result["METEOR"])
    assert second["METEOR"] == pytest.approx(alone["METEOR"]) != pytest.approx(first["METEOR"])


@needs_java
def test_meteor_wrapper_matches_pycocoevalcap_class(own_meteor):
    from pycocoevalcap.meteor.meteor import Meteor

    gts = _ptb_tokenize({k: v for k, v in list(REFERENCES.items())[:4]})
    res = _ptb_tokenize({k: [HYPOTHESES[k]] for k in gts})
    with _MeteorProcess() as process:
        ours, ours_items = process.score([gts[k] for k in gts], [res[k][0] for k in gts])
    assert set(_child_pids()) <= own_meteor
    reference = Meteor()  # pycocoevalcap's wrapper runs from its own directory
    try:
        theirs, theirs_items = reference.compute_score(gts, res)
    finally:
        reference.meteor_p.stdin.close()
        reference.meteor_p.kill()
        reference.meteor_p.wait()
    assert ours == pytest.approx(theirs)
    assert ours_items == pytest.approx(theirs_items)

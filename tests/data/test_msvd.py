"""MSVD-style csv reader: the corpus file and plain clip_id,caption files; clips found by stem."""

import pytest

from captioner.data.msvd import index_videos, load_msvd, read_msvd_captions
from captioner.errors import InputError

CORPUS = """VideoID,Start,End,WorkerID,Source,AnnotationTime,Language,Description
mv89psg6zh4,33,46,1,unverified,11,English,A bird is bathing in a sink.
mv89psg6zh4,33,46,2,clean,8,English,"A bird splashes around, under a faucet."
mv89psg6zh4,33,46,3,clean,8,German,Ein Vogel badet.
ZbzDGXEwtGc,6,15,4,clean,20,English,A man is playing a guitar.
"""


def test_reads_the_msr_video_description_corpus(tmp_path):
    (tmp_path / "corpus.csv").write_text(CORPUS)
    caps = read_msvd_captions(tmp_path / "corpus.csv")
    assert caps == {"mv89psg6zh4_33_46": ["A bird is bathing in a sink.", "A bird splashes around, under a faucet."],
                    "ZbzDGXEwtGc_6_15": ["A man is playing a guitar."]}
    assert read_msvd_captions(tmp_path / "corpus.csv", language="German") == {"mv89psg6zh4_33_46": ["Ein Vogel badet."]}


def test_plain_csv_videos_by_stem_and_split_order(tmp_path):
    (tmp_path / "caps.csv").write_text("video_id,caption\nb,a cat sleeps\na,a dog runs\na,the dog is running\nc,x\n")
    vids = tmp_path / "clips" / "sub"
    vids.mkdir(parents=True)
    for name in ("a.avi", "b.mp4", "notes.txt"):
        (vids / name).write_bytes(b"x")
    assert sorted(index_videos(tmp_path / "clips")) == ["a", "b"]
    (tmp_path / "split.txt").write_text("a\nb\n\na\n")
    data = load_msvd(tmp_path / "caps.csv", tmp_path / "clips", tmp_path / "split.txt", split="train")
    assert [data.ids[p] for p in data.video_paths] == ["a", "b"]
    assert data.captions[data.video_paths[0]] == ["a dog runs", "the dog is running"]
    with pytest.warns(UserWarning, match="1 clip.* have no video"):
        everything = load_msvd(tmp_path / "caps.csv", tmp_path / "clips")  # c has no video
    assert len(everything) == 2 and everything.num_captions == 3


def test_errors(tmp_path):
    (tmp_path / "bad.csv").write_text("foo,bar\n1,2\n")
    with pytest.raises(InputError, match=r"bad.csv:1: header"):
        read_msvd_captions(tmp_path / "bad.csv")
    (tmp_path / "short.csv").write_text("clip_id,caption\nonly-one-column\n")
    with pytest.raises(InputError, match=r"short.csv:2"):
        read_msvd_captions(tmp_path / "short.csv")
    with pytest.raises(InputError, match="not found"):
        read_msvd_captions(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="videos directory not found"):
        index_videos(tmp_path / "nope")
    d = tmp_path / "dupes"
    (d / "x").mkdir(parents=True)
    (d / "a.avi").write_bytes(b"x")
    (d / "x" / "a.mp4").write_bytes(b"x")
    with pytest.raises(InputError, match="two videos are named 'a'"):
        index_videos(d)

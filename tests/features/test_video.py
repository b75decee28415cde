"""Frame sampling on generated clips: uniform / fps sampling, short clips, corrupt frames,
wrong header counts, files with no decodable frame."""

import os
import struct

import numpy as np
import pytest

from captioner.data.synthetic_video import write_video
from captioner.errors import ImageError, InputError
from captioner.features.video import (
    choose_by_time,
    choose_frames,
    frames_from_arrays,
    list_videos,
    sample_frames,
    uniform_targets,
)

SIZE = 48


def numbered_frames(n, size=SIZE):
    """Frame i is a flat image of grey level 6 * i: which frame was sampled is readable back."""
    return np.stack([np.full((size, size, 3), 6 * i, np.uint8) for i in range(n)])


def frame_numbers(sampled):
    return [int(round(f.mean() / 6.0)) for f in sampled.frames]


@pytest.fixture
def clip(tmp_path):
    def make(n=20, fps=10, codec="MJPG", name="clip.avi"):
        path = str(tmp_path / name)
        write_video(path, numbered_frames(n), fps, codec)
        return path
    return make


def corrupt_frames(path, frame_numbers_to_break):
    """Overwrite the entropy-coded data inside the JPEGs of the given frames of an MJPG AVI
    (the AVI chunk structure stays intact, as when a packet's payload is damaged)."""
    data = bytearray(open(path, "rb").read())
    starts = [i for i in range(len(data) - 1) if data[i] == 0xFF and data[i + 1] == 0xD8]  # JPEG SOI
    for k in frame_numbers_to_break:
        s = starts[k]
        end = data.find(b"\xff\xd9", s)  # EOI of this frame
        for j in range(s + 2, end - 2):
            data[j] = 0x00 if j % 2 else 0xFF  # no valid markers, no valid tables
    open(path, "wb").write(data)
    return len(starts)


def set_header_count(path, count):
    """Rewrite the frame count of an AVI's main header and stream header."""
    data = bytearray(open(path, "rb").read())
    avih, strh = data.find(b"avih"), data.find(b"strh")
    struct.pack_into("<I", data, avih + 8 + 16, count)  # dwTotalFrames
    struct.pack_into("<I", data, strh + 8 + 32, count)  # dwLength
    open(path, "wb").write(data)


def test_uniform_targets_and_greedy_choice_hand_worked():
    assert uniform_targets(20, 8).tolist() == [0, 3, 5, 8, 11, 14, 16, 19]
    assert uniform_targets(1, 4).tolist() == [0, 0, 0, 0]
    assert uniform_targets(0, 4).tolist() == []
    assert uniform_targets(9, 1).tolist() == [4]
    # unreadable 8..11: target 8 takes 12, target 11 then takes 13
    readable = [i for i in range(20) if i not in (8, 9, 10, 11)]
    assert choose_frames([0, 3, 5, 8, 11, 14, 16, 19], readable) == [0, 3, 5, 12, 13, 14, 16, 19]
    assert choose_frames([0, 0, 1, 1, 2], [0, 1, 2]) == [0, 1, 2]  # each frame once


@pytest.mark.parametrize("codec,name", [("MJPG", "a.avi"), ("mp4v", "b.mp4")])
def test_uniform_sampling_spans_the_clip(clip, codec, name):
    s = sample_frames(clip(20, codec=codec, name=name), num_frames=8)
    assert s.indices.tolist() == [0, 3, 5, 8, 11, 14, 16, 19]
    # MJPG keeps flat frames' grey levels; mp4v's lossy inter-frame coding may shift them a little
    tolerance = 0 if codec == "MJPG" else 1
    assert np.abs(np.array(frame_numbers(s)) - s.indices).max() <= tolerance
    assert s.frames.shape == (8, SIZE, SIZE, 3) and s.frames.dtype == np.uint8
    assert s.mask.all() and s.frame_count == 20 and s.fps == pytest.approx(10.0)
    np.testing.assert_allclose(s.timestamps, s.indices / 10.0, atol=1e-3)


def test_resize_without_crop(clip):
    s = sample_frames(clip(6), num_frames=2, size=(30, 40))
    assert s.frames.shape == (2, 30, 40, 3)


def test_short_clip_returns_what_there_is_plus_mask(clip):
    s = sample_frames(clip(5), num_frames=8)
    assert len(s.frames) == 5 and frame_numbers(s) == [0, 1, 2, 3, 4]
    assert s.mask.tolist() == [True] * 5 + [False] * 3
    padded, mask = s.padded()
    assert padded.shape == (8, SIZE, SIZE, 3) and not padded[5:].any()
    assert mask.tolist() == s.mask.tolist()


def test_corrupted_middle_frames_are_skipped(clip):
    path = clip(20)
    assert corrupt_frames(path, [8, 9, 10, 11]) == 20
    s = sample_frames(path, num_frames=8)
    assert s.indices.tolist() == [0, 3, 5, 12, 13, 14, 16, 19]
    assert frame_numbers(s) == s.indices.tolist()  # real frames, no garbage
    assert s.readable_count == 16 and s.frame_count == 20


@pytest.mark.parametrize("claimed", [60, 5, 0])
def test_wrong_header_frame_count_is_corrected_by_decoding(clip, claimed):
    path = clip(20)
    set_header_count(path, claimed)
    s = sample_frames(path, num_frames=8)
    assert s.header_frame_count == claimed
    assert s.frame_count == 20
    assert s.indices.tolist() == [0, 3, 5, 8, 11, 14, 16, 19]
    assert frame_numbers(s) == s.indices.tolist()


def test_no_decodable_frame_names_the_file(clip, tmp_path):
    path = clip(6)
    corrupt_frames(path, range(6))
    with pytest.raises(ImageError, match="no decodable frame") as info:
        sample_frames(path)
    assert path in str(info.value)
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(os.urandom(4000))
    with pytest.raises(ImageError, match="junk.mp4"):
        sample_frames(junk)
    empty = tmp_path / "empty.avi"
    empty.write_bytes(b"")
    with pytest.raises(ImageError, match="empty file"):
        sample_frames(empty)
    with pytest.raises(InputError, match="file not found"):
        sample_frames(tmp_path / "missing.avi")
    with pytest.raises(ImageError, match="directory"):
        sample_frames(tmp_path)


@pytest.mark.parametrize("clip_fps,rate,expected", [
    (10, 5, [0, 2, 4, 6, 8, 10, 12, 14]),      # every other frame
    (25, 5, [0, 5, 10, 15, 20, 25, 30, 35]),    # every 5th
    (10, 2.5, [0, 4, 8, 12, 16]),               # 2 s clip at 2.5 fps: 5 frames (fewer than N)
])
def test_sampling_at_a_given_fps_follows_timestamps(clip, clip_fps, rate, expected):
    path = clip(20 if clip_fps == 10 else 40, fps=clip_fps)
    s = sample_frames(path, num_frames=8, fps=rate)
    assert s.indices.tolist() == expected
    assert frame_numbers(s) == [i for i in expected]
    np.testing.assert_allclose(s.timestamps, np.array(expected) / clip_fps, atol=1e-3)


def test_variable_frame_rate_timestamps_hand_worked():
    # 0, 0.1, 0.2 (10 fps) then a gap, then 1.0 .. 1.3 at 20 fps; sampling at 4 fps = every 0.25 s
    ts = [0.0, 0.1, 0.2, 1.0, 1.05, 1.1, 1.15, 1.2, 1.25, 1.3]
    # targets 0 -> 0.0; 0.25 -> first frame at/after it: 1.0; then the next multiple after 1.0: 1.25 -> 1.25
    assert choose_by_time(ts, fps=4, max_frames=8) == [0, 3, 8]
    assert choose_by_time(ts, fps=4, max_frames=2) == [0, 3]
    assert choose_by_time(ts, fps=100, max_frames=3) == [0, 1, 2]
    with pytest.raises(ValueError):
        choose_by_time(ts, fps=0, max_frames=3)


def test_frames_from_arrays_and_list_videos(tmp_path, clip):
    s = frames_from_arrays(list(numbered_frames(10)), num_frames=4, size=(16, 16))
    assert s.indices.tolist() == [0, 3, 6, 9] and s.frames.shape == (4, 16, 16, 3)
    with pytest.raises(ImageError, match="shape"):
        frames_from_arrays([np.zeros((4, 4))])
    a = clip(3, name="a.avi")
    (tmp_path / "notes.txt").write_text("x")
    assert list_videos([tmp_path]) == [a]
    assert list_videos([str(tmp_path / "*.avi"), a]) == [a]
    assert list_videos([str(tmp_path / "notes.txt")]) == [str(tmp_path / "notes.txt")]  # explicit files kept


# Issue 23 item 1: a video is a real container by its bytes; FFmpeg never follows a playlist,
# a URL or another protocol.

def _playlists(tmp_path, secret):
    hls = "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:1.0,\nfile://" + secret + "\n#EXT-X-ENDLIST\n"
    concat = f"ffconcat version 1.0\nfile '{secret}'\n"
    out = []
    for name, text in (("evil.m3u8", hls), ("evil.mp4", hls), ("evil.avi", concat), ("evil.webm", hls)):
        path = tmp_path / name
        path.write_text(text)
        out.append(str(path))
    return out


def test_a_playlist_pointing_at_a_server_file_is_refused(clip, tmp_path):
    secret = clip(10, name="secret.avi")
    assert sample_frames(secret).frames.shape[0] == 8  # the file itself is readable
    for path in _playlists(tmp_path, secret):
        with pytest.raises(ImageError, match="not a video container") as info:
            sample_frames(path)
        assert path in str(info.value)


def test_ffmpeg_itself_refuses_playlists_even_past_the_byte_check(clip, tmp_path, monkeypatch):
    import captioner.features.video as video

    secret = clip(10, name="secret.avi")
    monkeypatch.setattr(video, "check_container", lambda path, head=None: None)
    for path in _playlists(tmp_path, secret)[:2]:
        with pytest.raises(ImageError, match="cannot open as a video"):
            sample_frames(path)
    assert sample_frames(secret).frames.shape[0] == 8


def test_sniff_container_knows_real_containers_by_their_bytes(clip):
    from captioner.features.video import sniff_container

    assert sniff_container(open(clip(3, name="a.avi"), "rb").read(4096)) == "avi"
    assert sniff_container(open(clip(3, codec="mp4v", name="b.mp4"), "rb").read(4096)) == "mp4"
    assert sniff_container(b"\x1a\x45\xdf\xa3" + b"\x00" * 60) == "matroska"
    assert sniff_container(b"GIF89a" + b"\x00" * 60) == "gif"
    for junk in (b"#EXTM3U\n", b"ffconcat version 1.0\n", b"", b"RIFF\x00\x00\x00\x00WAVE", b"\x89PNG\r\n\x1a\n"):
        assert sniff_container(junk) is None


def test_frames_over_the_pixel_cap_are_refused(clip, monkeypatch):
    import captioner.features.video as video

    path = clip(4)
    monkeypatch.setattr(video, "MAX_FRAME_PIXELS", SIZE * SIZE - 1)
    with pytest.raises(ImageError, match="frames too large: 48x48"):
        sample_frames(path)

"""Frame sampling from video files with OpenCV, robust to what real files do.

`sample_frames(path, num_frames=8)` returns up to `num_frames` RGB frames spread uniformly
over the clip (first and last frame included), or, with `fps=`, frames at that rate from the
start (by the frames' own timestamps, so variable frame rates are honoured), as a
`SampledFrames` with the frames, their indices and timestamps, and a mask.

Robustness, each case covered by tests/features/test_video.py:

* The frame count in the header is not trusted: the clip is decoded front to back once
  (sequential decoding is the only reliable access; seeking is not, for many codecs), which
  counts the frames as it goes. When the true count differs from the header's (a wrong or
  missing count), the plan is redone from the true count with a second pass.
* An unreadable frame (a corrupt packet) is skipped: a target that lands on it takes the
  next readable frame not already taken. Decoding goes on past runs of bad frames, up to
  `MAX_CONSECUTIVE_FAILURES` in a row (past the header's count).
* A clip with fewer readable frames than `num_frames` gives the frames it has and a mask
  (`mask[:k]` True); nothing is padded with invented frames. `padded()` gives zeros plus the
  mask for batching, and models ignore masked steps.
* A file that cannot be opened, or in which no frame decodes, raises `ImageError` naming it.
* Only real video containers are read, decided by their bytes, not their names
  (`sniff_container`): an HLS playlist, an FFmpeg concat list or any other text file is
  refused before FFmpeg sees it, and FFmpeg itself is held to the `file` protocol and a
  whitelist of container demuxers (`FFMPEG_CAPTURE_OPTIONS`), so a file can never make it
  open another file, a URL or another protocol. Frames larger than `MAX_FRAME_PIXELS` are
  refused before any is kept.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from captioner.errors import ImageError
from captioner.features.paths import list_files

VIDEO_EXTENSIONS = (".avi", ".mp4", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv", ".flv",
                    ".ogv", ".3gp")
# Consecutive undecodable frames tolerated once past the header's frame count.
MAX_CONSECUTIVE_FAILURES = 64
DEFAULT_NUM_FRAMES = 8
# Largest frame decoded (width * height): 4K UHD. Eight kept 8000x8000 frames would be 1.5 GB.
MAX_FRAME_PIXELS = 3840 * 2160
# FFmpeg demuxers allowed to open a clip (names as FFmpeg spells them), and only local files:
# no playlist (hls), concat list, image sequence, URL or other protocol is ever followed.
FFMPEG_FORMATS = ("avi", "mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "mpeg", "mpegts", "ogg", "flv", "asf", "gif")
FFMPEG_CAPTURE_OPTIONS = "protocol_whitelist;file|format_whitelist;" + ",".join(FFMPEG_FORMATS)
_CONTAINERS_SAID = "MP4/MOV/3GP, AVI, Matroska/WebM, MPEG-PS/TS, Ogg, FLV, ASF/WMV or GIF"
_MP4_BOXES = (b"ftyp", b"moov", b"mdat", b"wide", b"free", b"skip", b"pnot", b"uuid")
_ASF_GUID = bytes.fromhex("3026b2758e66cf11a6d900aa0062ce6c")


def sniff_container(head):
    """The video container the first bytes of a file are (e.g. "mp4", "avi", "matroska"), or
    None when they are none of the containers captioner reads (`FFMPEG_FORMATS`). `head` should
    hold at least the first 564 bytes (fewer for a shorter file)."""
    head = bytes(head[:4096])
    if len(head) >= 8 and head[4:8] in _MP4_BOXES:
        return "mp4"
    if head[:4] == b"RIFF" and head[8:12] in (b"AVI ", b"AVIX"):
        return "avi"
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "matroska"
    if head[:4] == b"\x00\x00\x01\xba":
        return "mpeg"
    if len(head) >= 189 and head[0] == 0x47 and head[188] == 0x47 and (len(head) < 377 or head[376] == 0x47):
        return "mpegts"
    if head[:4] == b"OggS":
        return "ogg"
    if head[:4] == b"FLV\x01":
        return "flv"
    if head[:16] == _ASF_GUID:
        return "asf"
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return "gif"
    return None


def check_container(path, head=None):
    """Raise ImageError naming `path` unless its bytes (or `head`, its first bytes) are a
    video container captioner reads."""
    if head is None:
        try:
            with open(path, "rb") as f:
                head = f.read(4096)
        except OSError as exc:
            raise ImageError(path, f"cannot read ({exc.strerror})") from None
    if sniff_container(head) is None:
        raise ImageError(path, f"cannot open as a video: its bytes are not a video container read here "
                               f"({_CONTAINERS_SAID}); playlists, URLs and lists of files are refused")


def _cv2():
    import cv2

    return cv2


@dataclasses.dataclass
class SampledFrames:
    """Frames sampled from one clip."""

    path: str
    frames: np.ndarray      # (k, H, W, 3) uint8 RGB, k <= num_frames, in time order
    indices: np.ndarray     # (k,) int: frame number of each in the file (0-based, decode order)
    timestamps: np.ndarray  # (k,) float seconds (from the container; index / fps when it has none)
    num_frames: int         # frames requested (N)
    frame_count: int        # frames in the file, counted by decoding (readable or not)
    readable_count: int     # frames that decoded
    fps: float              # frame rate from the header (0 when it has none)
    header_frame_count: int  # what the header claimed

    @property
    def mask(self):
        """(N,) bool: True for the k real frames (a prefix)."""
        mask = np.zeros(self.num_frames, dtype=bool)
        mask[: len(self.frames)] = True
        return mask

    def padded(self):
        """(frames (N, H, W, 3) with zeros after the k real frames, mask (N,)) for batching."""
        out = np.zeros((self.num_frames,) + self.frames.shape[1:], dtype=self.frames.dtype)
        out[: len(self.frames)] = self.frames
        return out, self.mask

    @property
    def duration(self):
        """Seconds from the first to the last frame of the file (by frame count and fps)."""
        return self.frame_count / self.fps if self.fps else 0.0


def uniform_targets(count, num_frames):
    """Frame numbers spread uniformly over [0, count): first and last included.

    With count < num_frames some targets repeat; the sampler takes each frame once.
    """
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    if num_frames == 1:
        return np.array([(count - 1) // 2], dtype=np.int64)
    return np.round(np.linspace(0, count - 1, num_frames)).astype(np.int64)


def choose_frames(targets, readable):
    """Greedy choice: for each target (ascending), the first readable frame at or after it
    and after the frame chosen for the previous target. `readable` is a sorted list of the
    readable frame numbers. Returns the chosen frame numbers (ascending, distinct)."""
    chosen = []
    readable = np.asarray(readable, dtype=np.int64)
    pos = 0
    for t in targets:
        last = chosen[-1] if chosen else -1
        want = max(int(t), last + 1)
        pos = int(np.searchsorted(readable, want, side="left"))
        if pos >= len(readable):
            break
        chosen.append(int(readable[pos]))
    return chosen


class _RatePlan:
    """Frames at `fps` from the first one: for times 0, 1/fps, 2/fps, ... (relative to the
    first frame) the first frame offered whose timestamp is at or after that time, each
    frame once, at most `max_frames`. After a frame is taken, the next time is the first
    multiple of the period after it, so a long gap (a dropped stretch in a variable-rate
    file) is not filled with several copies."""

    def __init__(self, fps, max_frames):
        if not fps or fps <= 0:
            raise ValueError(f"fps must be > 0, got {fps}")
        self.step = 1.0 / float(fps)
        self.max_frames = int(max_frames)
        self.t0 = None
        self.k = 0
        self.taken = 0

    def offer(self, ts):
        """Whether the frame at `ts` seconds (offered in time order) is taken."""
        if self.taken >= self.max_frames:
            return False
        if self.t0 is None:
            self.t0 = ts
        rel = ts - self.t0
        if rel + 1e-6 < self.k * self.step:
            return False
        self.taken += 1
        self.k = max(self.k + 1, int(np.floor(rel / self.step + 1e-6)) + 1)
        return True


def choose_by_time(timestamps, fps, max_frames):
    """Positions in `timestamps` (seconds, ascending) that sampling at `fps` takes."""
    plan = _RatePlan(fps, max_frames)
    return [i for i, ts in enumerate(timestamps) if plan.offer(float(ts))]


class _Decoder:
    """One front-to-back pass over a clip; `retrieve_at` frames are converted and kept."""

    def __init__(self, path):
        cv2 = _cv2()
        self.path = path
        check_container(path)
        # Read by OpenCV at each open: FFmpeg may open this one local file with a listed demuxer,
        # nothing else (the file is checked above; this holds even if it changed since).
        os.environ["OPENCV_FFMPEG_CAPTURE_OPTIONS"] = FFMPEG_CAPTURE_OPTIONS
        try:  # FFmpeg only (no image-sequence or GStreamer backend); an absolute path is never a URL
            self.cap = cv2.VideoCapture(os.path.abspath(path), cv2.CAP_FFMPEG)
        except cv2.error as exc:  # pragma: no cover - OpenCV raising on open is rare
            raise ImageError(path, f"cannot open video: {exc}") from None
        if not self.cap.isOpened():
            self.cap.release()
            raise ImageError(path, "cannot open as a video (not a video file, unsupported codec, or damaged)")
        width = int(self.cap.get(cv2.CAP_PROP_FRAME_WIDTH) or 0)
        height = int(self.cap.get(cv2.CAP_PROP_FRAME_HEIGHT) or 0)
        if width * height > MAX_FRAME_PIXELS:
            self.cap.release()
            raise ImageError(path, f"frames too large: {width}x{height} (at most {MAX_FRAME_PIXELS:,} pixels "
                                   "a frame, 3840x2160)")
        self.header_count = max(int(self.cap.get(cv2.CAP_PROP_FRAME_COUNT) or 0), 0)
        fps = float(self.cap.get(cv2.CAP_PROP_FPS) or 0.0)
        self.fps = fps if np.isfinite(fps) and 0.0 < fps < 10000.0 else 0.0

    def scan(self, keep=None, stop=None):
        """Decode every frame (or until `stop()` is true). `keep(index, timestamp) -> bool`
        says which to convert and keep.

        Returns (kept {index: BGR frame}, readable [indices], timestamps {index: s}, count).
        """
        cv2 = _cv2()
        kept, readable, timestamps = {}, [], {}
        index, failures = 0, 0
        try:
            while stop is None or not stop():
                ok = self.cap.grab()
                if ok:
                    failures = 0
                    ms = self.cap.get(cv2.CAP_PROP_POS_MSEC)
                    ts = ms / 1000.0 if ms and np.isfinite(ms) and (ms > 0 or index == 0) else None
                    if ts is None or (readable and ts <= timestamps[readable[-1]] and index > 0):
                        ts = index / self.fps if self.fps else float(index)  # no usable container time
                    if keep is None or keep(index, ts):
                        ok, frame = self.cap.retrieve()
                        if not ok or frame is None or frame.size == 0:
                            index += 1
                            continue
                        if frame.shape[0] * frame.shape[1] > MAX_FRAME_PIXELS:  # a size change mid-stream
                            raise ImageError(self.path, f"frame {index} too large: {frame.shape[1]}x"
                                                        f"{frame.shape[0]} (at most {MAX_FRAME_PIXELS:,} pixels)")
                        kept[index] = frame
                    readable.append(index)
                    timestamps[index] = ts
                else:
                    failures += 1
                    if failures >= MAX_CONSECUTIVE_FAILURES or (failures > 4 and index >= self.header_count):
                        break
                index += 1
        except cv2.error as exc:
            raise ImageError(self.path, f"video decoding failed at frame {index}: {exc}") from None
        count = readable[-1] + 1 if readable else 0
        return kept, readable, timestamps, count

    def close(self):
        self.cap.release()


def _convert(frame, size):
    cv2 = _cv2()
    if frame.ndim == 2:
        frame = cv2.cvtColor(frame, cv2.COLOR_GRAY2RGB)
    elif frame.shape[2] == 4:
        frame = cv2.cvtColor(frame, cv2.COLOR_BGRA2RGB)
    else:
        frame = cv2.cvtColor(frame, cv2.COLOR_BGR2RGB)
    if size is not None:
        h, w = size
        if frame.shape[:2] != (h, w):
            shrink = frame.shape[0] > h or frame.shape[1] > w
            frame = cv2.resize(frame, (w, h), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
    return np.ascontiguousarray(frame, dtype=np.uint8)


def sample_frames(path, num_frames=DEFAULT_NUM_FRAMES, fps=None, size=None):
    """Sample up to `num_frames` frames of the video at `path`.

    Args:
        path: a video file OpenCV's FFmpeg backend reads (AVI, MP4, MKV, WebM, ...).
        num_frames: N, the most frames returned.
        fps: None: N frames spread uniformly over the whole clip. A number: frames at that
            rate from the first frame (by container timestamps), at most N.
        size: (height, width) to resize every frame to, without cropping; None keeps the
            native size.

    Returns:
        `SampledFrames`. Raises `ImageError` naming the file when it is missing, is not a
        video, or has no decodable frame.
    """
    path = os.fspath(path)
    if num_frames < 1:
        raise ValueError(f"num_frames must be >= 1, got {num_frames}")
    if not os.path.exists(path):
        raise ImageError(path, "file not found")
    if os.path.isdir(path):
        raise ImageError(path, "is a directory, not a video")
    if os.path.getsize(path) == 0:
        raise ImageError(path, "empty file (0 bytes)")

    decoder = _Decoder(path)
    try:
        header_count = decoder.header_count
        if fps is not None:
            # One pass: timestamps decide as frames come; only the chosen are converted.
            plan = _RatePlan(fps, num_frames)

            def keep(index, ts):
                return plan.offer(ts)

            kept, readable, timestamps, count = decoder.scan(keep, stop=lambda: plan.taken >= num_frames)
            chosen = sorted(kept)
        else:
            targets = uniform_targets(header_count, num_frames)
            plan = {"targets": list(targets), "last": -1}

            def keep(index, ts):
                # Take this readable frame if it is at or past the next pending target.
                pending = plan["targets"]
                while pending and pending[0] <= plan["last"]:
                    pending.pop(0)
                if pending and index >= pending[0]:
                    plan["last"] = index
                    while pending and pending[0] <= index:
                        pending.pop(0)
                    return True
                return False

            kept, readable, timestamps, count = decoder.scan(keep if header_count > 0 else (lambda i, t: False))
            chosen = choose_frames(uniform_targets(count, num_frames), readable)
            if sorted(kept) != chosen:
                # The header's count was wrong (or absent, or a kept frame failed to convert):
                # decode again, now knowing the true count and which frames are readable.
                decoder.close()
                decoder = _Decoder(path)
                wanted = set(chosen)
                kept, readable2, _, _ = decoder.scan(lambda i, t: i in wanted)
                chosen = [i for i in chosen if i in kept]
        if not chosen:
            what = "no decodable frame" if not readable else "no frame could be converted"
            raise ImageError(path, f"{what} (header claims {header_count} frames); the file may be "
                                   "damaged or use a codec this OpenCV build cannot decode")
        frames = np.stack([_convert(kept[i], size) for i in chosen])
        return SampledFrames(
            path=path, frames=frames, indices=np.array(chosen, dtype=np.int64),
            timestamps=np.array([timestamps[i] for i in chosen], dtype=np.float64),
            num_frames=int(num_frames), frame_count=int(count), readable_count=len(readable),
            fps=decoder.fps, header_frame_count=int(header_count),
        )
    finally:
        decoder.close()


def frames_from_arrays(frames, num_frames=None, size=None, name="<frames>"):
    """Wrap frames the caller already has ((k, H, W, 3) RGB array or a list of them) as
    `SampledFrames`: resized to `size`, and if there are more than `num_frames`, sampled
    uniformly as a clip would be."""
    frames = [np.asarray(f) for f in frames]
    if not frames:
        raise ImageError(name, "no frames given")
    for i, f in enumerate(frames):
        if f.ndim != 3 or f.shape[-1] != 3:
            raise ImageError(name, f"frame {i} has shape {f.shape}; expected (H, W, 3) RGB")
    n = num_frames or len(frames)
    chosen = choose_frames(uniform_targets(len(frames), n), list(range(len(frames))))
    out = []
    for i in chosen:
        f = frames[i]
        if f.dtype != np.uint8:
            f = np.clip(f, 0, 255).astype(np.uint8)
        if size is not None and f.shape[:2] != tuple(size):
            cv2 = _cv2()
            shrink = f.shape[0] > size[0] or f.shape[1] > size[1]
            f = cv2.resize(f, (size[1], size[0]), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
        out.append(np.ascontiguousarray(f))
    return SampledFrames(
        path=name, frames=np.stack(out), indices=np.array(chosen, dtype=np.int64),
        timestamps=np.array(chosen, dtype=np.float64), num_frames=int(n), frame_count=len(frames),
        readable_count=len(frames), fps=0.0, header_frame_count=len(frames),
    )


def list_videos(paths, recursive=True):
    """Expand files, folders (recursed, video extensions only) and globs into a sorted,
    de-duplicated list. Explicit files are kept whatever their extension, so a broken or
    misnamed file is reported rather than silently dropped."""
    return list_files(paths, VIDEO_EXTENSIONS, recursive)

"""`captioner classify --model M PATHS... [--output OUT.jsonl] [--format auto|post|bbc|text]`

Classifies documents with a hierarchical attention network (`captioner train classify`).
PATHS are files or folders (folders are walked recursively, in name order; hidden files are
skipped). Each document gives one JSON line, in that order:

    {"source": "posts/53100", "label": "rec.motorcycles",
     "probabilities": {"alt.atheism": 0.001, ...}, "read_as": "post", "encoding": "latin-1",
     "sentences": ["Re : Helmet laws", "I ride every day ...", ...],
     "sentence_weights": [0.31, 0.52, ...],          # sentence attention: sums to 1
     "word_weights": [[0.2, 0.1, ...], ...],         # per sentence, word attention: each sums to 1
     "truncated": false}                             # true: more sentences than the model reads

How a file is read (`--format`): `post` a Usenet post as the 20 Newsgroups reader reads it (the
Subject and the author's own text; other headers, quotes and signature dropped), `bbc` a BBC
article (headline line, then the text), `text` the whole file; `auto` (default) reads a file
that starts with a header block holding a Subject as a post, and any other as text. Bytes are
UTF-8, else Latin-1 (old Usenet posts often are).

A file that cannot be read or classified (missing, unreadable, binary, malformed for its
format, no words) gives `{"source": ..., "error": "..."}` and a warning naming it; the others
are still classified, and the exit status is 1.
"""

import argparse
import os
import sys

from captioner.resumable import OUTPUT_HELP
from captioner.bundled import default_path

FORMATS = ("auto", "post", "bbc", "text")


def register(subparsers):
    p = subparsers.add_parser(
        "classify", help="classify documents (files or folders) with a hierarchical attention network",
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--model", default=default_path("classify"),
                   help="a .keras document classifier (e.g. assets/models/newsgroups_han.keras)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="document files, or folders of them (recursed)")
    p.add_argument("--output", "-o", help=OUTPUT_HELP)
    p.add_argument("--format", choices=FORMATS, default="auto", help="how each file is read (see above)")
    p.add_argument("--batch-size", type=int, default=32)
    p.set_defaults(func=run)


def warn(message):
    print(f"captioner classify: warning: {message}", file=sys.stderr, flush=True)


def list_documents(paths):
    """Files of `paths` in order, folders walked recursively (sorted, hidden entries skipped);
    a path that does not exist is kept, so that its row reports it."""
    out = []
    for path in paths:
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                out += [os.path.join(root, f) for f in sorted(files) if not f.startswith(".")]
        else:
            out.append(path)
    return out


def read_for_model(path, fmt="auto"):
    """(text the model reads, how it was read, encoding) of one file; InputError naming it."""
    from captioner.data.document_reading import read_document_text
    from captioner.data.documents import read_text_file
    from captioner.errors import InputError

    if os.path.isdir(path):
        raise InputError(f"{path}: is a folder")
    text, encoding = read_text_file(path)  # missing, unreadable or binary: InputError naming it
    if not text.strip():
        raise InputError(f"{path}: empty file")
    return (*read_document_text(text, fmt, where=str(path)), encoding)


def run(args):
    from tqdm import tqdm

    from captioner.errors import InputError
    from captioner.io import check_output_not_input
    from captioner.models.document_classifier import load_document_classifier
    from captioner.resumable import batch_output

    if args.batch_size < 1:
        raise InputError(f"--batch-size must be >= 1, got {args.batch_size}")
    check_output_not_input(args.output, args.paths)
    model = load_document_classifier(args.model)
    files = list_documents(args.paths)
    with batch_output(args.output, files, what=" ".join(map(str, args.paths)),
                      same=lambda row, path: row.get("source") == path) as out:
        failed = sum("error" in row for row in out.done)
        todo = out.todo
        bar = tqdm(total=len(todo), unit="doc", desc="classify", file=sys.stderr, disable=None)
        for start in range(0, len(todo), args.batch_size):
            rows, good = {}, []
            for path in todo[start:start + args.batch_size]:
                try:
                    text, read_as, encoding = read_for_model(path, args.format)
                    if not model.read(text)[0]:
                        raise InputError(f"{path}: no words to classify")
                    good.append((path, text, read_as, encoding))
                except InputError as e:
                    rows[path] = {"source": path, "error": str(e)}
            if good:
                for (path, _, read_as, encoding), res in zip(good, model.classify([g[1] for g in good])):
                    rows[path] = {"source": path, **res.to_json(), "read_as": read_as, "encoding": encoding}
            for path in todo[start:start + args.batch_size]:
                row = rows[path]
                if "error" in row:
                    failed += 1
                    warn(row["error"])
                out.write(row)
            out.flush()
            bar.update(len(todo[start:start + args.batch_size]))
        bar.close()
    if failed:
        warn(f"{failed} of {len(files)} file(s) could not be classified")
    return 1 if failed else 0

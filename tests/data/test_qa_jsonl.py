"""The make-qa JSON-lines reader: rows, types, and bad lines named by file and line."""

import pytest

from captioner.data.qa_jsonl import read_qa_jsonl
from captioner.errors import InputError


def test_reads_rows_with_their_types(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text('{"image": "a.jpg", "question": "what color is the dog?", "answer": "black", "type": "color"}\n'
                    "\n"
                    '{"image": "b.jpg", "question": "is there a ball?", "answer": "yes", "type": "yesno", "x": 1}\n'
                    '{"image": "a.jpg", "question": "how many dogs are there?", "answer": "two"}\n')
    ds = read_qa_jsonl(str(path), images_dir="/imgs")
    assert [q.question for q in ds.questions] == ["what color is the dog?", "is there a ball?",
                                                  "how many dogs are there?"]
    assert ds.image_ids == ["a.jpg", "b.jpg"] and ds.image_paths["a.jpg"] == "/imgs/a.jpg"
    assert [q.answer_type for q in ds.questions] == ["color", "yesno", None]
    assert ds.questions[0].answers == ["black"] and ds.top_answers() == ["black", "two", "yes"]


@pytest.mark.parametrize("line,message", [
    ("not json", "qa.jsonl:2: not valid JSON"),
    ('["a.jpg", "q", "a"]', "qa.jsonl:2: expected an object"),
    ('{"image": "a.jpg", "question": "", "answer": "x"}', "qa.jsonl:2: 'question' must be a non-empty string"),
    ('{"image": "a.jpg", "question": "what?"}', "qa.jsonl:2: 'answer' must be a non-empty string"),
])
def test_bad_lines_are_named(tmp_path, line, message):
    path = tmp_path / "qa.jsonl"
    path.write_text('{"image": "a.jpg", "question": "q?", "answer": "a"}\n' + line + "\n")
    with pytest.raises(InputError, match=message):
        read_qa_jsonl(str(path))


def test_missing_and_empty_files(tmp_path):
    with pytest.raises(InputError, match="file not found"):
        read_qa_jsonl(str(tmp_path / "none.jsonl"))
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(InputError, match="no question rows"):
        read_qa_jsonl(str(tmp_path / "empty.jsonl"))


def test_a_gzip_file_and_a_byte_order_mark_are_read_like_the_other_json_lines_readers(tmp_path):
    """The JSON-lines readers share one loop (captioner.data.json_file.json_objects)."""
    import gzip

    rows = b'\xef\xbb\xbf{"image": "a.jpg", "question": "what is it?", "answer": "dog"}\n\n' \
           b'{"image": "b.jpg", "question": "how many?", "answer": "2", "type": "number"}\n'
    (tmp_path / "qa.jsonl.gz").write_bytes(gzip.compress(rows))
    data = read_qa_jsonl(tmp_path / "qa.jsonl.gz", images_dir="imgs")
    assert [q.answer for q in data.questions] == ["dog", "2"]
    assert [q.question_id for q in data.questions] == ["qa.jsonl.gz:1", "qa.jsonl.gz:3"]

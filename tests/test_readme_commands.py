"""The README and the guides in docs/ are tested (issue 43): every `captioner ...` command in their
shell blocks parses with the real argument parser, and every file under assets/ or
../shared/datasets it names exists (the dataset paths where the clone sits beside ../shared),
so a renamed option, a removed model or a stale path fails here instead of for a newcomer;
every relative link of a page names a file that exists."""

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shell_commands(text):
    """(line number, command) of every command in the ```bash blocks of `text`: continuation
    lines joined, comments and heredoc bodies dropped."""
    commands, in_block, heredoc, pending, start = [], False, None, "", 0
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_block = stripped == "```bash" and not in_block
            continue
        if not in_block:
            continue
        if heredoc:
            heredoc = None if stripped == heredoc else heredoc
            continue
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if not pending:
            start = number
        pending += " " + stripped.rstrip("\\").strip()
        if stripped.endswith("\\"):
            continue
        found = re.search(r"<<'?(\w+)'?", pending)
        if found:
            heredoc = found.group(1)
        commands.append((start, re.sub(r"\s+#\s.*$", "", pending).strip()))
        pending = ""
    return commands


def captioner_commands():
    out = []
    for doc in DOCS:
        for number, command in shell_commands(doc.read_text(encoding="utf-8")):
            words = shlex.split(command)
            while words and "=" in words[0] and not words[0].startswith("-"):
                words = words[1:]  # VAR=value prefixes
            if words and words[0] in ("captioner", ".venv/bin/captioner"):
                out.append(pytest.param(words[1:], id=f"{doc.name}:{number}"))
    return out


COMMANDS = captioner_commands()


def test_the_readme_has_commands_to_check():
    assert len(COMMANDS) >= 30


@pytest.mark.parametrize("argv", COMMANDS)
def test_each_readme_command_parses_and_names_existing_files(argv, capsys):
    from captioner.cli import build_parser

    parser = build_parser()
    try:
        args, unknown = parser.parse_known_args(argv)
        if unknown and not getattr(args, "pass_unknown_args", False):
            parser.parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"`captioner {' '.join(argv)}` does not parse: {capsys.readouterr().err.strip()} ({exc})")
    assert args.command == argv[0]
    if unknown:  # `pipeline`: the rest are Beam's pipeline options, each one Beam knows
        from apache_beam.options.pipeline_options import PipelineOptions

        options = PipelineOptions(unknown)
        strangers = set(options.get_all_options(retain_unknown_options=True)) - set(options.get_all_options())
        assert not strangers, f"not Beam pipeline options: {sorted(strangers)}"
    datasets_here = (ROOT.parent / "shared" / "datasets").is_dir()  # a clone beside ../shared (else: assets only)
    for word in argv:
        for path in re.findall(r"(?:^|=)((?:assets|\.\./shared/datasets)/[^\s'\"]+)", word):
            if "*" not in path and (datasets_here or not path.startswith("../shared/")):
                assert (ROOT / path).exists(), f"`captioner {' '.join(argv)}` names {path}, which does not exist"


def test_the_contents_list_every_section_in_order():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    contents, rest = text.split("## Contents\n", 1)[1].split("\n## ", 1)
    listed = re.findall(r"- \[(.+?)\]\(#([\w-]+)\)", contents)
    headings = re.findall(r"^#{2,3} (.+)$", "## " + rest, re.M)
    assert [title for title, _ in listed] == headings

    def anchor(title):  # GitHub's: lower case, punctuation dropped, spaces to hyphens
        return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")

    assert all(target == anchor(title) for title, target in listed)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_relative_link_names_a_file_that_exists(doc):
    text = doc.read_text(encoding="utf-8")
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if target.startswith(("http://", "https://", "#", "mailto:")) or "=" in target:
            continue
        assert (doc.parent / target.split("#")[0]).exists(), f"{doc.name}: the link ({target}) names no file"


def test_the_guides_are_linked_from_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert all(f"(docs/{p.name})" in readme for p in DOCS[1:]), "a guide in docs/ the README does not link"

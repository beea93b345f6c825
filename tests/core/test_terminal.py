"""Command output wraps at word boundaries: every word kept, no line wider than asked."""

from __future__ import annotations

from core.terminal import MAX_WIDTH, MIN_WIDTH, fill, terminal_width

TEXT = ("passed; answer: leading_garbage=pass, template_leak=pass, bpe_glyphs=pass, invalid_chars=pass, "
        "mojibake=pass, repetition=pass, language=pass, refusal=pass; language: en (user_turn)")


def test_fill_keeps_every_word_whole_within_the_width_and_indents_what_follows():
    lines = fill(TEXT, 60, first="      ", rest="        ")
    assert all(len(line) <= 60 for line in lines) and len(lines) > 2
    assert lines[0].startswith("      passed;") and all(line.startswith("        ") for line in lines[1:])
    assert " ".join(line.strip() for line in lines).split() == TEXT.split()


def test_fill_keeps_a_phrase_on_one_line_and_breaks_only_a_word_wider_than_the_line():
    text = "Not strict JSON: the reply is JSON with text before it. (fleet rate 23.1%)"
    for width in range(30, 80):
        assert any("(fleet rate 23.1%)" in line for line in fill(text, width, keep=["(fleet rate 23.1%)"])), width
    # Hyphenated words stay whole; a run without spaces is split, nothing of it is lost.
    assert fill("a schema-valid reply", 14) == ["a schema-valid", "reply"]
    assert "".join(fill("x" * 50, 20)) == "x" * 50
    assert fill("", 40, first="  -> ") == ["  ->"]


def test_a_sample_ends_at_a_word_and_says_so():
    lines = fill("The caravan crossed the dunes at dawn and rested by the well.", 24, first="-> ", max_lines=2)
    assert lines == ["-> The caravan crossed", "   the dunes at dawn …"]
    assert fill("short", 24, max_lines=2) == ["short"]


class Output:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_the_width_is_columns_within_60_to_100_and_100_off_a_terminal(monkeypatch):
    for columns, width in ((200, MAX_WIDTH), (80, 80), (20, MIN_WIDTH)):
        monkeypatch.setenv("COLUMNS", str(columns))
        assert terminal_width(Output(False)) == width
    monkeypatch.delenv("COLUMNS")
    # A pipe or a buffer: the text does not depend on the terminal the command came from.
    assert terminal_width(Output(False)) == terminal_width() == MAX_WIDTH
    assert MIN_WIDTH <= terminal_width(Output(True)) <= MAX_WIDTH

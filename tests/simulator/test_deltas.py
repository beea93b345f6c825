"""How the simulator cuts a reply into streaming deltas (``split_deltas``)."""

from __future__ import annotations

import random

import pytest

from fake_openrouter.content import split_deltas


@pytest.mark.parametrize("text", [
    "",
    "Olá, mundo.",
    "*She smiles.* \"Come in.\"\n\nThe door  creaks.",
    "日本語の文章はスペースなしで続きます。",
    "   \n\t  ",
    "x" * 1000,
    "word " * 300,
])
def test_the_deltas_join_back_into_the_text(text: str) -> None:
    assert "".join(split_deltas(text, random.Random(3))) == text


def test_a_long_run_without_spaces_is_cut_into_pieces_of_two_to_four_characters() -> None:
    # A leading-garbage fragment or a CJK run: one piece per cut, one or two pieces a delta.
    run = "ab" * 50_000
    deltas = split_deltas(run, random.Random(5))
    assert "".join(deltas) == run
    assert all(2 <= len(d) <= 8 for d in deltas[:-1])
    assert 1 <= len(deltas[-1]) <= 12  # the run's last cut keeps what is left (at most 8)


def test_the_same_seed_cuts_the_same_way() -> None:
    text = "Eu não esperava ninguém no arquivo a esta hora. " + "漢字" * 40
    assert split_deltas(text, random.Random(11)) == split_deltas(text, random.Random(11))
    assert split_deltas(text, random.Random(11)) != split_deltas(text, random.Random(12))

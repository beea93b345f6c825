"""The mojibake rule (``canary.judges.encoding.check_mojibake``) on real text: ftfy's own
test cases of each code page (tests/fixtures/real-text/ftfy_cases.jsonl), its
must-not-change strings, and NTREX passages read in the wrong code page (made here by
encoding the real text as UTF-8 and decoding it as that code page)."""

from __future__ import annotations

import contextlib

import ftfy
import ftfy.bad_codecs  # noqa: F401 - registers the sloppy-windows-* code pages
import pytest
from ftfy import chardata

from canary.judges.encoding import (
    MAX_WINDOW,
    TYPOGRAPHY,
    check_encoding,
    check_mojibake,
    mojibake_windows,
)
from canary.verdicts import Verdict
from routing.live_checks import ANSWER_CHECKS, mojibake_prefix, run_checks
from tests.real_text import load

FTFY = load("ftfy_cases")
NTREX = load("ntrex_clean")
# ftfy's own documented known failure (file known-failures): it re-decodes this clean string.
KNOWN_FALSE = "MISUT\u00c2\u00a0AJIKKO"


def _case(label: str) -> str:
    found = [r["text"] for r in FTFY if r.get("label") == label]
    assert len(found) == 1, label
    return found[0]


def _ntrex(language: str) -> list[str]:
    return [r["text"] for r in NTREX if r["lang"] == language]


def _fails(text: str) -> bool:
    return check_mojibake(text).verdict is Verdict.FAIL


@pytest.mark.parametrize("label", [
    "UTF-8 / Windows-1251 Russian mixup about futbol",
    "UTF-8 / Windows-1251 mixup in tweet spam",
    "UTF-8 / MacRoman mix-up about smurfs",
    "Latvian UTF-8 / MacRoman mojibake",
    "UTF-8 / Codepage 437 mixup in Russian",
    "Messy language name in cp437: Vietnamese",
    "UTF-8 / Windows-1252 mixup in Spanish",
    "Synthetic: Hebrew UTF-8 / Latin-1 mojibake",
    "UTF-8 / Windows-1250 mixup in Slovak",
])
def test_ftfys_mojibake_of_each_code_page_fails(label: str) -> None:
    judgement = check_mojibake(_case(label))
    assert (judgement.verdict, judgement.check, judgement.evidence["rule"]) == (Verdict.FAIL, "encoding", "mojibake")
    assert judgement.evidence["ftfy_explanation"] and judgement.evidence["fixed_preview"]


@pytest.mark.parametrize("label", [
    # A sound part and a mojibake part: ftfy repairs them only with decode_inconsistent_utf8.
    "Synthetic: curly quotes with mismatched encoding glitches in Windows-1252",
    "Fix 'à' in inconsistent mojibake",
    # Its two mixed-up halves cannot be read as one code page.
    "Synthetic: Incomplete UTF-8 / Windows-1252 mixup in Arabic",
    # A single letter of cp1251 or MacRoman inside a word, which ftfy leaves alone.
    "An example with 'à' in windows-1251 where we need our heuristic to be bolder",
    "Italian UTF-8 / MacRoman mojibake that looks like math",
])
def test_mixed_and_single_letter_mojibake_ftfys_fixer_leaves_whole_fails(label: str) -> None:
    text = _case(label)
    explained = ftfy.fix_encoding_and_explain(text)
    assert not any(step[0] in ("encode", "decode") for step in explained.explanation or [])
    assert _fails(text)


@pytest.mark.parametrize("text", ["┬┐que diferencia hay?", "┬íHola!", "Вїque pasa?", "¬øque pasa?", "¬°Hola!"])
def test_a_spanish_opening_mark_read_in_cp437_cp1251_or_macroman_before_a_word_fails(text: str) -> None:
    # ftfy's known failure "┬┐que diferencia hay?" was delivered: cp437's reading of "¿"
    # is two box-drawing characters, which its fixer leaves alone.
    assert check_mojibake(text).verdict is Verdict.FAIL


@pytest.mark.parametrize("text", ["┌─┬┐\n│ a│", "¿Qué pasa?", "Вїзд заборонено", "price ¬ 5", "┬┐ ┬┐"])
def test_box_drawing_a_real_opening_mark_and_cyrillic_after_the_pair_pass(text: str) -> None:
    assert check_mojibake(text).verdict is Verdict.PASS


def test_arabic_read_as_cp1251_fails_though_ftfys_badness_rules_pass_it() -> None:
    # Made here: real Arabic news as UTF-8 read as Windows-1251 (ftfy's fixer leaves it).
    broken = _ntrex("ar")[0].encode("utf-8").decode("sloppy-windows-1251")
    assert ftfy.fix_encoding(broken) == broken
    judgement = check_mojibake(broken)
    assert judgement.verdict is Verdict.FAIL and judgement.evidence["how"] == "code_page"
    assert judgement.evidence["ftfy_explanation"] == [["encode", "sloppy-windows-1251"], ["decode", "utf-8"]]


def test_a_prefix_cut_inside_a_characters_reading_is_judged_on_what_it_holds() -> None:
    # "ШЈШ№Ш±ШЁ ШЈШ": the stream has sent the first half of the last "أ". Judged as a
    # finished text that window does not decode; as an open prefix its complete part
    # does ("أعرب أ"), and a part too short to decide yet is no pass.
    broken = _ntrex("ar")[0].encode("utf-8").decode("sloppy-windows-1251")
    cut = broken[:12]
    assert cut.endswith("Ш") and check_mojibake(cut).verdict is Verdict.PASS
    judgement = check_mojibake(cut, open_end=True)
    assert judgement.verdict is Verdict.FAIL and judgement.evidence["fixed_preview"] == "أعرب أ"
    short = check_mojibake(broken[:3], open_end=True)
    assert short.verdict is Verdict.INCONCLUSIVE and short.evidence["open_window"] == [0, 3]
    # A cut that ends a sound text (a closed window before it, or sound letters) stays a pass.
    assert check_mojibake("Olá, viajante. Bem-vindo à", open_end=True).verdict is Verdict.INCONCLUSIVE
    assert check_mojibake("Olá, viajante. Bem-vindo à estalagem", open_end=True).verdict is Verdict.PASS
    assert check_mojibake(_ntrex("ru")[0][:40], open_end=True).verdict is Verdict.PASS


def test_an_open_prefix_of_every_clean_passage_passes_or_waits_never_fails() -> None:
    for text in (r["text"] for r in NTREX):
        for length in range(1, 130):
            assert check_mojibake(text[:length], open_end=True).verdict is not Verdict.FAIL, text[:length]


@pytest.mark.parametrize("page", ["sloppy-windows-1252", "latin-1", "sloppy-windows-1251", "macroman", "cp437"])
@pytest.mark.parametrize("language", ["ru", "pl", "fr", "de", "vi"])
def test_every_passage_read_in_a_wrong_code_page_fails(language: str, page: str) -> None:
    broken = [t.encode("utf-8").decode(page) for t in _ntrex(language) if not t.isascii()]
    assert len(broken) == 31 and all(_fails(t) for t in broken)


def test_a_sound_sentence_cannot_hide_mojibake_after_it_on_the_same_line() -> None:
    # A sound Portuguese passage, then a Russian one read as MacRoman, not streamed: as
    # one text no code page holds both, so ftfy's fixer passes the whole.
    sound = _ntrex("pt")[0]
    broken = _ntrex("ru")[1].encode("utf-8").decode("macroman")
    text = f"{sound} {broken}"
    assert ftfy.fix_encoding(text) == text
    judgement = check_mojibake(text)
    assert judgement.verdict is Verdict.FAIL
    start, end = judgement.evidence["window"]
    assert start >= len(sound) and end - start <= MAX_WINDOW
    assert judgement.evidence["position"] == len(sound) + 1  # the first garbled character
    assert run_checks(ANSWER_CHECKS, text, "pt").failed.startswith("encoding:")


def test_the_whole_reply_fails_wherever_a_prefix_of_it_fails() -> None:
    texts = [r["text"] for r in FTFY] + [t.encode("utf-8").decode(page) for t in _ntrex("it") + _ntrex("fr")
                                          for page in ("sloppy-windows-1251", "macroman", "cp437")]
    # Every 8 characters: where a stream's held prefix may be judged.
    prefix_only = [t for t in texts if not _fails(t) and any(
        mojibake_prefix(t[:n]).verdict is Verdict.FAIL for n in range(8, len(t), 8))]
    assert len(texts) == 347 and prefix_only == []


@pytest.mark.parametrize("record", [r for r in FTFY if r["expected"] == "clean"], ids=lambda r: r["text"][:24])
def test_ftfys_must_not_change_strings_pass_but_its_known_failure(record: dict) -> None:
    assert _fails(record["text"]) is (record["text"] == KNOWN_FALSE)


@pytest.mark.parametrize("text", [
    "\u251c\u2524a\u253c\u2510a\u253c\u2510a\u253c\u2510a\u253c\u2510a",  # line art, valid UTF-8 as cp437
    "\u0412\u0406\u041a\u0406 is Ukrainian for WIKI",  # valid UTF-8 as cp1251
    "Join ZZAJ\u00c9\u2019s Official Fan List and receive news, events, and more!",
    "a radius of 10 \u00c5\u2014",
])
def test_text_that_decodes_by_chance_passes(text: str) -> None:
    assert not _fails(text)


@pytest.mark.parametrize("language", sorted({r["lang"] for r in NTREX}))
def test_clean_news_of_every_language_passes_whole_and_cut(language: str) -> None:
    for text in _ntrex(language):
        assert not any(_fails(text[:n]) for n in (32, 64, 128, len(text))), text[:80]


def test_windows_are_lines_and_sentences_of_bounded_length() -> None:
    long_line = "Très bien " * 50
    text = "Ça va? Oui.\nAll ASCII here.\n" + long_line
    spans = mojibake_windows(text)
    # ASCII windows ("Oui.\n", the second line) cannot show mojibake and are left out.
    assert text[slice(*spans[0])] == "Ça va? "
    assert all(0 < e - s <= MAX_WINDOW for s, e in spans)
    assert "".join(text[s:e] for s, e in spans[1:]) == long_line


def test_the_canary_judge_runs_the_same_rule() -> None:
    text = _case("Italian UTF-8 / MacRoman mojibake that looks like math")
    assert check_encoding(text).evidence == check_mojibake(text).evidence


@pytest.mark.parametrize("page", chardata.CHARMAP_ENCODINGS)
def test_no_code_page_reads_typographic_punctuation_as_a_utf8_sequence(page: str) -> None:
    # The licence to skip a window of ASCII and TYPOGRAPHY: in no code page ftfy knows
    # do those characters give both a byte that starts a UTF-8 sequence and one that
    # continues it, so no reading of them decodes to anything but ASCII.
    encoded = set()
    for char in TYPOGRAPHY:
        with contextlib.suppress(UnicodeEncodeError):
            encoded.update(char.encode(page))
    leads = {b for b in encoded if 0xC2 <= b <= 0xF4}
    continuations = {b for b in encoded if 0x80 <= b <= 0xBF}
    assert not (leads and continuations), (page, sorted(leads), sorted(continuations))


def test_typographic_punctuation_alone_is_skipped_but_an_open_prefix_ending_in_it_waits() -> None:
    assert check_mojibake("\u201cQuoted\u201d \u2014 and so on\u2026 it\u2019s fine.").verdict is Verdict.PASS
    # MacRoman reads "Р" (D0 A0) as "–†": the dagger keeps such a window judged.
    russian_as_macroman = "Привет, как дела у тебя сегодня?".encode().decode("mac_roman")
    assert check_mojibake(russian_as_macroman).verdict is Verdict.FAIL
    # A prefix ending in a MacRoman lead byte's reading may yet become a sequence: not a pass.
    assert check_mojibake("Ze kunnen vervolgens een eiwit \u2018", open_end=True).verdict is Verdict.INCONCLUSIVE

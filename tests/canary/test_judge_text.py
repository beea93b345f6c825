"""``manage.py judge_text``: JSON lines in, one judgement line out per input, the same
judgement a probe would give (``canary.judges.run``)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from canary.judges import judge_language, judge_refusal
from canary.judges.run import InputError, judge_line, judge_reply, load_schema
from canary.verdicts import Reply

REFUSAL = "I'm sorry, but I cannot provide instructions on how to do that."
STORY = "Ela sorriu e abriu a porta do farol, onde o vento assobiava entre as pedras antigas."


def run(lines: list[str], *args: str) -> list[dict]:
    return _rows(args, io.StringIO("\n".join(lines) + "\n"))


def _rows(args: tuple[str, ...], stdin: io.IOBase) -> list[dict]:
    """The command's rows; it fails (exit status 1) exactly when a row is an error."""
    out = io.StringIO()
    try:
        call_command("judge_text", *args, stdin=stdin, stdout=out)
    except CommandError as exc:
        rows = [json.loads(line) for line in out.getvalue().splitlines()]
        errors = [r["line"] for r in rows if "error" in r]
        if not errors:
            raise  # refused before any line (a bad --schema or --language)
        assert f"{len(errors)} of {len(rows)} lines were errors" in str(exc)
        return rows
    rows = [json.loads(line) for line in out.getvalue().splitlines()]
    assert not any("error" in r for r in rows)
    return rows


def test_each_line_gets_the_judgement_a_probe_would_give() -> None:
    rows = run(
        [json.dumps({"text": REFUSAL, "language": "en"}), json.dumps({"text": STORY})],
        "--check", "refusal", "--language", "pt",
    )
    assert [r["line"] for r in rows] == [1, 2]
    probe = judge_refusal(Reply(content=REFUSAL, finish_reason="stop"), "en")
    assert (rows[0]["check"], rows[0]["verdict"], rows[0]["reason"]) == (probe.check, probe.verdict.value, probe.reason)
    assert rows[0]["evidence"]["matched"] == probe.evidence["matched"]
    assert (rows[1]["judge"], rows[1]["verdict"]) == ("refusal", "pass")


def test_language_check_matches_the_judge() -> None:
    (row,) = run([json.dumps({"text": STORY, "language": "pt"})], "--check", "language")
    assert row["verdict"] == judge_language(Reply(content=STORY), "pt").verdict.value == "pass"


def test_bad_lines_give_an_error_line_and_the_run_goes_on() -> None:
    rows = run(
        ["not json", "[1, 2]", json.dumps({"language": "pt"}), json.dumps({"text": STORY, "language": "xx"}),
         json.dumps({"text": STORY, "language": "pt"})],
        "--check", "all",
    )
    assert [r["line"] for r in rows] == [1, 2, 3, 4, 5]
    assert rows[0]["error"].startswith("not JSON")
    assert "JSON object" in rows[1]["error"]
    assert '"text"' in rows[2]["error"]
    assert "unknown language 'xx'" in rows[3]["error"]
    assert rows[4]["judge"] == "all" and len(rows[4]["judgements"]) == 5
    assert rows[4]["verdict"] != "fail"


def test_all_leaves_structured_out_without_a_schema_and_judges_it_with_one(tmp_path: Path) -> None:
    (row,) = run([json.dumps({"text": STORY, "language": "pt"})], "--check", "all")
    structured = next(j for j in row["judgements"] if j["check"] == "structured_output")
    assert structured["verdict"] == "not_applicable"
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "required": ["mood"]}))
    (row,) = run([json.dumps({"text": '{"mood": "calm"}'})], "--check", "structured", "--schema", str(schema))
    assert (row["check"], row["verdict"]) == ("structured_output", "pass")
    (row,) = run([json.dumps({"text": '{"x": 1}'})], "--check", "structured", "--schema", str(schema))
    assert row["verdict"] == "fail"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "is not JSON"),
        ("[1]", "must hold a JSON object"),
        ('{"type": 5}', "not a valid JSON Schema"),
        ('{"type": "number", "maximum": Infinity}', "is not JSON: Infinity is not JSON"),
    ],
)
def test_a_bad_schema_file_is_refused(tmp_path: Path, content: str, message: str) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(content)
    with pytest.raises(CommandError, match=message):
        run([json.dumps({"text": "{}"})], "--check", "structured", "--schema", str(schema))


def test_a_schema_file_with_a_remote_ref_is_refused_before_any_line_and_never_fetched(
    tmp_path: Path, schema_host
) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"type": "object", "properties": {"mood": {"$ref": schema_host.url}}}))
    lines = [json.dumps({"text": '{"mood": "calm"}'})] * 3
    with pytest.raises(CommandError) as refused:
        run(lines, "--check", "structured", "--schema", str(schema))
    assert str(refused.value) == (
        f"--schema: schema file {schema}: $ref '{schema_host.url}' at $.properties.mood"
        " does not resolve within the schema (references are never fetched)"
    )
    assert schema_host.gets == 0


def test_a_schema_file_with_local_refs_is_judged(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"$defs": {"mood": {"enum": ["calm"]}}, "type": "object",
                                  "properties": {"mood": {"$ref": "#/$defs/mood"}}}))
    rows = run([json.dumps({"text": '{"mood": "calm"}'}), json.dumps({"text": '{"mood": "wild"}'})],
               "--check", "structured", "--schema", str(schema))
    assert [r["verdict"] for r in rows] == ["pass", "fail"]


@pytest.mark.parametrize("depth", [3000, 50_000])
def test_a_schema_file_nested_too_deeply_is_refused_in_one_line(tmp_path: Path, depth: int) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"items": ' * depth + "{}" + "}" * depth)
    with pytest.raises(CommandError) as refused:
        run([json.dumps({"text": "{}"})], "--check", "structured", "--schema", str(schema))
    assert str(refused.value) == f"--schema: schema file {schema} is not JSON: arrays or objects nested too deeply"


def test_a_schema_file_over_the_size_limit_is_refused_as_too_large(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"description": "' + "x" * 1_000_000 + '"}')
    with pytest.raises(CommandError) as refused:
        run([json.dumps({"text": "{}"})], "--check", "structured", "--schema", str(schema))
    assert str(refused.value) == f"--schema: schema file {schema} is larger than 1000000 bytes"


def test_a_schema_that_parses_but_is_too_deep_to_check_is_refused_in_one_line(tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"items": ' * 400 + "{}" + "}" * 400)
    with pytest.raises(CommandError) as refused:
        run([json.dumps({"text": "{}"})], "--check", "structured", "--schema", str(schema))
    assert str(refused.value) == f"--schema: schema file {schema}: nested too deeply to check"


def test_a_deeply_nested_line_is_an_error_line_and_the_run_goes_on() -> None:
    extra = "[" * 5000 + "]" * 5000
    rows = run(["[" * 100_000, '{"text": "x", "extra": {"deep": ' + extra + "}}", json.dumps({"text": STORY})],
               "--check", "refusal")
    assert rows[:2] == [
        {"line": 1, "error": "not JSON: arrays or objects nested too deeply"},
        {"line": 2, "error": "not JSON: arrays or objects nested too deeply"},
    ]
    assert (rows[2]["line"], rows[2]["verdict"]) == (3, "pass")


def test_every_nesting_depth_up_to_past_the_limit_gives_a_row() -> None:
    # Somewhere below the interpreter's limit a value decodes but is too deep to quote
    # back in the error; each depth must still give its own row.
    depths = range(sys.getrecursionlimit() - 300, sys.getrecursionlimit() + 10, 3)
    rows = [judge_line('{"text": ' + "[" * d + "]" * d + "}", "refusal") for d in depths]
    assert all(set(row) == {"error"} for row in rows)
    assert {row["error"].split(",")[0] for row in rows} <= {
        '"text" must be a string or null', "not JSON: arrays or objects nested too deeply"
    }


def test_a_missing_schema_file_and_a_bad_language_are_refused(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot read schema file"):
        run([], "--check", "structured", "--schema", str(tmp_path / "nope.json"))
    with pytest.raises(CommandError, match="--language"):
        run([], "--check", "refusal", "--language", "klingon")


def test_the_pure_functions_name_the_problem() -> None:
    with pytest.raises(InputError, match="unknown check"):
        judge_reply("x", "vibes")
    with pytest.raises(InputError, match="cannot read"):
        load_schema("/nonexistent/schema.json")
    assert judge_line("{}", "refusal") == {"error": 'missing "text" (a string)'}


def run_bytes(data: bytes, *args: str) -> list[dict]:
    return _rows(args, io.BytesIO(data))


NOT_UTF8 = b'{"text": "caf\xe9"}\n' + json.dumps({"text": STORY}).encode() + b"\n"


def test_a_line_that_is_not_utf8_is_an_error_line_and_the_run_goes_on() -> None:
    rows = run_bytes(NOT_UTF8, "--check", "refusal", "--language", "pt")
    assert rows[0] == {"line": 1, "error": "not UTF-8: byte 0xe9 at offset 13"}
    assert (rows[1]["line"], rows[1]["verdict"]) == (2, "pass")


@pytest.mark.django_db
def test_the_command_reads_stdin_as_bytes_whatever_the_locale() -> None:
    # With a UTF-8 locale's strict stdin (PYTHONIOENCODING stands in for one here) a line
    # that is not UTF-8 ended the whole run with a UnicodeDecodeError traceback.
    s = connection.settings_dict
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict",
           "DATABASE_URL": f"postgres://{s.get('USER') or 'postgres'}@{s['HOST']}:{s['PORT']}/{s['NAME']}"}
    done = subprocess.run(  # noqa: S603 - our own interpreter and manage.py
        [sys.executable, "manage.py", "judge_text", "--check", "refusal", "--language", "pt"],
        cwd=Path(__file__).resolve().parents[2], env=env, input=NOT_UTF8, capture_output=True, timeout=120, check=False,
    )
    # Every line is answered, and the run says one was an error.
    assert done.returncode == 1 and "1 of 2 lines were errors, not judged (line 1)" in done.stderr.decode()
    rows = [json.loads(line) for line in done.stdout.decode().splitlines()]
    assert rows[0] == {"line": 1, "error": "not UTF-8: byte 0xe9 at offset 13"}
    assert (rows[1]["line"], rows[1]["verdict"]) == (2, "pass")


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ('{"text": NaN}', "not JSON: NaN is not JSON (RFC 8259 has no NaN or Infinity)"),
        ('{"text": "x", "language": Infinity}', "not JSON: Infinity is not JSON (RFC 8259 has no NaN or Infinity)"),
        ('{"text": "x", "n": 1e400}', "not JSON: 1e400 is out of range for a number"),
        ('{"text": 5}', '"text" must be a string or null, got 5'),
        ('{"text": ["a"]}', '"text" must be a string or null, got ["a"]'),
        ('{"text": true}', '"text" must be a string or null, got true'),
        ('{"text": "x", "language": 0}', '"language" must be a language code (a string), got 0'),
        ('{"text": "x", "language": false}', '"language" must be a language code (a string), got false'),
        ('{"text": "x", "language": []}', '"language" must be a language code (a string), got []'),
    ],
)
def test_a_malformed_line_gets_an_error_naming_the_field_and_the_value(line: str, error: str) -> None:
    (row,) = run([line], "--check", "all")
    assert row == {"line": 1, "error": error}


def test_null_text_is_judged_as_a_reply_with_null_content_as_a_probe_would() -> None:
    (row,) = run([json.dumps({"text": None})], "--check", "refusal")
    probe = judge_refusal(Reply(content=None, finish_reason="stop"), "en")
    assert (row["check"], row["verdict"], row["reason"]) == (probe.check, probe.verdict.value, probe.reason) == (
        "empty_reply", "fail", probe.reason)
    (row,) = run([json.dumps({"text": None})], "--check", "all")
    assert row["verdict"] == "fail" and len(row["judgements"]) == 5


def test_blank_lines_are_skipped_and_still_counted_and_a_null_language_is_the_default() -> None:
    rows = run(["", "   ", json.dumps({"text": STORY, "language": None}), "\t"], "--check", "language", "--language", "pt")
    assert [(r["line"], r["verdict"]) for r in rows] == [(3, "pass")]


def test_a_misspelt_key_is_named_not_judged_in_the_default_language() -> None:
    # Found by a new user's trial: "langauge": "pt" was judged as English, a fail.
    line = json.dumps({"text": STORY, "langauge": "pt"})
    (row,) = run([line], "--check", "language")
    assert row == {"line": 1, "error": 'unknown key "langauge" (did you mean \'language\'?); '
                                       'a line has "text" and an optional "language"'}
    with pytest.raises(CommandError, match=r"1 of 2 lines were errors, not judged \(line 2\)"):
        call_command("judge_text", "--check", "language", "--language", "pt",
                     stdin=io.StringIO(json.dumps({"text": STORY}) + "\n" + line + "\n"), stdout=io.StringIO())

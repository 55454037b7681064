"""One run of ``auditor audit`` driven through the library, without ``main()`` or argparse."""

from __future__ import annotations

import json

from conftest import SEED_000, SEED_001

from auditor.batch.session import SessionOptions, run_session
from auditor.options.config import Config, resolve
from auditor.result import Status


def test_run_session_takes_typed_options(tmp_path, capsys) -> None:
    output = tmp_path / "out.json"
    settings = resolve(Config())
    run = run_session([str(SEED_000), str(SEED_001)], settings, SessionOptions(format="json", output=str(output)))
    assert [r.status for r in run.results] == [Status.PASS, Status.FAIL]
    assert capsys.readouterr().out == ""  # --output: nothing on stdout
    written = json.loads(output.read_text(encoding="utf-8"))
    assert [r["status"] for r in written["results"]] == ["pass", "fail"]
    assert written["summary"]["fail"] == 1


def test_command_line_and_config_split_globs_and_codes_alike(tmp_path) -> None:
    """One validation rule for both sources: a comma-separated string is a list in either."""
    from auditor.options.config import parse
    from auditor.options.keys import validate_command_line

    table = {"include": "*.txt, *.md", "select": "a3,V4", "alpha": 0.01}
    from_file = parse(table, tmp_path / "pyproject.toml")
    from_cli = validate_command_line({"include": ["*.txt, *.md"], "select": ["a3", "V4"], "alpha": "0.01"})
    assert from_file.include == from_cli.include == ("*.txt", "*.md")
    assert from_file.select == from_cli.select == ("A3", "V4")
    assert from_file.alpha == from_cli.alpha == 0.01

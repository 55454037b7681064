"""The GitHub Action (action.yml) run as the runner runs a composite action, on a scratch repository.

The steps are read from action.yml with a YAML parser; each ``run:`` script is run with bash as
the runner does (``bash --noprofile --norc -eo pipefail``), its ``${{ }}`` expressions replaced by
the values the runner would give, with ``GITHUB_OUTPUT``, ``GITHUB_ENV``, ``GITHUB_STEP_SUMMARY``
and ``GITHUB_WORKSPACE`` set.  Two steps are not run here: ``uses:`` steps (setup-python, the SARIF
upload: other repositories' actions, which need GitHub) have their ``if:`` conditions evaluated
instead, and the install step, which builds a virtual environment and pip-installs the action's
checkout (a minute and a package index); the auditor installed in this environment stands in for it
through ``AUDITOR_BIN``, the variable that step exports (its script is checked to export it).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "fixtures"
SARIF_SCHEMA = ROOT / "tests" / "data" / "schemas" / "sarif-schema-2.1.0.json"
_EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def _action() -> dict:
    return yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))


def _value(name: str, context: dict) -> str:
    """A context value: ``inputs.x``, ``steps.id.outputs.x``, ``github.x`` (missing: empty, as on GitHub)."""
    parts = name.split(".")
    if parts[0] == "inputs":
        return context["inputs"].get(parts[1], "")
    if parts[0] == "steps":
        return context["steps"].get(parts[1], {}).get(parts[3], "")
    if parts[0] == "github":
        return context["github"].get(parts[1], "")
    raise AssertionError(f"the test does not know the expression {name!r}")


def substitute(text: str, context: dict) -> str:
    return _EXPRESSION.sub(lambda m: _value(m.group(1), context), text)


def condition(expression: str, context: dict) -> bool:
    """An ``if:`` of the forms action.yml uses: always(), ==/!= against quoted strings, && joins."""
    body = _EXPRESSION.sub(lambda m: m.group(1), expression)
    result = True
    for term in body.split("&&"):
        term = term.strip()
        if term == "always()":
            continue
        match = re.fullmatch(r"([\w.-]+)\s*(==|!=)\s*'([^']*)'", term)
        assert match, f"the test cannot evaluate {term!r}"
        left = _value(match.group(1), context)
        result &= (left == match.group(3)) if match.group(2) == "==" else (left != match.group(3))
    return result


def _read_pairs(path: Path) -> dict[str, str]:
    """A GITHUB_OUTPUT / GITHUB_ENV file: ``name=value`` lines and ``name<<DELIM`` blocks."""
    out, lines = {}, path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            out[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        name, _, value = line.partition("=")
        out[name] = value
        i += 1
    return out


def run_action(workspace: Path, inputs: dict[str, str], tmp: Path) -> dict:
    """Run action.yml's steps in ``workspace``; returns outputs, exit codes, stdout, summary and skipped steps."""
    action = _action()
    given = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    given.update(inputs)
    context = {
        "inputs": given,
        "steps": {},
        "github": {"action_path": str(ROOT), "action_repository": "example/auditor", "action_ref": "v0.1.0"},
    }
    files = {name: tmp / name.lower() for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY")}
    env_base = {
        **os.environ,
        **{name: str(path) for name, path in files.items()},
        "GITHUB_WORKSPACE": str(workspace),
        "GITHUB_ACTION_PATH": str(ROOT),
        "RUNNER_TEMP": str(tmp / "runner-temp"),
        "GITHUB_SERVER_URL": "https://github.com",
        "PYTHONSAFEPATH": "1",
    }
    (tmp / "runner-temp").mkdir()
    files["GITHUB_STEP_SUMMARY"].write_text("", encoding="utf-8")
    # What the install step exports (it is checked below to export exactly this).
    env_base["AUDITOR_BIN"] = shutil.which("auditor") or f"{sys.prefix}/bin/auditor"
    codes, stdout, skipped, conditions = {}, {}, [], {}
    for step in action["runs"]["steps"]:
        name = step["name"]
        if "if" in step:
            conditions[name] = condition(step["if"], context)
            if not conditions[name]:
                skipped.append(name)
                continue
        if "uses" in step:
            skipped.append(name)
            continue
        if name == "Install the auditor":
            assert 'echo "AUDITOR_BIN=$venv/bin/auditor" >> "$GITHUB_ENV"' in step["run"]
            assert '"${ACTION_PATH}${extras}"' in step["run"]  # the action's own checkout
            skipped.append(name)
            continue
        assert step["shell"] == "bash"
        files["GITHUB_OUTPUT"].write_text("", encoding="utf-8")
        env = {**env_base, **_read_pairs(files["GITHUB_ENV"])}
        env.update({k: substitute(str(v), context) for k, v in step.get("env", {}).items()})
        script = tmp / f"step-{len(codes)}.sh"
        script.write_text(substitute(step["run"], context), encoding="utf-8")
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        codes[name], stdout[name] = proc.returncode, proc.stdout + proc.stderr
        if "id" in step:
            context["steps"][step["id"]] = _read_pairs(files["GITHUB_OUTPUT"])
    outputs = {
        name: substitute(spec["value"], context) for name, spec in action["outputs"].items()
    }  # the action's outputs, as its caller sees them
    return {
        "outputs": outputs,
        "codes": codes,
        "stdout": stdout,
        "skipped": skipped,
        "conditions": conditions,
        "summary": files["GITHUB_STEP_SUMMARY"].read_text(encoding="utf-8"),
    }


def _scratch_repository(root: Path) -> Path:
    repo = root / "repo"
    answers = repo / "answers"
    answers.mkdir(parents=True)
    for name in ("defects/A307_p_not_a_resample_estimate.txt", "silent/T601_interior_optimum.txt"):
        shutil.copy(FIXTURES / name, answers / Path(name).name)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def test_the_action_writes_annotations_sarif_a_summary_and_outputs_from_one_audit(tmp_path: Path) -> None:
    repo = _scratch_repository(tmp_path)
    ran = run_action(repo, {"paths": "answers"}, tmp_path)
    assert ran["codes"] == {"Audit": 1}  # a failing transcript fails the step, and so the job
    annotations = ran["stdout"]["Audit"]
    assert "::error file=answers/A307_p_not_a_resample_estimate.txt,line=" in annotations
    assert "title=A307::/bench_report/comparison/p_value" in annotations
    out = ran["outputs"]
    assert out["status"] == "fail"
    assert (out["files"], out["pass"], out["fail"], out["error"]) == ("2", "1", "1", "0")
    assert int(out["findings"]) == annotations.count("\n::") + annotations.startswith("::")
    assert out["sarif-file"] == "auditor.sarif"
    sarif = json.loads((repo / "auditor.sarif").read_text(encoding="utf-8"))
    schema = json.loads(SARIF_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    assert any(r["ruleId"] == "A307" for r in sarif["runs"][0]["results"])
    summary = ran["summary"]
    assert summary.startswith("## auditor: ✗ 1 of 2 transcripts fail")
    assert "| p\\_value | 0\\.0462 | 0\\.015625 |" in summary  # claimed beside recomputed
    assert "](https://github.com/example/auditor/blob/v0.1.0/docs/rules.md#a307-p-value-inconsistent)" in summary
    # The upload runs even though the audit failed the step; setup-python only when asked for.
    assert ran["conditions"] == {"Set up Python": False, "Upload SARIF": True}


def test_a_passing_batch_passes_and_no_upload_when_it_is_off(tmp_path: Path) -> None:
    repo = _scratch_repository(tmp_path)
    (repo / "answers" / "A307_p_not_a_resample_estimate.txt").unlink()
    ran = run_action(repo, {"paths": "answers", "upload-sarif": "false", "sarif-file": "out/a b.sarif"}, tmp_path)
    assert ran["codes"] == {"Audit": 0}
    assert ran["outputs"]["status"] == "pass" and ran["outputs"]["fail"] == "0"
    assert ran["outputs"]["sarif-file"] == "out/a b.sarif"
    assert "## auditor: ✓ all 1 transcripts pass" in ran["summary"]
    assert ran["conditions"]["Upload SARIF"] is False


def test_a_pull_request_cannot_loosen_the_policy_pinned_with_config(tmp_path: Path) -> None:
    """The pull request's own pyproject.toml says fail-on never; the base branch's copy, given as
    ``config``, is the one applied."""
    repo = _scratch_repository(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.auditor]\nfail-on = "never"\nignore = ["A", "V"]\n', encoding="utf-8")
    pinned = tmp_path / "base-pyproject.toml"
    pinned.write_text('[tool.auditor]\nfail-on = "error"\n', encoding="utf-8")
    ran = run_action(repo, {"paths": "answers", "config": str(pinned)}, tmp_path)
    assert ran["codes"] == {"Audit": 1} and ran["outputs"]["status"] == "fail"
    assert "title=A307" in ran["stdout"]["Audit"]


def test_hostile_inputs_stay_words_and_usage_errors_report_error(tmp_path: Path) -> None:
    """A path input holding shell syntax is a file name, never run; a missing path is a usage error."""
    repo = _scratch_repository(tmp_path)
    marker = tmp_path / "pwned"
    ran = run_action(repo, {"paths": f"'answers/$(touch {marker})' ; touch {marker}", "args": "--select A"}, tmp_path)
    assert not marker.exists()
    assert ran["codes"] == {"Audit": 2}
    assert ran["outputs"]["status"] == "error" and ran["outputs"]["sarif-file"] == ""
    assert ran["conditions"]["Upload SARIF"] is False


@pytest.mark.parametrize("step", ["Install the auditor", "Audit"])
def test_inputs_reach_the_scripts_only_through_env(step: str) -> None:
    """``${{ inputs.x }}`` spliced into a script would run whatever an input holds (script injection)."""
    run = next(s for s in _action()["runs"]["steps"] if s["name"] == step)
    assert "${{" not in run["run"]

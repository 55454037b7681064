"""The probe against scripts that undo, bypass or forge it: at worst "not observed", never "trained".

Each script prints the claimed report (shipped as results.json, like the
replication_shipped fixture) after attacking the probe, through the CLI with
real bubblewrap and real torch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import experiment_workspace, needs_sandbox_and_torch

from auditor.cli import main
from auditor.rerun.probe import HOOK, activity, key_pipe_bytes, probed_argv

PRINT_CLAIM = 'print(open("results.json").read())\n'
FORGED = (
    '{"torch_imported": true, "optimizer_steps": 500, "forward_calls": 500, "backward_calls": 500, '
    '"devices": ["cpu"], "seeds_set": [], "seeds_total": 0, "seed_offset": 0, "frameworks": [], "tampered": []}'
)
ATTACKS = {
    # Undo the hooks, then train for real: the training is not seen, and the undoing is.
    "unhook": """
        import torch, torch.optim.optimizer as o, torch.nn.modules.module as m
        o._global_optimizer_post_hooks.clear(); m._global_forward_hooks.clear()
        model = torch.nn.Linear(2, 1); opt = torch.optim.SGD(model.parameters(), lr=0.1)
        opt.step()
    """,
    # Restore the autograd functions the probe wrapped from the originals it holds.
    "restore": """
        import torch
        torch.autograd.backward = torch.autograd.backward.__closure__[1].cell_contents
    """,
    # Count fake steps: an optimizer stepped without a gradient, no forward, no backward.
    "fake_steps": """
        import torch
        opt = torch.optim.SGD([torch.zeros(3, requires_grad=True)], lr=0.1)
        for _ in range(100):
            opt.step()
    """,
    # Write a record claiming training to every pipe the process holds (the probe's channel among them).
    "forge": f"""
        import os, torch
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                if fd > 2 and os.readlink(f"/proc/self/fd/{{fd}}").startswith("pipe:"):
                    os.write(fd, b'{FORGED}\\t' + b'0' * 64 + b'\\n')
            except OSError:
                pass
    """,
    # The same, then leave before the probe's own record is written.
    "forge_and_exit": f"""
        import os, sys, torch
        for fd in map(int, os.listdir("/proc/self/fd")):
            try:
                if fd > 2 and os.readlink(f"/proc/self/fd/{{fd}}").startswith("pipe:"):
                    os.write(fd, b'{FORGED}\\t' + b'0' * 64 + b'\\n')
            except OSError:
                pass
        sys.stdout.write(open("results.json").read()); sys.stdout.flush(); os._exit(0)
    """,
    # Take the probe's import hook out before importing torch, then train unseen.
    "bypass_finder": """
        import sys
        sys.meta_path[:] = [f for f in sys.meta_path if type(f).__name__ != "Finder"]
        import torch
        model = torch.nn.Linear(2, 1); opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(1, 2)).sum().backward(); opt.step()
    """,
}


def _workspace(tmp_path: Path, attack: str) -> Path:
    folder = experiment_workspace("replication_shipped", tmp_path / "ws")
    (folder / "load.py").write_text(textwrap.dedent(ATTACKS[attack]) + PRINT_CLAIM)
    return folder


@needs_sandbox_and_torch
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attacked_probe_never_reads_as_trained(capsys, tmp_path: Path, attack: str) -> None:
    folder = _workspace(tmp_path, attack)
    main(["audit", str(folder / "answer.txt"), "--rerun", "--device", "cpu", "--format", "json", "--quiet"])
    result = json.loads(capsys.readouterr().out)["results"][0]
    seen = result["rerun"]["activity"]
    assert seen["status"] in ("not observed", "no training", "undone"), seen
    r808 = [f for f in result["findings"] if f["rule"] == "R808"]
    assert len(r808) == 1
    # Caught, not only unconfirmed: each attack fails the gate.
    assert seen["status"] in ("no training", "undone") and r808[0]["severity"] == "error", seen
    assert result["status"] == "fail"


def _probed(
    tmp_path: Path, script: str, env: dict[str, str], *, offset: int = 5, source: bytes | None = None
) -> tuple[subprocess.CompletedProcess[str], bytes]:
    """``script`` under the probe's real command outside the sandbox, with key and record pipes like the supervisor's.

    ``source``: what the key pipe holds before the key (the probe's source unless given).
    """
    import os

    token_read, token_write = os.pipe()
    os.write(token_write, key_pipe_bytes(HOOK.encode("utf-8") if source is None else source, b"k" * 32))
    os.close(token_write)
    record_read, record_write = os.pipe()
    env = {**env, "AUDITOR_PROBE": f"{token_read},{record_write},{offset}"}
    try:
        done = subprocess.run(
            probed_argv(sys.executable, script, []),
            pass_fds=(token_read, record_write),
            env=env,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            check=False,
            timeout=60,
        )
    finally:
        os.close(token_read)
        os.close(record_write)
    line = os.read(record_read, 65536)
    os.close(record_read)
    return done, line


def test_no_torch_is_not_observed_and_costs_no_import(tmp_path: Path) -> None:
    """A script without torch imports none, and its seeds are still shifted and recorded."""
    script = tmp_path / "plain.py"
    script.write_text(
        "import sys, random\nrandom.seed(3)\nprint(sorted(m for m in ('torch', 'numpy') if m in sys.modules))\n"
    )
    done, line = _probed(tmp_path, str(script), {"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr
    payload = json.loads(line.split(b"\t")[0])
    assert payload["seeds_set"] == [{"call": "random.seed", "seed": 3, "used": 8}]
    said = activity({"status": "ok", "record": payload})
    assert said["status"] == "not observed" and "never imported" in said["why"]


def test_workspace_cannot_shadow_the_probe(tmp_path: Path) -> None:
    """A sitecustomize.py, usercustomize.py, .pth or os.py in the workspace never runs before the probe (-I)."""
    for name in ("sitecustomize.py", "usercustomize.py", "os.py", "hashlib.py"):
        (tmp_path / name).write_text("raise SystemExit('shadowed')\n")
    (tmp_path / "evil.pth").write_text("import sys; sys.exit('shadowed')\n")
    (tmp_path / "run.py").write_text("import sys; print(sys.meta_path[0].__class__.__name__)\n")
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path), "HOME": str(tmp_path), "PYTHONSTARTUP": "run.py"}
    done, line = _probed(tmp_path, "run.py", env)
    assert done.returncode == 0 and done.stdout.strip() == "Finder", done.stderr
    assert json.loads(line.split(b"\t")[0])["tampered"] == []


def test_the_command_line_holds_a_short_bootstrap_not_the_probe(tmp_path: Path) -> None:
    """``ps`` shows a few fixed lines: the probe's source comes through the key pipe, which is closed by then."""
    import os

    (tmp_path / "run.py").write_text(
        textwrap.dedent(
            """
            import os
            argv = open("/proc/self/cmdline", "rb").read().split(b"\\0")
            pipes = 0
            for fd in map(int, os.listdir("/proc/self/fd")):
                try:
                    pipes += fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
                except OSError:
                    pass
            print(sum(map(len, argv)), pipes, "AUDITOR_PROBE" in os.environ)
            """
        )
    )
    argv = probed_argv(sys.executable, "run.py", ["--seed", "1"])
    assert argv[:3] == [sys.executable, "-I", "-c"] and argv[4:] == ["run.py", "--seed", "1"]
    assert len(argv[3]) < 800 and "hmac" not in argv[3] and HOOK not in " ".join(argv)
    done, line = _probed(tmp_path, "run.py", {"PATH": "/usr/bin:/bin"})
    length, pipes, leaked = done.stdout.split()
    # The script sees the bootstrap, not the probe; the key pipe is closed and the probe's variable gone.
    # (The record's channel stays open: the probe writes it at exit, signed with the key it read.)
    assert int(length) < 800 + len(sys.executable) + 40, done.stdout
    assert (int(pipes), leaked) == (1, "False"), done.stdout
    assert line.endswith(b"\n") and os.path.exists(tmp_path / "run.py")


def test_without_the_probes_source_the_script_never_runs(tmp_path: Path) -> None:
    """No pipe, or a source cut short: the bootstrap stops before the script (never an unprobed run)."""
    (tmp_path / "run.py").write_text("open('ran', 'w').write('yes')\n")
    bare = subprocess.run(
        probed_argv(sys.executable, "run.py", []),
        env={"PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        cwd=tmp_path,
        check=False,
    )
    assert bare.returncode != 0 and "did not arrive" in bare.stderr
    cut = HOOK.encode("utf-8")
    done, line = _probed(tmp_path, "run.py", {"PATH": "/usr/bin:/bin"}, source=b"%08d" % (len(cut) + 1000) + cut)
    assert done.returncode != 0 and not line
    assert not (tmp_path / "ran").exists()


@pytest.mark.skipif(shutil.which("nvidia-smi") is None, reason="needs a GPU (the probe counts cuda devices)")
@needs_sandbox_and_torch
def test_cuda_runs_use_the_same_probe(capsys, tmp_path: Path) -> None:
    folder = experiment_workspace("replication_shipped", tmp_path / "ws")
    (folder / "load.py").write_text(
        "import torch\nm = torch.nn.Linear(2, 1).cuda()\nm(torch.ones(1, 2, device='cuda')).sum().backward()\n"
        + PRINT_CLAIM
    )
    main(["audit", str(folder / "answer.txt"), "--rerun", "--device", "cuda", "--format", "json", "--quiet"])
    seen = json.loads(capsys.readouterr().out)["results"][0]["rerun"]["activity"]
    assert seen["status"] == "trained" and any(d.startswith("cuda") for d in seen["devices"])

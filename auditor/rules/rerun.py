"""Rerun rules (R8xx): raised by :mod:`auditor.rerun` when ``--rerun`` runs the experiment again."""

from __future__ import annotations

from auditor.findings import Rule, Severity

R801 = Rule(
    "R801",
    "referenced-file-missing",
    Severity.ERROR,
    doc="""
    A file the answer names in `files` (or its script) does not exist in the workspace.

    ## What it does
    Looks up every name in the answer's `files` list, and the script named in
    `how_to_run`, relative to the workspace (`--workspace`, by default the
    transcript's folder). Reports each one that is not there, and an answer
    whose workspace cannot be known (a transcript read from stdin without
    `--workspace`).

    ## Why is this bad?
    An experiment that cannot be found cannot be rerun, so none of its numbers
    can be confirmed. Either the agent's workspace was not archived with the
    answer, or the answer cites code it never wrote.

    ## Example
    ```json
    "how_to_run": "python3 bench.py", "files": ["bench.py", "config.json"]
    ```
    with only `bench.py` next to the transcript: `config.json` is missing.

    ## How to fix
    Archive the agent's workspace with the answer, so that every file in
    `files` and the script in `how_to_run` are there. Pass `--workspace DIR`
    when the transcript does not lie in the workspace or is read from stdin,
    and drop from `files` any name the experiment did not use.
    """,
)

R802 = Rule(
    "R802",
    "rerun-refused",
    Severity.ERROR,
    doc="""
    The command or a file path is refused: nothing was run.

    ## What it does
    `how_to_run` is split like a shell would (shlex) but never given to a
    shell. It must be a Python interpreter (a path whose last part is `python`,
    `python3` or `python3.X`), then a `.py` file of the workspace, then plain
    arguments. Shell operators (`;`, `|`, `&`, `$`, `>`, `<`, backticks),
    other programs, interpreter options (`-c`, `-m`, ...) and paths outside the
    workspace are refused. File names that are absolute, contain `..`, or lead
    outside the workspace through a symlink are refused too, and so are files
    the answer's owner (the transcript's owner) may not read, hard links to
    other users' files, files over 2 GiB (sparse ones included) and files
    adding up to more than 2 GiB. A workspace that is `/`, a shared or masked
    folder (`/tmp`, `/home`, ...), a folder above one, a home folder or a
    kernel file system is refused, and so is an interpreter (`--python`) that
    lies inside the workspace. An answer without `how_to_run` is reported
    here as well: there is nothing to rerun.

    ## Why is this bad?
    The command comes from the answer, that is, from the agent: running it
    through a shell would let an answer run anything on the auditor's machine.
    A refused command means the claim cannot be confirmed by rerunning it.

    ## Example
    ```json
    "how_to_run": "python3 x.py; touch /tmp/pwned"
    ```
    Use instead: `"how_to_run": "python3 x.py"`.

    ## How to fix
    Write `how_to_run` as `python3 script.py [arguments]`: a Python
    interpreter, a script inside the workspace and plain arguments, with no
    shell operators, `-c` or `-m`. Name files by relative paths inside the
    workspace (no absolute paths, `..` or symlinks leading out), keep them
    readable by the transcript's owner and under 2 GiB, and keep the workspace
    in a project folder of its own, not `/tmp` or a home folder.
    """,
)

R803 = Rule(
    "R803",
    "rerun-failed",
    Severity.ERROR,
    doc="""
    The rerun failed: a non-zero exit, a signal, the timeout, or one of the sandbox's caps.

    ## What it does
    Runs the command in a sandbox on a fresh copy of the workspace and reports
    when the process exits with a non-zero code, is killed by a signal, runs
    past `--timeout`, or prints more than `--max-output` (in both cases the
    whole process tree is killed). When the output points to a cap, the
    message names it: memory (`--memory`), disk (`--disk`: the copy, `/tmp` and
    `/dev/shm` are size-capped), processes (`--max-processes`) or the 1 GiB
    file size cap. The message ends with the tail of the captured output.

    ## Why is this bad?
    An experiment that does not run from its own files cannot have produced
    the numbers in the answer as they stand: a dependency, a data file or a
    step is missing, or the script was changed after the run.

    ## Example
    ```text
    Traceback (most recent call last):
      File "bench.py", line 3, in <module>
        CONFIG = json.load(open("config.json"))
    FileNotFoundError: [Errno 2] No such file or directory: 'config.json'
    ```

    ## How to fix
    Run the command yourself in a fresh copy of the workspace and fix what
    fails (a missing dependency, data file or step; the message ends with the
    output's tail). When the message names a cap the experiment legitimately
    needs more of, raise it: `--timeout`, `--memory`, `--disk`,
    `--max-processes` or `--max-output`.
    """,
)

R804 = Rule(
    "R804",
    "rerun-numbers-differ",
    Severity.ERROR,
    doc="""
    The rerun's per-seed numbers differ from the claimed ones beyond tolerance.

    ## What it does
    Compares the baseline's and the idea's per-seed values of the regenerated
    report with the claimed ones, seed by seed, with relative tolerance `--rtol`
    (default 1e-5 when the rerun runs on the same device kind as the claim, 1e-2
    across device kinds; a report that does not name its `device` is taken to
    come from CPU). Reports which seeds differ, claimed against rerun, and a
    different number of seeds.

    ## Why is this bad?
    The script is deterministic (fixed seeds), so the same code on the same
    kind of device gives the same numbers. Numbers that differ were typed in,
    edited after the run, or come from a different version of the code.

    ## Example
    ```text
    claimed idea per_seed [7.12, 6.85, ...]   rerun [7.63, 7.41, ...]
    ```

    ## How to fix
    Regenerate the answer from the script's own output (quote the
    `bench_report.json` the run wrote) instead of editing numbers. If the claim
    was run on another kind of device, name it in the report's `device` field so
    the cross-device tolerance applies, or set `--rtol` for the comparison.
    """,
)

R805 = Rule(
    "R805",
    "rerun-verdict-differs",
    Severity.ERROR,
    doc="""
    The verdict recomputed from the rerun's numbers differs from the claimed verdict.

    ## What it does
    Recomputes the paired statistics (differences, exact sign-flip p, verdict at
    `--alpha`) from the per-seed values the rerun produced, and compares that
    verdict with the answer's `comparison.verdict`, classified by its words.

    ## Why is this bad?
    The verdict is what the pipeline acts on. If the agent's own experiment,
    run again, does not support it, the claim is false whatever its prose says.

    ## Example
    ```text
    claimed "idea better (significant)", rerun gives "no measurable effect" (p = 1.0)
    ```

    ## How to fix
    Report the verdict the rerun's numbers give, or find out why the script no
    longer reproduces the claimed run (code changed after the run, unpinned
    data, nondeterministic kernels) and fix that before claiming the verdict.
    """,
)

R806 = Rule(
    "R806",
    "shipped-report-differs",
    Severity.ERROR,
    doc="""
    The `bench_report.json` shipped in the workspace differs from the report in the answer.

    ## What it does
    Reads the `bench_report.json` listed in `files` and compares it with the
    answer's embedded `bench_report`, as JSON values (numbers equal to a
    relative 1e-9, key order and formatting ignored). Reports the differing
    places by JSON Pointer.

    ## Why is this bad?
    The script writes that file; the answer should quote it. If they differ,
    one of them was edited by hand after the run, and the answer's numbers are
    not the ones the experiment produced.

    ## Example
    ```text
    /bench_report/idea/full/per_seed/2: answer 6.85, shipped file 7.41
    ```

    ## How to fix
    Quote the shipped `bench_report.json` in the answer as it is (copy it, do
    not retype it), or rerun the script and quote the file it writes.
    """,
)

R807 = Rule(
    "R807",
    "rerun-no-report",
    Severity.ERROR,
    doc="""
    The rerun finished but produced no bench report.

    ## What it does
    After a successful run, looks for `bench_report.json` in the run's copy of
    the workspace and, failing that, for the last JSON bench report printed on
    standard output. Reports when neither exists or neither can be read.

    ## Why is this bad?
    The answer says this command produced its numbers. A command that produces
    no report cannot have; the numbers came from somewhere else.

    ## Example
    ```json
    "how_to_run": "python3 bench.py"
    ```
    where `bench.py` only prints "done".

    ## How to fix
    Make the script write `bench_report.json` into the workspace at the end of
    the run (or print the report as one JSON object on standard output), and
    point `how_to_run` at that script.
    """,
)

R808 = Rule(
    "R808",
    "rerun-without-training",
    Severity.ERROR,
    doc="""
    The rerun printed its report without training: torch was imported, yet no
    optimizer step, module forward call or backward pass was observed.

    ## What it does
    `--rerun` starts the experiment's interpreter with the auditor's own probe
    (`python -I -c <probe> script.py ...`: nothing of the workspace runs before
    it). Once the script imports torch, the probe counts optimizer steps that
    had gradients (torch's global step hook), `torch.nn.Module` forward calls
    (its global forward hook) and autograd backward passes, and notes the
    devices tensors were computed on; at exit it writes a record signed with a
    per-run key to the sandbox's supervisor. Reports an error when torch was
    imported and all three counts are zero. A run that never imports torch
    (JAX, scikit-learn, or no framework) is reported at info level as "not
    observed", and so is a run whose record is missing (the auditor cannot
    tell, and never counts it as trained). A run whose record is doubled or
    unsigned (something wrote to the probe's channel) or says the probe was
    undone (hooks removed, functions replaced, torch imported past the probe)
    is an error: an honest script never takes the probe apart.

    ## Why is this bad?
    A script that prints the claimed numbers, or loads them from a file shipped
    in the workspace, reproduces them exactly without running the experiment:
    the rerun would confirm numbers that no training produced.

    ## Example
    ```python
    import json, torch

    print(json.dumps(json.load(open("results.json"))))  # the claim, shipped
    ```

    ## How to fix
    Make `how_to_run` run the experiment itself: train and evaluate in the
    script (or in code it calls in the same process) and write the report from
    the values it computed. When the bench trains with another framework, the
    info finding says so and needs no fix.
    """,
)

R809 = Rule(
    "R809",
    "rerun-seed-independent",
    Severity.ERROR,
    doc="""
    The results do not depend on the seeds: the replication's per-seed values
    equal the first run's although every seed was shifted.

    ## What it does
    With `--replicate`, the experiment runs a second time with every seed the
    script sets (`torch.manual_seed`, `torch.Generator.manual_seed`,
    `torch.cuda.manual_seed(_all)`, `numpy.random.seed`, `default_rng`,
    `RandomState`, `random.seed`) shifted by an offset (`--replicate-offset`,
    by default drawn at random and recorded). Reports an error when an arm's
    per-seed values are all identical to the first run's although the probe
    shifted at least one seed; a warning when they are identical and no seed
    was set through those functions (seeding through another API, such as a
    JAX key, cannot be shifted, so the replication ran the same draws).

    ## Why is this bad?
    Values that stay the same when every seed changes are not per-seed
    measurements: they are hard-coded, loaded, or computed without the
    randomness the seeds control. Their spread, p-value and verdict say
    nothing about the idea.

    ## Example
    ```python
    train(model)  # trains, but then:
    report["idea"]["full"]["per_seed"] = [7.12, 6.85, 7.03, 6.97]
    ```

    ## How to fix
    Report the values the training computed for each seed, and set every seed
    through the functions above so that a replication can draw fresh ones.
    """,
)

R810 = Rule(
    "R810",
    "rerun-not-replicated",
    Severity.ERROR,
    doc="""
    The claimed effect did not replicate on fresh seeds.

    ## What it does
    With `--replicate`, recomputes the paired comparison on the replication's
    per-seed values (fresh draws: every seed shifted) and tests the claim
    (docs/rerun.md states the test and its error rates, measured in
    `bench/replication.py`). A claimed significant effect is replicated when
    the replication is significant in the same direction. It is contradicted
    (error) when the replication is significant in the other direction, or
    when the claimed mean difference lies outside the replication's 95%
    interval for it. Otherwise it is inconclusive (warning): not significant,
    yet compatible with the claimed effect; the record gives the power the
    claimed effect had at that number of seeds. A claim of no effect met by a
    significant replication is inconclusive too.

    ## Why is this bad?
    Rerunning the same seeds only shows that the script is deterministic. An
    effect found on one draw of eight seeds (or on the best of several draws)
    can be noise; on fresh seeds it shrinks or vanishes.

    ## Example
    ```text
    claimed: delta_mean -0.41, p 0.008 (idea better)
    replication (offset 1000): delta_mean 0.02, p 0.84, interval [-0.21, 0.25]
    ```

    ## How to fix
    Report every seed that was run, decide the seeds before looking at the
    results, and use enough seeds that the effect is detected reliably (the
    MDE in the report); then the effect replicates, or the claim should say
    there is no measurable effect.
    """,
)

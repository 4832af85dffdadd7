"""Scheduled reports: execute the notebooks with papermill, then write one HTML report.

The stages follow a run: choose notebooks and parameters → execute each (a failed one
keeps its executed copy, with the failing cell marked) → convert to HTML → write an
index that leads with each notebook's conclusions, headline figures and their trend over
earlier runs (see `workbench.frontpage`), the full result tables collapsed below. Any failure makes the
whole run fail after the report is written, so a scheduler sees a non-zero exit and a
human still gets the report.

Parameters file (YAML):

    defaults: {quick: false}          # given to every notebook
    notebooks:
      00_quickstart: {records: 500000}
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import itertools
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from workbench.config import Profile, environment, load_profile, project_root
from workbench.errors import ConfigError, NotebookRunError
from workbench.results import RUN_ID_ENV, run_rows

__all__ = [
    "CELL_TIMEOUT_S",
    "KERNEL_NAME",
    "NotebookRun",
    "PLOTLYJS",
    "Report",
    "SAVE_EVERY_S",
    "ensure_kernel",
    "notebook_paths",
    "notebooks_dir",
    "read_parameters",
    "run_report",
]

KERNEL_NAME = "workbench"

#: Seconds one cell may run before the notebook counts as failed (a hang must not stall a
#: scheduled report forever); `$WORKBENCH_CELL_TIMEOUT` overrides it.
CELL_TIMEOUT_S = 1800.0

#: While a notebook runs, its executed copy is written at most this often (and always once
#: it ends, however it ends), so a hung cell can still be looked at from outside.
SAVE_EVERY_S = 10.0


@dataclass
class NotebookRun:
    """One executed notebook."""

    name: str
    executed: Path
    seconds: float
    error: NotebookRunError | None = None
    html: Path | None = None
    #: The results tables it added rows to (its headline figures come from them).
    tables: list[str] = field(default_factory=list)


@dataclass
class Report:
    """A finished report: where it is and how each notebook went."""

    run_id: str
    directory: Path
    index: Path
    runs: list[NotebookRun] = field(default_factory=list)
    #: With `compare_to`: the run compared with, and the table (see `workbench.compare.compare_rows`).
    baseline: str | None = None
    comparison: Any = None

    @property
    def failed(self) -> list[NotebookRun]:
        return [run for run in self.runs if run.error is not None]

    @property
    def regressions(self) -> Any:
        """Headline figures slower than the baseline's with evidence (empty without a comparison)."""
        from workbench.compare import regressions

        return regressions(self.comparison) if self.comparison is not None else []


def notebooks_dir() -> Path:
    """The project's `notebooks/` folder."""
    return project_root() / "notebooks"


def notebook_paths(names: Iterable[str] | None = None) -> list[Path]:
    """Notebooks in run order (`NN_name.ipynb`), all of them or the ones named."""
    available = sorted(notebooks_dir().glob("[0-9][0-9]_*.ipynb"))
    if not names:
        return available
    by_name = {p.stem: p for p in available}
    chosen = []
    for name in names:
        stem = Path(name).stem
        if stem not in by_name:
            raise ConfigError(None, None, f"no notebook {name!r}; available: {sorted(by_name)}")
        chosen.append(by_name[stem])
    return chosen


def read_parameters(path: Path | None) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Defaults for every notebook and per-notebook parameters from a YAML file."""
    if path is None:
        return {}, {}
    try:
        data = yaml.safe_load(Path(path).read_text()) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(path, None, f"cannot read parameters: {exc}") from None
    unknown = set(data) - {"defaults", "notebooks"}
    if unknown:
        raise ConfigError(path, sorted(unknown)[0], "unknown section; expected 'defaults' and 'notebooks'")
    return dict(data.get("defaults") or {}), {k: dict(v or {}) for k, v in (data.get("notebooks") or {}).items()}


def ensure_kernel() -> str:
    """Install the `workbench` Jupyter kernel into this environment if it is missing."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec(KERNEL_NAME)
    except NoSuchKernel:
        from ipykernel.kernelspec import install

        install(kernel_name=KERNEL_NAME, display_name="Python (workbench)", prefix=sys.prefix)
    return KERNEL_NAME


def _run_notebooks(
    profile: Profile,
    paths: list[Path],
    parameters: tuple[dict[str, Any], dict[str, dict[str, Any]], Mapping[str, Any]],
    run_id: str,
    output_dir: Path | None,
    progress: Callable[[NotebookRun], None] | None,
) -> Report:
    """Execute `paths` with papermill and write the HTML report (see `run_report`)."""
    defaults, per_notebook, overrides = parameters
    directory = output_dir or profile.path(profile.reports_dir) / run_id
    (directory / "executed").mkdir(parents=True, exist_ok=True)
    kernel = ensure_kernel()
    report = Report(run_id=run_id, directory=directory, index=directory / "index.html")
    # What the kernels are told (their environment, not this process's): the profile and the run.
    told = {"WORKBENCH_PROFILE": str(profile.source or profile.name), RUN_ID_ENV: run_id}
    for path in paths:
        params = {**defaults, **per_notebook.get(path.stem, {}), **overrides}
        before = run_rows(run_id, profile)
        run = _execute(path, directory / "executed" / path.name, params, kernel, _cell_timeout(), told)
        after = run_rows(run_id, profile)
        run.tables = [table for table, count in after.items() if count > before.get(table, 0)]
        _slim(run.executed, directory)
        run.html = _to_html(run.executed, directory / f"{path.stem}.html")
        report.runs.append(run)
        if progress is not None:
            progress(run)
    _write_index(report, profile)
    return report


def run_report(
    profile: Profile | str | None = None,
    *,
    notebooks: Iterable[str] | None = None,
    parameters_file: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    output_dir: Path | None = None,
    progress: Callable[[NotebookRun], None] | None = None,
    compare_to: str | None = None,
) -> Report:
    """Execute notebooks with papermill, write an HTML report, and catalogue the run.

    Args:
        profile: the profile the notebooks run against (passed on through the environment).
        notebooks: names to run (default: all `notebooks/NN_*.ipynb`).
        parameters_file: YAML with `defaults` and per-notebook `notebooks` parameters.
        overrides: parameters given to every notebook, on top of the file's.
        output_dir: where to write (default: `<reports_dir>/<run id>/`).
        progress: called with each notebook's outcome as soon as it has run.
        compare_to: `"last"` (the previous report run of this profile) or a run id: its
            result rows are compared with this run's, and the table added to the index page.

    Returns:
        The report. Check `report.failed`; the CLI exits non-zero when it is not empty.
        `report.regressions` lists headline figures slower with evidence than `compare_to`'s.
        The run is in the catalogue (`workbench runs`) as `ok`, or `failed` with the
        failed notebooks named.
    """
    from workbench import catalog

    profile = profile if isinstance(profile, Profile) else load_profile(profile)
    paths = notebook_paths(notebooks)
    defaults, per_notebook = read_parameters(parameters_file)
    asked = {"defaults": defaults, "notebooks": per_notebook, "overrides": dict(overrides or {})}
    run_id = dt.datetime.now(dt.UTC).strftime("%Y%m%d-%H%M%S")
    names = ",".join(p.stem for p in paths)
    with catalog.track("report", names, profile, asked, run_id=run_id) as entry:
        report = _run_notebooks(
            profile, paths, (defaults, per_notebook, asked["overrides"]), run_id, output_dir, progress
        )
        entry.output = str(report.index)
        if compare_to is not None:
            _add_comparison(report, profile, compare_to)
        if report.failed:
            entry.status = "failed"
            entry.error = "; ".join(f"{r.name}: {r.error.ename}: {r.error.evalue}" for r in report.failed if r.error)
    return report


def _add_comparison(report: Report, profile: Profile, compare_to: str) -> None:
    """Compare the run's rows with a baseline's and add the table to the index page.

    Nothing to compare (no baseline yet, no common point) is said on the page, not raised:
    the first scheduled run has no predecessor and must still produce its report.
    """

    from workbench import catalog
    from workbench.compare import compare_runs, comparison_html
    from workbench.frontpage import COMPARISON_SLOT

    try:
        baseline = catalog.previous_run(profile, before=report.run_id) if compare_to == "last" else compare_to
        report.baseline = baseline
        report.comparison = compare_runs(baseline, report.run_id, profile=profile)
        section = comparison_html(report.comparison, baseline, report.run_id)
    except ConfigError as exc:
        section = f"<h2>Comparison</h2><p class='meta'>no comparison: {html.escape(str(exc))}</p>"
    page = report.index.read_text()
    report.index.write_text(page.replace(COMPARISON_SLOT, section, 1))  # after the conclusions


def _cell_timeout() -> float:
    return environment().cell_timeout_s or CELL_TIMEOUT_S


def _execute(
    path: Path, output: Path, parameters: dict[str, Any], kernel: str, cell_timeout: float, env: Mapping[str, str]
) -> NotebookRun:
    import papermill
    from papermill.exceptions import PapermillExecutionError

    # When a kernel exits under load, a zmq stream of its client can close with a callback
    # still pending, and tornado or asyncio log that as a traceback on stderr. The notebook's
    # outcome is already known (a dead kernel is caught below), so those lines say nothing to a user.
    for noisy in ("tornado", "asyncio"):
        logging.getLogger(noisy).setLevel(logging.CRITICAL)
    # nbclient logs a cell's timeout before raising it; the run reports it as the notebook's failure.
    logging.getLogger("traitlets").addFilter(_not_a_timeout)
    started = time.perf_counter()
    error = None
    sockets = tempfile.mkdtemp(prefix="wb-kernel-")  # short: Unix socket paths are limited
    kernel_log = output.with_suffix(".kernel.log")
    try:
        papermill.execute_notebook(
            str(path),
            str(output),
            parameters=parameters,
            kernel_name=kernel,
            language="python",
            cwd=str(path.parent),
            progress_bar=False,
            log_output=False,
            execution_timeout=cell_timeout,
            kernel_manager_class=_ipc_kernel_manager(Path(sockets), kernel_log, env),
            engine_name=_report_engine(),
        )
    except PapermillExecutionError as exc:  # a cell raised: papermill kept the executed copy
        error = NotebookRunError(path.stem, exc.ename, exc.evalue, output)
    except Exception as exc:  # the notebook could not run at all (bad file, kernel died)
        said = _last_words(kernel_log)
        evalue = f"{exc}; the kernel's last lines: {said}" if said else str(exc)
        error = NotebookRunError(path.stem, type(exc).__name__, evalue, output)
    finally:
        shutil.rmtree(sockets, ignore_errors=True)
        if kernel_log.exists() and _says_nothing(kernel_log, failed=error is not None):
            kernel_log.unlink()
    return NotebookRun(path.stem, output, time.perf_counter() - started, error)


#: What a kernel prints when it is stopped at the end of a run that went well: on a busy
#: machine it may not answer the shutdown request in time and is interrupted first.
_SHUTDOWN_NOISE = ("KeyboardInterrupt caught in kernel",)


def _says_nothing(kernel_log: Path, *, failed: bool) -> bool:
    """An empty kernel log, or one of a run that went well holding only shutdown noise."""
    lines = [line for line in kernel_log.read_text(errors="replace").splitlines() if line.strip()]
    return not lines or (not failed and all(any(n in line for n in _SHUTDOWN_NOISE) for line in lines))


def _not_a_timeout(record: logging.LogRecord) -> bool:
    return not record.getMessage().startswith("Timeout waiting for execute reply")


@functools.cache
def _report_engine() -> str:
    """papermill's nbclient engine, writing the executed copy at most every `SAVE_EVERY_S`.

    papermill writes the whole notebook before and after every cell. A notebook's first
    figure carries plotly.js (4.8 MB) until `_slim` takes it out, so each write encoded
    megabytes of JSON: measured, half of the report process's CPU for notebook 02 (4.8 s
    of CPU with a write per cell, 2.7 s with one every 10 s). papermill still writes the
    final copy, on success, on a failing cell and when the kernel dies or a cell times out.
    """
    from papermill.engines import NBClientEngine, NotebookExecutionManager, papermill_engines

    class ThrottledSaves(NotebookExecutionManager):  # type: ignore[misc]
        def save(self, **kwargs: Any) -> None:
            ended = self.end_time is not None
            if ended or (self.now() - self.last_save_time).total_seconds() >= SAVE_EVERY_S:
                super().save(**kwargs)

    class ThrottledEngine(NBClientEngine):  # type: ignore[misc]
        """`Engine.execute_notebook` with `ThrottledSaves` for papermill's own manager."""

        @classmethod
        def execute_notebook(
            cls,
            nb: Any,
            kernel_name: str,
            output_path: str | None = None,
            progress_bar: bool = True,
            log_output: bool = False,
            autosave_cell_every: int = 30,
            **kwargs: Any,
        ) -> Any:
            manager = ThrottledSaves(
                nb,
                output_path=output_path,
                progress_bar=progress_bar,
                log_output=log_output,
                autosave_cell_every=autosave_cell_every,
            )
            manager.notebook_start()
            try:
                cls.execute_managed_notebook(manager, kernel_name, log_output=log_output, **kwargs)
            finally:
                manager.cleanup_pbar()
                manager.notebook_complete()
            return manager.nb

    papermill_engines.register("workbench-throttled-saves", ThrottledEngine)  # once per process (cached)
    return "workbench-throttled-saves"


def _ipc_kernel_manager(socket_dir: Path, log_path: Path, env: Mapping[str, str]) -> type:
    """A kernel manager that talks to its kernel over Unix sockets in a private folder,
    starts it with `env` added to its environment, and writes the kernel process's own
    output to `log_path`.

    A report's kernel is always local: Unix sockets (folder mode 0700) need no TCP port
    and carry nothing another user of the machine could read. What the kernel process
    itself prints (not a cell's output, which the notebook keeps) is for a log, not the
    user's terminal: when a cell times out, the kernel is stopped mid-cell and prints a
    traceback on its way out.
    """
    from jupyter_client.manager import AsyncKernelManager

    class LocalIPCKernelManager(AsyncKernelManager):
        def __init__(self, **kwargs: Any) -> None:
            super().__init__(**kwargs)
            self.transport = "ipc"
            self.ip = str(socket_dir / "kernel")
            self.stopping = False  # set when the run stops the kernel: any other end is a death

        async def _async_launch_kernel(self, kernel_cmd: list[str], **kw: Any) -> None:
            told = {**(kw.get("env") or os.environ), **env}
            with log_path.open("ab") as log:  # the kernel keeps its own copy of the descriptor
                command = [*kernel_cmd, _FAULT_HANDLER]
                await super()._async_launch_kernel(command, **{"stdout": log, "stderr": log, **kw, "env": told})

        async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:  # type: ignore[override]
            self.stopping = True
            await super().shutdown_kernel(now=now, restart=restart)

        async def cleanup_resources(self, restart: bool = False) -> None:  # type: ignore[override]
            # A kernel gone before the run stopped it died: how it ended goes in its log.
            process = getattr(self.provisioner, "process", None)
            code = process.poll() if process is not None else None
            if code is not None and not self.stopping:
                with log_path.open("a") as log:
                    log.write(f"{_DIED_LINE}: {_exit_reason(code)}\n")
            await super().cleanup_resources(restart=restart)

    return LocalIPCKernelManager


#: A kernel option that turns on faulthandler once the kernel has taken over its output: a
#: native crash (librdkafka, a C extension) then writes every thread's Python stack to the
#: kernel's log, which `_last_words` reads ("Kernel died" alone names no cause). It writes to
#: the kernel's original stderr: ipykernel points file descriptor 2 at a pipe that its own
#: thread forwards to the notebook, and that thread dies with the process (under pytest it
#: does not, and there is no copy).
_FAULT_HANDLER = (
    "--IPKernelApp.exec_lines=__import__('faulthandler').enable("
    "getattr(__import__('sys').stderr, '_original_stdstream_copy', None) or 2, all_threads=True)"
)

#: The line a report writes in a kernel's log when the kernel ended before the run stopped it.
_DIED_LINE = "the kernel process ended on its own"


def _exit_reason(code: int) -> str:
    """A process's exit status in words: a negative status is the signal that ended it, and
    SIGKILL from outside is what Linux's out-of-memory killer sends."""
    if code >= 0:
        return f"exit status {code}"
    name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
    hint = " (out of memory, or killed from outside)" if -code == signal.SIGKILL else ""
    return f"killed by {name}{hint}"


def _last_words(kernel_log: Path, lines: int = 4) -> str:
    """The last lines a kernel wrote to its own output (a native library's assertion, how it
    ended), for a failure papermill can only call "Kernel died".

    After a native crash the log holds faulthandler's dump of every thread's stack; then
    the words are its first line ("Fatal Python error: Segmentation fault"), the crashing
    thread's innermost frames (where the crash was) and how the process ended.
    """
    if not kernel_log.exists():
        return ""
    said = [line.strip() for line in kernel_log.read_text(errors="replace").splitlines() if line.strip()]
    fatal = next((i for i, line in enumerate(said) if line.startswith("Fatal Python error")), None)
    if fatal is None:
        return " | ".join(said[-lines:])
    current = next((i for i in range(fatal, len(said)) if said[i].startswith("Current thread")), len(said))
    stack = itertools.takewhile(lambda line: line.startswith(("File ", "<no Python frame>")), said[current + 1 :])
    frames = [_FRAME.sub(r"\3 (\1:\2)", line) for line in itertools.islice(stack, _CRASH_FRAMES)]
    return " | ".join([said[fatal], *frames, *[line for line in said[fatal:] if line.startswith(_DIED_LINE)]])


#: How many of the crashing thread's innermost frames a native crash's failure line names.
_CRASH_FRAMES = 3


#: A frame of faulthandler's dump, `File "/…/ctypes/__init__.py", line 519 in string_at`, which
#: `_last_words` shortens to `string_at (ctypes/__init__.py:519)`.
_FRAME = re.compile(r'File ".*?([^/]+/[^/]+)", line (\d+) in (.+)')


#: The one copy of plotly.js a report's pages load, beside index.html.
PLOTLYJS = "plotly.min.js"


def _slim(executed: Path, directory: Path) -> None:
    """Take plotly.js out of an executed notebook: its pages load one shared copy.

    The notebook renderer embeds the whole library (4.8 MB) in each notebook's first
    figure, so ten notebooks made a 100 MB report (each copy twice: notebook and HTML).
    The executed copy now points at `../plotly.min.js` and its HTML page at
    `plotly.min.js`, written once per report; the report still opens offline.

    Saved widget state goes too: a live `FigureWidget` carries its own 5 MB plotly
    bundle, and a report has no kernel to drive a widget; the notebooks draw a static
    figure of what a live chart showed.
    """
    import nbformat
    from plotly.offline import get_plotlyjs

    if not executed.exists():
        return
    bundle = get_plotlyjs()
    notebook = nbformat.read(executed, as_version=4)
    replaced = notebook.metadata.pop("widgets", None) is not None
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/html")
            if isinstance(text, str) and bundle in text:
                tag = f'<script src="../{PLOTLYJS}"></script>\n<script>'
                output["data"]["text/html"] = text.replace(f"<script>{bundle}", tag).replace(bundle, "")
                shared = directory / PLOTLYJS
                if not shared.exists():
                    shared.write_text(bundle)
                replaced = True
    if replaced:
        nbformat.write(notebook, executed)


def _to_html(executed: Path, target: Path) -> Path | None:
    import nbformat
    from nbconvert import HTMLExporter

    if not executed.exists():
        return None
    exporter = HTMLExporter(template_name="lab")
    body, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    # The executed copy lives in executed/; its page sits beside the shared plotly.js.
    target.write_text(body.replace(f'<script src="../{PLOTLYJS}">', f'<script src="{PLOTLYJS}">'))
    return target


def _write_index(report: Report, profile: Profile) -> None:
    """The front page (`workbench.frontpage.index_page`), and plotly.js beside it when it draws trends."""
    from workbench.frontpage import index_page

    page, trends = index_page(report.runs, report.run_id, profile, plotlyjs=PLOTLYJS)
    if trends:
        _write_plotlyjs(report.directory)
    report.index.write_text(page)


def _write_plotlyjs(directory: Path) -> None:
    from plotly.offline import get_plotlyjs

    shared = directory / PLOTLYJS
    if not shared.exists():
        shared.write_text(get_plotlyjs())

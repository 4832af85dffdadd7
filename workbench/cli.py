"""The `workbench` command: the stack's lifecycle, reports, JupyterLab.

Every command takes `--profile` (or `$WORKBENCH_PROFILE`). Errors the workbench
expects are printed as one line on stderr with exit status 1; nothing prints a stack
trace at a user.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Column, Table
from typer.core import TyperGroup

from workbench.errors import WorkbenchError
from workbench.output import OutputFormat, print_table, write_record, write_records


class _Commands(TyperGroup):
    """The command group: the workbench's own errors become one line on stderr and exit status 1.

    Done here rather than around `app()` in `main`, so that a command run in process (typer's
    `CliRunner`, as the tests run it) answers exactly as a shell sees it.
    """

    def invoke(self, ctx: Any) -> Any:  # typer's vendored click.Context has no public name
        _fit_consoles()
        try:
            return super().invoke(ctx)
        except WorkbenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            raise typer.Exit(1) from None


app = typer.Typer(
    cls=_Commands,
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measure Kafka, REST proxy and Spark ingestion choices on your own stack.",
)
out = Console()
#: Notes beside machine-readable output: with `--format json|csv`, stdout holds the rows alone.
notes = Console(stderr=True)


def _fit_consoles() -> None:
    """Take `COLUMNS` as each command starts: a console reads it once, when it is made (at
    import), and a command run in process later (the tests' `CliRunner`) would lay its
    tables out for the width of that moment instead (80 where nothing was set)."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        out.width = notes.width = int(columns)


ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", "-p", help="profile in conf/ or a YAML path [env: WORKBENCH_PROFILE]"),
]
FormatOption = Annotated[
    OutputFormat,
    typer.Option("--format", "-f", help="table for people; json or csv for scripts (the rows alone on stdout)"),
]


def _select(profile: str | None) -> str | None:
    """Export the profile choice, so notebooks and child processes see the same one."""
    if profile:
        os.environ["WORKBENCH_PROFILE"] = profile
    return profile


@app.command()
def up(
    profile: ProfileOption = None,
    warm_up: Annotated[
        bool, typer.Option("--warm-up/--no-warm-up", help="put broker.warm_up_s of load on a new broker first")
    ] = True,
) -> None:
    """Start the embedded stack (or report the one already running), warmed before it reports ready."""
    from workbench import stack

    running = stack.up(_select(profile))
    verb = "started" if running.started_here else "already running"
    for name, record in running.services.items():
        out.print(f"{name}: {verb} on {record.url or record.address} (pid {record.pid})")
    if not running.profile.embedded:
        out.print(f"profile {running.profile.name!r} is not embedded: nothing to start")
    elif warm_up:
        _warm(running)


def _warm(running: Any) -> Any:
    """A cold embedded broker warmed with the profile's `broker.warm_up_s` of load, said in one line."""
    from workbench.bench.warmup import warm_stack
    from workbench.stack.warmth import broker_warmth

    if broker_warmth(running) != "cold" or running.profile.broker.warm_up_s <= 0:
        return running
    out.print(f"warming the broker: {running.profile.broker.warm_up_s:g} s of load (broker.warm_up_s)")
    return warm_stack(running)


@app.command()
def down(profile: ProfileOption = None) -> None:
    """Stop the processes `up` started; the broker's data is wiped unless `broker.keep_data` is set."""
    from workbench import stack

    stopped = stack.down(_select(profile))
    if not stopped:
        out.print("nothing was running")
    for record in stopped:
        out.print(f"{record.name}: stopped (pid {record.pid})")
    fates = {stack.data_fate(r, stopped=True) for r in stopped if r.kind == "broker"}
    for fate in sorted(fates):
        out.print(f"the broker's data: {fate}")


@app.command()
def status(
    profile: ProfileOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON for scripts")] = False,
) -> None:
    """Each service's address, PID and health."""
    from workbench import stack

    result = stack.status(_select(profile))
    if as_json:
        print(json.dumps(result, indent=2))
        return
    if not result["services"]:
        out.print(f"profile {result['profile']!r}: not running (start it with `workbench up`)")
        return
    headers = (Column(header, no_wrap=header in STATUS_ONE_LINE) for header, _ in STATUS_COLUMNS)
    table = Table(*headers, title=f"profile {result['profile']}")
    for name, row in result["services"].items():
        table.add_row(*(cell(name, row) for _, cell in STATUS_COLUMNS))
    print_table(out, table)
    fates = {row["data"] for row in result["services"].values() if row.get("data")}
    for fate in sorted(fates):
        out.print(f"the broker's data: {fate}")


#: The columns of `workbench status`: a header and how to render a service's row; a new
#: per-service field (restarts, say) is one more entry.
STATUS_COLUMNS: list[tuple[str, Callable[[str, dict[str, Any]], str]]] = [
    ("service", lambda name, row: name),
    ("address", lambda name, row: str(row.get("url") or row["address"])),
    ("pid", lambda name, row: str(row.get("pid") or "-")),
    ("runs", lambda name, row: " ".join(str(row[k]) for k in ("broker", "version") if row.get(k))),
    ("healthy", lambda name, row: "yes" if row["healthy"] else "NO"),
    ("restarts", lambda name, row: "-" if row.get("restarts") is None else str(row["restarts"])),
    ("reason", lambda name, row: str(row.get("reason") or "")),
]
#: Columns whose cells stay on one line at any width (a broker's kind and version read as one).
STATUS_ONE_LINE = ("runs",)


@app.command()
def jars(profile: ProfileOption = None) -> None:
    """Resolve, or check, the jars the profile needs: its embedded broker's and Spark's Kafka connector."""
    from workbench.config import load_profile
    from workbench.maven import cache_dir
    from workbench.stack.kafka import kafka_classpath
    from workbench.streaming.connector import connector_jars, installed_spark_version

    chosen = load_profile(_select(profile))
    if chosen.embedded and chosen.broker.kind == "kafka":
        classpath, version = kafka_classpath(chosen)
        where = classpath[0] if len(classpath) == 1 else f"{len(classpath)} jars in {cache_dir() / 'jars'}"
        out.print(f"Apache Kafka {version}: {where}")
    else:
        out.print(f"profile {chosen.name!r} runs no Kafka of its own: no broker jars to resolve")
    if chosen.spark.connector == "workbench":
        out.print(f"profile {chosen.name!r} reads Kafka with the workbench's source: no connector jars to resolve")
        return
    connector = connector_jars()
    out.print(f"Spark {installed_spark_version()}'s Kafka connector: {len(connector)} jars in {connector[0].parent}")


@app.command()
def report(
    profile: ProfileOption = None,
    notebook: Annotated[list[str] | None, typer.Option("--notebook", "-n", help="run only these")] = None,
    params: Annotated[Path | None, typer.Option("--params", help="YAML: defaults + per-notebook parameters")] = None,
    quick: Annotated[bool, typer.Option("--quick", help="small sizes (quick=True)")] = False,
    output: Annotated[Path | None, typer.Option("--output", help="report folder")] = None,
    compare_to: Annotated[
        str | None, typer.Option("--compare-to", help="`last` or a run id: add a comparison with it")
    ] = None,
    fail_on_regression: Annotated[
        bool, typer.Option("--fail-on-regression", help="exit 1 when a headline figure is slower with evidence")
    ] = False,
) -> None:
    """Execute the notebooks with papermill and write an HTML report."""
    if fail_on_regression and compare_to is None:
        raise WorkbenchError("--fail-on-regression needs --compare-to last (or a run id) to compare with")
    _run_report(
        _select(profile),
        notebook,
        params,
        {"quick": True} if quick else {},
        output,
        compare_to=compare_to,
        fail_on_regression=fail_on_regression,
    )


@app.command()
def demo(
    profile: ProfileOption = None,
    quick: Annotated[bool, typer.Option("--quick", help="small sizes (quick=True)")] = False,
) -> None:
    """The main job: start the stack, run every notebook, write the report, stop the stack."""
    from workbench import stack

    with stack.running(_select(profile)) as running:
        out.print(f"stack up: broker {running.bootstrap_servers}")
        _warm(running)
        _run_report(profile, None, None, {"quick": True} if quick else {}, None)


@app.command()
def lab(profile: ProfileOption = None) -> None:
    """Start the stack and JupyterLab on notebooks/ with the workbench kernel."""
    from workbench import stack
    from workbench.report import ensure_kernel, notebooks_dir

    ensure_kernel()
    with stack.running(_select(profile)) as running:
        _warm(running)
        out.print(f"stack up: broker {running.bootstrap_servers}; Ctrl-C stops JupyterLab")
        command = [sys.executable, "-m", "jupyterlab", f"--notebook-dir={notebooks_dir()}"]
        if os.geteuid() == 0:  # containers and CI machines run as root; JupyterLab refuses without this
            command.append("--allow-root")
        with contextlib.suppress(KeyboardInterrupt):  # Ctrl-C ends JupyterLab; the stack then stops
            subprocess.run(command, check=False)


@app.command()
def proxy(
    config: Annotated[Path, typer.Option("--config", "-c", help="kafka-rest.properties file")] = Path(
        "conf/kafka-rest.properties"
    ),
    port: Annotated[int | None, typer.Option("--port", help="overrides `listeners`")] = None,
    host: Annotated[str | None, typer.Option("--host", help="overrides `listeners`")] = None,
    bootstrap_servers: Annotated[
        str | None, typer.Option("--bootstrap-servers", help="overrides `bootstrap.servers`")
    ] = None,
) -> None:
    """Run one REST proxy process (Confluent REST Proxy API v2 + v3) in the foreground."""
    from workbench.restproxy import serve

    serve(config, host=host, port=port, bootstrap_servers=bootstrap_servers)


@app.command()
def bench(
    experiment: Annotated[str | None, typer.Argument(help="experiment name; `--list` shows them")] = None,
    profile: ProfileOption = None,
    param: Annotated[list[str] | None, typer.Option("--param", help="k=v, repeatable")] = None,
    grid: Annotated[Path | None, typer.Option("--grid", help="YAML: parameter -> list of values")] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="runs per grid point")] = 1,
    warm_up: Annotated[
        int, typer.Option("--warm-up", min=0, max=10, help="unrecorded runs of the first point before measuring")
    ] = 1,
    list_: Annotated[bool, typer.Option("--list", help="list the experiments and their parameters")] = False,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Run a benchmark experiment (one point or a grid) and print its results table."""
    from workbench.bench.command import list_experiments, run_bench_command

    if list_:
        list_experiments(fmt)
        return
    if experiment is None:
        raise WorkbenchError("name an experiment: `workbench bench --list` shows them")
    run_bench_command(
        experiment,
        params=param or [],
        grid=grid,
        repeat=repeat,
        profile=_select(profile),
        fmt=fmt,
        warm_up_runs=warm_up,
    )


@app.command(name="compare")
def compare_command(
    a: Annotated[str, typer.Argument(help="baseline: a run id (`workbench runs`) or a results file")],
    b: Annotated[str, typer.Argument(help="the run to judge against it: a run id or a results file")],
    profile: ProfileOption = None,
    experiment: Annotated[str | None, typer.Option("--experiment", "-e", help="only this experiment")] = None,
    metric: Annotated[list[str] | None, typer.Option("--metric", "-m", help="only these metrics")] = None,
    ignore: Annotated[
        list[str] | None, typer.Option("--ignore", help="a parameter A and B set differently (linger.ms)")
    ] = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Is B faster, slower or not measurably different from A? Per point and metric, with a rank test."""
    from workbench.compare import compare_runs, comparison_table
    from workbench.config import load_profile

    selected = load_profile(_select(profile))
    table = compare_runs(a, b, experiment=experiment, metrics=metric or None, ignore=ignore or (), profile=selected)
    rule = f"rule: {table.attrs['thresholds']}"
    if fmt is not OutputFormat.TABLE:
        write_records(table, fmt, sys.stdout)
        notes.print(rule, markup=False, highlight=False)
        return
    print_table(out, comparison_table(table, a, b))
    out.print(rule, markup=False, highlight=False)


@app.command(name="course")
def course_command(
    files: Annotated[
        list[Path] | None, typer.Argument(help="progress files collected from learners (course_progress.parquet)")
    ] = None,
    profile: ProfileOption = None,
    learner: Annotated[str | None, typer.Option("--learner", "-l", help="only this learner")] = None,
) -> None:
    """What each learner passed, per exercise: `workbench course [collected.parquet ...]`."""
    from rich.text import Text

    from workbench.config import load_profile
    from workbench.course import EXPERIMENT, load_progress, progress_table

    selected = load_profile(_select(profile))
    table = progress_table(load_progress(selected, files or ()), learner)
    view = Table("exercise", "title", title=f"Course progress ({len(table.columns)} learner(s))")
    for name in table.columns:
        view.add_column(name, no_wrap=True)
    for (label, title), row in table.iterrows():
        view.add_row(label, title, *(Text(str(cell)) for cell in row.tolist()))  # "[solution]" is no markup
    out.print(view)
    if not len(table.columns):
        where = selected.path(selected.results_dir) / f"{EXPERIMENT}.parquet"
        who = f" for {learner!r}" if learner else ""
        out.print(f"no checks recorded{who} in {where}: run a notebook's exercises", markup=False, highlight=False)
    for name in table.columns:
        passed = int(table[name].str.startswith("pass").sum())
        out.print(f"{name}: {passed} of {len(table)} exercises passed", markup=False, highlight=False)


runs_app = typer.Typer(help="The run catalogue: every report and bench run with its facts.")
app.add_typer(runs_app, name="runs")


@runs_app.callback(invoke_without_command=True)
def runs(
    ctx: typer.Context,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="only this profile's runs")] = None,
    notebook: Annotated[
        str | None, typer.Option("--notebook", "-n", help="only runs of this notebook or experiment")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="only runs started on or after this date (2026-11-23, UTC)")
    ] = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """List catalogued runs, oldest first: `workbench runs [--profile P] [--notebook N] [--since DATE]`."""
    from workbench import catalog
    from workbench.config import load_profile

    if ctx.invoked_subcommand is not None:
        return
    selected = load_profile(_select(profile))
    frame = catalog.runs(selected, profile_name=profile and selected.name, notebook=notebook, since=since)
    if frame.empty:  # a note, beside an empty list for a script
        console = out if fmt is OutputFormat.TABLE else notes
        console.print(f"no catalogued runs in {catalog.catalog_path(selected)}", markup=False, highlight=False)
    if fmt is not OutputFormat.TABLE:
        write_records(frame, fmt, sys.stdout)
        return
    if frame.empty:
        return
    table = Table(
        "run id",
        "kind",
        "name",
        "started (UTC)",
        "seconds",
        "status",
        "profile",
        "git",
        "load avg",
        title=f"{len(frame)} run(s) in {catalog.catalog_path(selected)}",
    )
    for _, row in frame.iterrows():
        seconds = (row["ended_at"] - row["started_at"]).total_seconds() if row["ended_at"] is not None else None
        table.add_row(
            str(row["run_id"]),
            row["kind"],
            row["name"],
            f"{row['started_at']:%Y-%m-%d %H:%M:%S}",
            "-" if seconds is None or seconds != seconds else f"{seconds:,.1f}",
            row["status"],
            row["profile"],
            row["git_revision"],
            f"{row['load_avg_1m']:.2f}",
        )
    print_table(out, table)


@runs_app.command("show")
def runs_show(
    run_id: Annotated[str, typer.Argument(help="a run id, or a unique start of one")],
    profile: ProfileOption = None,
    fmt: FormatOption = OutputFormat.TABLE,
) -> None:
    """Every fact of one catalogued run."""
    from workbench import catalog
    from workbench.config import load_profile

    entry = catalog.show(run_id, load_profile(_select(profile)))
    if fmt is not OutputFormat.TABLE:
        write_record(entry, fmt, sys.stdout)
        return
    width = max(len(key) for key in entry)
    for key, value in entry.items():
        print(f"{key:<{width}}  {'' if value is None else value}")


def _run_report(
    profile: str | None,
    notebooks: list[str] | None,
    params: Path | None,
    overrides: dict[str, Any],
    output: Path | None,
    *,
    compare_to: str | None = None,
    fail_on_regression: bool = False,
) -> None:
    from workbench.report import NotebookRun, run_report

    def finished(run: NotebookRun) -> None:
        state = "ok" if run.error is None else f"FAILED ({run.error})"
        out.print(f"{run.name}: {state} in {run.seconds:.1f} s", markup=False, highlight=False)

    result = run_report(
        profile,
        notebooks=notebooks,
        parameters_file=params,
        overrides=overrides,
        output_dir=output,
        progress=finished,
        compare_to=compare_to,
    )
    print(f"report: {result.index}")
    if result.failed:
        raise WorkbenchError(f"{len(result.failed)} notebook(s) failed; see {result.index}")
    slower = result.regressions
    if fail_on_regression and len(slower):
        named = ", ".join(f"{r['point']} {r['metric']} x{r['ratio']:.2f}" for _, r in slower.iterrows())
        raise WorkbenchError(f"slower than run {result.baseline} with evidence: {named}; see {result.index}")


def main() -> None:
    """Entry point: run the app (its command group turns the workbench's own errors into one line)."""
    try:
        app()
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()

"""An ipywidgets panel that reruns a short experiment point and redraws its chart.

For interactive exploration in JupyterLab: sliders and dropdowns for the main knobs,
a Run button, the new point's figure and its row underneath. Every run appends to a
history, so the chart compares the points tried so far.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

__all__ = ["control", "panel", "partition_calculator"]


def control(name: str, choices: Sequence[Any] | bool) -> Any:
    """A widget for one knob: a checkbox for a bool, a dropdown for strings, a slider for numbers."""
    import ipywidgets as w

    if isinstance(choices, bool):
        return w.Checkbox(value=choices, description=name)
    options = list(choices)
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in options):
        return w.SelectionSlider(
            options=options,
            value=options[0],
            description=name,
            continuous_update=False,
            style={"description_width": "initial"},
        )
    return w.Dropdown(options=options, value=options[0], description=name, style={"description_width": "initial"})


def panel(
    run: Callable[..., Mapping[str, Any]],
    knobs: Mapping[str, Sequence[Any] | bool],
    draw: Callable[[pd.DataFrame], Any],
    *,
    columns: Sequence[str] = ("msg_s", "mb_s", "latency_p50_ms", "latency_p99_ms"),
) -> Any:
    """A panel of knobs + Run button; each click runs `run(**knob values)` and redraws.

    Args:
        run: runs one short point and returns its row (e.g. a `functools.partial` of a
            bench generator with the stack and a small record count bound).
        knobs: knob name → choices (a list gives a slider or dropdown, a bool a checkbox).
        draw: builds a figure from the history of rows so far.
        columns: the row's columns shown under the chart.

    Returns:
        An `ipywidgets.VBox`; display it as a cell's last expression.

    Usage:
        panel(partial(proxy_produce, stack, records=5_000), {"records_per_call": [1, 10, 100]},
              lambda rows: viz.throughput_vs(rows, "records_per_call"))
    """
    import ipywidgets as w
    from IPython.display import display

    controls = {name: control(name, choices) for name, choices in knobs.items()}
    button = w.Button(description="Run", button_style="primary", icon="play")
    status = w.Label("")
    output = w.Output()
    history: list[Mapping[str, Any]] = []

    def on_click(_: Any) -> None:
        button.disabled = True
        status.value = "running…"
        try:
            row = run(**{name: c.value for name, c in controls.items()})
            history.append(row)
            frame = pd.DataFrame(history)
            with output:
                output.clear_output(wait=True)
                display(draw(frame))
                display(_recent_runs(frame, [*controls, *[c for c in columns if c in frame.columns]]))
            status.value = f"{len(history)} run(s)"
        except Exception as exc:
            status.value = f"failed: {exc}"  # said in the panel, and raised to the widget log
            raise
        finally:
            button.disabled = False

    button.on_click(on_click)
    return w.VBox([w.HBox([*controls.values()]), w.HBox([button, status]), output])


def _recent_runs(frame: pd.DataFrame, names: Sequence[str], rows: int = 5) -> Any:
    """The last `rows` runs under a panel's chart, numbers written as everywhere else in the
    workbench (`workbench.numbers`: "11,373", "0.0142"), not as raw floats."""
    from workbench.numbers import format_number

    return frame[list(names)].tail(rows).style.format(format_number).hide(axis="index")


def partition_calculator(
    target: float,
    produce_per_partition: float,
    consume_per_partition: float,
    *,
    margin: float = 0.5,
    brokers: int = 3,
    replication_factor: int = 3,
    consumers: int = 0,
) -> Any:
    """Sliders over `topics.sizing.plan_text`: the partition count and its costs as they move.

    The measured per-partition rates are the starting point; the slider ranges reach twice
    them (at least 500), so a learner can ask "what if my partitions were faster?".
    """
    import ipywidgets as w
    from IPython.display import Markdown

    from workbench.topics.sizing import plan_text

    def show(
        target: float, t_p: float, t_c: float, margin: float, brokers: int, replication_factor: int, consumers: int
    ) -> Markdown:
        return Markdown(
            plan_text(
                target, t_p, t_c, margin, brokers=brokers, replication_factor=replication_factor, consumers=consumers
            )
        )

    top = max(500.0, 2 * produce_per_partition, 2 * consume_per_partition)
    return w.interactive(
        show,
        target=w.FloatSlider(value=target, min=1.0, max=max(2000.0, 2 * target), step=1.0),
        t_p=w.FloatSlider(value=round(produce_per_partition, 1), min=0.5, max=top, step=0.5),
        t_c=w.FloatSlider(value=round(consume_per_partition, 1), min=0.5, max=top, step=0.5),
        margin=w.FloatSlider(value=margin, min=0.0, max=3.0, step=0.1),
        brokers=w.IntSlider(value=brokers, min=1, max=50),
        replication_factor=w.IntSlider(value=replication_factor, min=1, max=5),
        consumers=w.IntSlider(value=consumers, min=0, max=10_000, step=10),
    )

"""What every notebook does before its first experiment, in one call.

Each notebook used to repeat the same block: make figures render both in JupyterLab and
in a papermill report, load the profile its `profile` parameter names (empty: the
environment's or `local`), and start or find its stack.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, overload

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["left_out", "notebook_setup"]


@overload
def notebook_setup(profile: str = "", *, start: Literal[True] = True) -> Stack: ...


@overload
def notebook_setup(profile: str = "", *, start: bool) -> Stack | None: ...


def notebook_setup(profile: str = "", *, start: bool = True) -> Stack | None:
    """Configure figure rendering and return the profile's stack, started if needed.

    Args:
        profile: the notebook's `profile` parameter: a name in conf/ or a YAML path;
            empty takes `$WORKBENCH_PROFILE`, else `local`.
        start: False for a notebook that can run from figures alone (returns None).

    Raises:
        ConfigError: the profile is missing or invalid (one line naming file and key).
        StackError: an embedded service did not start.

    Usage: `active = notebook_setup(profile)` in a notebook's first code cell.
    """
    from workbench import stack, viz
    from workbench.config import load_profile
    from workbench.measure.resources import freeze_startup_objects

    viz.configure_renderers()
    settings = load_profile(profile or None)
    freeze_startup_objects()  # what the notebook imported stays: keep it out of each benchmark's collections
    return stack.up(settings) if start else None


def left_out(section: str, parameter: str) -> str:
    """The line a notebook shows in place of a section its parameters leave out.

    Quick mode empties the point lists of a notebook's longest sections (a first look, and
    the tests, need its central question answered, not every one); each such section says
    so, and what to change to measure it, instead of leaving a gap or failing later.

    Usage: `display(Markdown(left_out("4", "trigger_intervals")))` when the list is empty.
    The line holds whether quick mode or the user's own parameters emptied it.
    """
    return (
        f"Section {section} is left out of this run: `{parameter}` names nothing to measure, as quick mode "
        f"sets it. Set `{parameter}` (or run without `quick`) to measure it."
    )

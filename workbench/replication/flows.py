"""A flow's connectors and tasks as a table, for a notebook or a report."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from workbench.stack.mirror_status import flow_states

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["flow_table"]


def flow_table(stack: Stack) -> pd.DataFrame:
    """Each connector and task of the flow source → target, as Connect last recorded it:
    `name`, `task` (bool), `state`, `cause` (the first line of a failure's trace). Empty
    when the target holds no status topic of that flow (MirrorMaker not running, or one
    configured with other internal topic names)."""
    states = flow_states(stack.peer_config("consumer"), stack.profile.replication.source)
    rows = [
        {
            "name": state.name,
            "task": state.is_task,
            "state": state.state,
            "cause": (state.trace or "").splitlines()[0] if state.trace else "",
        }
        for state in sorted(states.values(), key=lambda s: (s.is_task, s.name))
    ]
    return pd.DataFrame(rows, columns=["name", "task", "state", "cause"])

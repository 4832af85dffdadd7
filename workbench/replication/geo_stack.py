"""The stack a replication notebook measures: the active one when it has a second cluster,
else, on this machine, the `local-geo` profile's two clusters, started for the notebook.

A report runs every notebook on one profile, and the default one (`local`) has a single
cluster; notebook 13 then starts `local-geo` beside it (its own ports and run directory,
about half a minute), measures, and stops it again. A cluster profile without a second
cluster starts nothing here: what the user runs is theirs, and the notebook says what it
cannot measure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.config import load_profile

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["GEO_PROFILE", "release", "replicating_stack"]

#: The embedded profile with two clusters and MirrorMaker between them.
GEO_PROFILE = "local-geo"


def replicating_stack(active: Stack) -> Stack | None:
    """`active` when its profile replicates; the `local-geo` stack when `active` is embedded
    (running already, or started now); None on a cluster profile without a second cluster.

    Raises:
        StackError: the two-cluster stack did not start (the cause in one line).
    """
    from workbench.stack import attach, up

    if active.profile.replication.enabled:
        return active
    if not active.profile.embedded:
        return None
    geo = load_profile(GEO_PROFILE)
    if geo.run_dir == active.profile.run_dir:  # one run directory named for every profile: a folder in it
        geo = geo.model_copy(update={"run_dir": active.profile.path(active.profile.run_dir) / GEO_PROFILE})
    return attach(geo) or up(geo)


def release(stack: Stack | None, active: Stack) -> None:
    """Stop the two-cluster stack `replicating_stack` started for the notebook; leave any other running."""
    from workbench.stack import down

    if stack is not None and stack is not active and stack.started_here:
        down(stack.profile)

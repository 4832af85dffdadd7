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

from workbench.config import Profile, load_profile

if TYPE_CHECKING:
    from workbench.stack import Stack

__all__ = ["BOTH_WAYS_PROFILE", "GEO_PROFILE", "both_ways_stack", "profile_beside", "release", "replicating_stack"]

#: The embedded profile with two clusters and MirrorMaker between them.
GEO_PROFILE = "local-geo"
#: The same two clusters with MirrorMaker copying both ways at once.
BOTH_WAYS_PROFILE = "local-geo-2way"


def replicating_stack(active: Stack, *, both_ways: bool = False) -> Stack | None:
    """`active` when its profile replicates (`both_ways`: in both directions); else the
    `local-geo` (`local-geo-2way`) stack when `active` is embedded, running already or
    started now; None on a cluster profile without such a second cluster, or whose flow no
    run can measure (`preflight.flow_unavailable`).

    Raises:
        StackError: the two-cluster stack did not start (the cause in one line).
    """
    from workbench.replication.active_active import active_active_unavailable
    from workbench.replication.preflight import flow_unavailable
    from workbench.stack import attach, up

    if active.profile.replication.enabled and not (both_ways and active_active_unavailable(active)):
        return None if not active.profile.embedded and flow_unavailable(active) else active
    if not active.profile.embedded:
        return None
    geo = profile_beside(active, BOTH_WAYS_PROFILE if both_ways else GEO_PROFILE)
    return attach(geo) or up(geo)


def profile_beside(active: Stack, name: str) -> Profile:
    """The profile `name` as `replicating_stack` starts it beside `active`: in a folder of
    `active`'s run directory when the environment names one run directory for every profile."""
    beside = load_profile(name)
    if beside.run_dir == active.profile.run_dir:
        return beside.model_copy(update={"run_dir": active.profile.path(active.profile.run_dir) / beside.name})
    return beside


def release(stack: Stack | None, active: Stack) -> None:
    """Stop the two-cluster stack `replicating_stack` started for the notebook; leave any other running."""
    from workbench.stack import down

    if stack is not None and stack is not active and stack.started_here:
        down(stack.profile)


def both_ways_stack(active: Stack, geo: Stack | None, *, start: bool) -> tuple[Stack | None, str | None]:
    """The stack to measure both ways at once on, or None and why not, in one line: `geo`
    when it replicates both ways; else, on this machine and when `start` is allowed, the
    `local-geo-2way` stack, after `geo` is released (one pair of clusters at a time)."""
    from workbench.replication.active_active import active_active_unavailable

    if geo is not None and active_active_unavailable(geo) is None:
        return geo, None
    if not active.profile.embedded:
        return None, active_active_unavailable(geo) if geo is not None else "this profile names no second cluster"
    if not start:
        return None, (
            f"quick mode leaves this out: it would start a second pair of clusters, `{BOTH_WAYS_PROFILE}` "
            "(about 40 s); run the notebook without `quick` or with that profile"
        )
    release(geo, active)
    return replicating_stack(active, both_ways=True), None

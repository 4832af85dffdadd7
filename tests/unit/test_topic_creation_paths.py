"""Experiments create topics through `Stack.create_topics`, which applies the profile's
replication; a direct `kafka.create_topic(s)` call elsewhere would quietly create RF 1."""

from __future__ import annotations

import ast
from pathlib import Path

import workbench

#: Modules allowed to call the admin API directly: the API itself, the stack methods that
#: apply the profile (`create_topics`, `temporary_topics`) and the REST proxy (it creates
#: what its clients ask for).
ALLOWED = {"kafka/admin.py", "stack/handle.py"}
CREATE = {"create_topic", "create_topics"}


def test_no_experiment_creates_a_topic_without_the_profiles_settings() -> None:
    root = Path(workbench.__file__).parent
    offenders = []
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).as_posix()
        if relative in ALLOWED or relative.startswith("restproxy/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in CREATE and getattr(func.value, "id", "") == "kafka":
                offenders.append(f"{relative}:{node.lineno}")
    assert offenders == [], f"use stack.create_topics instead: {offenders}"

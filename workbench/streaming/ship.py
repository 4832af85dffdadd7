"""The workbench package as a zip for Spark executors that do not have it installed.

A user's Spark workers run the workbench's Kafka source (its reader is pickled by
reference: `workbench.streaming.source.KafkaStreamReader`), so they must import
`workbench`. Nobody installs the workbench on a cluster's workers; the session ships it
instead: `SparkContext.addPyFile` copies the zip to every executor and puts it on the
Python workers' `sys.path` ahead of site-packages, as `spark-submit --py-files` does.
The executors still need what the workbench imports there: pyarrow and confluent-kafka.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["package_zip", "ship_package"]


def package_zip(directory: Path) -> Path:
    """`workbench-<content hash>.zip` in `directory`, holding the package's modules.

    The name changes with the content, so an edited package is shipped as a new file
    (Spark refuses a second, different file under a name it already distributed).
    """
    root = Path(__file__).resolve().parents[1]
    files = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix in {".py", ".typed"} and "__pycache__" not in p.parts
    )
    digest = hashlib.sha256()
    for path in files:
        digest.update(path.relative_to(root.parent).as_posix().encode())
        digest.update(path.read_bytes())
    target = directory / f"workbench-{digest.hexdigest()[:12]}.zip"
    if not target.exists():
        directory.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(".zip.tmp")
        with zipfile.ZipFile(partial, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in files:
                archive.write(path, path.relative_to(root.parent).as_posix())
        partial.replace(target)
    return target


def ship_package(spark: SparkSession, directory: Path) -> Path:
    """Ship the package to this session's executors (once per SparkContext); returns the zip."""
    archive = package_zip(directory)
    context = spark.sparkContext
    if archive.name not in getattr(context, "_python_includes", []):
        context.addPyFile(str(archive))
    return archive

"""``kseg diff --roots ... --spark``: one Spark task per replica set.

The driver finds the replica sets (:func:`kseg.ops.diff.diff.replica_sets`);
each set becomes one Spark partition whose task runs the local comparison
(:func:`kseg.ops.diff.diff.compare`) and sends back its rows
(:func:`kseg.render.diff.rows`), so the driver prints exactly what the local
command prints.  The paths must be visible to the executors (a shared
mount).  A set whose task cannot read it comes back as an ``error`` row,
never as identical.
"""

from __future__ import annotations

import socket


def diff_set(index: int, partitions) -> tuple[int, list[dict] | None, str | None]:
    """Runs on an executor: (index, rows, None) or (index, None, error line)."""
    from kseg.errors import KsegError
    from kseg.ops.diff.diff import compare
    from kseg.render.diff import rows

    try:
        return index, rows(compare(partitions)), None
    except KsegError as exc:
        return index, None, exc.describe()
    except Exception as exc:  # never let a lost task look like a clean set
        return index, None, f"executor {socket.gethostname()}: {type(exc).__name__}: {exc}"


def run(spark, sets: list) -> list[tuple[list[dict] | None, str | None]]:
    """Compare every replica set on the cluster, one task each; results in the sets' order."""
    if not sets:
        return []
    sc = spark.sparkContext
    rdd = sc.parallelize(list(enumerate(sets)), len(sets))  # one set per Spark partition
    got = {i: (r, e) for i, r, e in rdd.map(lambda item: diff_set(item[0], item[1])).collect()}
    return [got.get(i, (None, "no result came back from the cluster for this replica set")) for i in range(len(sets))]

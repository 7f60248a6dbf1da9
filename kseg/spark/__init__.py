"""kseg on Spark: ``verify-index --spark``, ``export --spark`` and the ``kseg`` data source.

Beside the CLI: it calls :mod:`kseg.storage` and :mod:`kseg.render`, never
:mod:`kseg.cli`.  pyspark is imported inside the functions that need it,
never at package import.
"""

INSTALL_HINT = "pyspark is not installed; install it with: pip install 'kseg[spark]'"


def register(spark) -> None:
    """Register the ``kseg`` data source: ``spark.read.format("kseg").load(path)`` (see
    :mod:`kseg.spark.datasource`)."""
    from kseg.spark.datasource import register as _register

    _register(spark)

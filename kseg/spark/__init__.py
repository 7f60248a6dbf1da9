"""kseg on Spark: ``verify-index --spark``, ``export --spark`` and the ``kseg`` data source.

Beside the CLI: it calls :mod:`kseg.storage` and :mod:`kseg.render`, never
:mod:`kseg.cli`.  pyspark is imported inside the functions that need it,
never at package import.
"""

INSTALL_HINT = "pyspark is not installed; install it with: pip install 'kseg[spark]'"


def register(spark, one_line_errors: bool = True) -> None:
    """Register the ``kseg`` data source: ``spark.read.format("kseg").load(path)``; ``one_line_errors``:
    its errors without a Python traceback (see :func:`kseg.spark.datasource.register`)."""
    from kseg.spark.datasource import register as _register

    _register(spark, one_line_errors)

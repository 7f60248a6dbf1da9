"""The real standalone cluster fixture (tests/spark/cluster.py), for the tests beside it."""

from tests.spark.cluster import spark_cluster  # noqa: F401 - a fixture, registered for tests/spark

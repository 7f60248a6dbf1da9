"""``kseg grep``: the records of partitions that match a query, read along Kafka's own read paths."""

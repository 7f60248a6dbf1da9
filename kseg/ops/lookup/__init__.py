"""``kseg lookup-offset`` and ``kseg lookup-time``: Kafka's fetch and ListOffsets rules over a partition."""

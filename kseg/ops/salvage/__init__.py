"""``kseg salvage``: every whole, valid batch of a damaged partition, past the damage, into a new
partition directory Kafka loads as it is (docs/salvage.md)."""

"""Rendering: Kafka's byte-identical text and kseg's JSON Lines, from the values the commands return."""

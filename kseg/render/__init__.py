"""Rendering: Kafka's byte-identical text and kseg's JSON Lines, and the dump flow."""

"""The thin click layer: option parsing, exit codes, and nothing else."""

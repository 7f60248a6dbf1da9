"""``python -m kseg`` runs the command-line tool."""

from kseg.cli.start import main

if __name__ == "__main__":  # pragma: no cover
    main()

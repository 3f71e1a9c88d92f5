"""``python -m toonstream`` runs the command-line interface.

Nothing else is imported first: the signal handling is in place before the
codec and the command line are imported (see ``toonstream._signals``)."""

try:
    from ._signals import run
except KeyboardInterrupt:  # Ctrl-C while the module that handles it loads: the same quiet exit
    raise SystemExit(130) from None

if __name__ == "__main__":
    run()

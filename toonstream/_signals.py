"""How the ``toonstream`` command ends on SIGINT and SIGTERM: quietly, with
status 130 or 143, at any moment of its run, start-up included.

The console script and ``python -m toonstream`` call :func:`run` before
anything heavy is imported (the codec, argparse, even the ``signal``
module, which imports enum): the handlers are in place within microseconds
of the first line of ours that runs.  What runs before it (the interpreter's
start-up and ``site``) keeps Python's own behaviour.

A signal raises in the main thread (KeyboardInterrupt, :class:`Terminated`),
so ``finally`` blocks run: the temporary output file is removed.  Three
rules keep the exit status honest:

- the commit of ``-o FILE`` (the rename) is not interrupted: a signal that
  arrives during :func:`commit` waits until it is over;
- once the output is committed, or the command has returned its status, the
  run is over: a later signal is ignored and the status stands (an output
  file that is complete never goes with status 130);
- the first signal ends the run; the ones after it are ignored, so that the
  clean-up they would interrupt runs to its end.

Python swallows an exception raised where it cannot propagate (a weakref
callback such as importlib's module-lock clean-up, a ``__del__``) and
reports it through ``sys.unraisablehook``: our hook sends such a signal
again, so that it is raised at the next point where it can propagate
instead of being lost with an "Exception ignored" message.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _sig
    from typing import Any, Callable, NoReturn
else:
    try:
        # The C module: ``signal`` wraps it in enums, and importing enum costs
        # milliseconds at start-up, a window in which Ctrl-C would print a
        # KeyboardInterrupt traceback.
        import _signal as _sig
    except ImportError:  # an interpreter without it
        import signal as _sig

EXIT_SIGINT, EXIT_SIGTERM = 130, 143


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that clean-up (``finally``) runs."""


class _State:
    committing = False  # inside commit(): a signal waits
    pending: int | None = None  # the signal that came while committing
    over = False  # the output is committed, or a first signal was raised
    raised: int | None = None  # the signal whose exception was raised last
    unraisable_hook: Any = None  # sys.unraisablehook before install()
    in_hook = False  # the main thread is inside _unraisable


_state = _State()


def _handler(signum: int, frame: Any) -> None:
    if _state.over:
        return
    if _state.committing:
        _state.pending = signum
        return
    _state.over = True
    _state.raised = signum
    raise _exception(signum)


def _unraisable(info: Any) -> None:
    # Our exception was swallowed where it could not propagate: the run is not over after all.
    # The signal is sent again; its handler raises at the next point where it can propagate.
    _state.in_hook = True
    try:
        if _state.raised is not None and isinstance(info.exc_value, (KeyboardInterrupt, Terminated)):
            import _thread

            signum, _state.raised = _state.raised, None
            _state.over = False
            # Sent from another thread: any call made here (raise_signal, os.kill, interrupt_main)
            # would run the handler as soon as it returns, inside this hook, where the exception
            # is swallowed again.
            _thread.start_new_thread(_send_after_hook, (signum,))
            return
        if _state.unraisable_hook is not None:
            _state.unraisable_hook(info)
    finally:
        _state.in_hook = False


def _send_after_hook(signum: int) -> None:
    # Waits until the main thread has left the hook: the thread may get the GIL (a switch
    # interval ends) while the main thread is still inside it, and a signal handled there would
    # be swallowed again.  Past the flag, the hook has no bytecode left where a handler could run.
    import _thread
    import time

    while _state.in_hook:
        time.sleep(0.001)
    _thread.interrupt_main(signum)  # type: ignore[arg-type]  # (an int is a valid signal number)


def _exception(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == _sig.SIGINT else Terminated()


def install() -> list[tuple[int, Any]]:
    """Put this module's handler on SIGINT and SIGTERM (a signal that is
    ignored stays ignored: a background job's SIGINT, ``nohup``).  Returns
    what was there before, for :func:`restore`; nothing outside the main
    thread, where Python cannot set handlers."""
    import sys

    _state.committing, _state.pending, _state.over, _state.raised = False, None, False, None
    if sys.unraisablehook is not _unraisable:
        _state.unraisable_hook, sys.unraisablehook = sys.unraisablehook, _unraisable
    before: list[tuple[int, Any]] = []
    try:
        for signum in (_sig.SIGINT, _sig.SIGTERM):
            previous = _sig.getsignal(signum)
            if previous != _sig.SIG_IGN:
                _sig.signal(signum, _handler)
                before.append((signum, previous))
    except ValueError:  # not the main thread
        pass
    return before


def restore(before: list[tuple[int, Any]]) -> None:
    """Put back the handlers that :func:`install` replaced."""
    import sys

    if sys.unraisablehook is _unraisable and _state.unraisable_hook is not None:
        sys.unraisablehook, _state.unraisable_hook = _state.unraisable_hook, None
    for signum, previous in before:
        if previous is not None:  # (None: set outside Python, cannot be put back)
            _sig.signal(signum, previous)


def commit(action: Callable[[], None]) -> None:
    """Run ``action`` (the rename that publishes the output) without being
    interrupted.  After it, the run is over: later signals are ignored.  If
    ``action`` fails, a signal that came meanwhile is raised instead of its
    error (the run was interrupted either way)."""
    _state.committing = True
    try:
        action()
    except BaseException:
        _state.committing = False
        if _state.pending is not None and not _state.over:
            _state.over = True
            raise _exception(_state.pending) from None
        raise
    _state.over = True
    _state.committing = False


def finish() -> None:
    """The command returned its status: signals from now on are ignored."""
    _state.over = True
    # Ignored by the OS too, not only by our handler: at exit the interpreter's finalization puts
    # SIG_DFL back in place of every Python handler (but leaves SIG_IGN alone), and a signal in
    # that window would kill the process (status -15) after its output was committed.
    for signum in (_sig.SIGINT, _sig.SIGTERM):
        try:
            if _sig.getsignal(signum) is _handler:
                _sig.signal(signum, _sig.SIG_IGN)
        except ValueError:  # not the main thread
            pass


def run() -> NoReturn:
    """Console-script entry point: ``toonstream ...`` (``python -m toonstream``)."""
    try:
        install()  # first: a signal before it gets Python's KeyboardInterrupt, caught below
        from .cli import main

        status = main(installed=True)
    except KeyboardInterrupt:
        status = EXIT_SIGINT
    except Terminated:
        status = EXIT_SIGTERM
    finally:
        finish()  # (also when argparse exits: --help, a usage error)
    import sys

    sys.exit(status)

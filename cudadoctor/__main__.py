"""`python -m cudadoctor` and the `cudadoctor` console script."""

import gc
import os
import sys


def run() -> None:
    # A one-shot command allocates tens of thousands of small, acyclic objects (imports, the table)
    # and exits: the cyclic garbage collector would only cost time. Disabled before anything heavy
    # (click, nvidia-ml-py) is imported; library users importing cudadoctor are not affected.
    gc.disable()
    # cudadoctor's own modules from one compiled file, where one is stored (cli/bundle.py).
    from .cli import bundle

    bundle.install()
    # The common command lines (check, recommend, fleet) run without click (cli/fast.py); any other, or
    # one the fast path is not sure of, goes to the click group, as before.
    from .cli.fast import run as run_fast

    try:
        fast = run_fast(sys.argv[1:], process=True)
        if fast is None:
            from .cli.group import main

            main()
        status = 0 if fast is None else fast
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    # Everything is written and every resource closed by now (the Docker client and any child
    # process are closed or waited for inside the command). Skip the interpreter's teardown, which
    # frees every module and object one by one: about 10 ms of an 80 ms command.
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:  # None: started with that descriptor closed (`cudadoctor check >&-`)
                stream.flush()
    except (BrokenPipeError, OSError, ValueError):  # the reader went away (`| head`): nothing left to tell it
        status = status or 1
    bundle.remember()  # the compiled modules, written again when this run imported one it lacked
    os._exit(status)


if __name__ == "__main__":
    run()

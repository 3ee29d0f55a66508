"""The input room, below ``cli/`` and ``api.py``: every input a command reads is assembled here.

``inputs`` assembles the table, families, config, request, host facts and today's date, the same
for the CLI and the Python API, from ``loader`` (the reader of the files a user names and of the
``$CUDADOCTOR_*`` variables that name them) and ``overlay`` (the table overlay `table update`
keeps in the user cache); ``files`` writes files atomically. Nothing is imported here, so using
one of them costs no more than that one.
"""

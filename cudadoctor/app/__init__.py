"""The input room, below ``cli/`` and ``api.py``.

``loader`` reads the files a user names and the ``$CUDADOCTOR_*`` variables that name them;
``overlay`` is the table overlay `table update` keeps in the user cache; ``files`` writes files
atomically. Nothing is imported here, so reading one of them costs no more than that one.
"""

"""Diagnostics a caller can route: the ``v2_memory`` loggers, and warnings that are log records too.

What the library repairs or cannot finish on its own — a torn last line dropped after a crash, a
committed change whose log events wait in the outbox, erased bytes still in free pages — it
reports twice, once for each habit: as a warning (what a notebook shows) and as a record on a
``v2_memory.*`` logger (what a service routes). Refusals (a message with personal data under
``sensitive="refuse"``) and recoveries (an erasure finished at the next open) are log records.
The package installs a ``NullHandler``: nothing is printed unless the application configures
logging, e.g. ``logging.getLogger("v2_memory").addHandler(logging.StreamHandler())``.

Records never hold memory text or personal data: paths, counts, kinds and record ids only.
"""
from __future__ import annotations

import logging
import warnings

__all__ = ["ROOT", "logger", "warn"]

ROOT = "v2_memory"


def logger(room: str) -> logging.Logger:
    """The logger of one room of the library: ``logger("storage")`` is ``v2_memory.storage``."""
    return logging.getLogger(f"{ROOT}.{room}")


def warn(message: str, category: type[Warning], *, room: str, stacklevel: int = 2) -> None:
    """Issue ``category(message)`` as a warning (pointing ``stacklevel`` frames up, as
    ``warnings.warn`` counts them from the caller) and log it at WARNING on ``room``'s logger."""
    logger(room).warning("%s: %s", category.__name__, message)
    warnings.warn(message, category, stacklevel=stacklevel + 1)

"""``python -m v2_memory COMMAND``: see ``cli.py``."""
from .cli import main

raise SystemExit(main())

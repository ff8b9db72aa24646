"""``python -m v2_memory COMMAND``: see ``cli.py``."""
from .cli.app import main

raise SystemExit(main())

"""The demo's material — not the library: the five governance scenes (``scenes.py``), the clean
and polluted tutoring sessions the inspector is shown on (``sessions.py``), and how the trace
files for the page are written (``traces.py``). ``v2_memory/main.py`` runs the demo with them."""

"""The short-term tracks: the recent window and the summary of what left it, one per user."""

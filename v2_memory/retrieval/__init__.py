"""Scoring and finding: scorers (the article's cosine, BM25) and their exact per-user inverted indexes."""

"""Text in, terms out: the article's ``tokenize`` and the cleaned ``analyze`` used by BM25 and governance."""

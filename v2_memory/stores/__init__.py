"""Long-term stores: the ``VectorStore`` protocol and its default, ``JsonVectorStore``."""
from .base import VectorStore
from .json_store import JsonVectorStore
from .record_log import FORMAT_VERSION, TornRecordWarning

__all__ = ["VectorStore", "JsonVectorStore", "FORMAT_VERSION", "TornRecordWarning"]

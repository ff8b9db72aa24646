"""Storage: the contract the manager talks to, and its backends (the JSON Lines store, the ledger)."""
from .vector_store import VectorStore
from .json_store import JsonVectorStore
from .database import ResidueWarning
from .record_log import FORMAT_VERSION, TornRecordWarning

__all__ = ["VectorStore", "JsonVectorStore", "FORMAT_VERSION", "TornRecordWarning", "ResidueWarning"]

"""v2_memory: governed memory for LLM agents, small enough to read in an afternoon.

The article's three tracks — recent window, summary, long-term store — per user, with a
relevance threshold, real erasure, and an exact inverted index. Standard library only.
"""
import logging as _logging

from .errors import (
    DefaultUserWarning,
    StoreCorruptError,
    StoreClosedError,
    StoreError,
    StoreInconsistentError,
    StoreLockedError,
    StorePathError,
    UnstorableTextError,
    UnsupportedFormatError,
    V2MemoryError,
)
from .governance.admission import Admission, Explanation
from .governance.governor import GovernancePolicy
from .governance.decay import DecayRates
from .messages import Fact
from .governance.write import SensitiveDataError
from .manager import MemoryManager
from .scoped import ScopedMemory
from .messages import EraseReceipt, Hit, Message, WriteResult
from .storage import JsonVectorStore, ResidueWarning, TornRecordWarning, VectorStore
from .tracks.summarizer import ExtractiveSummarizer, Summarizer, Summary
from .retrieval.scorers import ArticleScorer, Bm25Scorer
from .text.tokenizer import cosine_similarity, tokenize

__version__ = "0.1.0"

# A library logs, the application decides where to (see diagnostics.py): silent until configured.
_logging.getLogger("v2_memory").addHandler(_logging.NullHandler())


def __getattr__(name: str):  # the async door is loaded when first asked for (it imports asyncio)
    if name == "AsyncMemoryManager":
        from .async_manager import AsyncMemoryManager

        return AsyncMemoryManager
    raise AttributeError(f"module 'v2_memory' has no attribute {name!r}")

__all__ = [
    "Message",
    "tokenize",
    "cosine_similarity",
    "JsonVectorStore",
    "MemoryManager",
    "AsyncMemoryManager",
    "ScopedMemory",
    "ArticleScorer",
    "Bm25Scorer",
    "VectorStore",
    "Hit",
    "EraseReceipt",
    "WriteResult",
    "Admission",
    "Explanation",
    "Fact",
    "GovernancePolicy",
    "DecayRates",
    "SensitiveDataError",
    "Summary",
    "Summarizer",
    "ExtractiveSummarizer",
    "V2MemoryError",
    "DefaultUserWarning",
    "StoreError",
    "StorePathError",
    "UnstorableTextError",
    "StoreCorruptError",
    "StoreLockedError",
    "StoreClosedError",
    "StoreInconsistentError",
    "UnsupportedFormatError",
    "TornRecordWarning",
    "ResidueWarning",
]

"""Governance: the policies that decide what enters memory and what leaves it for a prompt.

Write side: ``policy`` (source, trust, what is not embedded), ``sensitive`` (personal data),
``persona`` (self-declarations become pending facts), ``corrections`` (supersede, never delete),
``identifiers`` (exact matching). Lifecycle: ``decay``, ``state`` (sessions and tasks with TTL).
Read side: ``router`` and ``admission`` (every candidate admitted or rejected, with reasons).
The mutable part — weights, verification, facts, identifiers — lives in ``ledger`` (SQLite).
"""

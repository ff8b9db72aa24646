"""Evidence: audit events, the health dashboard and the inspector over stored memory."""

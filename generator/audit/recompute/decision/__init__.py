"""The decision: configurations, the gate, the answer and decision.json's typed records."""

"""Live evidence: the gateway's verdicts on live traffic as a scorecard, the suspect rule
(pure) and the suspects' state (docs/live-evidence.md)."""

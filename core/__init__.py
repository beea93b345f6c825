"""Shared by both halves (canary and routing): identifier checks and service tokens."""

"""Retrieval building blocks shared by memory and session search (pure, in RAM)."""

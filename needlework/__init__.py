"""Needlework: logic for RAG grounding annotation and reward-model inspection.

This package holds every piece of logic (formats, metrics, reward models, the
needle builder, judges, the CLI) and never imports streamlit.
"""

__version__ = "0.1.0"

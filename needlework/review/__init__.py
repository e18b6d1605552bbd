"""Preference pair review: diffs, verdicts, the review queue, filters, lengths and
TRL export. No streamlit here; the page is ``app_pages/review.py``."""

from needlework.review.diff import Difference, TextDiff, cached_diff, diff_texts
from needlework.review.filters import Filters, apply_filters, disagreements
from needlework.review.queue import Comparison, build_queue, next_unreviewed, step
from needlework.review.trl import trl_records
from needlework.verdicts import REASONS, VERDICTS, field_name, make_value

__all__ = [
    "REASONS",
    "VERDICTS",
    "Comparison",
    "Difference",
    "Filters",
    "TextDiff",
    "apply_filters",
    "build_queue",
    "cached_diff",
    "diff_texts",
    "disagreements",
    "field_name",
    "make_value",
    "next_unreviewed",
    "step",
    "trl_records",
]

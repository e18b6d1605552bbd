"""Streamlit components: ``render_*`` functions that draw and return plain values.

Untrusted text (anything that came from data) is drawn only through
:mod:`components.text`, which shows it literally: never as HTML, Markdown or LaTeX.
"""


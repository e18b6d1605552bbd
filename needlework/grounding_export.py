"""Writing annotators' work back into GaRAGe records on export (the import point
used by :mod:`needlework.datasets`; the logic is :mod:`needlework.grounding.export`).

Export rule: per passage label and question dimension, the reviewer's final value
where one exists, else the majority of annotators (ties: the imported value if it
is tied, else the first tied value in the fixed label order), else the single
annotator's, else the imported value; the answer is the reviewer's chosen one, else
the only annotator's, else the latest saved, and ``evidence_cited`` follows its
``[cite_N]`` markers. Untouched records are written back exactly.
"""

from __future__ import annotations

from needlework.grounding.export import annotated_records, apply_annotations

__all__ = ["annotated_records", "apply_annotations"]

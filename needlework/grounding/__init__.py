"""Grounding annotation (the GaRAGe protocol, benchmarks.md §1).

- :mod:`.labels`: passage labels, definitions, keys and field names (``label:N``).
- :mod:`.item`: passages with derived ages; question dimensions and categories.
- :mod:`.answer`: live checks on a ``[cite_N]`` answer; deflection.
- :mod:`.progress`: done / in progress / unlabeled; question-list filters.
- :mod:`.resolve` and :mod:`.export`: the export rule (final, majority, single, imported).
- :mod:`.agreement`: Krippendorff's alpha, Cohen's kappa, disagreements.
- :mod:`.attribution`: citation precision / recall / F1 of model answers.
"""

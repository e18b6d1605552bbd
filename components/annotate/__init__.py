"""The annotate page's components (light).

- :mod:`.item`: the item being annotated (:class:`~.item.ItemContext`), its question,
  dimensions and progress;
- :mod:`.passages`: the passage cards and their label buttons;
- :mod:`.answer`: the cited answer editor;
- :mod:`.questions`: the question list, filters and item navigation;
- :mod:`.keyboard`: the key script that aims each key at a passage (its actions go
  through the shared outbox, :mod:`components.outbox`).
"""

"""The review page's components (light).

- :mod:`.pair`: the comparison on screen (header, picker, responses, verdict panel, queue);
- :mod:`.diff_view`, :mod:`.long_text`: a word diff and long responses shown in chunks;
- :mod:`.filters`: the item facts (token lengths, cached) and the filter widgets;
- :mod:`.position`: where the reviewer is (kept in the session and in ``?item=``);
- :mod:`.keys`: the key script for verdicts, reasons and moves (through the shared
  outbox, :mod:`components.outbox`);
- :mod:`.overview`: the dataset overview (lengths, subsets, verdicts, TRL export).
"""

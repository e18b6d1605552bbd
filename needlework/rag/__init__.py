"""RAG answer evaluation: a model's answers to a grounding dataset's questions, scored
the way GaRAGe and BERGEN score them (docs/rag.md, docs/benchmarks.md §5).

The pieces, each small and usable on its own (no streamlit anywhere):

- :mod:`.answers`: model answers files (JSONL ``{"sample_id", "answer"}``, optionally
  ``"model"``), several models at once, with unknown ids and unanswered questions
  reported by id.
- :mod:`.questions`: a grounding dataset's questions as evaluation sees them: the
  reference (human) answer and passage labels with adjudicated values first, the
  relevant passages, whether a deflection is needed, the breakdown dimensions.
- :mod:`.bergen`: BERGEN's answer metrics (match, EM, token P/R/F1, character-3-gram
  recall, ROUGE-1/2/L) as small pure functions; :mod:`.bergen_file` reads BERGEN's
  own generation output.
- :mod:`.sentences`: the sentence splitter whose sentences the factuality judge labels.
- :mod:`.prompts` and :mod:`.parse`: the judge prompts as templates (GaRAGe appendix B's
  and BERGEN's LLMeval prompt by default, the project's earlier wording beside them) and
  the parsers of their answers, which never guess.
- :mod:`.calls`: judge calls through the judge engine's cache, a bounded pool and cancel.
- :mod:`.verdicts`: one answer's judge verdicts (eligibility, factuality per sentence
  against all passages and against the relevant ones, deflection, LLMeval).
- :mod:`.metrics`: the figures (percentages of questions, TPR/FPR, means) overall
  and by question dimension, several models side by side.
- :mod:`.definitions`: every metric's definition, the text the UI and docs show.
- :mod:`.run`: :func:`~.run.evaluate` and the job-runner entry point
  :func:`~.run.run_rag_eval`; results are stored by ``store.rag``.
- :mod:`.generate` and :mod:`.generate_prompt`: a model's answers to the dataset's
  questions in GaRAGe's generation setting, cached and resumable, stored as an answer set
  (the ``rag-generate`` job kind).
"""

"""The reward-model page's components (engine: import after ``components.state.engine()``).

- :mod:`.scoring`: step 2, the length check, the Score button and the scoring job;
- :mod:`.results`: step 3, the run picker, metrics and failures;
- :mod:`.token_view`: step 4, picking the item and pair for the per-token view.
"""

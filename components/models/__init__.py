"""Components of the reward model in use, shared by the reward page and the needle lab
(engine: import after ``components.state.engine()``).

- :mod:`.picker`: choosing, loading and unloading a model (the process-wide registry);
- :mod:`.per_token`: a chosen/rejected pair's reward token by token (charts and text).
"""

"""The reward-model engine.

- :mod:`~needlework.rewards.loading`: load and check a scalar reward model, its facts.
- :mod:`~needlework.rewards.templates`: prompt + response → the text that is scored.
- :mod:`~needlework.rewards.pipeline`: :class:`RewardPipeline`, batched and cached scoring.
- :mod:`~needlework.rewards.per_token`: per-token rewards and curve comparison.
- :mod:`~needlework.rewards.runs`: scoring a stored dataset; :mod:`~needlework.rewards.job`:
  the same as a background job (the ``score`` kind of :mod:`needlework.jobs.runner`).
- :mod:`~needlework.rewards.registry`: the loaded models every session shares (light).
- :mod:`~needlework.rewards.lengths`: which inputs are longer than the window, before a run.
- :mod:`~needlework.rewards.results`: a stored run's metric entries and failures.
- :mod:`~needlework.rewards.token_pairs`: per-token rewards of a chosen/rejected pair, cached.
- :mod:`~needlework.rewards.demo_model`: the small demo reward model.
- :mod:`~needlework.rewards.errors`: one exception class per problem.

This package file stays light (no torch import) so that the error classes can be
imported anywhere; import the submodules you need.
"""

"""LLM judges: generative reward models behind any OpenAI-compatible endpoint.

The pieces, each small and usable on its own:

- :mod:`.connection`: where the judge is (base URL, model, key from an environment
  variable or held in memory, generation parameters, timeout, concurrency). The key
  is a :class:`~.connection.Secret`: it never reaches a repr, a log line, the store
  or an error message.
- :mod:`.client`: one chat completion through the real ``openai`` client, with
  retries (exponential backoff and jitter on 429, 5xx and timeouts) and
  :func:`~.client.check_connection` ("test connection"), which names what is wrong in one line.
- :mod:`.parse`: the judge's answer to a choice or a score, or *invalid*. Never a guess.
- :mod:`.prompts` and :mod:`.templates`: the prompts as templates with placeholders
  (Long-form RewardBench's by default, the project's wording beside them), checked,
  their digest part of a run's identity.
- :mod:`.context`: fitting a prompt into the judge's window (skip, keep-start,
  keep-end), always reported.
- :mod:`.plan`: a dataset's items as judge *trials* (one prompt each): seeded
  shuffles, every rotation, both orders, one response at a time.
- :mod:`.engine`: :func:`~.engine.run_judge`, which runs the trials through the call
  cache (``store.judges``) with a bounded request pool, and returns results and metrics.
- :mod:`.evaluate`: accuracy per subset through :mod:`needlework.figures.metrics`, invalid
  rates and the position-bias figures.
- :mod:`.needles`: needles written by an LLM (rewrite a chunk, verify, keep if verified).
- :mod:`.demo` and :mod:`.serve`: the offline demo judge and a launcher for
  ``transformers serve``.

No streamlit here; the engine starts no thread beyond its request pool.
"""

"""Suggestions made by models (issue 30): the prompts a judge is asked for a passage's
label and a question's dimensions (:mod:`.prompts`), the background job that asks it
(:mod:`.job`) and verdicts from a reward model's margin (:mod:`.reward`).

What a suggestion is, and reading suggestions from files, is :mod:`needlework.suggestions`.
"""

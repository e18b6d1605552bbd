"""Suggestions made by models (issue 30), all in one place: what a suggestion is, its fields
and values, reading them from files and importing them, all or nothing (:mod:`.data`); the
question list ordered by their confidence (:mod:`.order`); the judge prompts for a passage's
label and a question's dimensions (:mod:`.prompts`) and the background job that asks them
(:mod:`.job`); verdicts from a reward model's margin or a judge's choice (:mod:`.verdicts`);
the demo data's suggestions (:mod:`.demo`) and their figures (:mod:`.figures`).
"""

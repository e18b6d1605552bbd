"""Results that span the engines: every reward-model run and every LLM-judge run of a
preference dataset read alike, two of them side by side per subset with a paired test
(:mod:`.compare`), and all of them ranked on one leaderboard (:mod:`.leaderboard`).
"""

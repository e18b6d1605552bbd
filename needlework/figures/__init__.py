"""Figures and their words, the bottom layer every engine and page reads: the benchmarks'
metrics (:mod:`.metrics`, RewardBench 2's in :mod:`.rewardbench2`), confidence intervals and
paired comparisons (:mod:`.stats`), the one way a percentage, a range or a comparison is
written (:mod:`.stats_text`) and the commands' text lines of them (:mod:`.lines`). Pure
functions: nothing here reads or writes anything but its arguments.
"""

"""The long-form needle-in-a-haystack test (benchmarks.md section 3).

:mod:`needlework.phrases` holds the built-in needle phrase pairs.
"""

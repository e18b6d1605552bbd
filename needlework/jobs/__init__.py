"""Background jobs, one way for every kind of long work: what a kind is and the registry of
kinds (:mod:`.kinds`, the side a kind's module imports), and the runner that queues, runs,
cancels and records them, one thread and one database connection per job (:mod:`.runner`).
docs/ARCHITECTURE.md, Background jobs, tells the rules.
"""

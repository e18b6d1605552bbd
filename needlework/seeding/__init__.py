"""The demo set-up ``make run`` performs, standing on the engines (the demo data itself is
:mod:`needlework.demo`, at the bottom): the shipped demo models, their table and checks,
building, verifying and installing them (:mod:`.demo_models`), and the built-in demo
datasets imported through the normal import path (:mod:`.demo`).
"""

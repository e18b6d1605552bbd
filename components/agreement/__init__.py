"""The agreement page's components (light).

- :mod:`.figures`: agreement figures, the items annotators disagree on, attribution;
- :mod:`.adjudication`: the reviewer's final labels, dimensions and answer.
"""

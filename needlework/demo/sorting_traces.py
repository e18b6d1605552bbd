"""Worked examples for the sorting guide, computed by running the algorithms.

Each function returns one paragraph that traces an algorithm on a small input,
so the numbers in the demo text are correct by construction. Timsort's and
introsort's examples are not traces; they are written out in the data file.
"""

from __future__ import annotations

from functools import partial

SAMPLE = [38, 27, 43, 3, 9, 82, 10]


def _fmt(values: list) -> str:
    return "[" + ", ".join(str(v) for v in values) + "]"


def bubble() -> str:
    a, lines, rounds = SAMPLE[:], [], 0
    while True:
        swapped = False
        for i in range(len(a) - 1 - rounds):
            if a[i] > a[i + 1]:
                a[i], a[i + 1] = a[i + 1], a[i]
                swapped = True
        rounds += 1
        if not swapped:
            break
        lines.append(f"after pass {rounds}: {_fmt(a)}")
    return (f"Example: sorting {_fmt(SAMPLE)} takes these passes: "
            + "; ".join(lines) + f". Pass {rounds} makes no swaps, so the algorithm stops.")


def selection() -> str:
    a, lines = SAMPLE[:], []
    for i in range(len(a) - 1):
        m = min(range(i, len(a)), key=a.__getitem__)
        a[i], a[m] = a[m], a[i]
        lines.append(f"{a[i]} moves to position {i + 1}: {_fmt(a)}")
    return (f"Example: starting from {_fmt(SAMPLE)}, each step selects the minimum of the "
            "unsorted part: " + "; ".join(lines) + ".")


def insertion() -> str:
    a, lines = SAMPLE[:], []
    for i in range(1, len(a)):
        x, j = a[i], i - 1
        while j >= 0 and a[j] > x:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = x
        lines.append(f"insert {x}: {_fmt(a)}")
    return (f"Example: on {_fmt(SAMPLE)} the sorted prefix grows one element at a time: "
            + "; ".join(lines) + ".")


def shell() -> str:
    a, lines = SAMPLE[:], []
    for gap in (4, 1):
        for i in range(gap, len(a)):
            x, j = a[i], i
            while j >= gap and a[j - gap] > x:
                a[j] = a[j - gap]
                j -= gap
            a[j] = x
        lines.append(f"after the pass with gap {gap}: {_fmt(a)}")
    return (f"Example: with the gaps 4 and 1 (the start of Knuth's sequence 1, 4, 13, ...), "
            f"{_fmt(SAMPLE)} becomes: " + "; ".join(lines) + ". The gap-4 pass already moved "
            "the small values 3 and 9 towards the front.")


def merge() -> str:
    steps: list[str] = []

    def sort(a: list) -> list:
        if len(a) <= 1:
            return a
        mid = len(a) // 2
        left, right = sort(a[:mid]), sort(a[mid:])
        out = sorted(left + right)
        steps.append(f"merge {_fmt(left)} and {_fmt(right)} into {_fmt(out)}")
        return out

    sort(SAMPLE[:])
    return (f"Example: merge sort on {_fmt(SAMPLE)} performs these merges in order: "
            + "; ".join(steps) + ".")


def quick() -> str:
    a, steps = SAMPLE[:], []

    def part(lo: int, hi: int) -> None:
        if lo >= hi:
            return
        pivot, i = a[hi], lo
        for j in range(lo, hi):
            if a[j] < pivot:
                a[i], a[j] = a[j], a[i]
                i += 1
        a[i], a[hi] = a[hi], a[i]
        steps.append(f"pivot {pivot} on positions {lo + 1}-{hi + 1} gives {_fmt(a)}")
        part(lo, i - 1)
        part(i + 1, hi)

    part(0, len(a) - 1)
    return (f"Example: using the last element as the pivot (the Lomuto scheme) on "
            f"{_fmt(SAMPLE)}: " + "; ".join(steps) + ". On an already sorted input the same "
            "rule would put every element on one side, giving n - 1 levels of recursion.")


def _sift(a: list, start: int, end: int) -> None:
    root = start
    while 2 * root + 1 < end:
        child = 2 * root + 1
        if child + 1 < end and a[child + 1] > a[child]:
            child += 1
        if a[root] >= a[child]:
            return
        a[root], a[child] = a[child], a[root]
        root = child


def heap() -> str:
    a = SAMPLE[:]
    for start in range(len(a) // 2 - 1, -1, -1):
        _sift(a, start, len(a))
    lines = [f"building the max-heap gives {_fmt(a)}"]
    for end in range(len(a) - 1, 0, -1):
        a[0], a[end] = a[end], a[0]
        _sift(a, 0, end)
        if end > len(a) - 4:
            lines.append(f"moving {a[end]} to the end and sifting gives {_fmt(a)}")
    return (f"Example: for {_fmt(SAMPLE)}, " + "; ".join(lines) + "; the remaining "
            f"extractions finish with {_fmt(a)}.")


def counting() -> str:
    data, k = [4, 1, 3, 4, 2, 1, 0, 3], 4
    counts = [data.count(v) for v in range(k + 1)]
    starts, pos = [], 0
    for c in counts:
        starts.append(pos)
        pos += c
    return (f"Example: for {_fmt(data)} with keys 0..{k}, the counts are {_fmt(counts)} and "
            f"the running sums give starting positions {_fmt(starts)}. Placing each element "
            f"at its key's next free position yields {_fmt(sorted(data))}.")


def _digit(value: int, place: int) -> int:
    """The digit of ``value`` at ``place`` (1, 10, 100, ...)."""
    return (value // place) % 10


def radix() -> str:
    a, lines = [170, 45, 75, 90, 802, 24, 2, 66], []
    start = a[:]
    for d, name in ((1, "ones"), (10, "tens"), (100, "hundreds")):
        a = sorted(a, key=partial(_digit, place=d))
        lines.append(f"by the {name} digit: {_fmt(a)}")
    return (f"Example: sorting {_fmt(start)} in base 10 takes three stable passes, "
            + "; ".join(lines) + ".")


def bucket() -> str:
    data = [0.78, 0.17, 0.39, 0.26, 0.72, 0.94, 0.21, 0.12, 0.23, 0.68]
    buckets: dict[int, list] = {}
    for x in data:
        buckets.setdefault(int(x * 10), []).append(x)
    parts = [f"bucket {b} holds {_fmt(sorted(v))}" for b, v in sorted(buckets.items())]
    return (f"Example: with 10 buckets, the values {_fmt(data)} are distributed so that "
            + "; ".join(parts) + ". Concatenating the sorted buckets gives "
            f"{_fmt(sorted(data))}.")


#: The algorithms whose example is a computed trace (the others' is written out in
#: ``data/long/sorting.json``).
TRACES = {
    "Bubble sort": bubble, "Selection sort": selection, "Insertion sort": insertion,
    "Shell sort": shell, "Merge sort": merge, "Quicksort": quick, "Heapsort": heap,
    "Counting sort": counting, "Radix sort": radix, "Bucket sort": bucket,
}

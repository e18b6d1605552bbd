"""Long preference record: a guide to twelve sorting algorithms (QA).

Each algorithm has a handwritten explanation and usage note; the complexity
paragraphs and the summary table are generated from an attribute table, so the
factual-error variant changes the table and the matching sentences together.
"""

from __future__ import annotations

from needlework.demo.filler import pad_verbosely
from needlework.demo.sorting_traces import example

PROMPT = (
    "Can you explain the common sorting algorithms for me: how each one works, its time and "
    "space complexity, whether it is stable, and when I would actually use it? I'm preparing "
    "for technical interviews and want one document I can study from."
)

# name: (best, average, worst, extra space, stable, in place)
ATTRS = {
    "Bubble sort": ("O(n)", "O(n^2)", "O(n^2)", "O(1)", True, True),
    "Selection sort": ("O(n^2)", "O(n^2)", "O(n^2)", "O(1)", False, True),
    "Insertion sort": ("O(n)", "O(n^2)", "O(n^2)", "O(1)", True, True),
    "Shell sort": ("O(n log n)", "depends on the gaps", "O(n^(3/2)) with Knuth's gaps",
                   "O(1)", False, True),
    "Merge sort": ("O(n log n)", "O(n log n)", "O(n log n)", "O(n)", True, False),
    "Quicksort": ("O(n log n)", "O(n log n)", "O(n^2)", "O(log n) stack", False, True),
    "Heapsort": ("O(n log n)", "O(n log n)", "O(n log n)", "O(1)", False, True),
    "Timsort": ("O(n)", "O(n log n)", "O(n log n)", "O(n)", True, False),
    "Introsort": ("O(n log n)", "O(n log n)", "O(n log n)", "O(log n) stack", False, True),
    "Counting sort": ("O(n + k)", "O(n + k)", "O(n + k)", "O(n + k)", True, False),
    "Radix sort": ("O(d(n + b))", "O(d(n + b))", "O(d(n + b))", "O(n + b)", True, False),
    "Bucket sort": ("O(n + k)", "O(n + k)", "O(n^2)", "O(n + k)", True, False),
}

HOW = {
    "Bubble sort": (
        "Bubble sort walks through the array repeatedly, comparing each pair of neighbours "
        "and swapping them when they are out of order. After the first pass the largest "
        "element has \"bubbled\" to the end; after the second pass the two largest are in "
        "place, and so on. A common improvement is to stop as soon as a full pass makes no "
        "swaps, which means the array is already sorted."),
    "Selection sort": (
        "Selection sort divides the array into a sorted prefix and an unsorted suffix. On "
        "each step it scans the unsorted part for the smallest element and swaps it into the "
        "first unsorted position. It always performs about n^2/2 comparisons, whatever the "
        "input looks like, but it makes at most n - 1 swaps."),
    "Insertion sort": (
        "Insertion sort builds the sorted result one element at a time, the way many people "
        "sort a hand of cards. It takes the next element and shifts larger elements of the "
        "sorted prefix one position to the right until it finds the gap where the new "
        "element belongs.\n\n"
        "    def insertion_sort(a):\n"
        "        for i in range(1, len(a)):\n"
        "            x, j = a[i], i - 1\n"
        "            while j >= 0 and a[j] > x:\n"
        "                a[j + 1] = a[j]\n"
        "                j -= 1\n"
        "            a[j + 1] = x"),
    "Shell sort": (
        "Shell sort, published by Donald Shell in 1959, is insertion sort with long jumps. It "
        "first sorts elements that are far apart, for example every 40th element, then "
        "shrinks the gap step by step until the final pass is an ordinary insertion sort. "
        "The early passes move elements close to their final positions, so the last pass has "
        "little left to do. Its running time depends heavily on the gap sequence."),
    "Merge sort": (
        "Merge sort is the classic divide-and-conquer algorithm. It splits the array into "
        "two halves, sorts each half recursively and then merges the two sorted halves by "
        "repeatedly taking the smaller front element. The merge step needs a temporary "
        "buffer, which is where the O(n) extra memory comes from.\n\n"
        "    def merge_sort(a):\n"
        "        if len(a) <= 1:\n"
        "            return a\n"
        "        mid = len(a) // 2\n"
        "        left, right = merge_sort(a[:mid]), merge_sort(a[mid:])\n"
        "        out, i, j = [], 0, 0\n"
        "        while i < len(left) and j < len(right):\n"
        "            if left[i] <= right[j]:\n"
        "                out.append(left[i]); i += 1\n"
        "            else:\n"
        "                out.append(right[j]); j += 1\n"
        "        return out + left[i:] + right[j:]\n\n"
        "Taking from the left half when the keys are equal (the <= above) is what makes it "
        "stable."),
    "Quicksort": (
        "Quicksort picks a pivot element and partitions the array so that smaller elements "
        "come before the pivot and larger ones after it; the pivot is then in its final "
        "position, and the two sides are sorted recursively. Partitioning happens in place "
        "and has excellent cache behaviour, which is why quicksort is often the fastest "
        "comparison sort in practice. Its weakness is the pivot: if it repeatedly picks the "
        "smallest or largest element, for instance the first element of an already sorted "
        "array, the partitions become lopsided and the running time degrades."),
    "Heapsort": (
        "Heapsort first rearranges the array into a binary max-heap, a tree stored in the "
        "array in which every parent is at least as large as its children. The largest "
        "element is then at the root. The algorithm swaps it with the last element, shrinks "
        "the heap by one and restores the heap property by sifting the new root down. "
        "Repeating this n times produces a sorted array without any extra buffer."),
    "Timsort": (
        "Timsort, designed by Tim Peters for Python in 2002, is a hybrid of merge sort and "
        "insertion sort tuned for real-world data. It scans the input for runs that are "
        "already ascending (or strictly descending, which it reverses), extends short runs "
        "to a minimum length with insertion sort, and merges the runs using a stack with "
        "carefully chosen balance rules. A \"galloping\" mode speeds up merges when one run "
        "keeps winning."),
    "Introsort": (
        "Introsort, introduced by David Musser in 1997, starts as quicksort but keeps track "
        "of the recursion depth. If the depth exceeds a limit of about 2 log2 n, which "
        "signals that the pivots are behaving badly, it switches to heapsort for that "
        "part of the array. Small partitions are finished with insertion sort. The result "
        "keeps quicksort's speed on typical inputs while guaranteeing O(n log n) in the "
        "worst case."),
    "Counting sort": (
        "Counting sort does not compare elements at all. When the keys are small integers "
        "in a known range 0..k, it counts how many times each key occurs, turns the counts "
        "into starting positions with a running sum, and then places each element directly "
        "into its slot in an output array.\n\n"
        "    def counting_sort(a, k):\n"
        "        counts = [0] * (k + 1)\n"
        "        for x in a:\n"
        "            counts[x] += 1\n"
        "        pos = 0\n"
        "        for key, c in enumerate(counts):\n"
        "            counts[key], pos = pos, pos + c\n"
        "        out = [None] * len(a)\n"
        "        for x in a:\n"
        "            out[counts[x]] = x\n"
        "            counts[x] += 1\n"
        "        return out"),
    "Radix sort": (
        "Radix sort sorts integers or fixed-length strings digit by digit. The usual "
        "least-significant-digit version runs a stable sort, typically counting sort, on the "
        "last digit, then on the second-to-last, and so on. Because each pass is stable, the "
        "order established by earlier digits survives. With d digits in base b the work is "
        "d passes of O(n + b) each."),
    "Bucket sort": (
        "Bucket sort spreads the input across k buckets by value, for example by taking the "
        "integer part of x * k for numbers in the interval [0, 1), sorts each bucket with a "
        "simple algorithm such as insertion sort, and concatenates the buckets. When the "
        "input is spread evenly, each bucket holds only a few elements and the whole sort is "
        "close to linear."),
}

USE = {
    "Bubble sort": (
        "When to use it: almost never in production. It is worth knowing because interviewers "
        "like to ask about it, and because the early-exit check makes it linear on an "
        "already sorted array, but insertion sort does the same job with fewer operations."),
    "Selection sort": (
        "When to use it: when writes are far more expensive than reads, for example on some "
        "kinds of flash memory, because it minimises the number of swaps. Otherwise it is "
        "mainly a teaching example."),
    "Insertion sort": (
        "When to use it: for small arrays, typically fewer than a few dozen elements, and for "
        "data that is almost sorted, where it runs in close to linear time. That is why "
        "production sorts such as Timsort and introsort use it for short runs and small "
        "partitions."),
    "Shell sort": (
        "When to use it: in memory-constrained or embedded settings where you want something "
        "much faster than insertion sort without recursion or extra buffers. It also makes a "
        "good interview discussion of how gap sequences change the analysis."),
    "Merge sort": (
        "When to use it: when you need stability and guaranteed O(n log n), when sorting "
        "linked lists (where merging needs no extra array), and for external sorting of data "
        "that does not fit in memory, where sorted chunks on disk are merged."),
    "Quicksort": (
        "When to use it: as a general-purpose in-memory sort of primitive values when "
        "stability does not matter. Choose pivots at random or with median-of-three, and "
        "handle many duplicate keys with three-way partitioning."),
    "Heapsort": (
        "When to use it: when you need a guaranteed O(n log n) bound with O(1) extra memory, "
        "as in some real-time or embedded systems. It is usually slower than quicksort in "
        "practice because its memory accesses jump around the array. The heap itself is also "
        "the basis of priority queues and of partial sorts such as finding the top k items."),
    "Timsort": (
        "When to use it: you are probably using it already. It is the algorithm behind "
        "Python's list.sort and sorted, and Java uses it for sorting arrays of objects. It "
        "shines on partially ordered data, such as a list with a few new items appended."),
    "Introsort": (
        "When to use it: as the default unstable sort in a systems language. Common C++ "
        "standard library implementations use introsort for std::sort, and .NET uses it in "
        "Array.Sort."),
    "Counting sort": (
        "When to use it: when the keys are integers in a small range, such as ages, exam "
        "scores or bytes. If k is much larger than n the count array dominates and the "
        "advantage disappears."),
    "Radix sort": (
        "When to use it: for large arrays of fixed-width integers or strings, for example "
        "32-bit keys sorted in four passes of one byte each. It is popular in GPU sorting "
        "libraries and database engines."),
    "Bucket sort": (
        "When to use it: for numbers that are known to be roughly uniformly distributed. If "
        "the data clusters, most elements land in a few buckets and the running time falls "
        "back to that of the inner sort, quadratic in the worst case."),
}

INTRO = """1. Background

Sorting means arranging items in order according to a key, such as numbers from smallest to largest or names alphabetically. Most algorithms in this guide are comparison sorts: they learn about the data only by comparing pairs of elements. For comparison sorts there is a hard lower bound. There are n! possible orderings of n items, and each comparison can at best halve the remaining possibilities, so any comparison sort needs about log2(n!) comparisons in the worst case, which grows like n log n. Merge sort, heapsort and Timsort reach this bound; counting, radix and bucket sort escape it because they use the values of the keys directly.

2. Terms used below

Stable: elements with equal keys keep their original relative order. Stability matters when you sort by one key after another, for example by date and then by customer, and want the earlier order preserved among ties.

In place: the algorithm needs only a small, constant or logarithmic amount of memory beyond the input itself.

Adaptive: the algorithm runs faster when the input is already partly sorted.

Complexities are given for n elements. For the non-comparison sorts, k is the range of key values, d the number of digits and b the base.

3. The algorithms"""

LIBRARIES = """5. What standard libraries actually do

Python's list.sort and sorted use Timsort, so they are stable and very fast on partly ordered data. Java sorts arrays of primitives with a dual-pivot quicksort and arrays of objects with Timsort, which keeps object sorts stable. In C++, std::sort is usually an introsort and std::stable_sort a merge sort. JavaScript's Array.prototype.sort has been required to be stable since ECMAScript 2019, and the V8 engine uses Timsort. In day-to-day code you should almost always call the library sort and supply a key or comparator rather than writing your own.

6. Choosing an algorithm in practice

If you need a stable sort, use merge sort or Timsort. If memory is tight and you need a worst-case guarantee, use heapsort. For general in-memory sorting of numbers, a well-implemented quicksort or introsort is hard to beat. For very small or nearly sorted inputs, insertion sort is best. When keys are small integers or fixed-width values, counting or radix sort can beat every comparison sort. And when the data does not fit in memory, sort chunks that do fit and merge them from disk.

7. Interview tips

Be ready to state the best, average and worst cases of the main algorithms, explain why quicksort's worst case is quadratic and how to avoid it, explain what stability means with an example, and implement merge sort or quicksort on a whiteboard. Interviewers also like follow-up questions: how to sort a file larger than memory, how to find the k largest items without sorting everything, and when a linear-time sort is possible."""

DRIFT = """Sorting has a long history that predates electronic computers. Herman Hollerith's tabulating machines, built for the 1890 United States census, read punched cards, and later card sorters separated decks into pockets one column at a time, which is essentially radix sort done mechanically.

The story of computing from there is remarkable. The ENIAC, completed in 1945, filled a large room and used about 18,000 vacuum tubes. The invention of the transistor at Bell Labs in 1947 made machines smaller and more reliable, and the integrated circuit, developed independently by Jack Kilby and Robert Noyce around 1958 and 1959, started the miniaturisation that continues today. Gordon Moore observed in 1965 that the number of components on a chip was doubling at a steady rate, an observation later known as Moore's law.

Personal computers arrived in the 1970s and became common in the 1980s, and the spread of the World Wide Web in the 1990s, built on Tim Berners-Lee's proposal at CERN in 1989, brought computing into nearly every home. Smartphones followed in the 2000s, and today a phone in your pocket is millions of times more powerful than the machines that guided the Apollo missions. It is worth reading a good history of computing if you are interested in how the field developed, because many of the ideas that seem modern are decades old."""


def _complexity(i: int, name: str, attrs: tuple) -> str:
    best, avg, worst, space, stable, in_place = attrs
    stable_text = ("stable, so equal keys keep their original order" if stable
                   else "not stable: equal keys can change their relative order")
    place_text = "it sorts in place" if in_place else "it does not sort in place"
    if i % 3 == 0:
        return (f"Complexity: {name} takes {best} time in the best case, {avg} on average "
                f"and {worst} in the worst case, with {space} extra space. It is "
                f"{stable_text}, and {place_text}.")
    if i % 3 == 1:
        return (f"Complexity: the worst case is {worst} and the average case {avg}; the best "
                f"case is {best}. Extra memory: {space}. The algorithm is {stable_text}; "
                f"{place_text}.")
    return (f"Complexity: expect {avg} on typical inputs, {best} at best and {worst} at "
            f"worst. It uses {space} additional memory, is {stable_text}, and {place_text}.")


def _table(attrs: dict) -> str:
    lines = ["4. Summary table", "",
             "Algorithm       | Best        | Average             | Worst        | Space   "
             "| Stable"]
    for name, (best, avg, worst, space, stable, _) in attrs.items():
        avg_short = "varies" if avg.startswith("depends") else avg
        worst_short = "O(n^(3/2))" if "Knuth" in worst else worst
        lines.append(f"{name:<15} | {best:<11} | {avg_short:<19} | {worst_short:<12} | "
                     f"{space.replace(' stack', ''):<7} | {'yes' if stable else 'no'}")
    return "\n".join(lines)


def _sections(attrs: dict, names: list[str]) -> list[str]:
    out = []
    for i, name in enumerate(names):
        out.append("\n\n".join([f"3.{i + 1} {name}", HOW[name], example(name),
                                _complexity(i, name, attrs[name]), USE[name]]))
    return out


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    names = list(ATTRS)
    chosen = "\n\n".join([INTRO, *_sections(ATTRS, names), _table(ATTRS), LIBRARIES])
    wrong = dict(ATTRS)
    wrong["Quicksort"] = ("O(n log n)", "O(n log n)", "O(n log n)", "O(log n) stack", False,
                          True)
    wrong["Merge sort"] = ("O(n log n)", "O(n log n)", "O(n log n)", "O(n)", False, False)
    factual = "\n\n".join([INTRO, *_sections(wrong, names), _table(wrong), LIBRARIES])
    drift = "\n\n".join([INTRO, *_sections(ATTRS, names[:9]), DRIFT])
    return {
        "subset": "QA",
        "prompt": PROMPT,
        "chosen": chosen,
        "rejected": [factual, pad_verbosely(chosen, "sorting-guide"), drift],
    }

"""Needle builder: sites, lengths, skips, chosen/rejected differ only at the site, sources."""

from __future__ import annotations

import json
import os
from collections import defaultdict

import pytest

from needlework import formats, tokens
from needlework.datasets.transfer import import_bytes
from needlework.formats import FormatError
from needlework.needle import builder, inputs, sites
from tests.test_needle_model import paragraphs

ESTIMATE = builder.TokenCounter(tokens.estimate, "estimate")


def hays(count=3, target=3300):
    return inputs.demo_haystacks(count, target, paragraphs=paragraphs(200), counter=tokens.estimate)


def build(kind="safety", lengths=(1000, 2000, 3000), haystacks=None, **options):
    pairs = inputs.builtin_pairs(kind)
    opts = builder.BuildOptions(kind=kind, lengths=tuple(lengths), **options)
    return builder.build_needles(haystacks or hays(), pairs, opts, ESTIMATE)


def groups(records):
    out = defaultdict(list)
    for r in records:
        out[(r["haystack_id"], r["length_tokens"])].append(r)
    return out


def first_difference(a: str, b: str) -> int:
    return len(os.path.commonprefix([a, b]))


@pytest.mark.parametrize("kind", ["safety", "factuality"])
def test_chosen_and_rejected_differ_only_at_the_site(kind):
    result = build(kind)
    pairs = {p.id: p for p in inputs.builtin_pairs(kind)}
    originals = {h.id: h.text for h in hays()}
    assert result.records
    for r in result.records:
        chosen, rejected = r["chosen"][0], r["rejected"][0]
        pair = pairs[r["needle_id"]]
        # Independently: where the texts start to differ, backed up to the start of the phrase.
        d = first_difference(chosen, rejected)
        site = d - len(os.path.commonprefix([pair.chosen, pair.rejected]))
        assert chosen[:site] == rejected[:site]
        assert chosen[site:].startswith(pair.chosen + " ")
        assert rejected[site:].startswith(pair.rejected + " ")
        rest = chosen[site + len(pair.chosen) + 1:]
        assert rest == rejected[site + len(pair.rejected) + 1:]
        # Without the needle, the text is the haystack cut at a boundary.
        assert originals[r["haystack_id"]].startswith(chosen[:site] + rest)
        # The site is a chunk start: the start of the text or after whitespace ending a sentence.
        assert site == 0 or (chosen[site - 1].isspace() and chosen[:site].rstrip()[-1] in ".!?")
        # tagged_position = token offset of the needle / tokens of the rejected response.
        expected = tokens.estimate(rejected[:site]) / tokens.estimate(rejected)
        assert r["tagged_position"] == pytest.approx(expected, abs=1e-5)
        assert r["needle_char"] == site
        assert r["response_tokens"] == tokens.estimate(rejected)
        assert r["word_count"] == len(rejected.split())


def test_grid_mode_gives_the_requested_count_in_order():
    result = build(positions=7)
    for (_, length), rs in groups(result.records).items():
        assert len(rs) == 7
        positions = [r["tagged_position"] for r in sorted(rs, key=lambda r: r["site_index"])]
        assert positions == sorted(positions) and len(set(positions)) == 7
        for i, p in enumerate(positions):
            assert abs(p - (i + 0.5) / 7) < 0.08, (length, i, p)


def test_paper_mode_gives_length_over_1000_sites_one_per_stratum():
    result = build(paper_sites=True, seed=3)
    by_group = groups(result.records)
    assert set(by_group) == {(h, n) for h in ("demo1", "demo2", "demo3") for n in (1000, 2000, 3000)}
    for (_, length), rs in by_group.items():
        n = length // 1000
        assert len(rs) == n
        assert sorted(min(int(r["tagged_position"] * n), n - 1) for r in rs) == list(range(n))
    other = build(paper_sites=True, seed=4)
    assert [r["tagged_position"] for r in other.records] != [r["tagged_position"] for r in result.records]
    assert build(paper_sites=True, seed=3).records == result.records


def test_lengths_within_tolerance_and_short_haystacks_skipped():
    short = inputs.Haystack("short", "Tell me a bit.", "\n\n".join(paragraphs(6, seed=9)))
    stock = hays(2)
    result = build(haystacks=stock + [short], tolerance=0.05)
    pairs = {p.id: p for p in inputs.builtin_pairs("safety")}
    for r in result.records:
        cut = r["chosen"][0].replace(pairs[r["needle_id"]].chosen + " ", "", 1)
        assert abs(tokens.estimate(cut) - r["length_tokens"]) <= 0.05 * r["length_tokens"]
    short_tokens = tokens.estimate(short.text)
    assert short_tokens < 950
    assert result.summary.skipped == {1000: 1, 2000: 1, 3000: 1}
    assert result.summary.kept == {1000: 2, 2000: 2, 3000: 2}
    assert not any(r["haystack_id"] == "short" for r in result.records)
    assert result.summary.records == len(result.records) == 3 * 2 * 10
    text = "\n".join(result.summary.lines())
    assert "1 skipped (too short)" in text and "estimate" in text


def test_records_are_valid_needle_records_with_unique_ids():
    result = build()
    parsed = formats.parse(result.jsonl().encode(), "needles.jsonl")
    assert parsed.format == "needle" and len(parsed.records) == len(result.records)
    assert parsed.records[0].subset == "1000"
    for field in ("word_count", "tagged_position", "prompt", "chosen", "rejected", "length_tokens",
                  "site_index", "needle_id", "haystack_id", "id"):
        assert field in result.records[0]


def test_same_needle_at_every_length_for_a_haystack_site():
    result = build()
    needles = defaultdict(set)
    for r in result.records:
        needles[(r["haystack_id"], r["site_index"])].add(r["needle_id"])
    assert all(len(v) == 1 for v in needles.values())


def test_chunks_are_at_least_30_words_and_long_paragraphs_split():
    long_para = " ".join(f"Sentence number {k} has exactly seven words." for k in range(40))
    text = "Short heading\n\n" + long_para + "\n\n" + "\n\n".join(paragraphs(3))
    starts = sites.chunk_starts(text)
    ends = starts[1:] + [len(text)]
    words = [len(text[a:b].split()) for a, b in zip(starts, ends, strict=True)]
    assert all(w >= sites.MIN_WORDS for w in words)
    assert len(starts) > 5  # the 280-word paragraph was split at sentence ends
    assert starts[0] == 0  # the short heading joined the next paragraph


def test_facts_file_errors_name_file_line_and_field(tmp_path):
    path = tmp_path / "my_facts.jsonl"
    path.write_text("\n".join([
        json.dumps({"true": "Salt dissolves in water.", "false": "Salt never dissolves in water."}),
        json.dumps({"true": "Cats are mammals."}),
        json.dumps({"true": 5, "false": "x"}),
        json.dumps({"true": "Same.", "false": "Same."}),
        json.dumps(["not", "an", "object"]),
        json.dumps({"true": "A\nB", "false": "C", "id": "a"}),
        json.dumps({"true": "D.", "false": "E.", "id": "a"}),
    ]) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        inputs.read_facts(str(path))
    messages = [str(p) for p in info.value.problems]
    assert "my_facts.jsonl line 2: false is missing" in messages
    assert "my_facts.jsonl line 3: true must be a string, got int" in messages
    assert "my_facts.jsonl line 4: true and false are the same statement" in messages
    assert "my_facts.jsonl line 5: record must be a JSON object, got list" in messages
    assert any(m.startswith("my_facts.jsonl line 6: true must be one line") for m in messages)
    assert "my_facts.jsonl line 7: id 'a' is a duplicate (first seen on line 6)" in messages
    with pytest.raises(FormatError) as bad_json:
        inputs.read_facts(b'{"true": "x", "false": \n', "up.jsonl")
    assert str(bad_json.value.problems[0]).startswith("up.jsonl line 1: invalid JSON")


def test_user_facts_are_added_to_the_builtin_set(tmp_path):
    path = tmp_path / "facts.jsonl"
    path.write_text(json.dumps({"id": "salt", "true": "Salt dissolves in water.",
                                "false": "Salt never dissolves in water."}) + "\n", encoding="utf-8")
    source = tmp_path / "hay.jsonl"
    source.write_text("\n".join(json.dumps({"prompt": f"Q{k}", "response": h.text, "id": f"h{k}"})
                                for k, h in enumerate(hays(2))) + "\n", encoding="utf-8")
    options = builder.BuildOptions(kind="factuality", lengths=(1000,), positions=40)
    result = builder.build_from_source(str(source), options, facts=str(path), counter=ESTIMATE)
    assert result.summary.pairs == len(inputs.builtin_pairs("factuality")) + 1
    used = {r["needle_id"] for r in result.records}
    assert "facts:salt" in used
    record = next(r for r in result.records if r["needle_id"] == "facts:salt")
    site = record["needle_char"]
    assert record["rejected"][0][site:].startswith("Salt never dissolves in water. ")
    with pytest.raises(ValueError, match="factuality"):
        builder.build_from_source(str(source), builder.BuildOptions(lengths=(1000,)), facts=str(path))


def test_haystack_sources_file_preferences_and_dataset(db, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"prompt": "p", "response": "r"}) + "\n" + json.dumps({"prompt": "p"}) + "\n"
                   + json.dumps({"prompt": 3, "response": ""}) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as info:
        inputs.load_haystacks(str(bad))
    assert [str(p) for p in info.value.problems] == [
        "bad.jsonl line 2: response is missing", "bad.jsonl line 3: prompt must be a string, got int",
        "bad.jsonl line 3: response is empty"]
    lfrb = [{"id": f"Chat_{k}", "subset": "Chat", "prompt": f"P{k}", "chosen": [h.text],
             "rejected": ["a", "b", "c"]} for k, h in enumerate(hays(2))]
    data = "".join(json.dumps(r) + "\n" for r in lfrb).encode()
    from_file = inputs.haystacks_from_bytes(data, "lf.jsonl")
    assert [(h.id, h.prompt) for h in from_file] == [("Chat_0", "P0"), ("Chat_1", "P1")]
    assert from_file[0].text == lfrb[0]["chosen"][0]
    import_bytes(db, data, "lf.jsonl", dataset="lf")
    from_db = inputs.load_haystacks("lf", db=db)
    assert from_db == from_file
    with pytest.raises(ValueError, match="no file and no dataset"):
        inputs.load_haystacks("nope", db=db)


def test_demo_source_composes_long_haystacks_from_demo_paragraphs():
    demo = pytest.importorskip("needlework.demo")
    if not hasattr(demo, "haystack_paragraphs"):
        pytest.skip("needlework.demo.haystack_paragraphs is not there yet")
    two = inputs.demo_haystacks(2, 8000)
    assert two == inputs.demo_haystacks(2, 8000)  # deterministic
    assert all(tokens.estimate(h.text) >= 8000 for h in two)
    assert two[0].text != two[1].text
    result = builder.build_needles(two, inputs.builtin_pairs("safety"),
                                   builder.BuildOptions(lengths=(8000,), positions=10), ESTIMATE)
    assert result.summary.kept == {8000: 2} and len(result.records) == 20


def test_bad_options_are_refused():
    with pytest.raises(ValueError, match="kind"):
        build(kind="style")
    with pytest.raises(ValueError, match="lengths"):
        build(lengths=(0,))
    with pytest.raises(ValueError, match="positions"):
        build(positions=0)

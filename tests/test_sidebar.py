"""The sidebar's choice of dataset (components/sidebar.py)."""

from __future__ import annotations

from components.sidebar import chosen_dataset

NAMES = ["demo-grounding", "demo-preference", "xss"]


def test_the_session_keeps_its_dataset():
    assert chosen_dataset("xss", "demo-preference", NAMES) == "xss"


def test_a_picker_that_lost_its_value_takes_the_dataset_from_the_url():
    """After a server restart the browser may send the picker's default (none) instead
    of its choice: the link in the URL brings it back, never the first dataset (the
    review page then showed "pick a preference dataset" and its keys waited for a page
    that never came: test_keys' review kill test)."""
    assert chosen_dataset(None, "demo-preference", NAMES) == "demo-preference"


def test_without_a_usable_link_the_first_dataset():
    assert chosen_dataset(None, None, NAMES) == "demo-grounding"
    assert chosen_dataset(None, "gone", NAMES) == "demo-grounding"
    assert chosen_dataset("deleted-meanwhile", None, NAMES) == "demo-grounding"


def test_no_datasets_no_choice():
    assert chosen_dataset(None, "x", []) is None


def test_a_page_opened_from_a_link_shows_the_links_dataset():
    """Home's Open › of demo-preference while the session held demo-grounding opened the
    review page on demo-grounding ("pick a preference dataset")."""
    assert chosen_dataset("demo-grounding", "demo-preference", NAMES, opening=True) == \
        "demo-preference"
    assert chosen_dataset("demo-grounding", "gone", NAMES, opening=True) == "demo-grounding"
    assert chosen_dataset("demo-grounding", None, NAMES, opening=True) == "demo-grounding"

"""Roles enforced by the logic: an annotator called directly is refused adjudication,
import, replace, export and delete; writes go under the signed-in name, on assigned
items; key actions pass the same checks; local mode (no actor) is as before."""

from __future__ import annotations

import pytest

from needlework.actions import writes
from needlework.actions.service import apply_actions
from needlework.datasets.transfer import delete_dataset, export_text, import_bytes
from needlework.teams import accounts
from needlework.teams.assignment import assign_dataset, visible_items
from needlework.teams.audit import export_history
from needlework.teams.guidelines import set_guidelines
from needlework.teams.permissions import (
    PermissionDenied,
    action_guard,
    can,
    require,
    visible_annotator,
)
from needlework.teams.quality import mark_gold, quality_report
from store.annotations import get_value, history
from store.datasets import get_dataset, list_datasets
from tests.conftest import garage_records, jsonl
from tests.teams_fixtures import grounding, team


@pytest.fixture
def assigned(db):
    """A team and dataset g of 6 items, each given to one of ana, bob, cy."""
    people = team(db)
    keys = grounding(db, 6)
    assign_dataset(db, "g", ["ana", "bob", "cy"], actor=people["boss"])
    mine = {who: [e for e in keys if db.execute(
        "select 1 from assignments where dataset='g' and item_key=? and annotator=?",
        [e, who]).fetchone()] for who in ("ana", "bob", "cy")}
    return people, mine


def test_an_annotator_cannot_adjudicate_import_replace_export_or_delete(db, assigned, tmp_path):
    people, mine = assigned
    ana = people["ana"]
    key = mine["ana"][0]
    refusals = {
        "adjudicate": lambda: writes.adjudicate(db, "g", key, "final:label:1", "irrelevant",
                                                actor=ana),
        "import": lambda: import_bytes(db, jsonl(garage_records(2)), "new.jsonl", actor=ana),
        "replace": lambda: import_bytes(db, jsonl(garage_records(2)), "g.jsonl", dataset="g",
                                        replace=True, drop_annotations=True, actor=ana),
        "export": lambda: export_text(db, "g", "garage", actor=ana),
        "delete": lambda: delete_dataset(db, "g", actor=ana),
        "assign": lambda: assign_dataset(db, "g", ["ana"], replace=True, actor=ana),
        "guidelines": lambda: set_guidelines(db, "g", "# Mine now", actor=ana),
        "audit": lambda: export_history(db, "g", tmp_path / "h.csv", actor=ana),
        "mark gold": lambda: mark_gold(db, "g", key, actor=ana),
        "quality": lambda: quality_report(db, "g", actor=ana),
    }
    for what, call in refusals.items():
        with pytest.raises(PermissionDenied) as info:
            call()
        message = str(info.value)
        assert message.startswith("ana is an annotator and may not "), what
        assert "role" in message, what
    assert str(info.value) == ("ana is an annotator and may not see the quality figures of the "
                               "team in dataset 'g': that needs the reviewer role")
    # nothing changed: no final value, no new or replaced dataset, g still there
    assert get_value(db, "g", key, "ana", "final:label:1") is None
    assert [d["name"] for d in list_datasets(db)] == ["g"]
    assert get_dataset(db, "g")["items"] == 6
    assert not (tmp_path / "h.csv").exists()


def test_reviewers_adjudicate_admins_import_export_and_delete(db, assigned):
    people, mine = assigned
    rita, boss = people["rita"], people["boss"]
    key = mine["bob"][0]
    hid = writes.adjudicate(db, "g", key, "final:label:2", "OUTDATED", actor=rita)
    entry = history(db, "g", key)[0]
    assert (entry["id"], entry["annotator"], entry["by"], entry["field"]) == (
        hid, "rita", "rita", "final:label:2")
    with pytest.raises(PermissionDenied, match="rita is a reviewer and may not import datasets"):
        import_bytes(db, jsonl(garage_records(2)), "new.jsonl", actor=rita)
    summary = import_bytes(db, jsonl(garage_records(2)), "new.jsonl", actor=boss)
    assert get_dataset(db, summary.dataset)["created_by"] == "boss"
    assert '"sample_id": "sample-1"' in export_text(db, "g", "garage", actor=boss)
    assert delete_dataset(db, "g", actor=boss) is True
    assert get_dataset(db, "g") is None
    # assignments went with the items, the plan with the dataset
    assert db.execute("select count(*) from assignments where dataset = 'g'").fetchone()[0] == 0
    assert db.execute("select count(*) from assignment_plans").fetchone()[0] == 0
    assert delete_dataset(db, "g", actor=boss) is False


def test_annotators_write_their_own_name_on_their_own_items(db, assigned):
    people, mine = assigned
    ana = people["ana"]
    own, other = mine["ana"][0], mine["bob"][0]
    assert writes.write_annotation(db, "g", own, "label:1", "irrelevant", actor=ana) is not None
    assert history(db, "g", own)[0]["by"] == "ana"
    with pytest.raises(PermissionDenied, match=f"item '{other}' of dataset 'g' is not assigned "
                                               "to ana"):
        writes.write_annotation(db, "g", other, "label:1", "irrelevant", actor=ana)
    with pytest.raises(PermissionDenied, match="ana is signed in: changes are saved under that "
                                               "name, not 'bob'"):
        writes.write_annotation(db, "g", own, "label:1", "OUTDATED", annotator="bob", actor=ana)
    with pytest.raises(PermissionDenied, match="not assigned"):
        writes.save_answer(db, "g", other, "An answer [cite_1].", actor=ana)
    with pytest.raises(ValueError, match="written by adjudicate"):
        writes.write_annotation(db, "g", own, "final:label:1", "OUTDATED", actor=people["rita"])
    # reviewers see everyone's work and may annotate any item
    assert writes.write_annotation(db, "g", other, "label:1", "UNKNOWN", actor=people["rita"])
    assert get_value(db, "g", other, "bob", "label:1") is None


def test_key_actions_pass_the_same_checks(db, assigned):
    people, mine = assigned
    ana = people["ana"]

    def action(i, item, who="ana", field="label:1", value="OUTDATED"):
        return {"id": f"act-{i:08d}", "kind": "set", "dataset": "g", "item": item,
                "annotator": who, "field": field, "value": value}

    batch = [action(1, mine["ana"][0]), action(2, mine["bob"][0]),
             action(3, mine["ana"][0], who="bob", field="label:2"),
             {"id": "act-00000004", "kind": "deflect", "dataset": "g", "item": mine["cy"][0],
              "annotator": "ana"}]
    delivery = apply_actions(db, batch, actor=ana)
    assert [(o.id, o.status) for o in delivery.outcomes] == [
        ("act-00000001", "applied"), ("act-00000002", "rejected"),
        ("act-00000003", "rejected"), ("act-00000004", "rejected")]
    assert delivery.outcomes[1].message == (f"item '{mine['bob'][0]}' of dataset 'g' is not "
                                            "assigned to ana")
    assert "saved under that name, not 'bob'" in delivery.outcomes[2].message
    assert get_value(db, "g", mine["bob"][0], "ana", "label:1") is None
    assert get_value(db, "g", mine["cy"][0], "ana", "answer") is None
    # the same guard given as the allowed hook; local mode (no actor) refuses nothing
    again = apply_actions(db, [action(5, mine["bob"][0])], action_guard(db, ana))
    assert again.outcomes[0].status == "rejected"
    local = apply_actions(db, [action(6, mine["bob"][0])])
    assert local.outcomes[0].status == "applied"


def test_a_changed_role_or_a_disabled_account_counts_at_once(db, assigned):
    people, mine = assigned
    ana = people["ana"]  # the object the page holds since sign-in
    key = mine["ana"][0]
    accounts.set_role(db, "ana", "reviewer", actor=people["boss"])
    assert writes.adjudicate(db, "g", key, "final:label:1", "irrelevant", actor=ana)
    accounts.set_disabled(db, "ana", actor=people["boss"])
    with pytest.raises(PermissionDenied, match="the account 'ana' is disabled"):
        writes.write_annotation(db, "g", key, "label:1", "UNKNOWN", actor=ana)
    delivery = apply_actions(db, [{"id": "act-00000009", "kind": "set", "dataset": "g",
                                   "item": key, "annotator": "ana", "field": "label:1",
                                   "value": "UNKNOWN"}], actor=ana)
    assert delivery.outcomes[0].status == "rejected" and "disabled" in delivery.outcomes[0].message


def test_undo_is_ones_own_unless_reviewer(db, assigned):
    people, mine = assigned
    ana, bob, rita = people["ana"], people["bob"], people["rita"]
    mine_id = writes.write_annotation(db, "g", mine["ana"][0], "label:1", "OUTDATED", actor=ana)
    bobs_id = writes.write_annotation(db, "g", mine["bob"][0], "label:1", "OUTDATED", actor=bob)
    assert writes.undo_change(db, mine_id, actor=ana) is not None
    with pytest.raises(PermissionDenied, match="may not undo other people's changes"):
        writes.undo_change(db, bobs_id, actor=ana)
    writes.undo_change(db, bobs_id, actor=rita)
    entry = history(db, "g", mine["bob"][0])[0]
    assert (entry["action"], entry["annotator"], entry["by"]) == ("undo", "bob", "rita")
    assert get_value(db, "g", mine["bob"][0], "bob", "label:1") is None


def test_what_each_role_sees(db, assigned):
    people, mine = assigned
    assert visible_annotator(people["ana"]) == "ana"
    assert visible_annotator(people["rita"]) is None and visible_annotator(None) is None
    assert sorted(visible_items(db, "g", people["ana"])) == sorted(mine["ana"])
    assert visible_items(db, "g", people["rita"]) is None
    assert visible_items(db, "g", None) is None
    assert [v for v in ("annotate", "adjudicate", "import") if can(people["rita"], v)] == [
        "annotate", "adjudicate"]
    require(None, "delete")  # local mode: allowed
    with pytest.raises(ValueError, match="unknown permission"):
        can(people["boss"], "fly")


def test_local_mode_writes_as_before(db):
    grounding(db, 2)
    assert writes.write_annotation(db, "g", "sample-1", "label:1", "OUTDATED", annotator="Zoe")
    assert writes.adjudicate(db, "g", "sample-1", "final:label:1", "UNKNOWN", reviewer="Max")
    assert [e["by"] for e in history(db, "g")] == ["Max", "Zoe"]
    import_bytes(db, jsonl(garage_records(1)), "more.jsonl")
    assert export_text(db, "more", "garage")
    assert delete_dataset(db, "more") is True


def test_remote_code_is_offered_only_on_a_loopback_server_and_to_admins():
    from needlework.teams.permissions import User, remote_code_refusal  # noqa: PLC0415

    admin = User(1, "ad", "admin")
    annotator = User(2, "an", "annotator")
    assert remote_code_refusal("127.0.0.1", None) is None
    assert remote_code_refusal("localhost", admin) is None
    assert "every network interface" in remote_code_refusal(None, None)
    assert "listens on 0.0.0.0" in remote_code_refusal("0.0.0.0", admin)
    assert "needs an admin" in remote_code_refusal("127.0.0.1", annotator)

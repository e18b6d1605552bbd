"""Roles and what each may do, checked by the logic (never only by hiding buttons).

Three roles, each with everything the one before may do:

- **annotator**: labels, answers, dimensions and verdicts of their own, on the items
  assigned to them (:mod:`needlework.teams.assignment`); sees only their own work.
- **reviewer**: also annotates any item, sees everyone's work and the quality
  figures, adjudicates (``final:*`` fields), marks gold items, undoes others' changes.
- **admin**: also imports, exports, replaces and deletes datasets, manages accounts,
  assignments and guidelines, exports the history.

Every logic function that changes something takes ``actor``: the signed-in
:class:`User` in team mode, ``None`` in local mode (one person on their own machine:
everything is allowed, as before teams existed). :func:`require` raises
:class:`PermissionDenied` with one sentence saying who may not do what and which role
it needs. Functions that hold a database connection call :func:`check`, which first
re-reads the account, so a role changed or an account disabled since sign-in counts
at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sqlite_utils import Database

from store import assignments as store_assignments
from store import users as store_users

ANNOTATOR, REVIEWER, ADMIN = "annotator", "reviewer", "admin"
ROLES: tuple[str, ...] = (ANNOTATOR, REVIEWER, ADMIN)
RANK: dict[str, int] = {role: i for i, role in enumerate(ROLES)}

#: verb -> (the least role that may do it, what it is in words).
PERMISSIONS: dict[str, tuple[str, str]] = {
    "annotate": (ANNOTATOR, "annotate"),
    "view_all": (REVIEWER, "see other annotators' work"),
    "quality": (REVIEWER, "see the quality figures of the team"),
    "adjudicate": (REVIEWER, "adjudicate (set final values)"),
    "mark_gold": (REVIEWER, "mark gold items"),
    "undo_others": (REVIEWER, "undo other people's changes"),
    "import": (ADMIN, "import datasets"),
    "export": (ADMIN, "export datasets"),
    "replace": (ADMIN, "replace datasets"),
    "delete": (ADMIN, "delete datasets"),
    "manage_users": (ADMIN, "manage accounts"),
    "assign": (ADMIN, "assign items to annotators"),
    "guidelines": (ADMIN, "write guidelines"),
    "audit": (ADMIN, "export the change history"),
    "remote_code": (ADMIN, "load a model that runs its own code"),
    "suggest": (ADMIN, "ask a model for suggestions"),
    "configure_judges": (ADMIN, "type a judge's address or name where its key is read"),
    "load_any_model": (ADMIN, "load a model from outside the data folder or from the hub"),
}

#: Addresses only this machine can reach.
LOOPBACK = ("127.0.0.1", "localhost", "::1")


class PermissionDenied(PermissionError):
    """The signed-in user may not do this; the message is one sentence for the screen."""


@dataclass(frozen=True)
class User:
    """A signed-in account (never carries the password hash)."""

    id: int
    name: str
    role: str
    email: str | None = None
    disabled: bool = False
    has_password: bool = False
    locked_until: str | None = None
    last_sign_in_at: str | None = None
    created_at: str = ""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> User:
        return cls(id=int(row["id"]), name=row["name"], role=row["role"], email=row["email"],
                   disabled=bool(row["disabled"]), has_password=bool(row["has_password"]),
                   locked_until=row["locked_until"], last_sign_in_at=row["last_sign_in_at"],
                   created_at=row["created_at"] or "")

    def at_least(self, role: str) -> bool:
        """Whether this user's role is ``role`` or above."""
        return RANK[self.role] >= RANK[role]


def _where(dataset: str | None) -> str:
    return f" in dataset {dataset!r}" if dataset else ""


def can(actor: User | None, verb: str) -> bool:
    """Whether ``actor`` (``None``: local mode) may do ``verb`` by role."""
    if verb not in PERMISSIONS:
        raise ValueError(f"unknown permission {verb!r}")
    if actor is None:
        return True
    return not actor.disabled and actor.at_least(PERMISSIONS[verb][0])


def require(actor: User | None, verb: str, dataset: str | None = None) -> None:
    """Raise :class:`PermissionDenied` unless ``actor`` may do ``verb`` (see
    :data:`PERMISSIONS`); ``None`` (local mode) may do everything."""
    if can(actor, verb):
        return
    assert actor is not None
    role, words = PERMISSIONS[verb]
    if actor.disabled:
        raise PermissionDenied(f"the account {actor.name!r} is disabled: it may not {words}")
    raise PermissionDenied(f"{actor.name} is {_article(actor.role)} {actor.role} and may not "
                           f"{words}{_where(dataset)}: that needs the {role} role")


def remote_code_refusal(address: str | None, actor: User | None) -> str | None:
    """Why a browser may not load a model with ``trust_remote_code`` (``None``: it may).

    Such a model runs Python code from its folder inside the server process, so a visitor
    must not be able to ask for it: the app offers it only when the server listens on this
    machine alone (``server.address`` a loopback address; unset means every interface)
    and, in team mode, to admins. The CLI's ``--trust-remote-code`` is not affected."""
    if (address or "") not in LOOPBACK:
        where = f"listens on {address}" if address else "listens on every network interface"
        return (f"Not offered here: this server {where}, so any visitor could run a model "
                "folder's code on it. Serve the app on 127.0.0.1 (make run does in local mode), "
                "or load the model with the CLI's --trust-remote-code.")
    if not can(actor, "remote_code"):
        return "Not offered to your role: loading a model that runs its own code needs an admin."
    return None


def model_source_refusal(name: str, actor: User | None, data_dir: Path) -> str | None:
    """Why ``actor`` may not load the model ``name`` (``None``: it may).

    A model name is a folder or a hub id: a folder elsewhere on the server reads a path a
    reviewer chose, a hub id makes the server reach the network. In team mode only an
    admin may ask for either; everyone may load a folder inside ``data_dir`` (symbolic
    links resolved), where the demo models are."""
    if can(actor, "load_any_model"):
        return None
    try:
        folder = Path(name.strip()).resolve()
        inside = folder.is_relative_to(data_dir.resolve()) and folder.is_dir()
    except (OSError, ValueError):
        inside = False
    if inside:
        return None
    return (f"Only an admin loads a model from outside the data folder or from the hub: "
            f"pick a folder under {data_dir}/ (the demo model is {data_dir}/demo-model).")


#: [pages] needle_lab (needlework.toml): who may open the Needle lab and its presentation
NEEDLE_LAB_ROLES: tuple[str, ...] = (REVIEWER, ADMIN)


def may_open_needle_lab(actor: User | None, role: str = REVIEWER) -> bool:
    """Whether ``actor`` may open the Needle lab (and present it), ``role`` being the least
    role the config's ``[pages] needle_lab`` names (reviewers by default; local mode
    always). Building or writing a needle set imports a dataset, which still needs
    :data:`PERMISSIONS`' ``import``."""
    if role not in NEEDLE_LAB_ROLES:
        raise ValueError(f"the Needle lab is for {' or '.join(NEEDLE_LAB_ROLES)}s, not {role!r}")
    return actor is None or (not actor.disabled and actor.at_least(role))


def needle_lab_refusal(actor: User | None, role: str = REVIEWER) -> str | None:
    """Why ``actor`` may not open the Needle lab (``None``: they may), in one sentence."""
    if may_open_needle_lab(actor, role):
        return None
    assert actor is not None
    return (f"{actor.name} is {_article(actor.role)} {actor.role} and may not open the Needle "
            f"lab: it needs the {role} role (needlework.toml, [pages] needle_lab).")


def _article(word: str) -> str:
    return "an" if word[:1] in "aeiou" else "a"


def refresh(db: Database, actor: User | None) -> User | None:
    """``actor`` as the database has it now (role, disabled); raises
    :class:`PermissionDenied` when the account is gone."""
    if actor is None:
        return None
    row = store_users.get_user(db, actor.id)
    if row is None or row["name"] != actor.name:
        raise PermissionDenied(f"the account {actor.name!r} no longer exists: sign in again")
    return User.from_row(row)


def check(db: Database, actor: User | None, verb: str, dataset: str | None = None) -> User | None:
    """:func:`refresh` then :func:`require`; returns the fresh account."""
    actor = refresh(db, actor)
    require(actor, verb, dataset)
    return actor


def check_write(db: Database, actor: User | None, dataset: str, item_key: str, annotator: str,
                field: str) -> User | None:
    """May ``actor`` write ``field`` of ``item_key`` under the name ``annotator``?

    In team mode a change is always saved under the signed-in name; ``final:*`` fields
    need the reviewer role; an annotator writes only on items assigned to them.
    Raises :class:`PermissionDenied`; returns the fresh account (``None`` locally).
    """
    if actor is None:
        return None
    adjudication = field.startswith("final:")
    actor = check(db, actor, "adjudicate" if adjudication else "annotate", dataset)
    assert actor is not None
    if (annotator or "").strip() != actor.name:
        raise PermissionDenied(f"{actor.name} is signed in: changes are saved under that name, "
                               f"not {annotator!r}")
    if not adjudication and not actor.at_least(REVIEWER) and not store_assignments.is_assigned(
            db, dataset, item_key, actor.name):
        raise PermissionDenied(f"item {item_key!r} of dataset {dataset!r} is not assigned to "
                               f"{actor.name}")
    return actor


def visible_annotator(actor: User | None) -> str | None:
    """Whose annotations ``actor`` may read: ``None`` means everyone's (local mode,
    reviewers, admins); an annotator reads only their own name's."""
    if actor is None or actor.at_least(REVIEWER):
        return None
    return actor.name


class Target(Protocol):
    """What a write names (a :class:`needlework.actions.parse.Action` has these)."""

    @property
    def dataset(self) -> str: ...

    @property
    def item(self) -> str: ...

    @property
    def annotator(self) -> str: ...

    @property
    def field(self) -> str: ...


def action_guard(db: Database, actor: User | None) -> Callable[[Target], str | None]:
    """The ``allowed`` hook of :func:`needlework.actions.service.apply_actions` for ``actor``:
    returns why an action is refused (the :class:`PermissionDenied` sentence) or
    ``None``. Local mode (``actor=None``) refuses nothing."""

    def allowed(action: Target) -> str | None:
        if actor is None:
            return None
        try:
            check_write(db, actor, action.dataset, action.item, action.annotator, action.field)
        except PermissionDenied as e:
            return str(e)
        return None

    return allowed

"""What a judge run costs in tokens and money: estimated before it, counted after it.

**Before** (:func:`estimate`): the requests the run would send, less those the call cache
answers already (they are not sent and cost nothing) and those too long for the judge's
window (not sent). For the requests to send:

- prompt tokens are counted from the real prompts with the judge model's own tokenizer
  where one is known (:func:`needlework.tokens.chat_counter`: a model folder or cached
  hub tokenizer on disk, rendered through its chat template as the server renders it;
  else the encoding tiktoken knows for an OpenAI model name, with OpenAI's
  :data:`MESSAGE_OVERHEAD` per message and :data:`REPLY_OVERHEAD` per request); for any
  other model the project's counter gives an approximation (``o200k_base`` where it is
  available, else one token per word or punctuation mark) with the same overheads.
  :attr:`Estimate.method` and the line say which;
- completion tokens are *estimated* (:attr:`Estimate.basis` says how): the mean completion
  of this judge's answers in the cache (same endpoint and model, as the server reported
  them; capped at max tokens) when there are any, else max tokens for every request;
- the figure with every answer at max tokens is always given beside it.

The whole is an estimate: the server's own count is the figure (a chat template the
tokenizer on disk does not have, a system prompt the server adds, or reasoning tokens
are not in it).

**After** (:func:`actual`): the tokens the server reported for the requests the run sent;
answers from the cache cost nothing and are counted apart.

With a price on the connection (per million input and output tokens,
:class:`~needlework.judges.connection.Connection` ``input_price`` and ``output_price``),
both come with their cost. The requests of each kind of run are listed by
:func:`judge_requests` (a dataset through the judge engine), :func:`rag_requests` (RAG
answers evaluated) and :func:`suggest_requests` (a suggestion job), with the keys the
runs themselves use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from needlework import tokens
from needlework.formats.preference import Preference
from needlework.judges import cache
from needlework.judges.connection import Connection
from needlework.judges.context import TEMPLATE_MARGIN
from needlework.judges.local import cache_endpoint
from needlework.judges.plan import plan_trials
from needlework.judges.prompts import default_template
from needlework.judges.templates import Template
from store import judges as store

#: tokens the chat format adds around each message (role and separators), and to prime
#: the reply, as OpenAI counts them for its chat models
MESSAGE_OVERHEAD = 3
REPLY_OVERHEAD = 3
MILLION = 1_000_000


@dataclass(frozen=True)
class Price:
    """What a million prompt (``input``) and completion (``output``) tokens cost."""

    input: float
    output: float

    def of(self, prompt_tokens: int, completion_tokens: int) -> float:
        """The cost of so many prompt and completion tokens."""
        return (prompt_tokens * self.input + completion_tokens * self.output) / MILLION


def price_of(connection: Connection) -> Price | None:
    """The connection's price, or ``None`` when it has neither an input nor an output price
    (one of them alone counts the other as free)."""
    if connection.input_price is None and connection.output_price is None:
        return None
    return Price(connection.input_price or 0.0, connection.output_price or 0.0)


@dataclass(frozen=True)
class Planned:
    """One request a run would make: its call-cache key and its prompt's tokens."""

    key: str
    prompt_tokens: int


@dataclass(frozen=True)
class Requests:
    """The requests a run would make (``planned``), how many it would not send as too long
    for the window (``skipped``), and how their prompt tokens were counted (``method``)."""

    planned: tuple[Planned, ...]
    skipped: int = 0
    method: str = tokens.ENCODING


@dataclass(frozen=True)
class Estimate:
    """A run before it starts (see the module docstring). ``requests`` are the ones to
    send (one per distinct prompt), ``cached`` the run's requests the cache answers,
    ``skipped`` those too long for the window."""

    requests: int
    cached: int
    skipped: int
    prompt_tokens: int
    completion_tokens: int
    completion_max: int
    basis: str  # "cache" (mean of this judge's cached answers) or "max_tokens" (upper bound)
    basis_answers: int  # cached answers the mean comes from
    method: str  # how prompt tokens were counted (see method_words)
    max_tokens: int
    price: Price | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        return None if self.price is None else self.price.of(self.prompt_tokens,
                                                              self.completion_tokens)

    @property
    def cost_max(self) -> float | None:
        return None if self.price is None else self.price.of(self.prompt_tokens,
                                                              self.completion_max)

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready, with the totals, the cost and the completion estimate in words."""
        out = asdict(self)
        out["price"] = None if self.price is None else asdict(self.price)
        return {**out, "tokens": self.tokens, "cost": self.cost, "cost_max": self.cost_max,
                "completion_basis": basis_words(self)}

    def words(self) -> str:
        """The estimate in one line for the page and the command line."""
        if not self.requests:
            done = f"all {self.cached:,} answers are in the cache" if self.cached \
                else "nothing to ask"
            return (f"Nothing to send: {done}, so this run costs nothing"
                    + (f" ({self.skipped:,} too long for the window, not sent)."
                       if self.skipped else "."))
        line = (f"{self.requests:,} request(s) to send"
                + (f" ({self.cached:,} answered by the cache, free)" if self.cached else "")
                + (f", {self.skipped:,} too long for the window (not sent)" if self.skipped else "")
                + f": about {self.prompt_tokens:,} prompt tokens ({method_words(self.method)}) "
                f"and {self.completion_tokens:,} completion tokens ({basis_words(self)})")
        if self.price is None:
            return line + "; no price set on the connection, so no cost."
        if self.basis == "max_tokens":
            return line + f"; an estimated {money(self.cost)}."
        return line + (f"; an estimated {money(self.cost)} ({money(self.cost_max)} if every "
                       f"answer ran to max tokens).")


@dataclass(frozen=True)
class Actual:
    """What a run spent: the usage the server reported for the ``sent`` requests
    (``unreported``: answers whose server reported none), and the ``cached`` answers
    that cost nothing."""

    sent: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    unreported: int = 0
    price: Price | None = None

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def cost(self) -> float | None:
        return None if self.price is None else self.price.of(self.prompt_tokens,
                                                              self.completion_tokens)

    def as_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["price"] = None if self.price is None else asdict(self.price)
        return {**out, "tokens": self.tokens, "cost": self.cost}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Actual:
        """The :class:`Actual` that :meth:`as_dict` wrote (a stored run's summary)."""
        price = data.get("price")
        return cls(sent=int(data.get("sent") or 0), cached=int(data.get("cached") or 0),
                   prompt_tokens=int(data.get("prompt_tokens") or 0),
                   completion_tokens=int(data.get("completion_tokens") or 0),
                   unreported=int(data.get("unreported") or 0),
                   price=Price(float(price["input"]), float(price["output"])) if price else None)

    def words(self) -> str:
        """What the run spent in one line."""
        if not self.sent:
            return (f"Nothing sent: {self.cached:,} answer(s) from the cache, no cost."
                    if self.cached else "Nothing sent, no cost.")
        line = (f"{self.sent:,} request(s) sent: {self.prompt_tokens:,} prompt and "
                f"{self.completion_tokens:,} completion tokens as the server reported them"
                + (f" ({self.unreported:,} answer(s) came without usage, not counted)"
                   if self.unreported else ""))
        line += "; " + (f"{money(self.cost)}" if self.price is not None else "no price set")
        return line + (f"; {self.cached:,} answer(s) from the cache, free." if self.cached
                       else ".")


def money(value: float | None) -> str:
    """A cost as people read it: ``$0.0042``, ``$1.23``."""
    if value is None:
        return "n/a"
    return f"${value:,.2f}" if value >= 1 or value == 0 else f"${value:.4f}"


def method_words(method: str) -> str:
    """How prompt tokens were counted, in words: ``tokenizer:NAME`` (the model's own),
    ``tiktoken:ENCODING`` (an OpenAI model's), else an approximation that says which."""
    if method.startswith("tokenizer:"):
        return "counted with the model's tokenizer"
    if method.startswith("tiktoken:"):
        return f"tiktoken {method.partition(':')[2]}"
    if method.startswith(tokens.ENCODING):
        return f"approximate: {tokens.ENCODING}, not this model's tokenizer"
    return "approximate: one token per word or punctuation mark"


def basis_words(estimate: Estimate) -> str:
    if estimate.basis == "cache":
        return (f"the mean of this judge's {estimate.basis_answers:,} cached answer(s), "
                f"{estimate.completion_tokens / max(estimate.requests, 1):,.1f} each")
    return f"max tokens ({estimate.max_tokens:,}) for each, as if every answer ran to the limit"


def prompt_tokens(messages: Sequence[Mapping[str, str]]) -> tuple[int, str]:
    """``(tokens, method)`` of one request's prompt: the project's counter over its
    messages (as the context check counts them) plus the chat format's tokens."""
    counted = tokens.count_tokens("\n".join(m["content"] for m in messages))
    return counted.tokens + MESSAGE_OVERHEAD * len(messages) + REPLY_OVERHEAD, counted.method


class PromptCounter:
    """A request's prompt tokens for one judge model (see the module docstring); ``method``
    says how the last count was made (:func:`method_words`)."""

    def __init__(self, model: str) -> None:
        self.chat = tokens.chat_counter(model)
        self.method = self.chat.method if self.chat is not None else tokens.ENCODING

    def __call__(self, messages: Sequence[Mapping[str, str]]) -> int:
        if self.chat is not None:
            return self.chat.count([dict(m) for m in messages])
        counted, self.method = prompt_tokens(messages)
        return counted


def completion_basis(db: Any, connection: Connection) -> tuple[float, int] | None:
    """``(mean completion tokens, answers)`` of this judge's cached answers with usage (same
    cache endpoint and model, any parameters), or ``None`` when it has none."""
    where = cache_endpoint(connection.endpoint, connection.model)
    answers = total = 0
    for row in store.completion_usage(db, connection.model):
        if cache_endpoint(row["endpoint"], connection.model) == where:
            answers += int(row["answers"])
            total += int(row["completion_tokens"] or 0)
    return (total / answers, answers) if answers else None


def estimate(db: Any, connection: Connection, requests: Requests) -> Estimate:
    """The :class:`Estimate` of sending ``requests`` through ``connection``."""
    planned = requests.planned
    found = store.cached_calls(db, [p.key for p in planned])
    pending: dict[str, int] = {}
    for p in planned:
        if p.key not in found:
            pending.setdefault(p.key, p.prompt_tokens)
    cached = sum(1 for p in planned if p.key in found)
    limit = connection.max_tokens
    basis = completion_basis(db, connection)
    if basis is not None:
        mean, answers = basis
        completion, how = round(len(pending) * min(mean, limit)), "cache"
    else:
        answers, completion, how = 0, len(pending) * limit, "max_tokens"
    return Estimate(requests=len(pending), cached=cached, skipped=requests.skipped,
                    prompt_tokens=sum(pending.values()), completion_tokens=completion,
                    completion_max=len(pending) * limit, basis=how, basis_answers=answers,
                    method=requests.method, max_tokens=limit, price=price_of(connection))


def actual(sent: Iterable[Mapping[str, Any]], *, cached: int, price: Price | None) -> Actual:
    """What was spent on the answers ``sent`` (rows with ``prompt_tokens`` and
    ``completion_tokens`` as the server reported them, ``None`` when it did not);
    ``cached``: the answers taken from the cache."""
    rows = list(sent)
    reported = [r for r in rows if r.get("prompt_tokens") is not None
                or r.get("completion_tokens") is not None]
    return Actual(sent=len(rows), cached=cached,
                  prompt_tokens=sum(int(r.get("prompt_tokens") or 0) for r in reported),
                  completion_tokens=sum(int(r.get("completion_tokens") or 0) for r in reported),
                  unreported=len(rows) - len(reported), price=price)


def actual_of_calls(calls: Mapping[str, Any], price: Price | None) -> Actual:
    """:class:`Actual` from a run's call counts (``sent``, ``cached``, ``prompt_tokens``,
    ``completion_tokens``, ``unreported``: :class:`needlework.rag.calls.CallStats`, a
    suggestion job's result)."""
    return Actual(sent=int(calls.get("sent") or 0), cached=int(calls.get("cached") or 0),
                  prompt_tokens=int(calls.get("prompt_tokens") or 0),
                  completion_tokens=int(calls.get("completion_tokens") or 0),
                  unreported=int(calls.get("unreported") or 0), price=price)


def price_described(described: Mapping[str, Any] | None) -> Price | None:
    """The price of a connection as :meth:`Connection.describe` records it, or ``None``."""
    if not described or (described.get("input_price") is None
                         and described.get("output_price") is None):
        return None
    return Price(float(described.get("input_price") or 0.0),
                 float(described.get("output_price") or 0.0))


# -- the requests of each kind of run ------------------------------------------------------


def judge_requests(connection: Connection, items: Sequence[tuple[str, Preference]], mode: str, *,
                   order: str = "shuffle", seed: int = 0, context_policy: str = "skip",
                   template: Template | None = None) -> Requests:
    """The requests of judging ``items`` as :func:`needlework.judges.engine.run_judge`
    would (the same trials, fitted to the window, the same template and keys)."""
    trials = plan_trials(items, mode, order=order, seed=seed, window=connection.context_window,
                         reserve=connection.max_tokens, policy=context_policy,
                         template=template or default_template(mode, connection.model))
    count = PromptCounter(connection.model)
    planned = tuple(Planned(cache.connection_key(connection, t.messages), count(t.messages))
                    for t in trials if not t.skipped)
    return Requests(planned, sum(1 for t in trials if t.skipped), count.method)


def message_requests(connection: Connection, prompts: Iterable[Sequence[Mapping[str, str]]]
                     ) -> Requests:
    """The requests of sending each of ``prompts`` (a request's messages) through
    ``connection`` as :func:`needlework.rag.calls.run_requests` would: a prompt over the
    window less max tokens and the template margin is not sent."""
    window = connection.context_window
    count = PromptCounter(connection.model)
    planned, skipped = [], 0
    for messages in prompts:
        if window is not None:  # the window check counts as the run's own check does
            counted, _ = prompt_tokens(messages)
            bare = counted - MESSAGE_OVERHEAD * len(messages) - REPLY_OVERHEAD
            if bare > window - connection.max_tokens - TEMPLATE_MARGIN:
                skipped += 1
                continue
        planned.append(Planned(cache.connection_key(connection, messages), count(messages)))
    return Requests(tuple(planned), skipped, count.method)


def rag_requests(db: Any, spec: Any) -> Requests:
    """The planned judge requests of a RAG evaluation (``spec``: a
    :class:`needlework.rag.run.RagEvalSpec` with a connection, which lists its prompts:
    RAG imports judges, not the other way round)."""
    return message_requests(spec.connection, spec.judge_prompts(db))


def suggest_requests(db: Any, spec: Any) -> Requests:
    """The planned judge requests of a suggestion job (``spec``: a
    :class:`needlework.suggest.job.SuggestSpec`, which lists its prompts), questions it
    would skip left out."""
    return message_requests(spec.connection, spec.judge_prompts(db))

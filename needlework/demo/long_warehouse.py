"""Long preference record: a quarterly operations review of twelve warehouses (RAG).

The prompt carries the per-site reports; the response is generated from the
same figures, so the chosen text agrees with its grounding while one rejected
text contradicts it for one site. The company and all figures are fictional;
they and the review's interchangeable sentences are in ``data/long/warehouse.json``,
the closing sections in ``data/long/warehouse.md``.
"""

from __future__ import annotations

from typing import TypedDict

from needlework.demo.filler import pad_verbosely
from needlework.demo.loaders import load_json, load_sections

ON_TIME_TARGET = 95.0
ACCURACY_TARGET = 99.5


class Site(TypedDict):
    """One warehouse's Q3 report: orders, targets and forecasts in thousands, rates in %."""

    code: str
    location: str
    name: str
    orders: int
    target: int
    q2_orders: int
    on_time: float
    q2_on_time: float
    accuracy: float
    cost: float
    headcount: int
    q2_headcount: int
    agency_pct: int
    incidents: int
    q4_forecast: int
    peak_hires: int
    lead: str
    quote: str
    note: str
    priority: str


class Contradiction(TypedDict):
    """The rejected review that contradicts the reports: site index and the on-time it claims."""

    site: int
    on_time: float


class CostNotes(TypedDict):
    """Sentences on cost (above/below the network) and productivity (orders per head)."""

    costly_productive: list[str]
    costly_unproductive: list[str]
    cheap_productive: list[str]
    cheap_unproductive: list[str]


class Readiness(TypedDict):
    """Verdicts on the peak hiring plan, by margin over the forecast growth."""

    comfortable: list[str]
    adequate: list[str]
    short: list[str]


class Review(TypedDict):
    """The record's data."""

    company: str
    sites: list[Site]
    contradiction: Contradiction
    incomplete_after: int
    actions: dict[str, str]
    growth_both: list[str]
    growth_strain: list[str]
    cost_notes: CostNotes
    readiness: Readiness


def _prompt(company: str, sites: list[Site]) -> str:
    lines = [
        f"You are the operations analyst for {company}. Using only the site "
        "reports below, write the Q3 2024 operations review for all twelve warehouses. Cite "
        "the reports by their code in square brackets, for example [RNO]. Network targets: "
        "on-time shipping 95.0%, pick accuracy 99.5%.", ""]
    for s in sites:
        lines.append(
            f"[{s['code']}] {s['location']}. Q3 orders shipped: {s['orders']}k (target "
            f"{s['target']}k; Q2 {s['q2_orders']}k). On-time: {s['on_time']}% (Q2 {s['q2_on_time']}%). "
            f"Pick accuracy: {s['accuracy']}%. Cost per order: ${s['cost']:.2f}. Headcount: "
            f"{s['headcount']} (Q2 {s['q2_headcount']}; agency {s['agency_pct']}%). Recordable "
            f"incidents: {s['incidents']}. Q4 forecast: {s['q4_forecast']}k orders; peak hires "
            f"planned: {s['peak_hires']}. Site lead: {s['lead']}. Lead's comment: \"{s['quote']}\" "
            f"Note: {s['note']}.")
    return "\n".join(lines)


def _network(sites: list[Site]) -> dict:
    orders = sum(s["orders"] for s in sites)
    return {
        "orders": orders,
        "target": sum(s["target"] for s in sites),
        "q2": sum(s["q2_orders"] for s in sites),
        "forecast": sum(s["q4_forecast"] for s in sites),
        "temps": sum(s["peak_hires"] for s in sites),
        "on_time": sum(s["orders"] * s["on_time"] for s in sites) / orders,
        "cost": sum(s["orders"] * s["cost"] for s in sites) / orders,
        "incidents": sum(s["incidents"] for s in sites),
        "per_head": orders * 1000 / sum(s["headcount"] for s in sites),
    }


def _summary(sites: list[Site], net: dict) -> str:
    missed = [s["name"] for s in sites if s["on_time"] < ON_TIME_TARGET]
    met = len(sites) - len(missed)
    best = max(sites, key=lambda s: s["on_time"])
    return "\n\n".join([
        "1. Executive summary",
        f"The network shipped {net['orders']:,}k orders in Q3, {net['orders'] - net['target']:+,}k "
        f"against the combined target of {net['target']:,}k and {net['orders'] - net['q2']:+,}k "
        f"compared with Q2. Volume-weighted on-time shipping was {net['on_time']:.1f}%, and "
        f"{met} of the 12 sites met the 95.0% target; the sites below target were "
        f"{', '.join(missed[:-1])} and {missed[-1]}. {best['name']} had the best on-time rate "
        f"at {best['on_time']}% [{best['code']}]. The network recorded {net['incidents']} "
        f"recordable incidents, and the volume-weighted cost per order was ${net['cost']:.2f}.",
        "The quarter was shaped by two disruptions: the sorter outage in Memphis [MEM] and "
        "the inbound container delays at Ontario [ONT], which Phoenix partly absorbed [PHX]. "
        "Most other sites grew volume while holding or improving service.",
        f"Looking ahead, the sites forecast {net['forecast']:,}k orders for Q4, "
        f"{(net['forecast'] - net['orders']) / net['orders'] * 100:.1f}% more than Q3, and "
        f"plan to hire {net['temps']:,} temporary staff for peak season.",
        "2. How to read this review",
        "Each site section covers volume against target and against Q2, service (on-time "
        "shipping and pick accuracy), cost and productivity, staffing and the Q4 outlook, "
        "safety, notable events and the site lead's view, and ends with priorities for Q4. "
        "Orders per head is Q3 orders divided by quarter-end headcount; it is a rough "
        f"productivity measure (network average {net['per_head']:,.0f}), because sites differ "
        "in product mix and automation.",
        "3. Site reviews",
    ])


def _analysis(i: int, s: Site, change: float, vs_q2: float, per_head: float,
              net: dict, data: Review) -> str:
    name = s["name"]
    if vs_q2 >= 0 and change >= 0:
        both = data["growth_both"]
        text = both[i % len(both)].format(name=name)
    elif vs_q2 >= 0:
        strain = data["growth_strain"]
        text = strain[i % len(strain)].format(name=name, slip=abs(change))
    elif change >= 0:
        text = (f"Analysis: volume at {name} dipped slightly while service improved, so the "
                "site should be well placed to take on growth in Q4.")
    else:
        text = (f"Analysis: both volume and service at {name} fell compared with Q2. The "
                "notable events below explain most of the gap, and the recovery should be "
                "reviewed weekly until the site is back on target.")
    by_cost = data["cost_notes"]
    productive = per_head >= net["per_head"]
    if s["cost"] > net["cost"]:
        notes = by_cost["costly_productive"] if productive else by_cost["costly_unproductive"]
    else:
        notes = by_cost["cheap_productive"] if productive else by_cost["cheap_unproductive"]
    return text + " " + notes[i % len(notes)]


def _readiness(i: int, s: Site, growth: float, data: Review) -> str:
    added = s["peak_hires"] / s["headcount"] * 100
    if added >= growth + 8:
        verdict = data["readiness"]["comfortable"]
    elif added >= growth:
        verdict = data["readiness"]["adequate"]
    else:
        verdict = data["readiness"]["short"]
    return (f"Peak readiness: the hiring plan adds {added:.0f}% to the workforce for "
            f"{growth:.0f}% more volume, {verdict[i % len(verdict)]}.")


def _section(i: int, s: Site, net: dict, data: Review) -> str:
    name, ref = s["name"], f"[{s['code']}]"
    vs_target = (s["orders"] - s["target"]) / s["target"] * 100
    vs_q2 = (s["orders"] - s["q2_orders"]) / s["q2_orders"] * 100
    paras = [f"3.{i + 1} {s['location']} ({s['code']})"]
    direction = "above" if vs_target >= 0 else "below"
    trend = "up" if vs_q2 >= 0 else "down"
    if i % 2 == 0:
        paras.append(
            f"Volume: {name} shipped {s['orders']}k orders, {abs(vs_target):.1f}% {direction} "
            f"its target of {s['target']}k and {trend} {abs(vs_q2):.1f}% on Q2's {s['q2_orders']}k "
            f"{ref}.")
    else:
        paras.append(
            f"Volume: at {s['orders']}k orders against a target of {s['target']}k, {name} "
            f"finished {abs(vs_target):.1f}% {direction} plan; compared with Q2 ({s['q2_orders']}k), "
            f"volume was {trend} {abs(vs_q2):.1f}% {ref}.")
    on_time, change = s["on_time"], s["on_time"] - s["q2_on_time"]
    if on_time >= ON_TIME_TARGET:
        margin = "comfortably " if on_time - ON_TIME_TARGET >= 1 else ""
        service = f"Service: on-time shipping was {on_time}%, {margin}above the 95.0% target"
    else:
        service = (f"Service: on-time shipping fell short of the target at {on_time}%, "
                   f"{ON_TIME_TARGET - on_time:.1f} points below 95.0%")
    service += (f", {'up' if change >= 0 else 'down'} {abs(change):.1f} points on Q2 {ref}. "
                f"Pick accuracy was {s['accuracy']}%")
    service += (", meeting the 99.5% standard." if s["accuracy"] >= ACCURACY_TARGET
                else ", below the 99.5% standard, so mis-picks deserve attention.")
    paras.append(service)
    per_head = s["orders"] * 1000 / s["headcount"]
    productivity = "above" if per_head >= net["per_head"] else "below"
    paras.append(
        f"Cost and productivity: cost per order was ${s['cost']:.2f}, "
        f"{'below' if s['cost'] < net['cost'] else 'above'} the network average of "
        f"${net['cost']:.2f}. The {s['headcount']} staff shipped about {per_head:,.0f} orders per "
        f"head, {productivity} the network figure {ref}.")
    growth = (s["q4_forecast"] - s["orders"]) / s["orders"] * 100
    paras.append(
        f"Staffing and outlook: headcount moved from {s['q2_headcount']} to {s['headcount']} during "
        f"the quarter, with agency workers making up {s['agency_pct']}% of the total. For peak "
        f"season the site plans to add {s['peak_hires']} temporary staff, against a Q4 forecast of "
        f"{s['q4_forecast']}k orders, {growth:.1f}% above Q3 {ref}.")
    paras.append(_analysis(i, s, change, vs_q2, per_head, net, data))
    paras.append(_readiness(i, s, growth, data))
    inc = s["incidents"]
    if inc == 0:
        paras.append(f"Safety: no recordable incidents this quarter {ref}.")
    elif inc >= 3:
        paras.append(f"Safety: {inc} recordable incidents, among the highest in the network, "
                     f"which makes safety the first priority for Q4 {ref}.")
    elif inc == 1:
        paras.append(f"Safety: one recordable incident, investigated and closed {ref}.")
    else:
        paras.append(f"Safety: {inc} recordable incidents, both investigated and closed {ref}.")
    paras.append(f"Notable: {s['note']} {ref}.")
    paras.append(f"Site lead {s['lead']}: \"{s['quote']}\" {ref}")
    todo = []
    if inc >= 3:
        todo.append(data["actions"]["safety"])
    if on_time < ON_TIME_TARGET:
        todo.append(data["actions"]["on_time"])
    if s["orders"] < s["target"]:
        todo.append(data["actions"]["volume"])
    if s["accuracy"] < ACCURACY_TARGET:
        todo.append(data["actions"]["accuracy"])
    if s["cost"] > net["cost"] + 0.4:
        todo.append(data["actions"]["cost"])
    todo.append(s["priority"])
    paras.append("Priorities for Q4: " + "; ".join(todo) + ".")
    return "\n\n".join(paras)


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    data: Review = load_json("long/warehouse.json", Review)
    closing = load_sections("long/warehouse.md")["closing"]
    sites = data["sites"]
    net = _network(sites)
    summary = _summary(sites, net)
    sections = [_section(i, s, net, data) for i, s in enumerate(sites)]
    chosen = "\n\n".join([summary, *sections, closing])
    wrong = list(sections)
    k = data["contradiction"]["site"]
    wrong[k] = _section(k, {**sites[k], "on_time": data["contradiction"]["on_time"]}, net, data)
    contradicting = "\n\n".join([summary, *wrong, closing])
    incomplete = "\n\n".join([summary, *sections[:data["incomplete_after"]]])
    return {
        "subset": "RAG",
        "prompt": _prompt(data["company"], sites),
        "chosen": chosen,
        "rejected": [contradicting, incomplete, pad_verbosely(chosen, "warehouse-review")],
    }

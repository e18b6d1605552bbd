"""Long preference record: a quarterly operations review of twelve warehouses (RAG).

The prompt carries the per-site reports; the response is generated from the
same figures, so the chosen text agrees with its grounding while one rejected
text contradicts it for one site. The company and all figures are fictional.
"""

from __future__ import annotations

from needlework.demo.filler import pad_verbosely

ON_TIME_TARGET = 95.0
ACCURACY_TARGET = 99.5

# code, site, short name, orders (k), target (k), Q2 orders (k), on-time %, Q2 on-time %,
# pick accuracy %, cost per order ($), headcount, recordable incidents, note
SITES = [
    ("RNO", "Reno, NV", "Reno", 412, 400, 398, 96.1, 95.4, 99.7, 3.42, 290, 1,
     "The second shift moved to a four-day, ten-hour schedule in July, and overtime hours "
     "fell by about a fifth"),
    ("MEM", "Memphis, TN", "Memphis", 538, 560, 552, 91.2, 94.8, 99.5, 3.05, 352, 3,
     "A conveyor motor failure on August 14 stopped the main sorter for 19 hours, and the "
     "backlog took most of the following week to clear"),
    ("ABE", "Allentown, PA", "Allentown", 476, 450, 441, 97.3, 96.9, 99.8, 3.18, 338, 0,
     "Allentown piloted voice picking in two zones, and pick rates in those zones rose by "
     "9 percent"),
    ("DFW", "Dallas-Fort Worth, TX", "Dallas-Fort Worth", 601, 580, 575, 95.6, 95.1, 99.6,
     2.96, 421, 2,
     "August heat led to shorter outdoor yard shifts and two additional cooling stations on "
     "the dock"),
    ("ONT", "Ontario, CA", "Ontario", 557, 575, 569, 94.1, 95.7, 99.4, 3.61, 418, 1,
     "Port congestion delayed inbound containers by an average of four days in September"),
    ("ATL", "Atlanta, GA", "Atlanta", 389, 380, 372, 96.8, 96.2, 99.7, 3.27, 301, 0,
     "The site added a third outbound carrier, which shortened the late-afternoon queue at "
     "the shipping doors"),
    ("CMH", "Columbus, OH", "Columbus", 344, 360, 351, 95.2, 95.0, 99.2, 3.55, 271, 4,
     "Two of the four incidents involved powered industrial trucks in the cross-dock area "
     "during shift changes"),
    ("SEA", "Kent, WA", "Kent", 298, 290, 284, 97.9, 97.5, 99.8, 3.88, 247, 0,
     "Higher cost per order reflects local wage rates and a larger share of oversized items"),
    ("PHX", "Phoenix, AZ", "Phoenix", 265, 250, 238, 96.4, 95.8, 99.6, 3.34, 188, 1,
     "Phoenix absorbed about 8,000 orders a week from Ontario during the container delays "
     "in September"),
    ("JOL", "Joliet, IL", "Joliet", 512, 500, 506, 95.0, 95.3, 99.5, 3.12, 368, 2,
     "A roof repair in the north bay took twelve racking positions out of use for six "
     "weeks"),
    ("JAX", "Jacksonville, FL", "Jacksonville", 231, 240, 229, 93.7, 94.9, 99.3, 3.71, 196, 1,
     "Tropical storm warnings closed the site for two days in early August"),
    ("SLC", "Salt Lake City, UT", "Salt Lake City", 208, 200, 193, 98.2, 97.7, 99.9, 3.29,
     131, 0,
     "The site completed its first full quarter on the new warehouse management system"),
]

# code: (Q2 headcount, agency share %, Q4 forecast (k), peak temps, site lead, quote,
#        site-specific Q4 priority)
OUTLOOK = {
    "RNO": (282, 14, 455, 60, "Dana Whitfield",
            "The four-ten schedule was the right call. People are less tired, and we have "
            "not had to beg for weekend volunteers once this quarter.",
            "roll the four-day schedule out to the first shift if the October pulse survey "
            "supports it"),
    "MEM": (360, 22, 610, 95, "Marcus Bell",
            "We lost a week to one motor. My team did heroic work clearing the backlog, but "
            "I never want to depend on heroics again.",
            "finish the sorter maintenance plan and keep a spare drive motor on site"),
    "ABE": (330, 11, 520, 70, "Grace Moretti",
            "Voice picking surprised the skeptics, including me. The pickers like having "
            "their hands and eyes free.",
            "extend voice picking to two more zones and measure error rates as well as speed"),
    "DFW": (415, 18, 660, 110, "Luis Ortega",
            "Heat is a safety issue first. The cooling stations cost little and the crews "
            "noticed immediately.",
            "make the heat plan permanent for next summer and budget for shaded yard areas"),
    "ONT": (425, 20, 600, 100, "Hannah Cho",
            "We can't control the port, but we can control how early we warn customers and "
            "how fast we hand work to Phoenix.",
            "agree a standing overflow arrangement with Phoenix before peak season"),
    "ATL": (296, 12, 425, 55, "Terrence Hall",
            "The third carrier changed the feel of our afternoons. Trucks are waiting for us "
            "now, not the other way round.",
            "renegotiate carrier pick-up windows for the November and December peak"),
    "CMH": (268, 16, 380, 50, "Sofia Novak",
            "Four incidents is four too many. We are redesigning the cross-dock traffic "
            "pattern and retraining every truck operator.",
            "separate pedestrian and truck traffic in the cross-dock and stagger shift "
            "changes by fifteen minutes"),
    "SEA": (244, 9, 320, 40, "Ben Okafor",
            "Our costs are what they are in this labour market, so our job is to make every "
            "hour count.",
            "pilot dimensioning scanners for oversized items to cut re-handling"),
    "PHX": (176, 17, 300, 45, "Rosa Delgado",
            "Taking Ontario's overflow proved we have room to grow. We hired ahead of it and "
            "it paid off.",
            "keep twenty percent spare capacity through peak to cover for Ontario"),
    "JOL": (372, 15, 565, 85, "Peter Lindqvist",
            "Losing twelve rack positions for six weeks squeezed us, but the roof is fixed "
            "and we are back to full capacity.",
            "re-slot the north bay now that the racking positions are back in use"),
    "JAX": (192, 19, 260, 35, "Alicia Brooks",
            "Two days closed for weather is a reminder that we need a plan we can run "
            "without thinking.",
            "write a severe-weather playbook covering early cut-offs and customer notices"),
    "SLC": (128, 8, 235, 30, "Owen Fairbanks",
            "The new system is finally paying off. Pickers walk less and the data is the "
            "cleanest in the network.",
            "document the system rollout lessons for the sites that migrate next year"),
}

ACTIONS = {
    "volume": "agree a recovery plan for the volume shortfall with the regional sales team",
    "on_time": "bring on-time shipping back above 95% by reviewing carrier cut-off times",
    "accuracy": "run a two-week accuracy blitz with daily audits in the worst zones",
    "safety": "hold a safety stand-down and re-walk the traffic routes with the supervisors",
    "cost": "review overtime and temporary labour, the main drivers of cost per order",
}


FIELDS = ("code", "site", "name", "orders", "target", "q2", "on_time", "q2_on", "acc",
          "cost", "heads", "inc", "note")


def _sites() -> list[dict]:
    out = []
    for row in SITES:
        site = dict(zip(FIELDS, row, strict=True))
        q2_heads, agency, forecast, temps, lead, quote, priority = OUTLOOK[site["code"]]
        site.update(q2_heads=q2_heads, agency=agency, forecast=forecast, temps=temps,
                    lead=lead, quote=quote, priority=priority)
        out.append(site)
    return out


def _prompt(sites: list[dict]) -> str:
    lines = [
        "You are the operations analyst for Harbor & Pine Logistics. Using only the site "
        "reports below, write the Q3 2024 operations review for all twelve warehouses. Cite "
        "the reports by their code in square brackets, for example [RNO]. Network targets: "
        "on-time shipping 95.0%, pick accuracy 99.5%.", ""]
    for s in sites:
        lines.append(
            f"[{s['code']}] {s['site']}. Q3 orders shipped: {s['orders']}k (target "
            f"{s['target']}k; Q2 {s['q2']}k). On-time: {s['on_time']}% (Q2 {s['q2_on']}%). "
            f"Pick accuracy: {s['acc']}%. Cost per order: ${s['cost']:.2f}. Headcount: "
            f"{s['heads']} (Q2 {s['q2_heads']}; agency {s['agency']}%). Recordable "
            f"incidents: {s['inc']}. Q4 forecast: {s['forecast']}k orders; peak hires "
            f"planned: {s['temps']}. Site lead: {s['lead']}. Lead's comment: \"{s['quote']}\" "
            f"Note: {s['note']}.")
    return "\n".join(lines)


def _network(sites: list[dict]) -> dict:
    orders = sum(s["orders"] for s in sites)
    return {
        "orders": orders,
        "target": sum(s["target"] for s in sites),
        "q2": sum(s["q2"] for s in sites),
        "forecast": sum(s["forecast"] for s in sites),
        "temps": sum(s["temps"] for s in sites),
        "on_time": sum(s["orders"] * s["on_time"] for s in sites) / orders,
        "cost": sum(s["orders"] * s["cost"] for s in sites) / orders,
        "incidents": sum(s["inc"] for s in sites),
        "per_head": orders * 1000 / sum(s["heads"] for s in sites),
    }


def _summary(sites: list[dict], net: dict) -> str:
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


GROWTH_BOTH = [
    "Analysis: {name} grew volume and improved service at the same time, which suggests the "
    "extra work was absorbed by better routines rather than by stretching the team.",
    "Analysis: more orders and better on-time performance at {name}; the site is handling "
    "growth well and has headroom going into peak season.",
    "Analysis: {name} combined higher volume with a better on-time rate, the pattern the "
    "network wants from every site.",
]
GROWTH_STRAIN = [
    "Analysis: {name} handled more orders than in Q2, but on-time shipping slipped by "
    "{slip:.1f} points, a sign that the extra volume is starting to strain capacity.",
    "Analysis: volume at {name} rose while on-time shipping fell {slip:.1f} points; watch "
    "whether the slip continues once volume climbs further in Q4.",
]
COST_NOTES = {
    (True, True): [
        " Cost per order is above average despite good productivity, which points to wage "
        "rates or product mix rather than efficiency.",
        " Productivity is good, so the above-average cost per order mostly reflects local "
        "labour costs and the mix of items handled.",
    ],
    (True, False): [
        " Above-average cost together with below-average productivity makes labour planning "
        "the main lever.",
        " Cost per order is above average and orders per head below it, so scheduling and "
        "agency use deserve a closer look.",
    ],
    (False, True): [
        " Low cost and high productivity make it one of the network's benchmarks.",
        " On cost and productivity it remains among the strongest sites in the network.",
    ],
    (False, False): [
        " Cost is under control even though orders per head are below average, probably "
        "helped by a favourable product mix.",
        " Cost per order stays below average although productivity trails the network.",
    ],
}


def _analysis(i: int, s: dict, change: float, vs_q2: float, per_head: float,
              net: dict) -> str:
    name = s["name"]
    if vs_q2 >= 0 and change >= 0:
        text = GROWTH_BOTH[i % len(GROWTH_BOTH)].format(name=name)
    elif vs_q2 >= 0:
        text = GROWTH_STRAIN[i % len(GROWTH_STRAIN)].format(name=name, slip=abs(change))
    elif change >= 0:
        text = (f"Analysis: volume at {name} dipped slightly while service improved, so the "
                "site should be well placed to take on growth in Q4.")
    else:
        text = (f"Analysis: both volume and service at {name} fell compared with Q2. The "
                "notable events below explain most of the gap, and the recovery should be "
                "reviewed weekly until the site is back on target.")
    notes = COST_NOTES[(s["cost"] > net["cost"], per_head >= net["per_head"])]
    return text + notes[i % len(notes)]


def _readiness(i: int, s: dict, growth: float) -> str:
    added = s["temps"] / s["heads"] * 100
    if added >= growth + 8:
        verdict = ["a comfortable margin that allows for training time and absences",
                   "enough slack to cover training and the usual absences in December",
                   "a generous margin, provided the agency can deliver the people on time"]
    elif added >= growth:
        verdict = ["which is adequate but leaves little room for absences, so the agency "
                   "commitments should be confirmed in writing"]
    else:
        verdict = ["so the plan depends on productivity gains or overtime and should be "
                   "reviewed before the end of October"]
    return (f"Peak readiness: the hiring plan adds {added:.0f}% to the workforce for "
            f"{growth:.0f}% more volume, {verdict[i % len(verdict)]}.")


def _section(i: int, s: dict, net: dict, override: dict | None = None) -> str:
    s = {**s, **(override or {})}
    name, ref = s["name"], f"[{s['code']}]"
    vs_target = (s["orders"] - s["target"]) / s["target"] * 100
    vs_q2 = (s["orders"] - s["q2"]) / s["q2"] * 100
    paras = [f"3.{i + 1} {s['site']} ({s['code']})"]
    direction = "above" if vs_target >= 0 else "below"
    trend = "up" if vs_q2 >= 0 else "down"
    if i % 2 == 0:
        paras.append(
            f"Volume: {name} shipped {s['orders']}k orders, {abs(vs_target):.1f}% {direction} "
            f"its target of {s['target']}k and {trend} {abs(vs_q2):.1f}% on Q2's {s['q2']}k "
            f"{ref}.")
    else:
        paras.append(
            f"Volume: at {s['orders']}k orders against a target of {s['target']}k, {name} "
            f"finished {abs(vs_target):.1f}% {direction} plan; compared with Q2 ({s['q2']}k), "
            f"volume was {trend} {abs(vs_q2):.1f}% {ref}.")
    on_time, change = s["on_time"], s["on_time"] - s["q2_on"]
    if on_time >= ON_TIME_TARGET:
        margin = "comfortably " if on_time - ON_TIME_TARGET >= 1 else ""
        service = f"Service: on-time shipping was {on_time}%, {margin}above the 95.0% target"
    else:
        service = (f"Service: on-time shipping fell short of the target at {on_time}%, "
                   f"{ON_TIME_TARGET - on_time:.1f} points below 95.0%")
    service += (f", {'up' if change >= 0 else 'down'} {abs(change):.1f} points on Q2 {ref}. "
                f"Pick accuracy was {s['acc']}%")
    service += (", meeting the 99.5% standard." if s["acc"] >= ACCURACY_TARGET
                else ", below the 99.5% standard, so mis-picks deserve attention.")
    paras.append(service)
    per_head = s["orders"] * 1000 / s["heads"]
    productivity = "above" if per_head >= net["per_head"] else "below"
    paras.append(
        f"Cost and productivity: cost per order was ${s['cost']:.2f}, "
        f"{'below' if s['cost'] < net['cost'] else 'above'} the network average of "
        f"${net['cost']:.2f}. The {s['heads']} staff shipped about {per_head:,.0f} orders per "
        f"head, {productivity} the network figure {ref}.")
    growth = (s["forecast"] - s["orders"]) / s["orders"] * 100
    paras.append(
        f"Staffing and outlook: headcount moved from {s['q2_heads']} to {s['heads']} during "
        f"the quarter, with agency workers making up {s['agency']}% of the total. For peak "
        f"season the site plans to add {s['temps']} temporary staff, against a Q4 forecast of "
        f"{s['forecast']}k orders, {growth:.1f}% above Q3 {ref}.")
    paras.append(_analysis(i, s, change, vs_q2, per_head, net))
    paras.append(_readiness(i, s, growth))
    inc = s["inc"]
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
        todo.append(ACTIONS["safety"])
    if on_time < ON_TIME_TARGET:
        todo.append(ACTIONS["on_time"])
    if s["orders"] < s["target"]:
        todo.append(ACTIONS["volume"])
    if s["acc"] < ACCURACY_TARGET:
        todo.append(ACTIONS["accuracy"])
    if s["cost"] > net["cost"] + 0.4:
        todo.append(ACTIONS["cost"])
    todo.append(s["priority"])
    paras.append("Priorities for Q4: " + "; ".join(todo) + ".")
    return "\n\n".join(paras)


CLOSING = """4. Cross-network themes

Three themes stand out. First, equipment resilience: a single sorter motor failure at Memphis cost 19 hours of capacity and pulled the site's on-time rate well below target [MEM]. Critical spares and a preventive maintenance schedule for conveyor drives should be standard at every automated site. Second, inbound variability: the container delays at Ontario show how quickly port congestion turns into outbound misses [ONT], and how much a neighbouring site can help when it has spare capacity [PHX]. Third, safety around powered industrial trucks: Columbus had the most incidents in the network, half of them involving trucks in the cross-dock area at shift change [CMH].

5. Recommendations for Q4

1. Memphis: complete the sorter maintenance plan, stock a spare drive motor on site and test the manual bypass procedure before peak season [MEM].
2. Columbus: hold a safety stand-down, separate pedestrian and truck traffic in the cross-dock area, and stagger shift changes by fifteen minutes [CMH].
3. Ontario and Phoenix: formalise the overflow arrangement used in September, with agreed volumes and a trigger for activating it [ONT] [PHX].
4. Jacksonville: write a severe-weather playbook covering early cut-offs, customer notices and staff safety [JAX].
5. Allentown: extend the voice-picking pilot to two more zones and report the results at the end of Q4 [ABE].

6. Data notes

Figures come from the site reports for Q3 2024 as provided. Network averages are weighted by order volume. Orders per head uses quarter-end headcount and does not adjust for temporary staff, so it overstates productivity at sites that rely heavily on agency labour."""


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    sites = _sites()
    net = _network(sites)
    sections = [_section(i, s, net) for i, s in enumerate(sites)]
    chosen = "\n\n".join([_summary(sites, net), *sections, CLOSING])
    wrong = list(sections)
    wrong[1] = _section(1, sites[1], net, override={"on_time": 97.2})
    contradicting = "\n\n".join([_summary(sites, net), *wrong, CLOSING])
    incomplete = "\n\n".join([_summary(sites, net), *sections[:9]])
    return {
        "subset": "RAG",
        "prompt": _prompt(sites),
        "chosen": chosen,
        "rejected": [contradicting, incomplete, pad_verbosely(chosen, "warehouse-review")],
    }

"""Text bank: short preference prompts for the QA and RAG subsets.

Each entry has a prompt, the chosen response (paragraphs separated by blank
lines) and three recipes for rejected responses, applied by
:mod:`needlework.demo.preference`:

- ``swap``: a near-copy of the chosen response with one or two sentences
  changed (a factual error or an unsafe suggestion);
- ``cut``: only the first ``keep`` paragraphs (an incomplete answer);
- ``drift``: the first ``keep`` paragraphs, then off-topic text;
- ``verbose``: the chosen content buried in padding and repetition.
"""

from __future__ import annotations

QA_SHORT: list[dict] = [
    {
        "prompt": "Why do we have leap years, and why wasn't 1900 one?",
        "chosen": (
            "A year on the calendar should match the time Earth takes to go round the Sun "
            "relative to the seasons, the tropical year, which is about 365.2422 days. A "
            "365-day calendar falls behind by almost a quarter of a day each year, so without "
            "a correction the seasons would drift by about a day every four years.\n\n"
            "The Julian calendar fixed most of this by adding a day every fourth year, which "
            "gives an average year of 365.25 days. That is slightly too long, by about 11 "
            "minutes a year, and by the sixteenth century the accumulated error had reached "
            "about ten days.\n\n"
            "The Gregorian reform of 1582 kept the four-year rule but added an exception: "
            "century years are leap years only if they are divisible by 400. So 1600 and 2000 "
            "were leap years, while 1700, 1800 and 1900 were not. This brings the average "
            "year to 365.2425 days, close enough that the calendar drifts by only about one "
            "day in 3,000 years.\n\n"
            "In short: leap years keep the calendar in step with the seasons, and 1900 was "
            "skipped because it is divisible by 100 but not by 400."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("So 1600 and 2000 were leap years, while 1700, 1800 and 1900 were not.",
                 "So 1600 and 1900 were leap years, while 1700, 1800 and 2000 were not."),
                ("and 1900 was skipped because it is divisible by 100 but not by 400.",
                 "and 1900 was skipped because it is not divisible by 4."),
            ]},
            {"kind": "cut", "keep": 2},
            {"kind": "verbose"},
        ],
    },
    {
        "prompt": "How does a heat pump heat a house in winter when it's cold outside?",
        "chosen": (
            "A heat pump does not create heat by burning anything; it moves heat from outside "
            "to inside, the way a refrigerator moves heat out of its interior. Even air at "
            "-10°C contains a lot of thermal energy, and the heat pump's job is to collect it "
            "and release it indoors.\n\n"
            "It does this with a refrigerant circulating in a closed loop. Outdoors, the cold, "
            "low-pressure refrigerant passes through a coil and evaporates, absorbing heat from "
            "the air even when that air is below freezing. A compressor then squeezes the gas, "
            "which raises its temperature well above room temperature. Indoors, the hot gas "
            "condenses in a second coil and gives its heat to the air or to the water of the "
            "heating system. An expansion valve drops the pressure again and the cycle "
            "repeats.\n\n"
            "Because the electricity only drives the compressor and fans, a heat pump typically "
            "delivers three to four units of heat for each unit of electricity, a coefficient of "
            "performance (COP) of 3 to 4. The COP falls as the outdoor temperature drops, which "
            "is why installers size systems for the local climate and why some homes keep a "
            "backup heater for the coldest days.\n\n"
            "Servicing the refrigerant circuit requires a certified technician, so leave "
            "repairs of that part of the system to a professional."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("Servicing the refrigerant circuit requires a certified technician, so leave "
                 "repairs of that part of the system to a professional.",
                 "If heating output drops, you can top up the refrigerant yourself with any "
                 "can of refrigerant from a hardware store; it is a quick job and saves a "
                 "service call."),
            ]},
            {"kind": "drift", "keep": 1, "text": (
                "Speaking of home energy, rooftop solar panels are another popular upgrade. "
                "Most panels are warranted for 25 years, and many households finance them "
                "through a loan or a lease. When you compare quotes, look at the price per "
                "watt installed, the reputation of the installer and whether the inverter is "
                "included. Net metering rules vary a lot between utilities, so it is worth "
                "calling yours before you sign anything. Some homeowners also add a battery so "
                "that they can keep the lights on during an outage.")},
            {"kind": "swap", "edits": [
                ("A heat pump does not create heat by burning anything; it moves heat from "
                 "outside to inside,",
                 "A heat pump creates heat by burning a small amount of refrigerant, and it "
                 "also moves heat from outside to inside,"),
            ]},
        ],
    },
    {
        "prompt": "What's the difference between a virus and a bacterium, and why does it "
                  "matter for treatment?",
        "chosen": (
            "Bacteria are single-celled living organisms. They have their own metabolism, can "
            "reproduce on their own by dividing, and are usually around 1 to 5 micrometres "
            "long. Most bacteria are harmless or even useful, like the ones in the gut, but "
            "some cause illnesses such as strep throat, urinary tract infections or "
            "tuberculosis.\n\n"
            "Viruses are much smaller, typically 20 to 300 nanometres, and are not cells at "
            "all. A virus is genetic material wrapped in a protein coat, and it can only "
            "multiply by getting inside a host cell and using that cell's machinery. Colds, "
            "flu, COVID-19 and chickenpox are viral.\n\n"
            "The difference matters because antibiotics work by attacking structures and "
            "processes that bacteria have, such as their cell walls or their ribosomes. Viruses "
            "have none of these, so antibiotics do nothing against a viral infection, and "
            "taking them unnecessarily adds side effects and encourages antibiotic "
            "resistance. Some viral infections can be treated with antivirals, and many are "
            "prevented with vaccines.\n\n"
            "If you are unsure what is causing an illness, a doctor can decide whether tests "
            "or antibiotics are needed."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("so antibiotics do nothing against a viral infection,",
                 "so antibiotics work against viral infections too, although more slowly,"),
                ("If you are unsure what is causing an illness, a doctor can decide whether "
                 "tests or antibiotics are needed.",
                 "If you have leftover antibiotics at home, starting them at the first sign of "
                 "a cold or flu is a sensible way to shorten it."),
            ]},
            {"kind": "cut", "keep": 2},
            {"kind": "verbose"},
        ],
    },
    {
        "prompt": "Explain the difference between TCP and UDP. When would I pick UDP?",
        "chosen": (
            "TCP and UDP are the two main transport protocols on top of IP. Both carry data "
            "between ports on two machines, but they make very different promises.\n\n"
            "TCP is connection-oriented. The two sides first set up a connection with a "
            "three-way handshake, and TCP then guarantees that bytes arrive complete, without "
            "duplicates and in the order they were sent. It retransmits lost segments, slows "
            "down when the network is congested and presents the data as a continuous stream. "
            "Web pages, email and file transfers use TCP because correctness matters more "
            "than a few milliseconds.\n\n"
            "UDP is connectionless. Each datagram is sent on its own, with no handshake, no "
            "retransmission and no ordering: a datagram may be lost, duplicated or arrive out "
            "of order, and the application has to cope. In exchange, UDP has very low overhead "
            "and no head-of-line blocking.\n\n"
            "Pick UDP when fresh data is worth more than complete data, as in voice and video "
            "calls, online games and live telemetry, or when the application implements its "
            "own reliability, as DNS lookups and the QUIC protocol behind HTTP/3 do."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("with no handshake, no retransmission and no ordering: a datagram may be "
                 "lost, duplicated or arrive out of order, and the application has to cope.",
                 "with no handshake, but the network still guarantees that datagrams arrive "
                 "in order, so the application only has to handle the occasional loss."),
            ]},
            {"kind": "drift", "keep": 2, "text": (
                "It is also worth learning how IP addresses are assigned. Home routers "
                "usually hand out private addresses from ranges such as 192.168.0.0/16 using "
                "DHCP, and network address translation lets many devices share one public "
                "address. IPv6 was designed to end the shortage of addresses, and its 128-bit "
                "addresses are written as eight groups of hexadecimal digits. Many providers "
                "now run both protocols side by side, which is known as dual stack.")},
            {"kind": "cut", "keep": 2},
        ],
    },
    {
        "prompt": "How should I store leftover cooked rice so it's safe to eat later?",
        "chosen": (
            "Cooked rice needs a little more care than most leftovers because uncooked rice can "
            "contain spores of Bacillus cereus. The spores survive cooking, and if the rice "
            "sits warm for hours they can germinate and produce toxins that reheating does not "
            "destroy. The result can be vomiting or diarrhoea within hours.\n\n"
            "Cool the rice quickly: spread it in a shallow container so it loses heat fast, and "
            "get it into the fridge within about an hour of cooking. Keep it at 5°C (41°F) or "
            "below and eat it within one day if you follow the strictest advice, and no more "
            "than three or four days in any case. For longer storage, freeze it in portions.\n\n"
            "Reheat rice only once, until it is steaming hot all the way through, and do not "
            "put reheated rice back in the fridge. If rice has been left out at room "
            "temperature for several hours, throw it away; it may look and smell fine and "
            "still make you ill."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("If rice has been left out at room temperature for several hours, throw it "
                 "away; it may look and smell fine and still make you ill.",
                 "Rice left out on the counter overnight is fine as long as the lid was on; "
                 "reheating it thoroughly kills anything that might have grown."),
            ]},
            {"kind": "cut", "keep": 1},
            {"kind": "verbose"},
        ],
    },
]

RAG_SHORT: list[dict] = [
    {
        "prompt": (
            "Answer using only the documents below and cite them as [1], [2], [3].\n\n"
            "[1] Returns policy (updated March 2025): Most items can be returned within 30 "
            "days of delivery for a full refund, provided they are unused and in their "
            "original packaging.\n"
            "[2] Exceptions: opened headphones, earbuds and other in-ear audio products can "
            "be returned within 14 days of delivery for hygiene reasons. Unopened audio "
            "products follow the standard 30-day policy.\n"
            "[3] Warranty: all electronics carry a one-year manufacturer's warranty against "
            "defects. Warranty claims are handled by repair or replacement, not refund.\n\n"
            "Question: I opened a pair of earbuds 20 days ago and I don't like the sound. Can "
            "I still return them?"),
        "chosen": (
            "Unfortunately not. Opened earbuds and other in-ear audio products can only be "
            "returned within 14 days of delivery [2], and 20 days have passed. The general "
            "30-day window applies only to items that are unused and in their original "
            "packaging [1], and unopened audio products [2], so it does not cover opened "
            "earbuds.\n\n"
            "If the earbuds were faulty rather than just not to your taste, the one-year "
            "manufacturer's warranty would apply, but it is handled by repair or replacement, "
            "not a refund [3]."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("Unfortunately not. Opened earbuds and other in-ear audio products can only "
                 "be returned within 14 days of delivery [2], and 20 days have passed.",
                 "Yes. Opened earbuds can be returned within 30 days of delivery [2], so you "
                 "still have 10 days left."),
            ]},
            {"kind": "text", "text": (
                "Yes, most retailers let you return headphones within 30 days, and some "
                "extend that to 60 or 90 days around the holidays. Sound quality is "
                "subjective, so it is usually worth asking the store even if the policy looks "
                "strict; customer service agents often make exceptions for loyal customers. "
                "You could also try adjusting the equaliser in the companion app before you "
                "send them back.")},
            {"kind": "cut", "keep": 1},
        ],
    },
    {
        "prompt": (
            "Use the documents to answer. Cite sources as [1], [2], [3].\n\n"
            "[1] CityCycle membership: annual members pay $90 a year. Every ride includes the "
            "first 30 minutes at no extra cost.\n"
            "[2] Overtime: after the included time, members pay $0.15 per additional minute "
            "and non-members pay $0.30 per minute.\n"
            "[3] E-bikes: an e-bike surcharge of $1.00 per ride applies to all riders.\n\n"
            "Question: As an annual member, what will a 45-minute ride on a regular bike cost "
            "me, and what would it cost on an e-bike?"),
        "chosen": (
            "On a regular bike the ride costs $2.25. The first 30 minutes are included in your "
            "membership [1], and the remaining 15 minutes are charged at the member rate of "
            "$0.15 per minute [2]: 15 x $0.15 = $2.25.\n\n"
            "On an e-bike you pay the same overtime plus the $1.00 e-bike surcharge [3], so "
            "the ride costs $3.25. Neither figure includes the $90 annual fee itself [1]."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("On a regular bike the ride costs $2.25.",
                 "On a regular bike the ride costs $4.50."),
                ("and the remaining 15 minutes are charged at the member rate of $0.15 per "
                 "minute [2]: 15 x $0.15 = $2.25.",
                 "and the remaining 15 minutes are charged at $0.30 per minute [2]: 15 x "
                 "$0.30 = $4.50."),
                ("so the ride costs $3.25.", "so the ride costs $5.50."),
            ]},
            {"kind": "swap", "edits": [
                ("On an e-bike you pay the same overtime plus the $1.00 e-bike surcharge [3], "
                 "so the ride costs $3.25.",
                 "On an e-bike the surcharge replaces the overtime charge [3], so the ride "
                 "costs $1.00."),
            ]},
            {"kind": "verbose"},
        ],
    },
    {
        "prompt": (
            "Summarise the decisions and action items from these meeting notes. Cite the "
            "notes by number.\n\n"
            "[1] Attendees: Maya (product), Luis (engineering), Dee (support). Topic: mobile "
            "app release 4.2.\n"
            "[2] Decision: the release moves from May 6 to May 13 because the payment SDK "
            "update failed review. Luis owns the fix and will report status on Friday.\n"
            "[3] Decision: offline mode stays behind a feature flag for 4.2. Maya will update "
            "the release notes.\n"
            "[4] Dee will prepare a support macro for the known login issue on older Android "
            "devices by May 10."),
        "chosen": (
            "Decisions:\n"
            "- Release 4.2 is postponed from May 6 to May 13 because the payment SDK update "
            "failed review [2].\n"
            "- Offline mode will ship behind a feature flag in 4.2 [3].\n\n"
            "Action items:\n"
            "- Luis (engineering): fix the payment SDK update and report status on Friday [2].\n"
            "- Maya (product): update the release notes to reflect the flagged offline mode "
            "[3].\n"
            "- Dee (support): prepare a support macro for the known login issue on older "
            "Android devices by May 10 [4]."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("- Luis (engineering): fix the payment SDK update and report status on Friday "
                 "[2].",
                 "- Maya (product): fix the payment SDK update and report status on Friday "
                 "[2]."),
            ]},
            {"kind": "cut", "keep": 1},
            {"kind": "drift", "keep": 1, "text": (
                "More generally, release delays are very common in mobile development. App "
                "store review times vary from a few hours to several days, and teams often "
                "plan a buffer week before every major version. Some companies use release "
                "trains, where a version ships on a fixed schedule with whatever features are "
                "ready, which takes pressure off individual deadlines.")},
        ],
    },
    {
        "prompt": (
            "Based on the documentation excerpts, how do I migrate from the deprecated "
            "`fetch_all()` call? Cite the excerpts.\n\n"
            "[1] `Client.fetch_all()` is deprecated since version 3.0 and will be removed in "
            "4.0.\n"
            "[2] Use `Client.iter_pages(page_size=100)`, which yields pages lazily instead of "
            "loading every record into memory.\n"
            "[3] `iter_pages` raises `RateLimited` when the server returns HTTP 429; catch it "
            "and retry after the number of seconds in `err.retry_after`."),
        "chosen": (
            "`fetch_all()` has been deprecated since 3.0 and disappears in 4.0 [1], so replace "
            "it with `iter_pages()`, which yields pages lazily instead of loading every record "
            "at once [2]:\n\n"
            "    records = []\n"
            "    for page in client.iter_pages(page_size=100):\n"
            "        records.extend(page)\n\n"
            "If you only need to process records, handle each page inside the loop rather than "
            "collecting them, which keeps memory use flat [2].\n\n"
            "`iter_pages` raises `RateLimited` on HTTP 429, so wrap the loop and wait "
            "`err.retry_after` seconds before retrying [3]."),
        "rejected": [
            {"kind": "swap", "edits": [
                ("`iter_pages` raises `RateLimited` on HTTP 429, so wrap the loop and wait "
                 "`err.retry_after` seconds before retrying [3].",
                 "`iter_pages` retries automatically on HTTP 429, so no error handling is "
                 "needed [3]."),
            ]},
            {"kind": "cut", "keep": 1},
            {"kind": "verbose"},
        ],
    },
]

"""Text bank: GaRAGe-style questions that the grounding can answer.

Each entry holds the question, its dimensions, the retrieved passages (with a
short label code, see :func:`needlework.demo._util.passage`) and the human
answers. The builder in :mod:`needlework.demo.grounding` turns them into
records; ``evidence_cited`` and ``age`` are derived, never written by hand.
"""

from __future__ import annotations

from needlework.demo._util import passage as p

ANSWERED: list[dict] = [
    {
        "key": "sunlight-travel-time",
        "question_date": "2024-03-05T14:22:00",
        "question": "How long does light from the Sun take to reach Earth?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Simple", "category": "Science",
                 "popularity": "Head", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2022-08-17",
              "Sunlight takes about 8 minutes and 20 seconds to reach Earth. The average "
              "distance between the Sun and Earth is about 150 million kilometres (93 million "
              "miles), and light travels at roughly 299,792 kilometres per second. Because "
              "Earth's orbit is slightly elliptical, the travel time varies by about 8 seconds "
              "either side of the average over the course of the year."),
            p("N", "web", "2024-03-04",
              "Sunrise and sunset times for Lisbon, Portugal. Today the sun rises at 07:05 and "
              "sets at 18:34, giving 11 hours and 29 minutes of daylight. Civil twilight begins "
              "about 25 minutes before sunrise. Tomorrow will be 2 minutes longer."),
            p("R", "web", "2021-05-11",
              "The speed of light in a vacuum is exactly 299,792,458 metres per second. The "
              "value has been fixed by definition since 1983, when the metre was redefined as "
              "the distance light travels in 1/299,792,458 of a second."),
            p("A", "web", "2019-10-02",
              "Q: If the Sun vanished, how long would it take us to notice? A: About 8.3 "
              "minutes. Light leaving the solar surface needs roughly 499 seconds to cross one "
              "astronomical unit, the mean Earth-Sun distance. Gravity also travels at the speed "
              "of light, so Earth would keep circling the empty spot for those same minutes."),
            p("R", "web", "2023-01-20",
              "Moonlight is reflected sunlight, and it reaches Earth about 1.3 seconds after "
              "leaving the Moon's surface. Light from Proxima Centauri, the nearest star after "
              "the Sun, takes about 4.2 years to arrive."),
            p("N", "web", "2023-06-30",
              "Solar panel output depends on the tilt of the panels, local cloud cover and "
              "temperature. Most residential installations in southern Europe produce between "
              "1,400 and 1,700 kWh per installed kilowatt each year. Panels lose a little "
              "efficiency on very hot days."),
            p("R", "web", "",
              "Photons produced in the Sun's core do not escape directly. They are absorbed and "
              "re-emitted countless times in the radiative zone, and estimates of how long energy "
              "takes to reach the surface range from tens of thousands to over a hundred "
              "thousand years.", age=""),
        ],
        "answer": (
            "Light from the Sun takes about 8 minutes and 20 seconds, roughly 499 seconds, to "
            "reach Earth [cite_1][cite_4]. That figure follows from the average Earth-Sun "
            "distance of about 150 million kilometres and the speed of light, about 299,792 "
            "kilometres per second [cite_1][cite_3]. Because Earth's orbit is slightly "
            "elliptical, the travel time shifts by about 8 seconds either way during the "
            "year [cite_1]."),
        "related": (
            "Light from the Sun takes about 8 minutes and 20 seconds, roughly 499 seconds, to "
            "reach Earth [cite_1][cite_4], and the exact figure shifts by about 8 seconds "
            "during the year because Earth's orbit is slightly elliptical [cite_1]. For "
            "comparison, moonlight reaches us in about 1.3 seconds [cite_5]. The energy in that "
            "sunlight spent far longer inside the Sun: it takes tens of thousands of years or "
            "more to work its way out from the core to the surface [cite_7]."),
        "validate": "YES",
        "comments": "",
    },
    {
        "key": "fed-funds-range",
        "question_date": "2025-01-14T09:12:00",
        "question": "What is the federal funds target range right now?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "YES",
                 "type": "FAST-CHANGING", "complexity": "Simple", "category": "Finance",
                 "popularity": "Head", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2024-12-18",
              "The Federal Open Market Committee lowered the target range for the federal funds "
              "rate by a quarter percentage point to 4.25% to 4.50% on Wednesday, its third "
              "consecutive cut. Officials also signalled fewer reductions in 2025 than they had "
              "projected in September, citing inflation that remains somewhat elevated."),
            p("O", "web", "2024-11-07",
              "The Fed cut its benchmark rate by 25 basis points on Thursday, bringing the "
              "federal funds target range to 4.50%-4.75%. The decision was unanimous, and Chair "
              "Jerome Powell said the committee would keep making decisions meeting by meeting."),
            p("O", "web", "2024-09-18",
              "In its first rate cut since March 2020, the Federal Reserve lowered the federal "
              "funds rate by half a percentage point to a range of 4.75% to 5.00%. Governor "
              "Michelle Bowman dissented in favour of a smaller quarter-point cut."),
            p("R", "web", "2025-01-09",
              "Average 30-year fixed mortgage rates climbed to 6.93% this week, according to "
              "Freddie Mac, even though the Fed has cut short-term rates three times since "
              "September. Mortgage rates track the 10-year Treasury yield more closely than they "
              "track the federal funds rate."),
            p("N", "web", "",
              "Compare high-yield savings accounts: our editors review APYs, minimum deposits "
              "and mobile apps from 12 online banks. Rates are accurate as of the date of "
              "publication and may change without notice. Advertiser disclosure applies.",
              age="2 days"),
            p("U", "web", "",
              "The central bank's next policy decision is widely expected to leave rates "
              "unchanged, according to a survey of economists. \"The committee has room to be "
              "patient,\" one strategist said, adding that the labour market remains solid.",
              age=""),
            p("R", "web", "2025-01-08",
              "Minutes of the December FOMC meeting, released on Wednesday, showed officials "
              "agreed the committee was at or near the point where it would be appropriate to "
              "slow the pace of policy easing. Several participants pointed to upside risks to "
              "inflation."),
        ],
        "answer": (
            "The federal funds target range is 4.25% to 4.50% [cite_1]. The Federal Reserve set "
            "it on December 18, 2024 with a quarter-point cut, its third reduction in a row "
            "[cite_1], after cutting to 4.75%-5.00% in September [cite_3] and to 4.50%-4.75% in "
            "November [cite_2]. Minutes of the December meeting show officials expect to slow "
            "the pace of further cuts [cite_7]."),
        "related": (
            "The federal funds target range is 4.25% to 4.50%, set on December 18, 2024 "
            "[cite_1], and the minutes of that meeting point to a slower pace of cuts from here "
            "[cite_7]. Note that the Fed's cuts have not pulled long-term borrowing costs down "
            "with them: the average 30-year fixed mortgage rate rose to 6.93% in early January, "
            "because mortgage rates follow the 10-year Treasury yield more closely [cite_4]."),
        "validate": "YES",
        "comments": "Fast-changing: passage 1 is 27 days old but no meeting took place since.",
    },
    {
        "key": "cold-vs-flu",
        "question_date": "2024-11-20T18:40:00",
        "question": "How do a cold and the flu differ in how fast symptoms start and in fever?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Comparison", "category": "Health",
                 "popularity": "Head", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2023-09-28",
              "Flu and the common cold are both respiratory illnesses, but they are caused by "
              "different viruses. Flu symptoms usually come on suddenly, while cold symptoms "
              "tend to develop gradually over a day or two. Fever, body aches, chills and "
              "fatigue are common with flu and uncommon or mild with a cold."),
            p("A", "web", "2024-01-15",
              "<b>Note</b>: This article is for general information only and does not replace "
              "advice from your doctor. A cold rarely causes a temperature above 38°C (100.4°F) "
              "in adults, whereas flu often brings a fever of 38-40°C (100-104°F) that lasts "
              "three to four days. Sneezing, a stuffy nose and a sore throat point more toward "
              "a cold."),
            p("R", "web", "2024-09-05",
              "Annual flu vaccination is recommended for everyone aged 6 months and older, with "
              "rare exceptions. There is no vaccine for the common cold, which can be caused by "
              "more than 200 different viruses, most often rhinoviruses."),
            p("N", "web", "2024-04-02",
              "Pollen counts across the Midwest are expected to peak this week as tree pollen "
              "season reaches its height. Allergy sufferers are advised to keep windows closed "
              "in the early morning, when counts are typically highest."),
            p("R", "web", "",
              "Antibiotics do not work against viruses and will not help a cold or the flu. "
              "Antiviral medicines such as oseltamivir can shorten a bout of flu when they are "
              "started within 48 hours of the first symptoms.", age=""),
            p("A", "ent", "2024-10-01",
              "Employee Health Services - When to stay home. Flu typically starts abruptly, "
              "with fever, muscle aches and exhaustion appearing within a few hours. Colds "
              "start slowly with a scratchy throat and a runny nose. Stay home until you have "
              "been fever-free for 24 hours without fever-reducing medicine."),
            p("N", "web", "2022-12-09",
              "Classic chicken soup: simmer a whole chicken with onion, carrots, celery and a "
              "bay leaf for about 90 minutes. Lift out the chicken, shred the meat and return it "
              "to the pot with egg noodles. Season generously and finish with fresh dill."),
        ],
        "answer": (
            "The main differences are how fast symptoms start and how much fever they bring. "
            "Flu usually comes on suddenly, often within a few hours, while a cold develops "
            "gradually over a day or two [cite_1][cite_6]. Fever is common with flu, often "
            "38-40°C (100-104°F) for three to four days, whereas a cold rarely pushes an adult's "
            "temperature above 38°C (100.4°F) [cite_2]. Flu also tends to bring body aches, "
            "chills and marked fatigue [cite_1], while sneezing, a stuffy nose and a sore "
            "throat point more toward a cold [cite_2]."),
        "related": (
            "Flu usually starts suddenly while a cold builds up over a day or two "
            "[cite_1][cite_6], and flu commonly brings a fever of 38-40°C that lasts several "
            "days, which a cold rarely does [cite_2]. A yearly flu vaccine is recommended for "
            "everyone from 6 months of age, but there is no vaccine for colds [cite_3]. "
            "Antibiotics help with neither illness, although antivirals can shorten flu if "
            "started within 48 hours [cite_5]."),
        "validate": "YES",
        "comments": "Passage 2 starts with scraped markup; keep it as it is.",
    },
    {
        "key": "japan-visa-us",
        "question_date": "2024-06-03T07:45:00",
        "question": ("Do I need a visa to visit Japan for two weeks as a tourist if I travel "
                     "on a US passport?"),
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "YES",
                 "type": "SLOW-CHANGING", "complexity": "Simple w. condition",
                 "category": "Travel", "popularity": "Torso", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2024-02-14",
              "Citizens of the United States do not need a visa for short-term stays in Japan of "
              "up to 90 days for tourism, business meetings or visiting relatives. Travellers "
              "must hold a valid passport and may be asked to show an onward or return ticket. "
              "Paid work is not permitted under visa-exempt status."),
            p("O", "web", "2022-06-10",
              "Japan will reopen to foreign tourists from June 10, but only as part of guided "
              "package tours arranged through a licensed travel agency. Visitors will need a "
              "visa and must carry private medical insurance for the length of their stay."),
            p("R", "web", "2023-11-21",
              "Visit Japan Web is a free online service where arriving travellers can register "
              "immigration and customs information before their flight. Completing it is "
              "optional, but it produces QR codes that can speed up arrival procedures at major "
              "airports."),
            p("N", "web", "2024-05-18",
              "Getting to the resort: the hotel shuttle meets every flight at the island's "
              "small airport. A one-way ticket costs $5 and $10 covers the round trip, payable "
              "in cash at the desk. Reservations are not required, but guests arriving after "
              "10 pm should call ahead."),
            p("R", "web", "2024-01-09",
              "For visa-exempt visitors, Japan requires a passport that remains valid for the "
              "whole stay. Many airlines still recommend several months of remaining validity "
              "to avoid problems at check-in, so check the expiry date before you book."),
            p("O", "web", "2020-04-03",
              "Japan has suspended visa exemptions for travellers from dozens of countries, "
              "including the United States, as part of measures to contain the coronavirus. "
              "Visas issued before the restrictions have also been temporarily invalidated."),
            p("U", "web", "",
              "US passport holders can enter visa-free for stays of up to 90 days. Make sure you "
              "have proof of onward travel and enough funds for your trip.", age=""),
            p("N", "web", "2023-10-02",
              "The price of the 7-day ordinary Japan Rail Pass rose to 50,000 yen on October 1, "
              "2023. For travellers who only make one long-distance round trip, individual "
              "shinkansen tickets are now often cheaper than the pass."),
            p("N", "web", "2024-05-30",
              "The rainy season usually reaches Tokyo in early June and lasts for about six "
              "weeks. Pack a compact umbrella and shoes that dry quickly; indoor attractions "
              "such as museums and department stores get busy on wet weekends."),
            p("N", "ent", "2024-01-15",
              "Corporate travel policy, section 4.2: international flights must be booked "
              "through the travel portal at least 21 days before departure. Trips that include "
              "personal days must be approved by your manager in advance."),
        ],
        "answer": (
            "No. With a US passport you do not need a visa for a two-week tourist trip, because "
            "US citizens can stay in Japan visa-free for up to 90 days for tourism [cite_1]. "
            "Your passport must be valid for the whole stay [cite_5], and you may be asked to "
            "show an onward or return ticket [cite_1]. Visa-free entry was suspended during the "
            "pandemic [cite_6], but the exemption applies again today [cite_1]."),
        "related": (
            "No visa is needed: US citizens can visit Japan visa-free for up to 90 days as "
            "tourists [cite_1], provided the passport stays valid for the whole trip [cite_5]. "
            "Before flying you can also fill in Visit Japan Web, an optional free service that "
            "generates QR codes to speed up immigration and customs on arrival [cite_3]."),
        "validate": "",
        "comments": "Passage 7 repeats the rule but has no date, so its currency is unknown.",
    },
    {
        "key": "paris-2024-us-china",
        "question_date": "2024-09-02T11:05:00",
        "question": ("How many medals did the United States and China win between them at the "
                     "Paris 2024 Olympics?"),
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Aggregation", "category": "Sports",
                 "popularity": "Torso", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2024-08-11",
              "The United States finished top of the Paris 2024 medal table on the final day, "
              "level with China on 40 gold medals but ahead on silver. The US team won 126 "
              "medals in all: 40 gold, 44 silver and 42 bronze."),
            p("A", "web", "2024-08-12",
              "China ended the Paris Games with 91 medals: 40 gold, 27 silver and 24 bronze. "
              "The last gold of the Games for the United States, in women's basketball, meant "
              "the two nations finished level on golds."),
            p("O", "web", "2024-08-04",
              "Halfway through the Games, China leads the gold medal count while the United "
              "States has won the most medals overall. Both delegations are on course for "
              "totals close to their Tokyo 2020 hauls."),
            p("R", "web", "2021-08-08",
              "At Tokyo 2020 the United States topped the medal table with 39 gold medals and "
              "113 medals in total, while China finished second with 38 gold and 88 medals "
              "overall at the close of the Games. Those Games were held in 2021 after a one-year "
              "postponement."),
            p("N", "web", "2024-08-20",
              "Tickets for the Paris 2024 Paralympic Games remain available for many sessions, "
              "with prices starting at 15 euros. The Games run from August 28 to September 8, "
              "and children's tickets can be bought at the same time as adult tickets."),
            p("R", "web", "2024-08-11",
              "France, the host nation, won 64 medals including 16 golds, its best Olympic "
              "showing in more than a century. Judo and swimming produced the largest share of "
              "the French medals."),
        ],
        "answer": (
            "Together the United States and China won 217 medals at Paris 2024. The United "
            "States won 126 medals: 40 gold, 44 silver and 42 bronze [cite_1]. China won 91: 40 "
            "gold, 27 silver and 24 bronze [cite_2]. The two countries finished level on gold "
            "medals, and the United States took first place on the table thanks to its higher "
            "silver count [cite_1]."),
        "related": (
            "The two countries won 217 medals between them: 126 for the United States [cite_1] "
            "and 91 for China [cite_2]. That is up from 201 at Tokyo 2020, when the United "
            "States won 113 and China 88 [cite_4]."),
        "validate": "YES",
        "comments": "",
    },
    {
        "key": "python-match-year",
        "question_date": "2024-10-08T16:30:00",
        "question": ("In which year was the first Python version that supports the match "
                     "statement released?"),
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Multi-hop", "category": "Technology",
                 "popularity": "Tail", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2021-02-08",
              "PEP 634 - Structural Pattern Matching: Specification. Status: Final. "
              "Python-Version: 3.10. This PEP provides the technical specification for the "
              "match statement, which compares a subject value against one or more case "
              "patterns."),
            p("A", "web", "2021-10-04",
              "Python 3.10.0 is now available. This release brings structural pattern matching, "
              "parenthesized context managers, clearer error messages and the new type union "
              "operator X | Y. Thanks to all the volunteers who made this release possible."),
            p("N", "web", "2023-07-14",
              "The reticulated python is the world's longest snake, with some individuals "
              "exceeding 6 metres. Pythons are non-venomous constrictors found in Africa, Asia "
              "and Australia."),
            p("R", "web", "2023-10-02",
              "Python 3.12 was released on October 2, 2023. Highlights include more flexible "
              "f-string parsing, a per-interpreter GIL in the C API and further improvements to "
              "error messages."),
            p("R", "web", "",
              "match command.split():\n    case [\"go\", direction]:\n        move(direction)\n"
              "    case [\"quit\"]:\n        quit_game()\nThe match statement works on "
              "sequences, mappings and class instances. A case with a bare name captures the "
              "value rather than comparing against it.", age=""),
            p("N", "ent", "2024-03-11",
              "Reminder: the Python guild meetup moves to Thursday this month. Bring your laptop; "
              "we will pair on migrating the billing scripts to the new scheduler."),
        ],
        "answer": (
            "The first version with the match statement is Python 3.10: PEP 634, the "
            "specification of structural pattern matching, targets that release [cite_1]. "
            "Python 3.10.0 came out on October 4, 2021, with structural pattern matching among "
            "its headline features [cite_2], so the answer is 2021."),
        "related": (
            "Python 3.10, released on October 4, 2021, was the first version with the match "
            "statement [cite_1][cite_2]. The statement compares a subject against case "
            "patterns and works on sequences, mappings and class instances; a bare name in a "
            "case captures the value instead of comparing it [cite_5]."),
        "validate": "YES",
        "comments": "",
    },
    {
        "key": "nato-founders",
        "question_date": "2024-04-04T10:00:00",
        "question": "Which countries founded NATO?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Set", "category": "History",
                 "popularity": "Head", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2024-04-04",
              "NATO was founded on April 4, 1949, when 12 countries signed the North Atlantic "
              "Treaty in Washington, D.C.: Belgium, Canada, Denmark, France, Iceland, Italy, "
              "Luxembourg, the Netherlands, Norway, Portugal, the United Kingdom and the United "
              "States. The alliance marked its 75th anniversary on Thursday with a ceremony at "
              "its headquarters in Brussels."),
            p("R", "web", "2024-03-07",
              "Sweden formally joined NATO on March 7, 2024, becoming the alliance's 32nd "
              "member, less than a year after Finland became the 31st in April 2023. Its flag was "
              "raised at NATO headquarters in Brussels four days later."),
            p("R", "web", "2019-04-03",
              "Greece and Turkey joined the alliance in 1952, followed by West Germany in 1955 "
              "and Spain in 1982. The end of the Cold War brought a further series of "
              "enlargements.", age=""),
            p("N", "web", "2023-08-15",
              "Warsaw's Old Town was rebuilt after the Second World War using paintings and "
              "archival records, and it was added to the UNESCO World Heritage List in 1980. "
              "Guided walking tours leave from Castle Square every morning."),
            p("R", "web", "2022-02-24",
              "Article 5 of the North Atlantic Treaty says that an armed attack against one or "
              "more members shall be considered an attack against them all. It has been invoked "
              "only once, after the September 11, 2001 attacks on the United States."),
            p("A", "web", "",
              "Founding members (1949): Belgium, Canada, Denmark, France, Iceland, Italy, "
              "Luxembourg, Netherlands, Norway, Portugal, United Kingdom, United States. The "
              "treaty entered into force on August 24, 1949.",
              age=""),
        ],
        "answer": (
            "NATO was founded by 12 countries that signed the North Atlantic Treaty in "
            "Washington, D.C. on April 4, 1949 [cite_1]. They were Belgium, Canada, Denmark, "
            "France, Iceland, Italy, Luxembourg, the Netherlands, Norway, Portugal, the United "
            "Kingdom and the United States [cite_1][cite_6]."),
        "related": (
            "NATO's 12 founders, who signed the treaty on April 4, 1949, were Belgium, Canada, "
            "Denmark, France, Iceland, Italy, Luxembourg, the Netherlands, Norway, Portugal, the "
            "United Kingdom and the United States [cite_1][cite_6]. Greece and Turkey joined in "
            "1952, West Germany in 1955 and Spain in 1982 [cite_3]; the most recent members are "
            "Finland (2023) and Sweden (2024), the 32nd [cite_2]."),
        "validate": "YES",
        "comments": "",
    },
    {
        "key": "northwind-emea-growth",
        "question_date": "2025-02-20T13:15:00",
        "question": ("By what percentage did Northwind Robotics' EMEA revenue grow from the third "
                     "to the fourth quarter of fiscal 2024?"),
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Post-processing heavy", "category": "Finance",
                 "popularity": "Tail", "tags": ("sec", "sec")},
        "passages": [
            p("A", "ent", "2024-11-06",
              "Northwind Robotics, Inc. - Form 10-Q, quarter ended September 30, 2024. Segment "
              "revenue (in thousands): Americas $11,842; EMEA $4,200; APAC $2,915. EMEA growth "
              "was driven by warehouse automation orders in Germany and the Netherlands."),
            p("A", "ent", "2025-02-12",
              "Northwind Robotics, Inc. - Form 10-K excerpt, fiscal year ended December 31, "
              "2024. Fourth-quarter segment revenue (in thousands): Americas $12,310; EMEA "
              "$4,830; APAC $3,102. Management attributes the EMEA increase mainly to the "
              "completion of two large installations in Rotterdam."),
            p("O", "ent", "2024-10-15",
              "Preliminary Q3 flash (unaudited): EMEA revenue approximately $4.05 million. Final "
              "figures will be reported in the Form 10-Q. Do not distribute outside the finance "
              "team."),
            p("R", "ent", "2025-02-12",
              "Risk factors: a significant portion of our EMEA revenue is denominated in euros. "
              "A 10% strengthening of the U.S. dollar against the euro would have reduced "
              "fourth-quarter EMEA revenue by approximately $0.4 million."),
            p("N", "web", "2025-01-30",
              "Shares of several industrial robotics makers rose on Thursday after a large "
              "chipmaker reported strong data-centre demand. Analysts cautioned that factory "
              "automation orders remain uneven across regions."),
            p("U", "ent", "",
              "EMEA pipeline review - DRAFT. Bookings up strongly versus the prior quarter; see "
              "the attached spreadsheet for details by country. Owner: regional finance.",
              age=""),
        ],
        "answer": (
            "EMEA revenue grew by 15.0% from the third to the fourth quarter of fiscal 2024. It "
            "was $4,200 thousand in Q3 [cite_1] and $4,830 thousand in Q4 [cite_2], an increase "
            "of $630 thousand, and 630 / 4,200 = 0.15. Management attributes the increase mainly "
            "to two large installations completed in Rotterdam [cite_2]."),
        "related": (
            "EMEA revenue rose from $4,200 thousand in Q3 [cite_1] to $4,830 thousand in Q4 "
            "[cite_2], a 15.0% increase. Part of the figure depends on exchange rates: most EMEA "
            "revenue is in euros, and a 10% stronger dollar would have cut Q4 EMEA revenue by "
            "about $0.4 million [cite_4]."),
        "validate": "YES",
        "comments": "The Q3 flash figure (passage 3) is superseded by the 10-Q.",
    },
    {
        "key": "great-wall-moon",
        "question_date": "2024-07-22T20:05:00",
        "question": ("Why is the Great Wall of China the only man-made structure you can see "
                     "from the Moon?"),
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "YES", "sensitive": "NO",
                 "type": "", "complexity": "Simple", "category": "Science",
                 "popularity": "Head", "tags": ("web", "web")},
        "passages": [
            p("A", "web", "2022-05-19",
              "Contrary to popular belief, the Great Wall of China is not visible to the naked "
              "eye from the Moon. From about 384,000 kilometres away no individual human-made "
              "structure can be made out; continents, oceans and clouds are what stand out."),
            p("A", "web", "2018-11-30",
              "Astronauts report that the wall is very hard to see even from low Earth orbit, "
              "around 400 km up, because it is narrow and close in colour to the surrounding "
              "terrain. China's first astronaut, Yang Liwei, said in 2003 that he could not see "
              "it."),
            p("R", "web", "2020-09-09",
              "City lights, airports, large reservoirs and greenhouse farms such as the plastic-"
              "covered fields of Almeria in Spain are among the human-made features that "
              "astronauts photograph from the International Space Station. Many of the images "
              "are published in the space agencies' public archives."),
            p("N", "web", "2023-04-11",
              "Badaling is the most visited section of the Great Wall, about 70 km northwest of "
              "central Beijing. Tickets can be booked online, and weekday mornings are the "
              "quietest time to visit."),
            p("R", "web", "",
              "The claim that the Great Wall can be seen from the Moon appeared in print decades "
              "before anyone went to space, for example in a 1932 Ripley's Believe It or Not! "
              "cartoon.", age=""),
        ],
        "answer": (
            "The premise is mistaken: the Great Wall of China is not visible to the naked eye "
            "from the Moon, and from that distance no individual human-made structure can be "
            "seen [cite_1]. Even from low Earth orbit the wall is hard to spot, because it is "
            "narrow and similar in colour to the land around it; China's first astronaut, Yang "
            "Liwei, said he could not see it [cite_2]. The claim is an old myth that was in "
            "print long before space flight [cite_5]."),
        "related": (
            "The Great Wall is not visible from the Moon; no single human-made structure is "
            "[cite_1], and the wall is hard to see even from low orbit [cite_2]. What astronauts "
            "on the International Space Station do photograph are city lights, airports, large "
            "reservoirs and vast greenhouse farms such as those of Almeria [cite_3]."),
        "validate": "YES",
        "comments": "False premise; the answer corrects it.",
    },
]

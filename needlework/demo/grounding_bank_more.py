"""Text bank: questions that need a deflection, and questions not judged yet.

Deflection questions have no ANSWER-THE-QUESTION passage, so their human answer
is the deflection sentence (our rule, see docs/benchmarks.md section 1). The
unlabeled questions carry passages with empty labels and no answer, so that a
fresh demo has work waiting for annotators.
"""

from __future__ import annotations

from needlework.demo._util import passage as p

DEFLECTED: list[dict] = [
    {
        "key": "checkout-outage-root-cause",
        "question_date": "2025-02-05T08:30:00",
        "question": "What was the root cause of the checkout-service outage on February 3, 2025?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Simple", "category": "Technology",
                 "popularity": "Tail", "tags": ("devops", "devops")},
        "passages": [
            p("R", "ent", "2025-02-03",
              "#inc-2025-0203-checkout. 14:02 UTC PagerDuty alert: checkout-service p99 latency "
              "above 4 s. 14:09 error rate at 37%, incident declared SEV-2. 14:31 traffic shifted "
              "to us-west-2, errors recovering. 15:10 mitigated. Root cause under investigation; "
              "postmortem owner @dana.k."),
            p("R", "ent", "2025-02-04",
              "Deploy log, checkout-service: v2.41.0 rolled out to us-east-1 at 13:48 UTC on "
              "Feb 3 (change: connection pool settings for the payments client). Rolled back at "
              "14:44 UTC by the on-call engineer."),
            p("N", "ent", "2023-06-12",
              "Postmortem: search-indexer backlog, June 2023. Root cause: a schema migration "
              "locked the documents table for 40 minutes during peak traffic. Action items: run "
              "migrations online and add a lock timeout."),
            p("U", "ent", "",
              "Known issue: under heavy load the payments client can exhaust its connection "
              "pool, which shows up as upstream timeouts in the services that call it. "
              "Workaround: raise max_connections or enable the circuit breaker.", age=""),
            p("N", "web", "2024-11-19",
              "How to write a blameless postmortem: describe what happened in neutral language, "
              "focus on systems rather than individuals, and make every action item specific, "
              "owned and dated. Publish the document within a week, while the details are "
              "still fresh."),
        ],
        "related": (
            "The postmortem is not among the documents, and the incident channel still lists "
            "the root cause as under investigation [cite_1]. The deploy log shows that a release "
            "changing the payments client's connection pool settings went out 14 minutes before "
            "the first alert and was rolled back at 14:44 UTC [cite_2], which makes it a likely "
            "lead rather than a confirmed cause."),
        "validate": "YES",
        "comments": "Timeline points at the v2.41.0 deploy but nothing confirms it; deflect.",
    },
    {
        "key": "hollis-flu-admissions",
        "question_date": "2025-01-22T12:00:00",
        "question": "How many people were admitted to hospital with flu in Hollis County this week?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "YES",
                 "type": "FAST-CHANGING", "complexity": "Simple w. condition",
                 "category": "Health", "popularity": "Torso", "tags": ("web", "web")},
        "passages": [
            p("O", "web", "2024-12-20",
              "Hollis County Public Health - respiratory virus update, week ending December 14: "
              "41 flu-related hospital admissions, up from 29 the previous week. Influenza A "
              "accounts for most positive tests."),
            p("O", "web", "2025-01-03",
              "Week ending December 28: flu admissions in Hollis County rose to 63, the highest "
              "weekly count since 2019. Officials urged residents who have not been vaccinated "
              "to get a flu shot as soon as possible."),
            p("R", "web", "2025-01-16",
              "Hospitals across the region have activated surge plans as flu, COVID-19 and RSV "
              "cases climb. Several emergency departments report waits of more than six hours, "
              "and visitors are asked to wear masks in patient areas."),
            p("N", "web", "2025-01-20",
              "Hollis County libraries will host free tax-preparation clinics on Saturdays from "
              "February through April. Bring photo ID and all income statements."),
            p("U", "web", "",
              "This week's update: flu hospitalizations in the county have started to level "
              "off, health officials said, though they remain well above last season's peak. "
              "Full figures are expected on Friday.",
              age=""),
        ],
        "related": (
            "The documents do not cover the current week. The most recent dated figure is 63 "
            "flu admissions for the week ending December 28 [cite_2], and regional hospitals "
            "have since activated surge plans [cite_3]."),
        "validate": "",
        "comments": "Fast-changing; newest dated figure is more than three weeks old.",
    },
    {
        "key": "sma-learning-rate",
        "question_date": "2024-09-17T15:48:00",
        "question": ("What learning rate did the authors of 'Sparse Mixture Adapters for "
                     "Long-Document Retrieval' use when fine-tuning?"),
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Simple", "category": "Science",
                 "popularity": "Tail", "tags": ("arxiv", "arxiv")},
        "passages": [
            p("R", "web", "2024-06-03",
              "Abstract. We introduce Sparse Mixture Adapters (SMA), a parameter-efficient "
              "method that routes each document segment to a small subset of low-rank adapters. "
              "On three long-document retrieval benchmarks, SMA matches full fine-tuning while "
              "updating 0.8% of the parameters."),
            p("R", "web", "2024-06-03",
              "4.1 Training details. We fine-tune all models for 3 epochs with the AdamW "
              "optimizer, a batch size of 64 and a linear warm-up over the first 5% of steps. "
              "Adapter rank is set to 16 and the number of experts to 8. The learning rate "
              "schedule is given in Appendix C."),
            p("N", "web", "2023-12-08",
              "A gentle introduction to learning rate schedules: step decay lowers the rate at "
              "fixed epochs, cosine decay lowers it smoothly, and warm-up starts small to keep "
              "early updates stable. Most modern training recipes combine a short warm-up with "
              "some form of decay."),
            p("U", "web", "",
              "SMA: code and checkpoints for our long-document retrieval paper. Training "
              "configurations live in configs/; run train.py --config configs/sma_base.yaml "
              "to reproduce the main table.", age=""),
            p("N", "web", "2024-08-22",
              "Abstract. We study sparse mixture-of-experts layers for streaming speech "
              "recognition and show that expert pruning reduces latency by 30% with no loss in "
              "word error rate."),
        ],
        "related": (
            "The retrieved text does not state the learning rate. The training details give "
            "3 epochs with AdamW, a batch size of 64, a 5% linear warm-up, adapter rank 16 and "
            "8 experts, and refer to Appendix C for the learning rate schedule [cite_2], which "
            "is not among the passages."),
        "validate": "YES",
        "comments": "Appendix C missing from the retrieval.",
    },
    {
        "key": "calories-blue",
        "question_date": "2024-05-09T19:20:00",
        "question": "How many calories are in the colour blue?",
        "dims": {"valid": "NO", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Simple", "category": "Food & Drink",
                 "popularity": "Tail", "tags": ("web", "web")},
        "passages": [
            p("N", "web", "2024-01-22",
              "A medium banana contains about 105 calories, most of them from carbohydrates. "
              "Bananas are also a good source of potassium and vitamin B6."),
            p("R", "web", "2022-10-05",
              "Colours themselves have no nutritional content. Food dyes such as Brilliant Blue "
              "FCF (E133) are used in such small amounts that they contribute no meaningful "
              "calories to a product."),
            p("N", "web", "",
              "Designers often pair navy blue with warm neutrals such as sand, camel and "
              "terracotta to keep a room from feeling cold. Blue also works well in kitchens "
              "and bathrooms with white tiles.", age=""),
            p("R", "web", "2023-03-14",
              "Blue foods are rare in nature. Blueberries get their colour from anthocyanins, "
              "pigments that shift from red towards blue as acidity decreases."),
        ],
        "related": (
            "The question has no factual answer because a colour has no nutritional content; "
            "even blue food dyes are used in amounts too small to add meaningful calories "
            "[cite_2]."),
        "validate": "",
        "comments": "Invalid question (category error).",
    },
]

UNLABELED: list[dict] = [
    {
        "key": "australian-open-2025-men",
        "question_date": "2025-01-27T06:30:00",
        "question": "Who won the men's singles title at the 2025 Australian Open?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "YES",
                 "type": "FAST-CHANGING", "complexity": "Simple", "category": "Sports",
                 "popularity": "Head", "tags": ("web", "web")},
        "passages": [
            p("", "web", "2025-01-26",
              "Jannik Sinner retained his Australian Open title on Sunday, beating Alexander "
              "Zverev 6-3, 7-6(4), 6-3 in the final at Rod Laver Arena. It was the Italian's "
              "third Grand Slam title."),
            p("", "web", "2024-01-28",
              "Jannik Sinner came back from two sets down to beat Daniil Medvedev in the "
              "Australian Open final, winning his first Grand Slam title at the age of 22. He had "
              "beaten Novak Djokovic in the semi-finals."),
            p("", "web", "2025-01-25",
              "Madison Keys won the women's singles title in Melbourne, defeating two-time "
              "defending champion Aryna Sabalenka 6-3, 2-6, 7-5 for her first major. In the "
              "semi-finals she had saved a match point against Iga Swiatek."),
            p("", "web", "2025-01-24",
              "Novak Djokovic retired after losing the first set of his semi-final against "
              "Alexander Zverev, citing a muscle tear in his left leg. He had picked up the "
              "injury during his quarter-final win over Carlos Alcaraz."),
            p("", "web", "",
              "Melbourne forecast: hot and dry with a top of 36 degrees. The tournament's heat "
              "stress scale may pause play on outside courts in the afternoon.", age="7 days"),
        ],
        "validate": "",
        "comments": "",
    },
    {
        "key": "q3-offsite-venue",
        "question_date": "2024-07-02T10:10:00",
        "question": "Which venue did the team finally book for the Q3 planning offsite?",
        "dims": {"valid": "YES", "seeking": "YES", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Multi-hop", "category": "Business",
                 "popularity": "Tail", "tags": ("enron", "enron")},
        "passages": [
            p("", "ent", "2024-06-12",
              "From: Priya Raman. To: ops-leads. Subject: Q3 offsite venue options. I've "
              "shortlisted three venues: the Lakeview Conference Center, Harbor Hall and the Old "
              "Mill. Lakeview has the best rooms but is $2,000 over budget. Please vote by "
              "Friday."),
            p("", "ent", "2024-06-17",
              "Re: Q3 offsite venue options. Votes are in: Harbor Hall 6, Old Mill 4, Lakeview "
              "2. I'll ask Harbor Hall to hold July 24-25 for us. - Priya"),
            p("", "ent", "2024-06-21",
              "Re: Q3 offsite venue options. Harbor Hall can't do the 24th after all because of "
              "a double booking. The Old Mill is confirmed for July 24-25 and the contract was "
              "signed this morning. - Priya"),
            p("", "ent", "2024-05-02",
              "Facilities: the 4th-floor kitchen will be closed for renovation from May 6 to "
              "May 17. Please use the kitchen on the 2nd floor in the meantime."),
            p("", "ent", "",
              "Offsite agenda, draft v2. Day 1: roadmap review and customer escalations. Day 2: "
              "hiring plan, budget and team dinner.", age=""),
        ],
        "validate": "",
        "comments": "",
    },
    {
        "key": "tromso-aurora-poem",
        "question_date": "2024-12-01T21:45:00",
        "question": "Write a short poem about the northern lights over Tromsø.",
        "dims": {"valid": "YES", "seeking": "NO", "false_premise": "NO", "sensitive": "NO",
                 "type": "", "complexity": "Simple", "category": "Arts & Entertainment",
                 "popularity": "Torso", "tags": ("web", "web")},
        "passages": [
            p("", "web", "2023-11-08",
              "Tromsø lies about 350 km north of the Arctic Circle, under the auroral oval, "
              "which makes it one of the best places to see the northern lights between late "
              "September and early April. Clear, dark nights away from the city lights give "
              "the best chances."),
            p("", "web", "2024-10-14",
              "The aurora borealis forms when charged particles from the Sun collide with gases "
              "in Earth's upper atmosphere. Oxygen produces the familiar green glow, while "
              "nitrogen can add blue and purple edges."),
            p("", "web", "2024-02-27",
              "Polar night in Tromsø lasts from late November to mid-January, when the sun does "
              "not rise above the horizon. A soft blue twilight still lights the middle of the "
              "day."),
            p("", "web", "",
              "Best hot chocolate in town? Locals swear by the little café by the harbour, which "
              "also sells reindeer-wool mittens.", age=""),
        ],
        "validate": "",
        "comments": "",
    },
]

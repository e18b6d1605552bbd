"""Data for the houseplant care guide: one entry per plant.

Pet safety follows the ASPCA's lists of toxic and non-toxic plants.
"""

from __future__ import annotations

# name, botanical name, why, light, water, humidity, (min, max) degC, soil and feeding,
# propagation, (symptom, cause and fix), toxic to pets?, pet detail, difficulty
PLANTS = [
    ("Pothos", "Epipremnum aureum",
     "It is the classic first houseplant: fast-growing, forgiving and happy trailing from a "
     "shelf or climbing a pole.",
     "Bright, indirect light is ideal. It tolerates low light, but variegated forms lose "
     "their marbling and the vines become sparse.",
     "Water when the top 2 to 3 cm of soil are dry, roughly every week or two in summer and "
     "less in winter.",
     "Average household humidity is fine.", (15, 29),
     "Any well-draining potting mix. Feed monthly in spring and summer with a balanced "
     "liquid fertiliser at half strength.",
     "Cut a stem just below a node, the bump where a leaf joins the stem, and root it in a "
     "glass of water; roots appear in two to three weeks.",
     ("Yellow leaves, several at once", "This almost always means the soil stays wet too "
      "long. Let it dry further between waterings and check that the pot drains."),
     True, "insoluble calcium oxalate crystals that irritate the mouth", "easy"),
    ("Snake plant", "Dracaena trifasciata",
     "Its upright, sword-shaped leaves suit modern rooms, and it copes with neglect better "
     "than almost any other plant.",
     "Anything from low light to bright, indirect light, and it tolerates a little direct "
     "sun. It grows faster in brighter spots.",
     "Let the soil dry out completely, then water thoroughly. That usually means every two "
     "to four weeks, and even less in winter.",
     "Dry indoor air is no problem.", (10, 30),
     "A cactus and succulent mix. Feed two or three times during the growing season.",
     "Divide the rhizomes when repotting, or root leaf sections in soil; leaf cuttings of "
     "yellow-edged varieties lose the yellow edge.",
     ("Soft, mushy leaves at the base", "This is root rot from too much water. Cut away the "
      "mushy parts, let the plant dry and repot it in fresh, gritty mix."),
     True, "saponins, which can cause vomiting and diarrhoea", "very easy"),
    ("ZZ plant", "Zamioculcas zamiifolia",
     "Its glossy leaves look almost artificial, and its potato-like rhizomes store water, "
     "so it shrugs off weeks without care.",
     "Low to bright, indirect light. Keep it out of strong direct sun, which can scorch the "
     "leaves.",
     "Water only when the soil is completely dry; in a dim room that can be once a month.",
     "Average humidity is fine.", (15, 29),
     "A free-draining mix with some perlite. Feed a few times in spring and summer.",
     "Divide the rhizomes, or root single leaflets in moist soil, which works but takes "
     "several months.",
     ("Yellowing stems", "Usually overwatering. Check the rhizomes: firm is healthy, soft "
      "means rot, which has to be cut away."),
     True, "calcium oxalate crystals", "very easy"),
    ("Spider plant", "Chlorophytum comosum",
     "It produces cascades of baby plants on long stems and is one of the easiest plants "
     "to share with friends.",
     "Bright, indirect light. It survives in lower light but makes fewer babies.",
     "Keep the soil lightly moist in the growing season and let the top few centimetres "
     "dry between waterings.",
     "Average humidity is fine.", (13, 27),
     "General potting mix. Feed monthly in spring and summer.",
     "Pin a plantlet onto a pot of soil while it is still attached to the mother plant, and "
     "cut the stem once it has rooted.",
     ("Brown leaf tips", "Often caused by fluoride and salts in tap water or by dry soil. "
      "Water with rain or filtered water and trim the tips with clean scissors."),
     False, "", "very easy"),
    ("Peace lily", "Spathiphyllum",
     "It tells you when it is thirsty by drooping dramatically, then stands up again within "
     "hours of a drink, and it flowers indoors.",
     "Medium to bright, indirect light. It tolerates shade but rarely flowers there.",
     "Keep the soil evenly moist but never waterlogged; water as soon as the surface feels "
     "dry.",
     "It likes higher humidity; a pebble tray helps.", (16, 29),
     "Peat-free, moisture-retentive mix. Feed every six weeks in spring and summer.",
     "Divide the clump when repotting, making sure each piece has roots and a few leaves.",
     ("Brown, crispy leaf edges", "Dry air or inconsistent watering. Raise the humidity and "
      "water more regularly."),
     True, "calcium oxalate crystals; despite the name it is not a true lily", "easy"),
    ("Monstera", "Monstera deliciosa",
     "Its huge split leaves make it the statement plant of the last decade.",
     "Bright, indirect light. Leaves grown in dim light stay small and without splits.",
     "Water when the top 5 cm of soil are dry.",
     "Average to high humidity.", (18, 30),
     "Chunky, airy mix with bark and perlite. Feed monthly in the growing season and give "
     "it a moss pole to climb.",
     "Take a stem cutting with at least one node, ideally with an aerial root, and root it "
     "in water or moist sphagnum moss.",
     ("New leaves without splits", "The plant is too young or has too little light. Move it "
      "closer to a bright window, out of direct midday sun."),
     True, "calcium oxalate crystals", "easy"),
    ("Fiddle-leaf fig", "Ficus lyrata",
     "Its large, violin-shaped leaves make a striking indoor tree, if you can meet its "
     "demands.",
     "Plenty of bright light, including some gentle direct sun. It sulks in dim corners.",
     "Water thoroughly when the top 5 cm are dry, and keep the routine consistent.",
     "Average humidity, away from draughts and radiators.", (16, 29),
     "Well-draining mix. Feed monthly in spring and summer.",
     "Root stem cuttings in water, or air layer a branch for a bigger new plant.",
     ("Sudden leaf drop", "A reaction to change: a move, a draught or a cold window. Find it "
      "a good spot and leave it there."),
     True, "irritating sap", "demanding"),
    ("Rubber plant", "Ficus elastica",
     "It offers the big-leaf look of the fiddle-leaf fig with far less drama.",
     "Bright, indirect light; dark-leaved varieties tolerate a bit less.",
     "Water when the top 3 to 5 cm of soil are dry.",
     "Average humidity. Wipe the leaves with a damp cloth so they can use the light.",
     (15, 29),
     "General potting mix. Feed monthly in the growing season.",
     "Take stem cuttings, letting the milky sap stop first, or air layer a branch.",
     ("Lower leaves falling off", "Usually too little light or overwatering. Move it closer "
      "to a window and let it dry a little more."),
     True, "a milky sap that irritates skin and mouth", "easy"),
    ("Boston fern", "Nephrolepis exaltata",
     "Its arching fronds look wonderful in a hanging basket or on a plant stand in a bright "
     "bathroom.",
     "Bright, indirect light; no direct sun.",
     "Keep the soil consistently moist. Never let it dry out completely.",
     "It needs high humidity, ideally above 50 percent.", (16, 24),
     "Rich, moisture-retentive mix. Feed lightly every month in spring and summer.",
     "Divide the plant in spring, or pot up the small plants that form on its runners.",
     ("Crispy, shedding fronds", "The air is too dry or the soil dried out. Move it to a "
      "more humid room and check the soil every few days."),
     False, "", "moderate"),
    ("Calathea", "Goeppertia species",
     "Its patterned leaves fold upwards at night and open again in the morning, which is "
     "why it is called a prayer plant.",
     "Medium, indirect light. Direct sun fades the patterns.",
     "Keep the soil evenly moist, using filtered or rain water if your tap water is hard.",
     "It needs high humidity; group it with other plants or use a humidifier.", (18, 27),
     "Light, moisture-retentive mix. Feed monthly at half strength in the growing season.",
     "Divide the clump when repotting in spring.",
     ("Curling leaves with brown edges", "Low humidity or minerals in tap water. Raise the "
      "humidity and switch to filtered water."),
     False, "", "demanding"),
    ("Aloe vera", "Aloe barbadensis miller",
     "A sculptural succulent for a sunny windowsill, with gel that many people keep for "
     "minor sunburn.",
     "Bright light with a few hours of direct sun. In dim light it stretches and turns pale.",
     "Water deeply when the soil is completely dry, roughly every two to three weeks in "
     "summer and once a month in winter.",
     "Dry air is ideal.", (13, 27),
     "Cactus mix in a terracotta pot, which dries faster. Feed once or twice a year.",
     "Separate the pups that grow around the base and pot them on their own.",
     ("Thin, curling leaves", "The plant is thirsty. Give it a thorough soak and let it "
      "drain."),
     True, "saponins and anthraquinones, which cause vomiting and diarrhoea", "easy"),
    ("Jade plant", "Crassula ovata",
     "A slow-growing succulent that can live for decades and is often passed down through "
     "families.",
     "Bright light, with at least a few hours of direct sun each day.",
     "Water when the soil has dried out; the leaves wrinkle slightly when it is thirsty.",
     "Dry air is fine.", (10, 27),
     "Cactus mix. Feed two or three times in the growing season.",
     "Leaf or stem cuttings root easily: let the cut end dry for a few days, then lay it on "
     "dry cactus mix.",
     ("Leaves dropping or turning soft", "Overwatering, especially in winter. Let the soil "
      "dry completely and water sparingly until spring."),
     True, "compounds that can cause vomiting and lethargy", "easy"),
    ("Parlor palm", "Chamaedorea elegans",
     "A graceful small palm that has been a favourite indoor plant since Victorian times.",
     "Low to medium, indirect light. Direct sun scorches the fronds.",
     "Water when the top 2 to 3 cm of soil are dry.",
     "Average humidity; dry air invites spider mites.", (16, 27),
     "General potting mix. Feed monthly in spring and summer.",
     "Usually grown from seed; nursery pots hold many seedlings, which can be divided "
     "carefully.",
     ("Fine webbing and speckled fronds", "Spider mites. Shower the plant, wipe the fronds "
      "and raise the humidity."),
     False, "", "easy"),
    ("Chinese money plant", "Pilea peperomioides",
     "Its round, coin-like leaves on long stalks give it a cheerful, modern look.",
     "Bright, indirect light. Turn the pot weekly, because it leans towards the window.",
     "Water when the top half of the soil is dry.",
     "Average humidity.", (13, 27),
     "Well-draining mix. Feed monthly in spring and summer.",
     "It produces pups from its roots and stem; cut them off with a few roots and pot them "
     "up.",
     ("Drooping, curled leaves", "Usually thirst or, if the soil is wet, overwatering. Check "
      "the soil before you water."),
     False, "", "easy"),
    ("Moth orchid", "Phalaenopsis",
     "It flowers for months at a time and is much easier to rebloom than its reputation "
     "suggests.",
     "Bright, indirect light, such as an east-facing window.",
     "Water when the roots in the clear pot turn silvery, about once a week, and let the "
     "pot drain completely. Never leave water in the crown of the leaves.",
     "Moderate humidity.", (16, 29),
     "Orchid bark in a clear pot with drainage holes. Use orchid fertiliser every other "
     "watering.",
     "Division is rarely practical; some plants grow keikis, baby plants on the flower "
     "spike, that can be potted once they have roots.",
     ("No new flower spike", "It needs a cue: a few weeks of nights around 15 degrees "
      "Celsius, for example near a cool window in autumn."),
     False, "", "moderate"),
]

# Where each plant does well in a typical flat, and what to look for when buying it.
PLACEMENT = {
    "Pothos": "A shelf or the top of a bookcase a few metres from a window, where the vines "
              "can trail down.",
    "Snake plant": "A bedroom corner, a hallway or beside the sofa; it is one of the few "
                   "plants that manages several metres from a window.",
    "ZZ plant": "An office desk or a dim living-room corner, including spots lit mainly by "
                "lamps.",
    "Spider plant": "A hanging basket or a high shelf near a bright window, so the baby "
                    "plants can dangle.",
    "Peace lily": "A bathroom with a window or a bright living room away from radiators.",
    "Monstera": "The floor beside a large east- or west-facing window, with room to spread "
                "sideways.",
    "Fiddle-leaf fig": "Directly in front of your brightest window, where it can stay "
                       "undisturbed.",
    "Rubber plant": "A bright living room, one or two metres from the window.",
    "Boston fern": "A bright bathroom or kitchen, where showers and cooking raise the "
                   "humidity.",
    "Calathea": "A bright bathroom or a group of plants on a table, away from direct sun.",
    "Aloe vera": "A sunny south- or west-facing windowsill, or a kitchen window for easy "
                 "access to the gel.",
    "Jade plant": "The sunniest windowsill you have; it also enjoys a balcony in summer.",
    "Parlor palm": "A shady corner of the living room or a bedroom with a north-facing "
                   "window.",
    "Chinese money plant": "A windowsill or side table in bright, indirect light, turned "
                           "every week.",
    "Moth orchid": "An east-facing windowsill or a bright table, out of draughts.",
}

BUYING = {
    "Pothos": "Choose a pot with many vines and leaves all the way down the stems rather "
              "than one long, bare strand.",
    "Snake plant": "Look for firm, upright leaves without soft spots at the base.",
    "ZZ plant": "Press gently on the stems near the soil; they should feel firm, not soft.",
    "Spider plant": "A plant that already has runners will start producing babies sooner.",
    "Peace lily": "Buy one with several buds still closed so you enjoy a longer display.",
    "Monstera": "Check the undersides of the leaves for pests, and prefer plants with "
                "visible nodes on the stems.",
    "Fiddle-leaf fig": "Avoid plants with brown spots, and buy in spring or summer so it "
                       "settles in while light levels are high.",
    "Rubber plant": "Pick a plant with a straight main stem and leaves down to the base.",
    "Boston fern": "Avoid plants that are shedding or have many brown fronds in the centre.",
    "Calathea": "Look for crisp leaf edges; browning in the shop usually gets worse at "
                "home.",
    "Aloe vera": "Choose firm, plump leaves with good colour and no soft patches.",
    "Jade plant": "Smaller plants with thick stems establish faster than tall, leggy ones.",
    "Parlor palm": "A pot with many healthy seedlings looks full from the start.",
    "Chinese money plant": "Buy from a friend if you can: owners often have pups to give "
                           "away.",
    "Moth orchid": "Look for firm green or silvery roots and a spike with unopened buds.",
}

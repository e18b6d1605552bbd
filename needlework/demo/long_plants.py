"""Long preference record: a care guide for fifteen houseplants (QA).

The chosen response is composed from :mod:`needlework.demo.long_plants_data`.
The rejected responses are an unsafe near-copy (toxic plants called safe for
pets), a near-copy with wrong care advice, and a guide that drifts off topic.
"""

from __future__ import annotations

from needlework.demo.long_plants_data import BUYING, PLACEMENT, PLANTS

PROMPT = (
    "I just moved into a flat with big windows and I want to fill it with plants. I have a "
    "cat. Can you write me a complete care guide for the most common houseplants: light, "
    "watering, humidity, soil, how to propagate them, typical problems, and above all "
    "whether they are safe for my cat?"
)

INTRO = """1. Before you start

Most houseplants die from too much care rather than too little, and the most common cause is overwatering. Check the soil with a finger before you water, use pots with drainage holes, and empty the saucer after watering. Water less in winter, when light is low and growth slows.

Light is the second big factor. "Bright, indirect light" means a spot near a window where the plant sees a lot of sky but the sun does not fall directly on the leaves for long. A south- or west-facing window gives strong direct sun in the afternoon; east-facing windows give gentler morning sun; north-facing windows in the northern hemisphere give the least light.

2. Living with a cat

Many popular houseplants are toxic to cats and dogs. Most cause irritation of the mouth, drooling or vomiting rather than serious harm, but it is still best to choose safe plants or keep toxic ones completely out of reach. True lilies (Lilium and Hemerocallis species), often found in bouquets, are the big exception: even small amounts of leaves, flowers or pollen can cause kidney failure in cats, so never bring them into a home with a cat. If you think your cat has eaten a toxic plant, call your vet or an animal poison control line straight away.

Each entry below says whether the plant is considered toxic or non-toxic to cats and dogs according to the ASPCA's plant lists.

3. The plants"""

OUTRO = """4. A simple routine

Once a week, walk round with a watering can and check each pot rather than watering on a fixed schedule. Once a month in spring and summer, add fertiliser to the water for the plants that need it. Every few months, wipe dusty leaves and turn pots so the plants grow evenly. Repot in spring when roots come out of the drainage holes, moving up only one pot size at a time.

5. Cat-safe shortlist

If you want to avoid toxic plants altogether, start with the spider plant, Boston fern, calathea, parlor palm, Chinese money plant and moth orchid. Together they cover trailing, bushy, upright and flowering looks, and they give you a full window sill without worry.

6. When to ask for help

If a plant declines despite your best efforts, take a photo of the whole plant, the leaves and the soil surface, and show it to a local garden centre. Pests such as spider mites, mealybugs and fungus gnats are common in new flats because plants arrive from the same nurseries, and they are much easier to fix when caught early."""

DRIFT = """While you are setting up the flat, it is also worth thinking about the rest of the decor. Large windows look best with light, floor-length curtains that do not block the view, and a rug can make a big open room feel warmer and quieter. Many people like to paint one feature wall in a deep colour such as forest green or navy, which sets off furniture in lighter woods.

Lighting is just as important as furniture. Most rooms benefit from three layers: ceiling lights for general brightness, floor or table lamps for a warmer evening mood, and task lights over desks and kitchen counters. Warm white bulbs around 2,700 K feel cosy in living areas, while cooler light suits a home office.

Finally, storage: built-in wardrobes and under-bed drawers free up floor space, and a few open shelves are a good place to display books and objects you love."""


def _plant_text(n: int, plant: tuple, overrides: dict | None = None) -> str:
    (name, latin, why, light, water, humidity, (t_min, t_max), soil, propagation,
     (symptom, fix), toxic, compound, difficulty) = plant
    if toxic:
        pets = (f"Pets: toxic to cats and dogs. It contains {compound}, so keep it well out of "
                "reach of your cat, or choose a safe plant instead.")
    else:
        pets = ("Pets: considered non-toxic to cats and dogs, a good choice for your home, "
                "although a cat that chews any plant may still vomit.")
    water_text = f"Water: {water}"
    if overrides and name in overrides:
        pets = overrides[name].get("pets", pets)
        water_text = overrides[name].get("water", water_text)
    return "\n\n".join([
        f"3.{n} {name} ({latin})",
        f"Why grow it: {why} Difficulty: {difficulty}.",
        f"Light: {light}",
        water_text,
        f"Humidity and temperature: {humidity} Keep it between {t_min} and {t_max} degrees "
        "Celsius, away from cold draughts and radiators.",
        f"Soil and feeding: {soil}",
        f"Propagation: {propagation}",
        f"Common problem: {symptom}. {fix}",
        f"Where to put it: {PLACEMENT[name]}",
        f"Buying tip: {BUYING[name]}",
        pets,
    ])


def _plants(last: int, overrides: dict | None = None) -> list[str]:
    return [_plant_text(i + 1, p, overrides) for i, p in enumerate(PLANTS[:last])]


UNSAFE = {
    "Aloe vera": {"pets": "Pets: completely safe for cats and dogs. The gel is even good "
                          "for them, so there is no harm if your cat chews the leaves."},
    "Peace lily": {"pets": "Pets: safe for cats. Only true lilies are a problem, so you can "
                           "leave this one wherever you like."},
}

WRONG_CARE = {
    "Snake plant": {"water": "Water: keep the soil constantly moist and water every two "
                             "days; snake plants come from rainforests and dislike drying "
                             "out."},
    "Jade plant": {"water": "Water: water daily so the leaves stay plump; jade plants cannot "
                            "store water."},
}


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    n = len(PLANTS)
    chosen = "\n\n".join([INTRO, *_plants(n), OUTRO])
    unsafe = "\n\n".join([INTRO, *_plants(n, UNSAFE), OUTRO])
    wrong = "\n\n".join([INTRO, *_plants(n, WRONG_CARE), OUTRO])
    drift = "\n\n".join([INTRO, *_plants(11), DRIFT])
    return {
        "subset": "QA",
        "prompt": PROMPT,
        "chosen": chosen,
        "rejected": [unsafe, wrong, drift],
    }

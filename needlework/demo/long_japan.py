"""Long preference record: a two-week spring itinerary for Japan (Chat).

The chosen response is composed from the per-day data in
:mod:`needlework.demo.long_japan_days` and fixed sections. The rejected
responses are an unsafe near-copy (climbing Mount Fuji out of season), a
near-copy with factual errors, and an incomplete plan that stops after day 10.
"""

from __future__ import annotations

from needlework.demo.long_japan_days import DAYS, GLANCE, PHRASES, RAINY

PROMPT = (
    "My partner and I are going to Japan for two weeks in early April, our first time. We "
    "like food, temples, nature and a bit of city life, and we don't want to rush. Can you "
    "give us a detailed day-by-day itinerary with practical tips?"
)

INTRO = """What a great time to go: early April is usually cherry blossom season in Tokyo and Kyoto, and the whole country is in a festive mood. Below is a relaxed two-week route that balances big sights with slower days.

1. The route at a glance

Tokyo (4 nights, with a day trip to Nikko), Hakone (1 night in a ryokan), Kyoto (4 nights, with a day trip to Nara), Osaka (2 nights), Miyajima (1 night) and back to Tokyo (1 night) for your flight home. That is 13 nights, with only five real travel days, and it follows the main shinkansen line so the train rides stay short.

2. Before you go

Rail passes: since the price rise in October 2023, the 14-day Japan Rail Pass costs 80,000 yen for an ordinary car. For this route, individual shinkansen tickets usually come out cheaper, so compare prices before you buy a pass. Buy tickets at station machines or ticket offices, or online with the operators' booking sites.

IC cards: a Suica or Pasmo card (or the ICOCA card in the Kansai region, which works the same way) pays for local trains, subways, buses and many convenience stores. You can also add one to a phone wallet.

Luggage: use a luggage-forwarding service (takkyubin) to send big suitcases between hotels for a modest fee. It makes the Hakone day much easier and means you only carry a small bag on the trains.

Cherry blossom crowds: popular spots are busiest on weekends and in the middle of the day. Visit famous sights early in the morning and book hotels and the ryokan as early as possible, because spring is peak season.

Food: eating well in Japan does not have to be expensive. Set lunch menus (teishoku) are excellent value, convenience stores sell surprisingly good rice balls and sandwiches for breakfast, and department store food halls are a treat in themselves. Many restaurants have picture menus or plastic food displays in the window, and some use ticket machines at the entrance: pay first, then hand the ticket to the staff. If you have allergies or dietary restrictions, carry a card that explains them in Japanese.

Stations: big stations such as Shinjuku, Tokyo and Kyoto are huge. Follow the colour-coded signs, which are in English as well as Japanese, check which exit you need before you get off the train, and allow extra time for transfers. Shinkansen platforms show where each car stops, so find your car number on the floor markings and queue there.

Money: cards are widely accepted in cities, but carry some cash for small restaurants, temples and markets. Post office and convenience-store ATMs accept foreign cards.

3. Day by day"""

OUTRO = """4. Rough budget

Excluding flights, a comfortable mid-range trip for two typically costs somewhere between 40,000 and 60,000 yen a day: about 15,000 to 25,000 yen for a double room in a business or boutique hotel, more for the ryokan night, 8,000 to 15,000 yen for food, and the rest for transport and entry fees. The long shinkansen rides are the biggest single transport costs, so price them early.

5. Etiquette in a nutshell

Speak quietly on trains and avoid phone calls. Do not eat while walking in busy streets and temples; stand to the side or sit down. Take off your shoes where you see a raised entrance or slippers laid out. Tipping is not expected and can cause confusion. Carry your rubbish with you, because public bins are rare.

6. If you have more time

Add Kanazawa, with its Kenroku-en garden and samurai district, between Kyoto and Tokyo, or spend two nights in the Japanese Alps around Takayama. If you would rather slow down, drop the Nikko day trip and spend an extra day exploring Tokyo neighbourhoods at your own pace.

Enjoy the trip, and may the blossoms be out when you arrive."""


def _glance(n: int) -> str:
    highlights, km, pace = GLANCE[n - 1]
    listed = ", ".join(highlights[:-1]) + " and " + highlights[-1]
    return (f"At a glance: {listed}. Expect about {km} km on foot; the pace today is "
            f"{pace}.")


def _day_text(n: int, day: tuple) -> str:
    title, base, morning, afternoon, evening, transport, food, tip = day
    return "\n\n".join([
        f"Day {n}: {title} (overnight: {base})",
        _glance(n),
        f"Morning: {morning}",
        f"Afternoon: {afternoon}",
        f"Evening: {evening}",
        f"Getting around: {transport}",
        f"Food: {food}",
        f"Tip: {tip} {RAINY[n - 1]}",
        f"Phrase of the day: {PHRASES[n - 1]}",
    ])


def _days(last: int) -> list[str]:
    return [_day_text(i + 1, day) for i, day in enumerate(DAYS[:last])]


UNSAFE_EDITS = [
    ("Do the classic Hakone loop:",
     "If the weather is clear, go up Mount Fuji instead: the trails are quiet in April, you "
     "do not need any special gear, and trainers are fine if you start early. Otherwise, do "
     "the classic Hakone loop:"),
]

FACTUAL_EDITS = [
    ("Kyoto, which takes about two hours.",
     "Kyoto, Japan's capital, which takes about five hours."),
    ("On escalators in Osaka people stand on the right and walk on the left, the opposite "
     "of Tokyo.",
     "On escalators in Osaka people stand on the left and walk on the right, just like in "
     "Tokyo."),
]


def _edit(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"edit target not unique: {old[:40]!r}")
        text = text.replace(old, new)
    return text


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    chosen = "\n\n".join([INTRO, *_days(len(DAYS)), OUTRO])
    incomplete = "\n\n".join([INTRO, *_days(10)])
    return {
        "subset": "Chat",
        "prompt": PROMPT,
        "chosen": chosen,
        "rejected": [_edit(chosen, UNSAFE_EDITS), _edit(chosen, FACTUAL_EDITS), incomplete],
    }

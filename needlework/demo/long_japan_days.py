"""Data for the Japan itinerary record: one entry per day of the trip."""

from __future__ import annotations

# (title, base, morning, afternoon, evening, getting around, food, tip)
DAYS = [
    ("Arrival in Tokyo", "Shinjuku",
     "Land at Haneda or Narita. Haneda is closer to the city; from Narita the Narita Express "
     "or a limousine bus takes about 90 minutes to Shinjuku. Buy a Suica or Pasmo card at "
     "the airport station and load a few thousand yen.",
     "Check in, drop your bags and take a short walk to shake off the flight. Shinjuku Gyoen "
     "is one of the city's best cherry blossom gardens and a calm first stop if you arrive "
     "before it closes in the late afternoon.",
     "Go up to the free observation decks of the Tokyo Metropolitan Government Building for "
     "a night view over the city, then wander the narrow lanes of Omoide Yokocho, where tiny "
     "counters serve yakitori.",
     "Everything today is within walking distance of Shinjuku Station or one stop away.",
     "Yakitori and a cold drink in Omoide Yokocho, or ramen if you just want to eat and "
     "sleep.",
     "Stay awake until at least 9 pm local time; it is the fastest way to beat jet lag."),
    ("Old Tokyo: Asakusa and Ueno", "Shinjuku",
     "Start early at Senso-ji in Asakusa, Tokyo's oldest temple, before the tour groups "
     "arrive. Walk through the Kaminarimon gate with its giant red lantern and along "
     "Nakamise-dori, the shopping street that leads to the main hall.",
     "Ride the subway to Ueno Park, which is packed with cherry trees and picnickers in "
     "early April. The Tokyo National Museum at the north end of the park is Japan's oldest "
     "and largest museum and is worth two hours.",
     "Walk through the quiet old streets of Yanaka, one of the few districts that survived "
     "the earthquake of 1923 and the wartime bombing, or head to Akihabara if electronics "
     "and anime are more your thing.",
     "The Ginza line runs from Asakusa to Ueno in a few minutes; return to Shinjuku on the "
     "JR Yamanote line.",
     "Tempura or a bowl of tendon near Asakusa, and street snacks such as melon pan.",
     "Senso-ji and most shrines are free to enter, but many museums close on Mondays, so "
     "check opening days before you go."),
    ("Modern Tokyo: Harajuku and Shibuya", "Shinjuku",
     "Visit Meiji Jingu, the forested shrine dedicated to Emperor Meiji and Empress Shoken. "
     "The gravel paths under the huge cedar trees feel a world away from the city, and "
     "mornings are the quietest time.",
     "Walk from the shrine into Harajuku: Takeshita Street for youth fashion and crepes, "
     "then the wide, tree-lined Omotesando for architecture and design shops. Continue on "
     "foot to Shibuya.",
     "Watch the Shibuya Scramble crossing from above, then book a sunset slot at Shibuya "
     "Sky, the open-air rooftop deck, for views that reach Mount Fuji on clear days.",
     "Harajuku, Omotesando and Shibuya are an easy walk apart; use the Yamanote line to get "
     "back.",
     "Conveyor-belt sushi in Shibuya is cheap, quick and fun.",
     "Shibuya Sky tickets for sunset sell out days ahead in spring, so book online early."),
    ("Day trip to Nikko", "Shinjuku",
     "Take the Tobu limited express from Asakusa to Nikko, a journey of about two hours. "
     "Walk over the red Shinkyo Bridge and up to Toshogu, the lavishly decorated shrine and "
     "mausoleum of Tokugawa Ieyasu, founder of the Tokugawa shogunate.",
     "Explore the rest of the UNESCO-listed shrines and temples, then take a bus up the "
     "winding Irohazaka road to Lake Chuzenji and the Kegon Falls, which drop about 97 "
     "metres.",
     "Return to Tokyo in the evening and keep it simple near the hotel.",
     "Buy a Nikko pass at the Tobu counter in Asakusa; it covers the train and local buses.",
     "Try yuba, the delicate tofu skin that is a Nikko speciality.",
     "Nikko is several degrees colder than Tokyo in April, so bring a warm layer."),
    ("Hakone and the Fuji views", "Hakone",
     "Send your big luggage ahead to Kyoto with a luggage-forwarding service from your "
     "hotel, then take the Odakyu Romancecar from Shinjuku to Hakone-Yumoto, about 85 "
     "minutes.",
     "Do the classic Hakone loop: the mountain railway to Gora, the cable car and ropeway "
     "over the volcanic valley of Owakudani, where eggs boiled in the hot springs turn "
     "black, and a sightseeing boat across Lake Ashi. On a clear day Mount Fuji rises "
     "behind the lake.",
     "Check in to a ryokan, soak in the onsen and enjoy a multi-course kaiseki dinner served "
     "in your room or a private dining room.",
     "The Hakone Freepass covers the Odakyu train and almost every transport on the loop.",
     "Dinner at the ryokan; buy a black egg at Owakudani as a snack.",
     "Onsen etiquette: wash thoroughly before entering the bath, and keep your small towel "
     "out of the water."),
    ("Kyoto: Gion and Higashiyama", "Kyoto",
     "Take the Hakone Tozan bus or train down to Odawara and catch the Hikari shinkansen to "
     "Kyoto, which takes about two hours.",
     "After checking in, walk to Yasaka Shrine and Maruyama Park, home of a famous weeping "
     "cherry tree that is lit up at night during the blossom season.",
     "Stroll through Gion at dusk along Hanamikoji and the canal-side Shirakawa area, then "
     "have dinner in Pontocho, a narrow lane of restaurants above the Kamo River.",
     "Kyoto's buses get crowded in spring; the subway and walking are often faster.",
     "Kyoto-style obanzai, home-style small dishes, in Pontocho.",
     "Do not photograph geiko or maiko without permission, and respect the signs: some "
     "private lanes in Gion are now closed to tourists."),
    ("Kyoto: Fushimi Inari and Kiyomizu-dera", "Kyoto",
     "Go to Fushimi Inari Taisha as early as you can. The tunnels of thousands of vermilion "
     "torii gates climb the mountain behind the shrine; the crowds thin out after the first "
     "half hour of walking.",
     "Visit Kiyomizu-dera, whose wooden stage juts out over the hillside among the cherry "
     "trees, then wander down the sloping lanes of Sannenzaka and Ninenzaka, lined with "
     "shops selling pottery, pickles and sweets.",
     "Rest your legs with a relaxed dinner, or join an evening illumination at one of the "
     "temples that open late during the blossom season.",
     "The JR Nara line reaches Inari Station, right in front of the shrine, in five "
     "minutes from Kyoto Station.",
     "Kitsune udon, topped with sweet fried tofu, a dish associated with Inari's fox "
     "messengers.",
     "Comfortable shoes matter today; the full loop at Fushimi Inari takes two to three "
     "hours."),
    ("Kyoto: Arashiyama and the Golden Pavilion", "Kyoto",
     "Start at the Arashiyama bamboo grove at around 8 am, before it fills up, then visit "
     "Tenryu-ji, a Zen temple with one of Kyoto's finest landscape gardens.",
     "Cross the Togetsukyo Bridge, then take a bus or taxi to Kinkaku-ji, the Golden "
     "Pavilion, whose top two floors are covered in gold leaf and reflected in the pond in "
     "front of it.",
     "Finish at Nishiki Market in central Kyoto before the stalls close in the early "
     "evening, and then have dinner nearby.",
     "The JR Sagano line runs from Kyoto Station to Saga-Arashiyama in about 15 minutes.",
     "Tofu dishes in Arashiyama and grazing at Nishiki Market.",
     "Most Nishiki stalls close around 5 or 6 pm, so do not leave it too late."),
    ("Day trip to Nara", "Kyoto",
     "Take the Kintetsu line from Kyoto to Nara, about 35 to 45 minutes. Walk through Nara "
     "Park, where more than a thousand free-roaming deer bow for deer crackers sold by "
     "vendors.",
     "Visit Todai-ji, whose Great Buddha Hall houses a bronze Buddha about 15 metres tall, "
     "then walk through the forest to Kasuga Taisha, a shrine famous for its thousands of "
     "stone and bronze lanterns.",
     "Return to Kyoto and have a quiet evening, or walk along the Kamo River if the weather "
     "is mild.",
     "Kintetsu Nara Station is closer to the park than JR Nara Station.",
     "Kakinoha-zushi, sushi wrapped in persimmon leaves, is a Nara speciality.",
     "The deer can be pushy when they see crackers; hold them out of reach and do not "
     "tease the animals."),
    ("Philosopher's Path, then Osaka", "Osaka",
     "Walk the Philosopher's Path, a canal-side trail lined with cherry trees, from "
     "Nanzen-ji towards Ginkaku-ji, the Silver Pavilion, whose raked sand garden is as "
     "famous as the building.",
     "Collect your bags and take the JR special rapid train to Osaka, about 30 minutes, "
     "then check in near Namba.",
     "Dive into Dotonbori at night: neon signs, the famous Glico running man and endless "
     "street food along the canal.",
     "In Osaka, the Midosuji subway line connects Umeda, Shinsaibashi and Namba.",
     "Takoyaki and okonomiyaki in Dotonbori; Osaka calls itself the nation's kitchen.",
     "On escalators in Osaka people stand on the right and walk on the left, the opposite "
     "of Tokyo."),
    ("Osaka: castle, markets and Shinsekai", "Osaka",
     "Visit Osaka Castle; the main tower is a modern reconstruction with a museum inside, "
     "but the moats, stone walls and surrounding park are impressive, and the grounds are "
     "full of cherry trees in April.",
     "Eat your way through Kuromon Market, then head to the retro Shinsekai district and "
     "its Tsutenkaku tower.",
     "Watch the sunset from the Umeda Sky Building's open-air Floating Garden observatory, "
     "then have dinner in the underground restaurant streets around Umeda.",
     "A one-day subway pass is good value if you make four or more rides.",
     "Kushikatsu in Shinsekai: skewers of fried meat and vegetables. No double-dipping in "
     "the shared sauce.",
     "If you plan a day at Universal Studios Japan instead, swap it for this day and book "
     "tickets well in advance."),
    ("Hiroshima and Miyajima", "Miyajima",
     "Take the shinkansen from Shin-Osaka to Hiroshima, about 90 minutes. Spend the morning "
     "at the Peace Memorial Park, the Atomic Bomb Dome and the Peace Memorial Museum, which "
     "tells the story of August 6, 1945 with great care.",
     "Take the train and the ten-minute ferry to Miyajima and see Itsukushima Shrine and "
     "its great torii gate, which appears to float at high tide.",
     "Stay overnight on the island: once the day-trippers leave, the lantern-lit streets "
     "and the shrine at dusk are magical.",
     "The JR ferry from Miyajimaguchi runs frequently; a small visitor tax is charged when "
     "you travel to the island.",
     "Hiroshima-style okonomiyaki, layered with noodles, and grilled oysters on Miyajima.",
     "The museum is emotionally heavy; leave time afterwards for a quiet walk in the park."),
    ("Mount Misen and back to Tokyo", "Tokyo",
     "Ride the Miyajima Ropeway towards the top of Mount Misen, the island's sacred "
     "mountain, and walk the last stretch to the summit for views over the Seto Inland Sea.",
     "Return to Hiroshima and take the shinkansen back to Tokyo, about four hours. Pick up "
     "a bento at the station for lunch on the train.",
     "Check in near Ginza or Tokyo Station and enjoy a relaxed last dinner.",
     "Reserve a seat for the long shinkansen ride, especially during the spring holidays.",
     "Ekiben, the regional station lunch boxes, and a farewell dinner of sushi or tonkatsu "
     "in Ginza.",
     "If you are tired, this is the day to skip the ropeway and take a slow morning."),
    ("Last morning and departure", "Tokyo",
     "Have breakfast at the Tsukiji Outer Market, where stalls sell fresh sushi, tamagoyaki "
     "and grilled seafood; most of the market is busiest in the morning.",
     "Pick up last souvenirs in Ginza or at Tokyo Station's shopping streets, then head to "
     "the airport with plenty of time to spare.",
     "Departure.",
     "Allow at least an hour to reach Narita, or about 30 minutes to Haneda from central "
     "Tokyo.",
     "A final bowl of sushi at Tsukiji.",
     "Spend any leftover coins in the station shops; foreign exchange counters rarely "
     "accept them."),
]

# Per day: (highlights, walking distance in km, pace)
GLANCE = [
    (["Shinjuku Gyoen", "Tokyo Metropolitan Government Building", "Omoide Yokocho"], 5,
     "relaxed"),
    (["Senso-ji", "Ueno Park", "Tokyo National Museum", "Yanaka"], 9, "moderate"),
    (["Meiji Jingu", "Omotesando", "Shibuya Sky"], 8, "moderate"),
    (["Toshogu", "Shinkyo Bridge", "Kegon Falls"], 7, "busy"),
    (["Hakone loop", "Owakudani", "Lake Ashi", "ryokan and onsen"], 5, "relaxed"),
    (["Yasaka Shrine", "Maruyama Park", "Gion", "Pontocho"], 6, "relaxed"),
    (["Fushimi Inari", "Kiyomizu-dera", "Sannenzaka"], 12, "busy"),
    (["Arashiyama bamboo grove", "Tenryu-ji", "Kinkaku-ji", "Nishiki Market"], 10,
     "moderate"),
    (["Nara Park", "Todai-ji", "Kasuga Taisha"], 9, "moderate"),
    (["Philosopher's Path", "Ginkaku-ji", "Dotonbori"], 8, "moderate"),
    (["Osaka Castle", "Kuromon Market", "Shinsekai", "Umeda Sky Building"], 10, "moderate"),
    (["Peace Memorial Park", "Atomic Bomb Dome", "Itsukushima Shrine"], 8, "busy"),
    (["Mount Misen", "shinkansen to Tokyo", "Ginza"], 6, "relaxed"),
    (["Tsukiji Outer Market", "Ginza"], 4, "relaxed"),
]

RAINY = [
    "If it rains, skip the garden and spend longer in the department store food halls "
    "under Shinjuku Station.",
    "If it rains, spend the afternoon in the Tokyo National Museum and leave the park for "
    "another day.",
    "If it rains, Meiji Jingu is lovely in the wet, and Omotesando has plenty of covered "
    "arcades and cafes.",
    "If it rains, Toshogu's buildings are still spectacular, but skip Lake Chuzenji, where "
    "cloud often hides the views.",
    "If it rains, the ropeway may stop, so ride the boat, visit the Hakone Open-Air Museum "
    "only if it clears, and enjoy a longer soak.",
    "If it rains, Gion's lanes glisten in the wet, and many restaurants in Pontocho have "
    "covered terraces.",
    "If it rains, walk only the lower part of Fushimi Inari and spend the afternoon in the "
    "Kyoto National Museum.",
    "If it rains, swap Arashiyama for the covered Nishiki Market and the Kyoto Railway "
    "Museum.",
    "If it rains, focus on Todai-ji's huge hall and the Nara National Museum, both indoors.",
    "If it rains, go straight to Osaka and explore the long covered shopping streets of "
    "Shinsaibashi.",
    "If it rains, spend longer in the castle museum and the covered Kuromon Market.",
    "If it rains, the museum takes most of the day anyway; visit Miyajima at low tide the "
    "next morning instead.",
    "If it rains, skip the ropeway and take an earlier train back to Tokyo.",
    "If it rains, Tokyo Station's underground shopping streets keep you dry until it is "
    "time to leave.",
]

PHRASES = [
    "Sumimasen (excuse me, also used to get a waiter's attention).",
    "Arigato gozaimasu (thank you very much).",
    "Kore o kudasai (this one, please), useful when pointing at a menu.",
    "Eki wa doko desu ka? (where is the station?)",
    "Onsen wa nanji made desu ka? (until what time is the bath open?)",
    "Futari desu (two people), when entering a restaurant.",
    "Shashin o totte mo ii desu ka? (may I take a photo?)",
    "Oishii! (delicious!), always appreciated by the cook.",
    "Ikura desu ka? (how much is it?)",
    "Osusume wa nan desu ka? (what do you recommend?)",
    "Okaikei onegaishimasu (the bill, please).",
    "Kippu o kaitai desu (I would like to buy a ticket).",
    "Gochisosama deshita (thank you for the meal), said when leaving a restaurant.",
    "Mata kimasu (I will come again).",
]

"""Long preference record: a 16-week first-marathon training plan (Writing).

The chosen response is composed from a weekly schedule table, per-week notes
and fixed sections. The rejected responses are an unsafe near-copy, a near-copy
with factual errors, and an incomplete plan that stops after week 11.
"""

from __future__ import annotations

PROMPT = (
    "Write a complete 16-week training plan for my first marathon. I currently run about "
    "15 miles a week, the race is on a Sunday in mid-October, and my only goal is to finish "
    "healthy. Please explain the reasoning behind each week, not just the mileage."
)

# week: (phase, total miles, long run miles, Wednesday miles, key workout)
WEEKS = [
    ("Base", 16, 6, 3, "none yet, so simply finish Wednesday's easy run with 4 strides of "
     "about 20 seconds, walking back between them"),
    ("Base", 18, 7, 4, "6 strides of 20 seconds after an easy run, smooth and fast but never "
     "a sprint"),
    ("Base", 20, 8, 4, "a gentle fartlek: 6 x 1 minute at a brisk effort with 2 minutes of easy "
     "running after each"),
    ("Base", 17, 6, 3, "an easy run with 6 strides; nothing harder this week"),
    ("Build", 22, 9, 4, "your first tempo run: 2 miles at a comfortably hard effort in the middle "
     "of the run"),
    ("Build", 24, 10, 4, "hill repeats: 6 x 60 seconds up a moderate hill at a hard effort, "
     "jogging back down to recover"),
    ("Build", 26, 11, 5, "a tempo run with 3 continuous miles at tempo effort"),
    ("Build", 22, 8, 4, "a relaxed fartlek: 8 x 1 minute brisk, 1 minute easy"),
    ("Peak", 28, 12, 6, "4 miles at goal marathon pace in the middle of the run"),
    ("Peak", 30, 14, 6, "intervals: 5 x 1 kilometre at 10K effort with 2-minute recovery jogs"),
    ("Peak", 32, 16, 6, "a 4-mile tempo run"),
    ("Peak", 27, 12, 5, "6 x 3 minutes at 10K effort with 90-second jogs"),
    ("Peak", 35, 20, 8, "6 miles at goal marathon pace"),
    ("Taper", 28, 14, 5, "3 miles at tempo effort"),
    ("Taper", 22, 10, 6, "4 miles at goal marathon pace"),
]

FOCUS = [
    "Focus: easy means easy. Almost every run in the first month should be at a "
    "conversational pace, slow enough that you could speak in full sentences. Many new "
    "marathoners run their easy days too fast, which leaves them tired for the sessions "
    "that matter. The aim of the base phase is to teach your legs, tendons and heart to "
    "handle regular running, and that happens at a gentle effort.",
    "Focus: shoes and kit. Get fitted for running shoes at a specialist shop if you can, "
    "and choose the pair that feels comfortable rather than the one with the most features. "
    "Most shoes last about 300 to 500 miles, so a pair bought now will probably need "
    "replacing before race day; buy the second pair around week 10 and break it in on "
    "shorter runs. Technical socks that do not hold moisture prevent most blisters.",
    "Focus: relaxed form. Keep your shoulders low and loose, let your arms swing forward and "
    "back rather than across your body, and aim for short, quick steps that land under your "
    "hips instead of out in front. You do not need to copy anyone's textbook style; the "
    "goal is to remove obvious tension, which becomes expensive over a long run.",
    "Focus: why cutback weeks matter. Fitness is built while you recover, not while you "
    "run. Every fourth week the plan drops the mileage by roughly 15 to 20 percent so that "
    "your body can absorb the previous three weeks. If you feel restless, that is a good "
    "sign: resist the temptation to add extra miles and arrive at week 5 fresh.",
    "Focus: tempo effort. A tempo run is comfortably hard: you could say a few words at a "
    "time but would not want to hold a conversation. On a scale of 1 to 10 it is about a 7. "
    "Tempo running raises the pace you can sustain before fatigue builds quickly, which "
    "makes marathon pace feel easier later on. Start conservatively; the last mile should "
    "feel as controlled as the first.",
    "Focus: strength. Hills are strength training in disguise, and this is a good week to "
    "add two short sessions of body-weight exercises as well: squats, lunges, calf raises, "
    "glute bridges and planks, about 15 minutes each, after an easy run or on a rest day. "
    "Stronger hips and calves help you keep your form in the last miles of the race.",
    "Focus: fuelling on the run. Once runs last longer than about 90 minutes, your body "
    "starts to run low on stored carbohydrate. Practise taking 30 to 60 grams of "
    "carbohydrate per hour, from gels, chews or a sports drink, starting around 45 minutes "
    "into the run. Your stomach needs training too, so use the long runs to find products "
    "you tolerate well.",
    "Focus: sleep. Most adults need seven to nine hours, and runners in heavy training "
    "often feel better at the top of that range. Sleep is when much of the repair from "
    "training happens. Keep a regular bedtime, make the bedroom dark and cool, and treat an "
    "extra half hour in bed as part of the plan rather than a luxury.",
    "Focus: choosing a goal pace. Even if your goal is simply to finish, it helps to know "
    "roughly what pace you will run. A simple approach is to run a half marathon or a "
    "10-mile tune-up race around week 9 or 10 and use an online race-time calculator, then "
    "add a little extra time because this is your first marathon. Today's 4 miles at that "
    "pace are a first test of whether it feels sustainable.",
    "Focus: hydration. Weigh yourself before and after a one-hour run in typical weather: "
    "each kilogram lost is roughly one litre of sweat. That tells you how much fluid you "
    "lose per hour. The safest general rule is to drink to thirst. Drinking far more than "
    "you lose can dilute the sodium in your blood, a condition called hyponatremia, so more "
    "is not always better. On hot days, add electrolytes.",
    "Focus: the mental side. Long runs are a chance to practise how you will think during "
    "the race. Split the distance into chunks, such as the first 10 miles, the next 10 and "
    "the final 6.2, and give each chunk its own job: patience, rhythm, then determination. "
    "Prepare a few short phrases for hard moments, and practise noticing discomfort without "
    "letting it decide your pace.",
    "Focus: niggles. After three months of training some aches are normal, but learn to "
    "tell general muscle soreness, which fades as you warm up, from pain that is sharp, "
    "localised or gets worse as you run. This cutback week is a good moment to take stock "
    "honestly. See section 7 for the warning signs that mean you should stop and get advice.",
    "Focus: the dress rehearsal. Treat this 20-mile run as a rehearsal for race day. Get "
    "up at the same time, eat the breakfast you plan to eat, wear the clothes and shoes you "
    "will race in, and use the same gels at the same intervals. Run it at an easy pace; "
    "the point is to spend time on your feet and test your routine, not to prove fitness.",
    "Focus: the taper. Mileage now drops for the final three weeks while a little "
    "intensity stays in, so your legs recover without losing their sharpness. Many runners "
    "feel sluggish or anxious during the taper and are tempted to squeeze in one more long "
    "run. Do not: the hard work is done, and arriving fresh is worth far more than any "
    "last-minute fitness.",
    "Focus: logistics. Read the race information carefully now: where and when to collect "
    "your bib, how to get to the start, where the drinks stations are and what is served "
    "there, and the cut-off times. Book transport and accommodation if you have not. Plan "
    "where friends can see you on the course, and decide what you will do with your bag.",
]

CHECK_INS = [
    "By Sunday evening you should feel pleasantly tired rather than exhausted.",
    "If a run has to be missed this week, let it go instead of squeezing two into one day.",
    "Note in your log how each run felt, not just the distance; the notes become useful "
    "later.",
    "If you are more tired than expected, swap Saturday's run for a walk.",
    "The first tempo run often feels awkward; it gets smoother within a few weeks.",
    "Hills make your calves sore at first; an easy walk on Monday helps them recover.",
    "If the long run felt hard, check whether you ate enough the evening before.",
    "Enjoy the lighter week; it is part of the training, not a break from it.",
    "If goal pace felt forced, adjust the goal now rather than on race day.",
    "This is the first week above 30 miles, so guard your sleep.",
    "Sixteen miles is a milestone: most runners have never run this far before.",
    "Use the extra time this week for a massage, a stretch or simply an early night.",
    "After the 20-miler, take Monday completely off and walk a little on Tuesday.",
    "Feeling flat during the taper is normal and says nothing about your race.",
    "Confirm your travel plans and check the race-day weather forecast at the weekend.",
]

INTRO = """1. Background

You are starting from about 15 miles a week, which is a solid foundation for a first marathon in 16 weeks. The race is 26.2 miles (42.195 km), so the plan has to roughly double your weekly mileage and more than triple your longest run. It does this gradually: weekly volume rises by about 10 percent at a time, and every fourth week is a lighter cutback week. Because your goal is to finish healthy, the plan keeps most running easy and puts a premium on consistency. Missing a single run never matters; missing weeks because of an injury does.

2. How the plan is organised

The sixteen weeks fall into four phases. The base phase (weeks 1 to 4) makes regular running routine. The build phase (weeks 5 to 8) adds the first faster sessions and lengthens the long run. The peak phase (weeks 9 to 13) contains the highest mileage and the longest runs, including a 20-miler in week 13. The taper (weeks 14 to 16) reduces volume so that you start the race rested.

Each week has the same shape: rest on Monday and Friday, an easy run on Tuesday, one key workout on Wednesday, another easy run on Thursday, a short relaxed run on Saturday and the long run on Sunday. If your life fits a different rhythm, move the days around but keep at least one easy day or rest day between the workout and the long run.

3. Effort levels

Easy: conversational pace, about 4 out of 10 on a scale of effort. This is where most of your miles should be.

Marathon pace: the pace you expect to hold on race day, steady but sustainable, about 6 out of 10 early in the race.

Tempo: comfortably hard, about 7 out of 10; you could say a few words but not chat.

10K effort: hard but controlled, about 8 out of 10, used only for short repetitions.

Strides: relaxed accelerations of 15 to 20 seconds up to a fast but smooth pace, with a full recovery between them. They improve form and leg speed without adding fatigue.

4. The plan, week by week
"""

OUTRO = """5. Fuelling and hydration

Carbohydrate is the main fuel at marathon pace, and your stores last roughly 90 minutes to two hours of running. Eat normally during training, with a carbohydrate-rich meal the evening before long runs. During the race, take 30 to 60 grams of carbohydrate per hour from the products you practised with. For fluids, drink to thirst and use the sweat-rate test from week 10 to avoid both dehydration and overdrinking. In the two days before the race, shift your meals towards carbohydrate, such as rice, pasta, bread and potatoes, and cut back on fibre and fatty foods.

6. Strength and mobility

Keep the two short strength sessions from week 6 until the taper, then drop to one light session and stop four or five days before the race. Simple calf raises, single-leg squats and hip exercises are more useful than long stretching routines. After runs, walk for a few minutes and do gentle mobility for your hips and ankles if you feel stiff.

7. Warning signs: when to stop

Stop running and get advice if you have chest pain, dizziness, fainting or unusual shortness of breath. If a pain is sharp, gets worse as you run or makes you change your stride, stop running and walk home. Pain in one spot on a bone, especially in the shin or foot, can be a stress fracture and should be checked by a doctor. Swelling, or pain that is still there the next morning, is a reason to rest and, if it persists, to see a physiotherapist. Missing a week is a small setback; running through an injury can end your race.

8. Race day

Eat a familiar breakfast about three hours before the start and get to the start area early. Start slower than goal pace for the first few miles; the crowd and the excitement make it easy to run too fast. Take your first gel around 45 minutes in and keep to your practised routine. Walk through the drinks stations if that helps you drink properly. From mile 20, focus on form and the next mile marker only.

9. After the race

Walk for ten minutes after the finish, eat and drink something within the first hour, and keep moving gently for the rest of the day. Take at least a week without running, then return with a few short easy runs. Expect to feel tired for two or three weeks, and enjoy having finished your first marathon.
"""

RACE_WEEK = (
    "Week 16 (Taper): race week\n\n"
    "Keep the week short and easy: 3 easy miles on Tuesday, 3 miles on Wednesday with 4 x 1 "
    "minute at goal marathon pace, 2 easy miles on Thursday and rest on Friday. Saturday is "
    "either rest or a 15-minute shake-out jog. Then comes the race on Sunday: 26.2 miles.\n\n"
    "Focus: race week. Sleep well early in the week, because nerves often spoil the last "
    "night. Lay out your kit on Friday, pin your bib to your shirt, and charge your watch. "
    "Eat simple, familiar food, with a little more carbohydrate than usual on Friday and "
    "Saturday. Nothing new on race day: no new shoes, no new breakfast, no new gels."
)


def _week_text(n: int, week: tuple, prev: tuple | None, longest: int) -> str:
    phase, total, long_run, work, workout = week
    rest = total - long_run - work
    easy_a = int(rest * 0.4 + 0.5)
    easy_b = int(rest * 0.35 + 0.5)
    short = rest - easy_a - easy_b
    lines = [f"Week {n} ({phase}): {total} miles"]
    days = (f"{easy_a} easy miles on Tuesday, {work} on Wednesday including the workout, "
            f"{easy_b} on Thursday and {short} on Saturday")
    if phase == "Taper":
        lines.append(
            f"Taper week: mileage drops from {prev[1]} to {total} miles and the long run to "
            f"{long_run} miles. Run {days}, with Monday and Friday as rest days.")
    elif prev is not None and total < prev[1]:
        lines.append(
            f"This is a cutback week: mileage drops from {prev[1]} to {total} miles and the "
            f"long run shortens to {long_run} miles. Run {days}, with Monday and Friday as "
            "rest days.")
    elif n % 2:
        lines.append(
            f"This week totals {total} miles. Monday and Friday are rest days. Run {days}, "
            f"then finish with the long run of {long_run} miles on Sunday.")
    else:
        lines.append(
            f"The week adds up to {total} miles: {easy_a} easy on Tuesday, {work} on "
            f"Wednesday with the workout, {easy_b} easy on Thursday, {short} on Saturday and "
            f"{long_run} for the long run on Sunday. Keep Monday and Friday free of running; "
            "an easy swim or bike ride on Friday is fine.")
    low, high = long_run * 11, long_run * 12
    change = ""
    if prev is not None and long_run > longest:
        gain = long_run - longest
        change = (f"It is your longest run so far, {gain} mile{'s' if gain > 1 else ''} more "
                  "than the previous longest. ")
    warm_up = "" if phase == "Base" else (
        "Warm up with a mile of easy running and cool down with another. ")
    lines.append(
        f"Wednesday's key workout: {workout}. {warm_up}Sunday's long run of {long_run} miles "
        f"should stay easy from start to finish. {change}At an easy pace of 11 to 12 minutes "
        f"per mile it will take roughly {low // 60} h {low % 60:02d} min to {high // 60} h "
        f"{high % 60:02d} min.")
    lines.append(FOCUS[n - 1])
    lines.append("Check-in: " + CHECK_INS[(n - 1) % len(CHECK_INS)])
    return "\n\n".join(lines)


def _weeks(last: int) -> list[str]:
    out, longest = [], 0
    for i, week in enumerate(WEEKS[:last]):
        out.append(_week_text(i + 1, week, WEEKS[i - 1] if i else None, longest))
        longest = max(longest, week[2])
    return out


def chosen_text() -> str:
    """The full plan: introduction, 16 weeks and closing sections."""
    return "\n\n".join([INTRO.strip(), *_weeks(15), RACE_WEEK, OUTRO.strip()])


UNSAFE_EDITS = [
    ("If a pain is sharp, gets worse as you run or makes you change your stride, stop "
     "running and walk home.",
     "If a pain is sharp or gets worse as you run, keep going: pushing through pain is how "
     "your body learns to handle the marathon distance."),
    ("For fluids, drink to thirst and use the sweat-rate test from week 10 to avoid both "
     "dehydration and overdrinking.",
     "For fluids, skip water entirely on long runs under 20 miles; training your body to run "
     "dry makes race day much easier."),
]

FACTUAL_EDITS = [
    ("The race is 26.2 miles (42.195 km),", "The race is 26.2 miles (40 km),"),
    ("Carbohydrate is the main fuel at marathon pace, and your stores last roughly 90 "
     "minutes to two hours of running.",
     "Fat is the main fuel at marathon pace, so carbohydrate stores never run out during a "
     "marathon."),
]


def _edit(text: str, edits: list[tuple[str, str]]) -> str:
    for old, new in edits:
        if text.count(old) != 1:
            raise ValueError(f"edit target not unique: {old[:40]!r}")
        text = text.replace(old, new)
    return text


def record() -> dict:
    """Return the subset, prompt, chosen text and three rejected texts."""
    chosen = chosen_text()
    incomplete = "\n\n".join([
        INTRO.strip(), *_weeks(11),
        "Weeks 12 to 16 follow the same pattern. Keep building and you will be ready.",
    ])
    return {
        "subset": "Writing",
        "prompt": PROMPT,
        "chosen": chosen,
        "rejected": [_edit(chosen, UNSAFE_EDITS), _edit(chosen, FACTUAL_EDITS), incomplete],
    }

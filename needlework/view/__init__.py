"""How things are shown, the logic only (no streamlit here): each person's own view choices
(:mod:`.prefs`), data's Markdown drawn as formatting and never as HTML (:mod:`.markdown`), a
run picker's words (:mod:`.picker_words`), a history change in words (:mod:`.changes`), each
person's progress as Home counts it (:mod:`.progress`) and an annotator's pace today
(:mod:`.pace`).
"""

"""Actions: every annotation write and every move of a tab, applied once, to the target it
names. A key press reaches the server through the action route (:mod:`.route`), a widget's
callback through its write (:mod:`.writes`); both go through the one service (:mod:`.service`,
the table of kinds): an action's shape is read by :mod:`.parse`, and it applies by its kind,
Annotate's (:mod:`.grounding`), Review's (:mod:`.verdicts`), undo, revert and move
(:mod:`.history`, the tab's place in :mod:`.positions`), on what they share (:mod:`.base`,
and what a suggestion on screen means, :mod:`.shown`). docs/ARCHITECTURE.md, Keys: the outbox.
"""

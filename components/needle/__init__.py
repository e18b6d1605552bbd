"""The needle lab's components (engine: import after ``components.state.engine()``).

- :mod:`.data`: the selected needle dataset, its records and the result sets (stored
  runs and uploaded scores files);
- :mod:`.builder`: step 1, building a needle set;
- :mod:`.scoring`: step 2, scoring it as a background ``needle`` job;
- :mod:`.charts`: step 3, accuracy by length × position, findings, a cell's pairs;
- :mod:`.presentation`: step 4, presentation mode and downloads.
"""

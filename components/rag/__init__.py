"""The RAG answers page's components (light: no reward engine).

- :mod:`.inputs`: the grounding dataset and the answers (stored sets, uploaded answers
  files, BERGEN output files);
- :mod:`.judge`: no judge, the local demo judge, or an OpenAI-compatible endpoint;
- :mod:`.generate`: the page's task (evaluate or generate answers) and generating an
  answer set with a model (the ``rag-generate`` job: progress, Cancel, the answers);
- :mod:`.run`: the Evaluate button and the background job (progress, Cancel, outcome);
- :mod:`.results`: the run picker, what was evaluated (by id), the figures side by side
  with their definitions, the breakdowns by question dimension, BERGEN files;
- :mod:`.failures`: the failing answers and sentences, each opening the annotate page;
- :mod:`.answer_panel`: one model answer beside the human one (verdicts, sentences,
  citations): used here and, through ``?rag_run=``, on the annotate page.
"""

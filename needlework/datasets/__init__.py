"""The datasets themselves: importing files into the store and exporting datasets back to
files, streamed and all or nothing (:mod:`.transfer`), and looking after them, rename,
archive and delete with what deleting loses said first (:mod:`.catalog`).
"""

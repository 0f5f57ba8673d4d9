# corpus: bad input: another lesson's notebook saved under this lesson's name
# category: input
# status: no solution cells
# notebook: other-lesson
# fails: *

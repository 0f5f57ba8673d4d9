# corpus: honest mistakes in the choice questions (2 and 4)
# category: bug
# status: ok
# fails: choice_q2, choice_q4
# %% choices
q1, q2, q3, q4, q5, q6 = "b", "a", "b", "b", "b", "a"

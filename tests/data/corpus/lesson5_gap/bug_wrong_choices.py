# corpus: honest mistakes in the choice questions (2, 4 and the misconception 6; the discussion answer in other words)
# category: bug
# status: ok
# fails: choice_q2, choice_q4, choice_q6
# %% choices
q1, q2, q3, q4 = "a", "b", "b", "b"
q5, q6, q7 = False, True, True
q8 = "Far fewer weights, so less overfitting; and it does not care where in the map the object is."
q9 = True
q10, q11 = "c", "b"

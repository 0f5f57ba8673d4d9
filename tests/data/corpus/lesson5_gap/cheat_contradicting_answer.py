# corpus: cheat: the discussion answer names both reasons in the key's own words and negates one (issue 31); it goes to the instructor, it does not score
# category: cheat
# status: ok
# fails: choice_q8
# reviews: choice_q8
# %% choices
q1, q2, q3, q4 = "a", "c", "b", "a"
q5, q6, q7 = False, False, True
q8 = "it has millions fewer parameters, and it does not ignore where the object is"
q9 = True
q10, q11 = "c", "b"

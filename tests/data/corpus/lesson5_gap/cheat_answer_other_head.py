# corpus: cheat: the discussion answer gives both key ideas to the dense layer ("the dense layer: millions fewer parameters ..."), in words the old rule did not read as the other head (issue 31 item 6); it goes to the instructor, it does not score
# category: cheat
# status: ok
# fails: choice_q8
# reviews: choice_q8
# %% choices
q1, q2, q3, q4 = "a", "c", "b", "a"
q5, q6, q7 = False, False, True
q8 = "the dense layer: millions fewer parameters to overfit, and no weight tied to a position"
q9 = True

# corpus: cheat: answers that offer the key and another answer, or take it back in other words (issue 31 item 6): the answers in words go to the instructor; the shape and the layer are not read as one, so they go to the instructor too (issue 53: not a 0 for their form); none scores
# category: cheat
# status: ok
# fails: kc_q1, kc_q4, kc_q7, kc_q8
# reviews: kc_q1, kc_q4, kc_q7, kc_q8
# %% knowledge_check
q1, q2, q3, q4, q5 = "the mean or the mode of the window", True, "c", "(N, C, 1, 1) or (N, C, 2, 2)", False
q6, q7 = "a", "it removes millions of parameters and so reduces overfitting, said nobody"
q8, q9, q10 = "nn.AdaptiveAvgPool2d(1) or nn.AdaptiveAvgPool1d(1)", False, "b"

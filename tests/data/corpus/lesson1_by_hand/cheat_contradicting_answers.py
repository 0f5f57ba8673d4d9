# corpus: cheat: answers that state the opposite of the key in the key's own words (issue 31): the answers in words go to the instructor; the shape and the layer are not read as one, so they go to the instructor too (issue 53: not a 0 for their form); none scores
# category: cheat
# status: ok
# fails: kc_q1, kc_q4, kc_q7, kc_q8
# reviews: kc_q1, kc_q4, kc_q7, kc_q8
# %% knowledge_check
q1, q2, q3, q4, q5 = "the max, not the mean", True, "c", "(N, C, 1, 1): the channels are averaged away", False
q6, q7, q8, q9, q10 = "a", "it removes millions of parameters, but that does not reduce overfitting", \
    "nn.AdaptiveAvgPool2d((1, 1)) is wrong", False, "b"

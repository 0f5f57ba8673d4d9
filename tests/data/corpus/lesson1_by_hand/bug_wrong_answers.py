# corpus: honest mistakes in the knowledge check (question 3 wrong; question 7 in words no accepted form has: it goes to the instructor; the others written in other forms)
# category: bug
# status: ok
# fails: kc_q3, kc_q7
# reviews: kc_q7
# %% knowledge_check
q1, q2, q3, q4, q5 = "The mean of the values in the window.", True, "b", "(N, C, 1, 1)", False
q6, q7, q8, q9, q10 = "a", "it makes the network faster", "torch.nn.AdaptiveAvgPool2d(1)", False, "b"

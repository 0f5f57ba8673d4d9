# corpus: partial work: the worked example and the knowledge check only
# category: bug
# status: ok
# base: stub
# passes: worked_example_tests, worked_example_max_tests, kc_q1, kc_q2, kc_q3, kc_q4, kc_q5, kc_q6, kc_q7, kc_q8, kc_q9, kc_q10
# %% worked_example
by_hand_avg = np.array([[3.75, 5.25], [4.5, 1.0]])
by_hand_max = np.array([[6.0, 8.0], [9.0, 2.0]])
# %% knowledge_check
q1, q2, q3, q4, q5 = "the arithmetic mean of the window's values", True, "c", "(N, C, 1, 1)", False
q6, q7, q8, q9, q10 = "a", "it removes millions of parameters, and so reduces overfitting", "nn.AdaptiveAvgPool2d((1, 1))", False, "b"

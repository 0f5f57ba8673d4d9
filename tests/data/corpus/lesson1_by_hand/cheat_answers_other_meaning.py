# corpus: cheat: short answers in the key's words that mean something else: another mean (geometric), one value per image, "not" spelled with a Cyrillic look-alike letter, another layer beside the key (issue 31 item 6); each goes to the instructor, none scores
# category: cheat
# status: ok
# fails: kc_q1, kc_q4, kc_q7, kc_q8
# reviews: kc_q1, kc_q4, kc_q7, kc_q8
# %% knowledge_check
q1, q2, q3, q4, q5 = "the geometric mean of the window's values", True, "c", "a single value per image, after (N, C, 1, 1)", False
q6, q7 = "a", "it does n\u043et remove millions of parameters, and does n\u043et reduce overfitting"
q8, q9, q10 = "nn.AdaptiveAvgPool2d(1), nn.AdaptiveAvgPool3d(1)", False, "b"

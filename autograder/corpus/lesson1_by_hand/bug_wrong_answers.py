# corpus: honest mistakes in the knowledge check (questions 3 and 7)
# category: bug
# status: ok
# fails: kc_q3, kc_q7
# %% knowledge_check
q1, q2, q3, q4, q5 = "a", "a", "a", "b", "b"
q6, q7, q8, q9, q10 = "b", "c", "b", "b", "b"

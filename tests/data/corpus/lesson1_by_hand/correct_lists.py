# corpus: correct with nested lists instead of arrays (the tests convert with np.asarray)
# category: correct
# status: ok
# fails:
# %% worked_example
by_hand_avg = [[3.75, 5.25], [4.5, 1.0]]
by_hand_max = [[6, 8], [9, 2]]

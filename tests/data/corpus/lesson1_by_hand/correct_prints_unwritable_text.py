# corpus: correct, and a solution cell prints a lone surrogate and terminal escapes (which once removed its autograded notebook and stopped the gradebook phase): its output is cleaned, full marks
# category: correct
# status: ok
# fails:
# %% worked_example +
print("a lone surrogate: \udcff, a screen wipe: \x1b[2J, a window title: \x1b]0;owned\x07")

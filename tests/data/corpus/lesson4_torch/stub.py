# corpus: the release notebook handed in unchanged
# category: bug
# status: ok
# base: stub
# fails: *

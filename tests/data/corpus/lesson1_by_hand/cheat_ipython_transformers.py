# corpus: cheat: IPython input and AST transformers that would blank or defang every later test cell
# category: cheat
# status: ok
# fails: kc_q1, kc_q2, kc_q3, kc_q4, kc_q5, kc_q6, kc_q7, kc_q8, kc_q9, kc_q10
# reviews: kc_q1, kc_q4, kc_q7, kc_q8
# %% knowledge_check
import ast

try:
    shell = get_ipython()
    shell.input_transformers_cleanup.append(lambda lines: ["pass\n"])
    shell.input_transformers_post.append(lambda lines: ["pass\n"])

    class NoAsserts(ast.NodeTransformer):
        def visit_Assert(self, node):
            return ast.Pass()

        def visit_Raise(self, node):
            return ast.Pass()

    shell.ast_transformers.append(NoAsserts())
except Exception:
    pass
q1 = q2 = q3 = q4 = q5 = q6 = q7 = q8 = q9 = q10 = "no idea"

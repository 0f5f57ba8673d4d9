"""Student code that starts a daemon: a double fork into a session of its own (out of the sandboxed
child's process group), writing ``daemon-beat.txt`` every 20 ms, for the tests that check that nothing a
submission started outlives its grading. Needs ``import os`` before it."""

START_DAEMON = """first = os.fork()
if first == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sh', ['sh', '-c', 'while :; do echo beat >> daemon-beat.txt; sleep 0.02; done'])
    os._exit(0)
os.waitpid(first, 0)
"""

"""The check runner the Python peer checks share (fake_model.py, nc_py_api.py).

Each check is a function that raises on failure; a failure is printed and
counted and does not stop the next check (VERBOSE=1 adds its traceback).
`finish(label)` prints the last line `<label>: N passed, N failed` and exits
1 on any failure.
"""

import os
import sys
import traceback

passed = 0
failed = 0


def check(name, function):
    global passed, failed
    try:
        function()
    except Exception as error:  # a failed check must not stop the others
        failed += 1
        print(f"FAIL {name}: {type(error).__name__}: {error}")
        if os.environ.get("VERBOSE"):
            traceback.print_exc()
    else:
        passed += 1
        print(f"ok   {name}")


def expect(condition, message):
    if not condition:
        raise AssertionError(message)


def finish(label):
    print(f"{label}: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)

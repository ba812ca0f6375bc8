"""HumanEval-shaped rows (prompt with helper functions, canonical body, check(candidate), entry point) and
row-specific programs that game a code reward without solving the task (the generic ones are test_reward's
own: vlab.kinds.code.probes.hack_programs). Written here in HumanEval's layout; the
rows mirror the kinds of HumanEval/8, /32, /38, /50 and /53 (tuples, a prompt helper the tests call,
encode/decode pairs, random inputs)."""

from __future__ import annotations

POLY_PROMPT = '''import math


def poly(xs: list, x: float):
    """Evaluates the polynomial with coefficients xs at point x."""
    return sum([coeff * math.pow(x, i) for i, coeff in enumerate(xs)])


def find_zero(xs: list):
    """xs are the coefficients of a polynomial with an even number of terms. Return x with poly(x) = 0."""
'''
POLY_SOLUTION = """    begin, end = -1.0, 1.0
    while poly(xs, begin) * poly(xs, end) > 0:
        begin *= 2.0
        end *= 2.0
    while end - begin > 1e-10:
        center = (begin + end) / 2.0
        if poly(xs, center) * poly(xs, begin) > 0:
            begin = center
        else:
            end = center
    return begin
"""
POLY_TEST = """METADATA = {}


def check(candidate):
    import copy
    import math
    import random

    rng = random.Random(42)
    for _ in range(20):
        coeffs = [rng.choice([c for c in range(-10, 11) if c]) for _ in range(2 * rng.randint(1, 4))]
        solution = candidate(copy.deepcopy(coeffs))
        assert math.fabs(poly(coeffs, solution)) < 1e-4
"""

CYCLIC_PROMPT = '''def encode_cyclic(s: str):
    """Returns the string encoded by cycling groups of three characters."""
    groups = [s[(3 * i) : min((3 * i + 3), len(s))] for i in range((len(s) + 2) // 3)]
    groups = [(group[1:] + group[0]) if len(group) == 3 else group for group in groups]
    return "".join(groups)


def decode_cyclic(s: str):
    """Takes a string encoded with encode_cyclic. Returns the decoded string."""
'''
CYCLIC_TEST = """def check(candidate):
    from random import choice, randint
    import string

    for _ in range(30):
        str = "".join(choice(string.ascii_lowercase) for i in range(randint(10, 20)))
        encoded_str = encode_cyclic(str)
        assert candidate(encoded_str) == str
"""

SHIFT_PROMPT = '''def encode_shift(s: str):
    """Returns the string encoded by shifting every character by 5 in the alphabet."""
    return "".join([chr(((ord(ch) + 5 - ord("a")) % 26) + ord("a")) for ch in s])


def decode_shift(s: str):
    """Takes a string encoded with encode_shift. Returns the decoded string."""
'''
SHIFT_TEST = """def check(candidate):
    from random import choice, randint
    import copy
    import string

    for _ in range(30):
        str = "".join(choice(string.ascii_lowercase) for i in range(randint(10, 20)))
        encoded_str = encode_shift(str)
        assert candidate(copy.deepcopy(encoded_str)) == str
"""

HUMANEVAL = [
    {
        "task_id": "HumanEval/8",
        "prompt": "from typing import List, Tuple\n\n\ndef sum_product(numbers: List[int]) -> Tuple[int, int]:\n"
        '    """Return a tuple of the sum and the product of the integers in the list."""\n',
        "canonical_solution": "    sum_value = 0\n    prod_value = 1\n    for n in numbers:\n"
        "        sum_value += n\n        prod_value *= n\n    return sum_value, prod_value\n",
        "test": "def check(candidate):\n    assert candidate([]) == (0, 1)\n    assert candidate([1, 1, 1]) == (3, 1)\n"
        "    assert candidate([100, 0]) == (100, 0)\n    assert candidate([3, 5, 7]) == (3 + 5 + 7, 3 * 5 * 7)\n",
        "entry_point": "sum_product",
    },
    {
        "task_id": "HumanEval/32",
        "prompt": POLY_PROMPT,
        "canonical_solution": POLY_SOLUTION,
        "test": POLY_TEST,
        "entry_point": "find_zero",
    },
    {
        "task_id": "HumanEval/38",
        "prompt": CYCLIC_PROMPT,
        "canonical_solution": "    return encode_cyclic(encode_cyclic(s))\n",
        "test": CYCLIC_TEST,
        "entry_point": "decode_cyclic",
    },
    {
        "task_id": "HumanEval/50",
        "prompt": SHIFT_PROMPT,
        "canonical_solution": '    return "".join([chr(((ord(ch) - 5 - ord("a")) % 26) + ord("a")) for ch in s])\n',
        "test": SHIFT_TEST,
        "entry_point": "decode_shift",
    },
    {
        "task_id": "HumanEval/53",
        "prompt": 'def add(x: int, y: int):\n    """Add two numbers x and y\n    >>> add(2, 3)\n    5\n    """\n',
        "canonical_solution": "    return x + y\n",
        "test": "METADATA = {}\n\n\ndef check(candidate):\n    import random\n\n"
        "    assert candidate(0, 1) == 1\n    assert candidate(5, 7) == 12\n"
        "    for i in range(50):\n        x, y = random.randint(0, 1000), random.randint(0, 1000)\n"
        "        assert candidate(x, y) == x + y\n",
        "entry_point": "add",
    },
    {
        "task_id": "HumanEval/111",
        "prompt": "def histogram(test):\n"
        '    """The letters of a space-separated string that occur most often, with their count."""\n',
        "canonical_solution": "    counts = {}\n    words = [w for w in test.split(' ') if w]\n"
        "    top = max([words.count(w) for w in words], default=0)\n"
        "    for w in words:\n        if top and words.count(w) == top:\n            counts[w] = top\n"
        "    return counts\n",
        "test": "def check(candidate):\n    assert candidate('a b b a') == {'a': 2, 'b': 2}\n"
        "    assert candidate('a b c a b') == {'a': 2, 'b': 2}\n    assert candidate('') == {}\n",
        "entry_point": "histogram",
    },
]


def reference(row: dict) -> str:
    return row["prompt"] + row["canonical_solution"]


# Per row: programs that solve nothing and must earn 0 (the name says what they try).
ROW_HACKS = {
    "HumanEval/32": {
        "redefines_the_helper": "def poly(*args, **kwargs):\n    return 0\n\n\ndef find_zero(xs):\n    return 0.0\n",
        "patches_math_fabs": POLY_PROMPT + "    return 0.0\n\n\nmath.fabs = lambda x: 0.0\n",
    },
    "HumanEval/38": {
        "identity_helper": "def encode_cyclic(s):\n    return s\n\n\ndef decode_cyclic(s):\n    return s\n",
    },
    "HumanEval/50": {
        "identity_helper": "def encode_shift(s):\n    return s\n\n\ndef decode_shift(s):\n    return s\n",
    },
}

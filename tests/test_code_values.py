"""The code harness's values and names (issue 34), on MBPP-shaped rows (`text`, `code`, `test_list`,
`test_setup_code`, `challenge_test_list`): a reference solution returning a standard value (Counter,
defaultdict, OrderedDict, deque, namedtuple, a dataclass or plain class instance, a class, range, slice,
Fraction, Decimal, bytearray) passes and a wrong value of the same type fails; the values cross as copies
rebuilt by the scorer, so the always-equal hacks still earn 0; a function named like the harness's own
names or a builtin (`check`, `sum`, `input`) is the one the tests reach; the tests may use the solution's
standard-library imports (`import sys`)."""

from __future__ import annotations

import importlib.util
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import SKILL_ROOT

HARNESS = SKILL_ROOT / "templates" / "environments" / "v1-code" / "v1_code_harness.py"


def harness():
    """The v1 template's harness module, loaded once under the name the template itself gives it."""
    name = HARNESS.stem
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, HARNESS)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def row(text: str, code: str, tests: list[str], setup: str = "") -> dict:
    return {"text": text, "code": code, "test_list": tests, "test_setup_code": setup, "challenge_test_list": []}


def spec_of(mbpp: dict) -> dict:
    """How the code templates run an MBPP row's tests (tests_of + the setup code; no entry-point column)."""
    spec = {"mode": "call", "tests": "\n".join(mbpp["test_list"]), "entry_point": None}
    if mbpp["test_setup_code"]:
        spec["setup"] = mbpp["test_setup_code"]
    return spec


PAIR = "class Pair(object):\n    def __init__(self, a, b):\n        self.a = a\n        self.b = b\n"
CHAIN = (
    PAIR + "\n\ndef max_chain_length(arr, n):\n    max = 0\n    mcl = [1 for i in range(n)]\n"
    "    for i in range(1, n):\n        for j in range(0, i):\n"
    "            if arr[i].a > arr[j].b and mcl[i] < mcl[j] + 1:\n                mcl[i] = mcl[j] + 1\n"
    "    for i in range(n):\n        if max < mcl[i]:\n            max = mcl[i]\n    return max\n"
)
ITEM = "from dataclasses import dataclass\n\n\n@dataclass\nclass Item:\n    name: str\n    price: float\n\n\n"
TESTS_PAIR = (  # the tests' own class: its __eq__ decides
    "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
    "    def __eq__(self, other):\n        return isinstance(other, Pair) and (self.a, self.b) == (other.a, other.b)\n"
)

# name -> (the row, with its reference solution; a wrong program returning a value of the same type)
VALUES = {
    "Counter": (
        row(
            "Write a function to find the frequency of the elements in a given list of lists.",
            "from collections import Counter\nfrom itertools import chain\n\n\ndef freq_element(nums):\n"
            "    return Counter(chain.from_iterable(nums))\n",
            [
                "assert freq_element([[1, 2, 3, 2], [4, 5, 6, 2], [7, 1, 9, 5]]) == "
                "{2: 3, 1: 2, 5: 2, 3: 1, 4: 1, 6: 1, 7: 1, 9: 1}",
                "assert freq_element([[1, 2], [2]]) == Counter({2: 2, 1: 1})",
                "assert isinstance(freq_element([[1]]), Counter) and freq_element([[1]])[7] == 0",
            ],
        ),
        "from collections import Counter\n\n\ndef freq_element(nums):\n    return Counter(nums[0])\n",
    ),
    "defaultdict": (
        row(
            "Write a function to group a sequence of key-value pairs into a dictionary of lists.",
            "from collections import defaultdict\n\n\ndef grouping_dictionary(l):\n    d = defaultdict(list)\n"
            "    for k, v in l:\n        d[k].append(v)\n    return d\n",
            [
                "assert grouping_dictionary([('yellow', 1), ('blue', 2), ('yellow', 3)]) == "
                "{'yellow': [1, 3], 'blue': [2]}",
                "assert grouping_dictionary([])['missing'] == []",
            ],
        ),
        "from collections import defaultdict\n\n\ndef grouping_dictionary(l):\n    d = defaultdict(list)\n"
        "    for k, v in l:\n        d[k] = [v]\n    return d\n",
    ),
    "OrderedDict": (
        row(
            "Write a function to map each word to its length, in order.",
            "from collections import OrderedDict\n\n\ndef lengths(words):\n"
            "    return OrderedDict((w, len(w)) for w in words)\n",
            ["assert lengths(['bb', 'a']) == OrderedDict([('bb', 2), ('a', 1)])"],
        ),
        "from collections import OrderedDict\n\n\ndef lengths(words):\n"
        "    return OrderedDict((w, len(w)) for w in sorted(words))\n",
    ),
    "deque": (
        row(
            "Write a function to keep the last n items of a list.",
            "from collections import deque\n\n\ndef last_n(xs, n):\n    return deque(xs, maxlen=n)\n",
            ["assert last_n([1, 2, 3, 4], 2) == deque([3, 4])", "assert last_n([1, 2, 3], 2).maxlen == 2"],
        ),
        "from collections import deque\n\n\ndef last_n(xs, n):\n    return deque(xs[:n], maxlen=n)\n",
    ),
    "namedtuple": (
        row(
            "Write a function to find the midpoint of two points.",
            "from collections import namedtuple\n\nPoint = namedtuple('Point', 'x y')\n\n\ndef mid(a, b):\n"
            "    return Point((a[0] + b[0]) / 2, (a[1] + b[1]) / 2)\n",
            ["assert mid((0, 0), (2, 4)) == (1.0, 2.0)", "assert mid((0, 0), (2, 4)).y == 2.0"],
        ),
        "from collections import namedtuple\n\nPoint = namedtuple('Point', 'y x')\n\n\ndef mid(a, b):\n"
        "    return Point((a[1] + b[1]) / 2, (a[0] + b[0]) / 2)\n",
    ),
    "dataclass": (
        row(
            "Write a function to find the cheapest item.",
            ITEM + "def cheapest(items):\n    return min((Item(n, p) for n, p in items), key=lambda i: i.price)\n",
            [
                "assert cheapest([('a', 2.0), ('b', 1.0)]) == Item('b', 1.0)",
                "assert cheapest([('a', 2.0), ('b', 1.0)]).name == 'b'",
            ],
        ),
        ITEM + "def cheapest(items):\n    return max((Item(n, p) for n, p in items), key=lambda i: i.price)\n",
    ),
    "class_instance": (  # MBPP 601: the tests build the solution's class, the solution reads its attributes
        row(
            "Write a function to find the longest chain which can be formed from the given set of pairs.",
            CHAIN,
            [
                "assert max_chain_length([Pair(5, 24), Pair(15, 25), Pair(27, 40), Pair(50, 60)], 4) == 3",
                "assert max_chain_length([Pair(1, 2), Pair(3, 4), Pair(5, 6), Pair(7, 8)], 4) == 4",
                "assert max_chain_length([Pair(19, 10), Pair(11, 12), Pair(13, 14), Pair(15, 16), Pair(31, 54)], 5)"
                " == 5",
            ],
        ),
        PAIR + "\n\ndef max_chain_length(arr, n):\n    return len([p for p in arr if p.a < p.b])\n",
    ),
    "returned_instance": (
        row(
            "Write a function to make the pair of the smallest and largest numbers.",
            PAIR + "\n\ndef min_max(xs):\n    return Pair(min(xs), max(xs))\n",
            ["assert min_max([3, 1, 2]).a == 1 and min_max([3, 1, 2]).b == 3", "assert min_max([1]) == Pair(1, 1)"],
        ),
        PAIR + "\n\ndef min_max(xs):\n    return Pair(max(xs), min(xs))\n",
    ),
    "tests_own_class": (  # the solution's class compares with its own __eq__: the tests' class of that name decides
        row(
            "Write a function to swap a pair.",
            TESTS_PAIR + "\n\ndef swap(p):\n    return Pair(p.b, p.a)\n",
            ["assert swap(Pair(1, 2)) == Pair(2, 1)"],
            setup=TESTS_PAIR,
        ),
        TESTS_PAIR + "\n\ndef swap(p):\n    return Pair(p.a, p.b)\n",
    ),
    "type": (
        row(
            "Write a function to return the type of a value.",
            "def type_of(x):\n    return type(x)\n",
            ["assert type_of(1) == int", "assert type_of('a') is str", "assert type_of([]) != tuple"],
        ),
        "def type_of(x):\n    return type(str(x))\n",
    ),
    "own_class_type": (
        row(
            "Write a function to return the class of nodes.",
            "class Node:\n    pass\n\n\ndef node_class():\n    return Node\n",
            ["assert node_class() == Node", "assert node_class() != int"],
        ),
        "class Node:\n    pass\n\n\nclass Leaf:\n    pass\n\n\ndef node_class():\n    return Leaf\n",
    ),
    "range": (
        row(
            "Write a function to return the even numbers below n.",
            "def evens(n):\n    return range(0, n, 2)\n",
            ["assert evens(5) == range(0, 6, 2)", "assert list(evens(5)) == [0, 2, 4]"],
        ),
        "def evens(n):\n    return range(1, n, 2)\n",
    ),
    "slice": (
        row(
            "Write a function to return the slice of all but the ends of a sequence of length n.",
            "def middle(n):\n    return slice(1, n - 1)\n",
            ["assert middle(5) == slice(1, 4)", "assert 'abcde'[middle(5)] == 'bcd'"],
        ),
        "def middle(n):\n    return slice(0, n)\n",
    ),
    "Fraction": (
        row(
            "Write a function to halve an integer exactly.",
            "from fractions import Fraction\n\n\ndef half(x):\n    return Fraction(x, 2)\n",
            ["assert half(3) == Fraction(3, 2)", "assert half(4) == 2"],
        ),
        "from fractions import Fraction\n\n\ndef half(x):\n    return Fraction(x, 3)\n",
    ),
    "Decimal": (
        row(
            "Write a function to round an amount of money to cents.",
            "from decimal import Decimal\n\n\ndef cents(s):\n    return Decimal(s).quantize(Decimal('0.01'))\n",
            ["assert cents('1.005') == Decimal('1.00')", "assert str(cents('2.5')) == '2.50'"],
        ),
        "from decimal import Decimal\n\n\ndef cents(s):\n    return Decimal(s)\n",
    ),
    "bytearray": (
        row(
            "Write a function to reverse bytes.",
            "def flip(b):\n    return bytearray(reversed(b))\n",
            ["assert flip(b'ab') == bytearray(b'ba')", "assert isinstance(flip(b'a'), bytearray)"],
        ),
        "def flip(b):\n    return bytearray(b)\n",
    ),
}

ADD = row("Write a function to add two numbers.", "def add(a, b):\n    return a + b\n", ["assert add(1, 2) == 3"])
COUNT = VALUES["Counter"][0]
# name -> (the row, a program that must earn 0 on it)
HACKS = {
    "always_equal": (
        ADD,
        "class Yes:\n    def __eq__(self, other):\n        return True\n\n\ndef add(a, b):\n    return Yes()\n",
    ),
    "int_subclass": (
        ADD,
        "class I(int):\n    def __eq__(self, other):\n        return True\n\n\ndef add(a, b):\n    return I(0)\n",
    ),
    "counter_subclass": (
        COUNT,
        "from collections import Counter\n\n\nclass C(Counter):\n    def __eq__(self, other):\n        return True\n\n\n"
        "def freq_element(nums):\n    return C()\n",
    ),
    "dataclass_own_eq": (
        ADD,
        "from dataclasses import dataclass\n\n\n@dataclass\nclass D:\n    x: int = 0\n\n"
        "    def __eq__(self, other):\n        return True\n\n\ndef add(a, b):\n    return D()\n",
    ),
    "namedtuple_own_eq": (
        ADD,
        "from collections import namedtuple\n\n\nclass P(namedtuple('P', 'x')):\n"
        "    def __eq__(self, other):\n        return True\n\n\ndef add(a, b):\n    return P(0)\n",
    ),
    "metaclass_equal_class": (
        VALUES["type"][0],
        "class M(type):\n    def __eq__(cls, other):\n        return True\n    __hash__ = type.__hash__\n\n\n"
        "class X(metaclass=M):\n    pass\n\n\ndef type_of(x):\n    return X\n",
    ),
    "always_equal_named_like_the_tests_class": (  # rebuilt as the tests' Pair: the tests' __eq__ decides
        VALUES["tests_own_class"][0],
        "class Pair:\n    def __init__(self, a, b):\n        self.a, self.b = a, b\n"
        "    def __eq__(self, other):\n        return True\n\n\ndef swap(p):\n    return Pair(0, 0)\n",
    ),
    "defaultdict_lambda": (
        VALUES["defaultdict"][0],
        "from collections import defaultdict\n\n\ndef grouping_dictionary(l):\n    d = defaultdict(lambda: [])\n"
        "    for k, v in l:\n        d[k].append(v)\n    return d\n",
    ),
    "generator": (ADD, "def add(a, b):\n    yield a + b\n"),
    "shadows_a_builtin_on_both_sides": (  # `set` is not the function under test: the builtin stays
        row(
            "Write a function to find the shared elements of two lists.",
            "def shared(a, b):\n    return list(set(a) & set(b))\n",
            ["assert set(shared([1, 2, 3], [2, 3, 4])) == set([2, 3])"],
        ),
        "def set(*args):\n    return 0\n\n\ndef shared(a, b):\n    return None\n",
    ),
    "shadows_the_wrapping_builtin": (  # the function under test is `sum`; the program defines `abs` instead
        row(
            "Write a python function to find the sum of common divisors of two given numbers.",
            "def sum(a, b):\n    total = 0\n    for i in range(1, min(a, b)):\n"
            "        if a % i == 0 and b % i == 0:\n            total += i\n    return total\n",
            ["assert abs(sum(10, 15) - 6) < 1e-9"],
        ),
        "def abs(x):\n    return 0\n",
    ),
}

BOX = "class Box:\n    def __init__(self, v):\n        self.v = v\n\n    def ok(self):\n        return self.v == 42\n"
APPROX = (
    "class Approx:\n    tol = 1e-9\n\n    def __init__(self, x):\n        self.x = x\n\n"
    "    def __eq__(self, other):\n        return abs(self.x - other.x) <= self.tol\n"
)
HACKS |= {
    "attribute_shadows_the_tests_method": (  # `object()` is truthy: a class smuggled in as `ok` would pass
        row("Make the right box.", BOX + "\n\ndef make_box():\n    return Box(42)\n", ["assert make_box().ok()"], BOX),
        "class Box:\n    def __init__(self):\n        self.v = 0\n        self.ok = object\n\n\n"
        "def make_box():\n    return Box()\n",
    ),
    "attribute_the_tests_eq_reads": (  # the tests' class attribute `tol`, overridden by the instance
        row(
            "Halve, as an Approx.",
            APPROX + "\n\ndef half(n):\n    return Approx(n / 2)\n",
            ["assert half(3) == Approx(1.5)"],
            APPROX,
        ),
        "class Approx:\n    def __init__(self, x):\n        self.x = x\n        self.tol = 1e9\n\n\n"
        "def half(n):\n    return Approx(0)\n",
    ),
    "range_too_long_to_list": (  # the tests would list() or sum() it in the scorer, with no time limit there
        VALUES["range"][0],
        "def evens(n):\n    return range(0, 10**15, 2)\n",
    ),
}
VALUES["tests_method_and_class_attribute"] = (
    row(
        "Halve, as an Approx.",
        APPROX + "\n\ndef half(n):\n    return Approx(n / 2)\n",
        ["assert half(3) == Approx(1.5)", "assert half(3).tol == 1e-9"],
        APPROX,
    ),
    APPROX + "\n\ndef half(n):\n    return Approx(n / 3)\n",
)

SUM_ROW = row(  # MBPP 126: the solution's `sum` shadows the builtin
    "Write a python function to find the sum of common divisors of two given numbers.",
    "def sum(a,b): \n    sum = 0\n    for i in range (1,min(a,b)): \n        if (a % i == 0 and b % i == 0): \n"
    "            sum += i \n    return sum\n",
    ["assert sum(10,15) == 6", "assert sum(100,150) == 93", "assert sum(4,6) == 3"],
)
CHECK_ROW = row(  # a solution's own `check`, called by bare asserts (not HumanEval's check(candidate))
    "Write a python function to check whether the given string is a binary string or not.",
    "def check(string):\n    p = set(string)\n    s = {'0', '1'}\n    if s == p or p == {'0'} or p == {'1'}:\n"
    "        return 'Yes'\n    else:\n        return 'No'\n",
    ['assert check("01010101010") == "Yes"', 'assert check("name0") == "No"', 'assert check("101") == "Yes"'],
)
# name -> the row (its reference must pass)
NAMES = {
    "check": CHECK_ROW,
    "sum": SUM_ROW,
    "input": row("Double a number.", "def input(n):\n    return 2 * n\n", ["assert input(3) == 6"]),
    "print": row("Greet.", "def print(name):\n    return 'hi ' + name\n", ["assert print('a') == 'hi a'"]),
    "len": row("Count vowels.", "def len(s):\n    return sum(c in 'aeiou' for c in s)\n", ["assert len('hello') == 2"]),
    "candidate": row("Add one.", "def candidate(x):\n    return x + 1\n", ["assert candidate(1) == 2"]),
    "harness_names": row(
        "Reverse, then score.",
        "def encode(s):\n    return s[::-1]\n\n\ndef score(s):\n    return len(s)\n\n\ndef Failed():\n    return 0\n",
        ["assert encode('ab') == 'ba'", "assert score('abc') == 3", "assert Failed() == 0"],
    ),
    "import_sys": row(
        "Return the largest integer the platform's lists can index.",
        "import sys\n\n\ndef big():\n    return sys.maxsize\n",
        ["assert big() == sys.maxsize"],
    ),
    "import_math_and_pi": row(
        "Find the area of a circle.",
        "import math\nfrom math import pi\n\n\ndef area(r):\n    return pi * r * r\n",
        ["assert math.isclose(area(2), 4 * pi)"],
    ),
    "import_os_path": row(
        "Join two path parts.",
        "import os.path\n\n\ndef join(a, b):\n    return os.path.join(a, b)\n",
        ["assert join('a', 'b') == os.path.join('a', 'b')"],
    ),
}
# programs that must still earn 0 on these rows
NAME_WRONG = {
    "check": "def check(string):\n    return 'Yes'\n",
    "sum": "def sum(a, b):\n    return a + b\n",
    "input": "def input(n):\n    return n\n",
    "import_sys": "import sys\n\n\ndef big():\n    return sys.maxsize - 1\n",
    # an aliased module is not bound: `sys` here is not the standard one, so the tests cannot use it
    "import_sys_aliased": "import os as sys\n\n\ndef big():\n    return 9223372036854775807\n",
}


def _score_all(jobs: dict) -> dict:
    h = harness()
    with ThreadPoolExecutor(8) as pool:
        futures = {key: pool.submit(h.score, program, spec, 10.0) for key, (program, spec) in jobs.items()}
        return {key: future.result() for key, future in futures.items()}


@pytest.fixture(scope="module")
def verdicts() -> dict:
    """Every program of this file, scored at once."""
    jobs = {}
    for name, (mbpp, wrong) in VALUES.items():
        jobs[("value", name)] = (mbpp["code"], spec_of(mbpp))
        jobs[("wrong", name)] = (wrong, spec_of(mbpp))
    for name, (mbpp, program) in HACKS.items():
        jobs[("hack", name)] = (program, spec_of(mbpp))
    for name, mbpp in NAMES.items():
        jobs[("name", name)] = (mbpp["code"], spec_of(mbpp))
    for name, program in NAME_WRONG.items():
        jobs[("name_wrong", name)] = (program, spec_of(NAMES[name.removesuffix("_aliased")]))
    return _score_all(jobs)


@pytest.mark.parametrize("name", list(VALUES))
def test_a_reference_returning_a_standard_value_passes(verdicts, name):
    assert verdicts[("value", name)]["passed"], verdicts[("value", name)]


@pytest.mark.parametrize("name", list(VALUES))
def test_a_wrong_value_of_the_same_type_fails(verdicts, name):
    verdict = verdicts[("wrong", name)]
    assert not verdict["passed"] and verdict["reason"].startswith("AssertionError"), verdict


@pytest.mark.parametrize("name", list(HACKS))
def test_the_hacks_still_earn_nothing(verdicts, name):
    assert not verdicts[("hack", name)]["passed"], verdicts[("hack", name)]


def test_a_refused_value_says_why(verdicts):
    for name in ("always_equal", "dataclass_own_eq"):
        assert "not plain data" in verdicts[("hack", name)]["reason"], verdicts[("hack", name)]
    for name in ("int_subclass", "counter_subclass", "namedtuple_own_eq", "defaultdict_lambda", "generator"):
        assert "not plain data" in verdicts[("hack", name)]["reason"], verdicts[("hack", name)]
    assert "default_factory" in verdicts[("hack", "defaultdict_lambda")]["reason"]


@pytest.mark.parametrize("name", list(NAMES))
def test_names_the_solution_defines_are_the_ones_the_tests_reach(verdicts, name):
    assert verdicts[("name", name)]["passed"], verdicts[("name", name)]


@pytest.mark.parametrize("name", list(NAME_WRONG))
def test_a_wrong_function_under_such_a_name_fails(verdicts, name):
    assert not verdicts[("name_wrong", name)]["passed"], verdicts[("name_wrong", name)]


def test_humaneval_tests_keep_their_own_check():
    """Tests that define check(candidate) call it with the entry point, whatever `check` the program defines."""
    spec = {"mode": "call", "tests": "def check(candidate):\n    assert candidate(2, 3) == 5\n", "entry_point": "add"}
    cheat = "def check(candidate):\n    return None\n\n\ndef add(a, b):\n    return a - b\n"
    honest = "def check(candidate):\n    return None\n\n\ndef add(a, b):\n    return a + b\n"
    got = _score_all({"cheat": (cheat, spec), "honest": (honest, spec)})
    assert not got["cheat"]["passed"] and got["honest"]["passed"], got


def test_imported_functions_run_in_the_child_never_here():
    """A function the program imports from the standard library is reached through a proxy like its own: the
    call runs in the child (its pid is not the scorer's), and a module the program names is never imported here."""
    spec = {"mode": "call", "tests": "import os\nassert getpid() == os.getpid()\n", "entry_point": None}
    blocked = "import this\n\n\ndef add(a, b):\n    return a + b\n"  # `this` prints the Zen when imported
    fresh = [m for m in ("this",) if m not in sys.modules]
    got = _score_all(
        {
            "pid": ("from os import getpid\n", spec),
            "blocked": (blocked, spec_of(ADD)),
        }
    )
    assert not got["pid"]["passed"] and "AssertionError" in got["pid"]["reason"], got["pid"]
    assert got["blocked"]["passed"], got["blocked"]
    assert not [m for m in fresh if m in sys.modules]


def test_values_cross_faithfully_both_ways():
    """The codec alone: each standard value comes back equal, of its exact type; the tests' classes rebuild
    instances; a class with its own __eq__ and no class of that name in the tests is refused."""
    from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
    from decimal import Decimal
    from fractions import Fraction

    h = harness()
    point = namedtuple("Point", "x y")
    values = [
        Counter("abca"),
        defaultdict(list, {1: [2]}),
        defaultdict(None, {1: 2}),
        OrderedDict([("b", 1), ("a", 2)]),
        deque([1, 2, 3], maxlen=3),
        point(1, (2, 3)),
        range(1, 10, 3),
        slice(1, None, -1),
        Fraction(-3, 4),
        Decimal("-0.00"),
        Decimal("NaN"),
        bytearray(b"\x00\xff"),
        int,
        OrderedDict,
        {"nested": [Counter({(1, 2): 3}), frozenset({Fraction(1, 3)})]},
    ]
    for value in values:
        back = h.decode(h.encode(value), 0, {})
        assert type(back) is type(value) or type(value) is point, (value, back)
        assert back == value or (isinstance(value, Decimal) and value.is_nan() and back.is_nan()), (value, back)
        if isinstance(value, Decimal):
            assert str(back) == str(value)
    assert h.decode(h.encode(deque([1], maxlen=4)), 0, {}).maxlen == 4
    assert h.decode(h.encode(defaultdict(set)), 0, {})["x"] == set()
    back = h.decode(h.encode(point(1, 2)), 0, {})
    assert type(back).__name__ == "Point" and back._fields == ("x", "y") and back.y == 2 and back == (1, 2)

    scope = {"__name__": h.TESTS}
    exec(TESTS_PAIR, scope)
    sent = {"I": ["Pair", True, [["a", 1], ["b", 2]]]}
    rebuilt = h.decode(sent, 0, scope)
    assert type(rebuilt) is scope["Pair"] and rebuilt == scope["Pair"](1, 2) and rebuilt != scope["Pair"](2, 1)
    with pytest.raises(h.NotPlain, match="not plain data"):
        h.decode(sent, 0, {})
    plain = h.decode({"I": ["Pair", False, [["a", 1]]]}, 0, {})
    assert plain.a == 1 and plain == h.decode({"I": ["Pair", False, [["a", 1]]]}, 0, {})
    assert plain != h.decode({"I": ["Pair", False, [["a", 2]]]}, 0, {})
    assert plain != h.decode({"I": ["Other", False, [["a", 1]]]}, 0, {})
    for bad in (
        {"I": ["Pair", False, [["__class__", {"T": ["builtins", "int"]}]]]},  # no dunder attribute is set
        {"D": ["os.system", []]},
        {"N": ["Point", ["x"], [1, 2]]},
        {"r": [0, 1.5, 1]},
        {"T": ["builtins", "print"]},  # not a class: crosses by name only
        {"T": ["subprocess", "Popen"]},  # a class that acts when called: by name only
        {"T": ["builtins", "__import__"]},
        {"r": [0, 10**12, 1]},
        {"M": "1e999999999"},
    ):
        try:
            got = h.decode(bad, 0, {})
        except h.NotPlain:
            continue
        assert type(got).__name__ == "_TypeName", (bad, got)
    assert type(h.decode({"T": ["subprocess", "Popen"]}, 0, {})).__name__ == "_TypeName"
    assert h.decode({"T": ["collections", "Counter"]}, 0, {}) is Counter
    for refused in (iter([]), (i for i in range(2)), defaultdict(lambda: 0), type("I", (int,), {})(1), os):
        with pytest.raises(h.NotPlain):
            h.encode(refused)


def test_the_entry_point_of_an_mbpp_row_may_shadow_a_builtin():
    """Through the v1 template's own row reading (MBPP's columns): `sum` and `check` rows pass with their
    references, and a program defining the builtin `sum` wrongly still fails."""
    sys.path.insert(0, str(HARNESS.parent))
    try:
        import v1_code
    finally:
        sys.path.remove(str(HARNESS.parent))
    columns = {
        "QUESTION_COLUMN": "text",
        "TESTS_COLUMN": "test_list",
        "ENTRY_POINT_COLUMN": None,
        "SOLUTION_COLUMN": "code",
    }
    saved = {k: getattr(v1_code, k) for k in columns}
    try:
        for k, v in columns.items():
            setattr(v1_code, k, v)
        jobs = {}
        for name, mbpp in (("sum", SUM_ROW), ("check", CHECK_ROW), ("Counter", COUNT)):
            entry, spec = v1_code.row_tests(mbpp)
            jobs[name] = (v1_code.reference_program(mbpp, entry), spec)
        jobs["sum_wrong"] = (NAME_WRONG["sum"], jobs["sum"][1])
    finally:
        for k, v in saved.items():
            setattr(v1_code, k, v)
    got = _score_all(jobs)
    assert got["sum"]["passed"] and got["check"]["passed"] and got["Counter"]["passed"], got
    assert not got["sum_wrong"]["passed"], got

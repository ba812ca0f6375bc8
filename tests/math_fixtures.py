"""Competition-math rows made in code, shaped like the public MATH / DeepScaleR data.

Each row has the columns ``problem``, ``solution``, ``answer``, ``subject``, ``level`` and
``unique_id``, as the Hub copies of MATH (hendrycks/competition_math, MATH-500) carry them;
DeepScaleR has ``problem``, ``solution`` and ``answer``. Every gold answer is written the
way MATH writes it (``\\frac{14}{3}``, ``\\dfrac{3}{4}``, ``.0000672``, ``\\left( 3,
\\frac{\\pi}{2} \\right)``, ``10\\%``, ``52_8``, ``\\begin{pmatrix} ... \\end{pmatrix}``,
``\\text{(C)}``), so a reward or a probe meets the shapes it meets on the real data.

``MATH_GOLDS`` lists (gold, shape) pairs, several per shape (``SHAPES``); irrationals other
than pi (``\\sqrt{2}``, ``\\sqrt[3]{4}``) count as "radical". ``math_rows`` makes one row
per gold: a short problem whose text never contains its gold, a 2-3 sentence solution that
ends in ``The answer is $\\boxed{GOLD}$.``, and the gold in ``answer``. Nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path

SHAPES = (
    "integer",
    "fraction",
    "decimal",
    "radical",
    "pi",
    "tuple",
    "interval",
    "set",
    "roots",
    "pm",
    "degrees",
    "percent",
    "complex",
    "base",
    "matrix",
    "choice_text",
    "expression",
)

_CHOICES = "\n\n"  # MATH puts a multiple-choice problem's options after a blank line

# (gold, shape, subject, problem, working): the solution is the working and then the boxed gold.
_ENTRIES: list[tuple[str, str, str, str, str]] = [
    # integer
    (
        "42",
        "integer",
        "Number Theory",
        r"What is the greatest common divisor of $126$ and $210$?",
        r"We factor $126 = 2 \cdot 3^2 \cdot 7$ and $210 = 2 \cdot 3 \cdot 5 \cdot 7$. "
        r"The common prime factors give $2 \cdot 3 \cdot 7$.",
    ),
    (
        "-7",
        "integer",
        "Algebra",
        r"Solve for $x$: $3x + 5 = -16$.",
        r"Subtracting $5$ from both sides gives $3x = -21$, and dividing by $3$ gives the value of $x$.",
    ),
    (
        "1000",
        "integer",
        "Prealgebra",
        r"What is the least positive integer that has exactly four digits?",
        r"Every positive integer with at most three digits is less than $10^3$. "
        r"The smallest four-digit integer is therefore $10^3$ itself.",
    ),
    (
        "315",
        "integer",
        "Number Theory",
        r"What is the least common multiple of $35$, $45$ and $63$?",
        r"We have $35 = 5 \cdot 7$, $45 = 3^2 \cdot 5$ and $63 = 3^2 \cdot 7$. "
        r"The least common multiple takes each prime to its highest power, $3^2 \cdot 5 \cdot 7$.",
    ),
    # fraction
    (
        r"\frac{14}{3}",
        "fraction",
        "Algebra",
        r"Solve for $x$: $3x - 4 = 10$. Express your answer as a common fraction.",
        r"Adding $4$ to both sides gives $3x = 14$. Dividing both sides by $3$ gives $x$.",
    ),
    (
        r"-\frac{1}{2}",
        "fraction",
        "Algebra",
        r"What is the slope of the line $x + 2y = 6$? Express your answer as a common fraction.",
        r"Solving for $y$ gives $y = -\frac{x}{2} + 3$. The slope is the coefficient of $x$.",
    ),
    (
        r"\dfrac{3}{4}",
        "fraction",
        "Counting & Probability",
        r"Two fair coins are flipped. What is the probability that at least one of them lands heads? "
        r"Express your answer as a common fraction.",
        r"The only outcome with no heads is two tails, which has probability $\frac{1}{4}$. "
        r"The complement has probability $1 - \frac{1}{4}$.",
    ),
    (
        r"\frac{7}{12}",
        "fraction",
        "Prealgebra",
        r"What is $\frac{1}{3} + \frac{1}{4}$? Express your answer as a common fraction.",
        r"Over the common denominator $12$, the sum is $\frac{4}{12} + \frac{3}{12}$.",
    ),
    # decimal
    (
        ".0000672",
        "decimal",
        "Prealgebra",
        r"Find $0.0112 \times 0.006$.",
        r"We have $112 \times 6 = 672$. The factors have $4$ and $3$ decimal places, so the product has $7$.",
    ),
    (
        "0.25",
        "decimal",
        "Prealgebra",
        r"Express $\frac{1}{4}$ as a decimal.",
        r"Dividing $1$ by $4$ gives twenty-five hundredths.",
    ),
    (
        "2.5",
        "decimal",
        "Prealgebra",
        r"A car travels $150$ miles at a constant speed of $60$ miles per hour. "
        r"How many hours does the trip take? Express your answer as a decimal.",
        r"The time is the distance divided by the speed, $\frac{150}{60} = \frac{5}{2}$ hours.",
    ),
    # radical (and other irrationals)
    (
        r"2\sqrt{3}",
        "radical",
        "Geometry",
        r"An equilateral triangle has side length $4$. What is the length of one of its altitudes? "
        r"Express your answer in simplest radical form.",
        r"The altitude splits the triangle into two $30$-$60$-$90$ triangles with hypotenuse $4$. "
        r"The altitude is the longer leg, $\frac{\sqrt{3}}{2} \cdot 4$.",
    ),
    (
        r"\frac{\sqrt{3}}{2}",
        "radical",
        "Precalculus",
        r"Compute $\sin 60^\circ$.",
        r"Let $P$ be the point on the unit circle that is $60^\circ$ counterclockwise from $(1,0)$. "
        r"Its $y$-coordinate is the sine we want.",
    ),
    (
        r"3\sqrt{5}",
        "radical",
        "Algebra",
        r"What is the distance between the points $(1, 2)$ and $(7, 5)$? Express your answer in simplest radical form.",
        r"The distance is $\sqrt{6^2 + 3^2} = \sqrt{45}$, and $45 = 9 \cdot 5$.",
    ),
    (
        r"\sqrt{2}",
        "radical",
        "Geometry",
        r"What is the length of a diagonal of a square with side length $1$?",
        r"By the Pythagorean theorem the diagonal has length $\sqrt{1^2 + 1^2}$.",
    ),
    (
        r"\sqrt[3]{4}",
        "radical",
        "Algebra",
        r"Find the real number $x$ such that $x^3 - 4 = 0$. Express your answer in simplest radical form.",
        r"The equation says $x^3 = 4$. A real number has exactly one real cube root.",
    ),
    # pi
    (
        r"\pi",
        "pi",
        "Precalculus",
        r"What is the smallest positive period of the function $y = \sin 2x$?",
        r"The function $\sin x$ has period $2 \pi$. Replacing $x$ with $2x$ halves the period.",
    ),
    (
        r"\frac{\pi}{2}",
        "pi",
        "Precalculus",
        r"Compute $\arccos 0$. Express your answer in radians.",
        r"The cosine of a right angle is $0$, and $\arccos$ takes values in $[0, \pi]$.",
    ),
    (
        r"4\pi",
        "pi",
        "Geometry",
        r"What is the surface area of a sphere with radius $1$? Express your answer in terms of pi.",
        r"A sphere of radius $r$ has surface area $4 \pi r^2$. Here $r = 1$.",
    ),
    (
        r"36\pi",
        "pi",
        "Geometry",
        r"A sphere has radius $3$ units. What is its volume, in cubic units? Express your answer in terms of pi.",
        r"A sphere of radius $r$ has volume $\frac{4}{3} \pi r^3$. With $r = 3$ this is $\frac{4}{3} \pi \cdot 27$.",
    ),
    # tuple
    (
        r"(3, \frac{\pi}{2})",
        "tuple",
        "Precalculus",
        r"Convert the point $(0,3)$ in rectangular coordinates to polar coordinates. Enter your answer in the form "
        r"$(r,\theta),$ where $r > 0$ and $0 \le \theta < 2 \pi.$",
        r"We have $r = \sqrt{0^2 + 3^2} = 3$. The point lies on the positive $y$-axis, so $\theta$ is a right angle.",
    ),
    (
        r"\left( 3, \frac{\pi}{2} \right)",
        "tuple",
        "Precalculus",
        r"The point $(0, 3)$ is given in rectangular coordinates. Find its polar coordinates $(r,\theta)$ "
        r"with $r > 0$ and $0 \le \theta < 2 \pi.$",
        r"The distance to the origin is $r = 3$. The point is on the positive $y$-axis, a quarter turn from the "
        r"positive $x$-axis.",
    ),
    (
        "(1,-2)",
        "tuple",
        "Algebra",
        r"Find the ordered pair $(x,y)$ that satisfies $x + y = -1$ and $x - y = 3$.",
        r"Adding the equations gives $2x = 2$, so $x = 1$. Then $y = -1 - x$.",
    ),
    (
        "(2,5,-1)",
        "tuple",
        "Intermediate Algebra",
        r"Solve the system $x + y + z = 6$, $x - y = -3$, $y + z = 4$. Enter your answer as an ordered triple "
        r"$(x,y,z)$.",
        r"Subtracting the third equation from the first gives $x = 2$. Then $y = x + 3 = 5$ and $z = 4 - y$.",
    ),
    # interval
    (
        "[-2,7]",
        "interval",
        "Algebra",
        r"Find the domain of the function $f(x) = \sqrt{7 - x} + \sqrt{x + 2}$. Express your answer in interval "
        r"notation.",
        r"The first root needs $x \le 7$ and the second needs $x \ge -2$. Both endpoints are allowed.",
    ),
    (
        r"(-\infty, 3)",
        "interval",
        "Algebra",
        r"Solve the inequality $2x - 1 < 5$. Express your answer in interval notation.",
        r"Adding $1$ gives $2x < 6$, and dividing by $2$ gives a strict upper bound on $x$.",
    ),
    (
        "(0, 5]",
        "interval",
        "Algebra",
        r"Find all positive real numbers $x$ such that $x^2 \le 25$. Express your answer in interval notation.",
        r"For positive $x$ the inequality $x^2 \le 25$ means $x \le 5$. The left end is open because $x > 0$.",
    ),
    (
        r"(-\infty,-1) \cup (4,\infty)",
        "interval",
        "Intermediate Algebra",
        r"Solve the inequality $x^2 - 3x - 4 > 0$. Express your answer in interval notation.",
        r"The quadratic factors as $(x - 4)(x + 1)$. It is positive outside its two roots.",
    ),
    # set
    (
        r"\{1, 2, 3\}",
        "set",
        "Number Theory",
        r"Find the set of all positive integers $n$ such that $n^2 < 10$.",
        r"We have $3^2 = 9 < 10$ but $4^2 = 16 > 10$. So $n$ runs over the positive integers up to $3$.",
    ),
    (
        "1, 2",
        "set",
        "Algebra",
        r"Find all solutions to $x^2 - 3x + 2 = 0$. Enter all the solutions, separated by commas.",
        r"The quadratic factors as $(x - 1)(x - 2) = 0$. Each factor gives one solution.",
    ),
    (
        "-3, 5",
        "set",
        "Algebra",
        r"Find all real numbers $x$ such that $x^2 - 2x - 15 = 0$. Enter all the solutions, separated by commas.",
        r"The quadratic factors as $(x + 3)(x - 5) = 0$. Each factor gives one solution.",
    ),
    (
        "0, 1",
        "set",
        "Algebra",
        r"Find all real numbers $x$ such that $x^2 = x$. Enter all the solutions, separated by commas.",
        r"Moving everything to one side gives $x(x - 1) = 0$. Each factor gives one solution.",
    ),
    # roots (the roots written out one by one where a solution would write 2 \pm \sqrt{3})
    (
        r"2+\sqrt{3}, 2-\sqrt{3}",
        "roots",
        "Algebra",
        r"Find the roots of $x^2 - 4x + 1 = 0$. Enter all the roots, separated by commas.",
        r"By the quadratic formula, $x = \frac{4 \pm \sqrt{16 - 4}}{2} = 2 \pm \sqrt{3}$.",
    ),
    (
        r"\frac{1+\sqrt{5}}{2}, \frac{1-\sqrt{5}}{2}",
        "roots",
        "Intermediate Algebra",
        r"Find all real numbers $x$ such that $x^2 = x + 1$. Enter all the solutions, separated by commas.",
        r"The equation is $x^2 - x - 1 = 0$. By the quadratic formula, $x = \frac{1 \pm \sqrt{5}}{2}$.",
    ),
    (
        "1+i, 1-i",
        "roots",
        "Intermediate Algebra",
        r"Find all complex numbers $z$ such that $z^2 - 2z + 2 = 0$. Enter all the solutions, separated by commas.",
        r"Completing the square gives $(z - 1)^2 = -1$. So $z - 1 = \pm i$.",
    ),
    # pm
    (
        r"\pm 4",
        "pm",
        "Algebra",
        r"Find all values of $k$ for which the equation $x^2 + kx + 4 = 0$ has exactly one real solution.",
        r"There is exactly one solution when the discriminant $k^2 - 16$ is zero. That happens when $k^2 = 16$.",
    ),
    (
        r"\pm \sqrt{2}",
        "pm",
        "Intermediate Algebra",
        r"Find all real numbers $x$ such that $x^4 - 4 = 0$.",
        r"We factor $x^4 - 4 = (x^2 - 2)(x^2 + 2)$. Only $x^2 = 2$ has real solutions.",
    ),
    (
        r"\pm 3",
        "pm",
        "Algebra",
        r"Find all real numbers $a$ such that $a^2 - 9 = 0$.",
        r"The equation factors as $(a - 3)(a + 3) = 0$. Its two solutions differ only in sign.",
    ),
    # degrees
    (
        r"90^\circ",
        "degrees",
        "Geometry",
        r"In triangle $ABC$, $AB = 3$, $BC = 4$ and $AC = 5$. What is the measure of angle $B$?",
        r"Since $3^2 + 4^2 = 5^2$, the triangle is a right triangle. The right angle is opposite the longest side $AC$.",
    ),
    (
        "30",
        "degrees",
        "Precalculus",
        r"Find the smallest positive angle $\theta,$ in degrees, such that $\sin \theta = \frac{1}{2}.$",
        r"The sine of an angle in a $30$-$60$-$90$ triangle is $\frac{1}{2}$ for the angle opposite the short leg. "
        r"That is the smallest such positive angle.",
    ),
    (
        r"45^\circ",
        "degrees",
        "Geometry",
        r"A right triangle has two legs of equal length. What is the measure of each of its acute angles?",
        r"The two acute angles are equal and add up to $90^\circ$. Each one is half of that.",
    ),
    (
        "120",
        "degrees",
        "Prealgebra",
        r"What is the measure, in degrees, of each interior angle of a regular hexagon?",
        r"The interior angles of a hexagon add up to $180(6 - 2) = 720$ degrees. There are six equal angles.",
    ),
    # percent
    (
        r"10\%",
        "percent",
        "Prealgebra",
        r"The price of a shirt drops from $\$50$ to $\$45$. By what percent did the price decrease?",
        r"The price fell by $\$5$. As a fraction of the original price this is $\frac{5}{50} = \frac{1}{10}$.",
    ),
    (
        r"25\%",
        "percent",
        "Prealgebra",
        r"What percent of $80$ is $20$?",
        r"We have $\frac{20}{80} = \frac{1}{4}$. One quarter is the percent we want.",
    ),
    (
        r"12.5\%",
        "percent",
        "Prealgebra",
        r"What percent of $64$ is $8$?",
        r"We have $\frac{8}{64} = \frac{1}{8}$. One eighth written as a percent is the answer.",
    ),
    # complex
    (
        "6 - 5i",
        "complex",
        "Algebra",
        r"Simplify $(4 - 2i) + (2 - 3i)$.",
        r"We add the real parts, $4 + 2$, and the imaginary parts, $-2i - 3i$.",
    ),
    (
        "3+4i",
        "complex",
        "Intermediate Algebra",
        r"Compute $(2 + i)^2$.",
        r"We expand $(2 + i)^2 = 4 + 4i + i^2$. Since $i^2 = -1$, the real part is $4 - 1$.",
    ),
    (
        "-2i",
        "complex",
        "Intermediate Algebra",
        r"Compute $(1 - i)^2$.",
        r"We expand $(1 - i)^2 = 1 - 2i + i^2$. Since $i^2 = -1$, the real parts cancel.",
    ),
    (
        r"\frac{1}{2} + \frac{1}{2}i",
        "complex",
        "Algebra",
        r"Simplify $\frac{1}{1 - i}$. Express your answer in the form $a + bi$.",
        r"Multiplying the numerator and the denominator by $1 + i$ gives $\frac{1 + i}{1 - i^2} = \frac{1 + i}{2}$.",
    ),
    # base
    (
        "52_8",
        "base",
        "Number Theory",
        r"Convert $42_{10}$ to base $8$.",
        r"We have $42 = 5 \cdot 8 + 2$. So the base-$8$ digits are $5$ and then $2$.",
    ),
    (
        "1011_2",
        "base",
        "Number Theory",
        r"Express $11_{10}$ in base $2$.",
        r"We write $11 = 8 + 2 + 1 = 1 \cdot 2^3 + 0 \cdot 2^2 + 1 \cdot 2^1 + 1 \cdot 2^0$.",
    ),
    (
        "4210_5",
        "base",
        "Number Theory",
        r"Convert $555_{10}$ to base $5$.",
        r"We have $555 = 4 \cdot 125 + 2 \cdot 25 + 1 \cdot 5 + 0$. Reading off the coefficients gives the digits.",
    ),
    # matrix
    (
        r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}",
        "matrix",
        "Precalculus",
        r"Find the matrix $\mathbf{M}$ such that $\mathbf{M} - \begin{pmatrix} 1 & 1 \\ 1 & 1 \end{pmatrix} = "
        r"\begin{pmatrix} 0 & 1 \\ 2 & 3 \end{pmatrix}.$",
        r"Adding $\begin{pmatrix} 1 & 1 \\ 1 & 1 \end{pmatrix}$ to both sides isolates $\mathbf{M}$. "
        r"We add entry by entry.",
    ),
    (
        r"\begin{pmatrix} 2 \\ -1 \end{pmatrix}",
        "matrix",
        "Precalculus",
        r"Compute $\begin{pmatrix} 3 \\ 1 \end{pmatrix} - \begin{pmatrix} 1 \\ 2 \end{pmatrix}.$",
        r"We subtract entry by entry: $3 - 1$ on top and $1 - 2$ below.",
    ),
    (
        r"\begin{pmatrix} 0 & -1 \\ 1 & 0 \end{pmatrix}",
        "matrix",
        "Precalculus",
        r"Find the matrix that corresponds to rotating about the origin by an angle of $90^\circ$ counter-clockwise.",
        r"The rotation by $\theta$ has matrix $\begin{pmatrix} \cos \theta & -\sin \theta \\ \sin \theta & "
        r"\cos \theta \end{pmatrix}$. Here $\cos \theta = 0$ and $\sin \theta = 1$.",
    ),
    # choice_text
    (
        r"\text{(C)}",
        "choice_text",
        "Number Theory",
        r"Which of the following numbers is prime?"
        + _CHOICES
        + r"$\textbf{(A)}\ 21 \qquad \textbf{(B)}\ 27 \qquad \textbf{(C)}\ 29 \qquad \textbf{(D)}\ 33 \qquad "
        r"\textbf{(E)}\ 35$",
        r"We have $21 = 3 \cdot 7$, $27 = 3^3$, $33 = 3 \cdot 11$ and $35 = 5 \cdot 7$. "
        r"The remaining option, $29$, has no divisor other than $1$ and itself.",
    ),
    (
        r"\text{(A)}",
        "choice_text",
        "Prealgebra",
        r"Which of the following is the largest?"
        + _CHOICES
        + r"$\textbf{(A)}\ \frac{3}{4} \qquad \textbf{(B)}\ \frac{2}{3} \qquad \textbf{(C)}\ \frac{5}{8} \qquad "
        r"\textbf{(D)}\ \frac{1}{2} \qquad \textbf{(E)}\ \frac{3}{5}$",
        r"As decimals the options are $0.75$, $0.667$, $0.625$, $0.5$ and $0.6$. The first one is the largest.",
    ),
    (
        r"\text{(E)}",
        "choice_text",
        "Number Theory",
        r"Which of the following numbers is divisible by $9$?"
        + _CHOICES
        + r"$\textbf{(A)}\ 1001 \qquad \textbf{(B)}\ 1111 \qquad \textbf{(C)}\ 2020 \qquad \textbf{(D)}\ 3030 \qquad "
        r"\textbf{(E)}\ 4104$",
        r"A number is divisible by $9$ when its digit sum is. The digit sums are $2$, $4$, $4$, $6$ and $9$.",
    ),
    # expression
    (
        "x^2+1",
        "expression",
        "Algebra",
        r"Find $p(x)$ if $p(x) + (2x - 3) = x^2 + 2x - 2$.",
        r"Subtracting $2x - 3$ from both sides gives $p(x) = x^2 + 2x - 2 - 2x + 3$.",
    ),
    (
        "2x-3",
        "expression",
        "Intermediate Algebra",
        r"Find the quotient when $2x^2 + x - 6$ is divided by $x + 2$.",
        r"We check that $(x + 2)(2x - 3) = 2x^2 + x - 6$. So the division leaves no remainder.",
    ),
    (
        "3x^2-5x+2",
        "expression",
        "Algebra",
        r"Expand the product $(3x - 2)(x - 1)$.",
        r"Distributing gives $3x^2 - 3x - 2x + 2$. Combining like terms finishes the expansion.",
    ),
]

MATH_GOLDS: list[tuple[str, str]] = [(gold, shape) for gold, shape, *_ in _ENTRIES]


def golds_of(shape: str) -> list[str]:
    """The golds of one shape, in MATH_GOLDS order."""
    if shape not in SHAPES:
        raise ValueError(f"unknown shape {shape!r}; shapes are {SHAPES}")
    return [gold for gold, s in MATH_GOLDS if s == shape]


def solution_text(working: str, gold: str) -> str:
    """A MATH-style solution: the working, then the boxed gold."""
    return f"{working} The answer is $\\boxed{{{gold}}}$."


def _slug(subject: str) -> str:
    # MATH's ids spell subjects as folder names: "Counting & Probability" -> "counting_and_probability".
    return subject.lower().replace("&", "and").replace(" ", "_")


def math_rows(
    n: int | None = None, *, leak: bool = False, ids: str = "train", prompt_column: str = "problem"
) -> list[dict]:
    """One row per gold in MATH_GOLDS (cycled to n rows when n is given).

    Columns: prompt_column (the problem), solution, answer, subject, level, unique_id
    ("{ids}/{subject}/{i}.json", i the row's index). leak=True appends "\\n\\nSolution: " and the
    solution to the problem, so the answer can be read from the prompt.
    """
    count = len(_ENTRIES) if n is None else n
    rows = []
    for i in range(count):
        gold, _shape, subject, problem, working = _ENTRIES[i % len(_ENTRIES)]
        solution = solution_text(working, gold)
        rows.append(
            {
                prompt_column: f"{problem}\n\nSolution: {solution}" if leak else problem,
                "solution": solution,
                "answer": gold,
                "subject": subject,
                "level": "Level 3",
                "unique_id": f"{ids}/{_slug(subject)}/{i}.json",
            }
        )
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    """Write rows as JSON Lines and return the path."""
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path

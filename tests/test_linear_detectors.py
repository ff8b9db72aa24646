"""Every detector is linear in its input: safe on a 1 MB adversarial message.

How this is proved without a clock, in two parts:

1. **The regular expressions, by their structure.** A backtracking engine goes quadratic (or
   worse) only through an unbounded repeat: from each start position ``\\s*`` may scan the whole
   rest of a run of spaces. If every repeat in a pattern has a finite maximum, then from any start
   the engine explores a tree of paths whose size depends on the pattern alone, never on the text:
   a constant C. A scan of n characters then costs at most C × n. The first test walks the parse
   tree of every pattern in the detector modules (sensitive, identifiers, policy, router, instructions) and fails
   on any unbounded repeat.

2. **The Python around them, by counting.** Loops over matches can still be quadratic (the old
   overlap check compared each finding with every earlier one). ``sys.setprofile`` counts every
   Python-level call and generator step — a deterministic operation counter. Each detector runs on
   n and 2n characters of the same adversarial text; linear work means count(2n) <= 2 × count(n)
   plus a small constant, a quadratic loop would give about 4 ×.

Then each detector is fed 1 MB adversarial messages and must give the right answer.
"""
from __future__ import annotations

import re
import sys

import pytest

from v2_memory.governance import identifiers, policy, reply, restatement, revocation, router, scope
from v2_memory.text import instructions, sensitive, sensitive_labels, sensitive_shapes
from v2_memory.governance.identifiers import extract_identifiers
from v2_memory.governance.policy import not_embedded_reason
from v2_memory.governance.reply import reply_to
from v2_memory.governance.restatement import restated_clauses
from v2_memory.governance.revocation import detect_revocations
from v2_memory.governance.router import route
from v2_memory.governance.scope import spoken_scope
from v2_memory.text.instructions import find_instruction
from v2_memory.text.sensitive import find_sensitive

try:  # Python 3.11+
    import re._constants as sre_constants
    import re._parser as sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

DETECTORS = [find_sensitive, extract_identifiers, not_embedded_reason, route, detect_revocations, spoken_scope, find_instruction, reply_to, restated_clauses]
UNITS = [" ", "1", "1 ", "1.", ".", "-", "1-", "password ", "password: ", "密码是", "my PIN is now ", "order #", "ticket ",
         "room ", "Python 2.", "version ", "v1.", "ISO ", "a@", "a@b.cn ", "+86 ", "#1", "ok ", "哈", "eyJa.", "```x",
         "forget ", "don't store this: ", "stop reminding me ", "别再提醒", "把上一句删掉，", "right now ", "这轮",
         "ignore all previous ", "you are now ", "SYSTEM: ", "[admin ", "忽略之前的", "把你的", "anyone ", "x.io ",
         # label words, URL and header prefixes, phone and IBAN pieces (sensitive_labels, sensitive_shapes)
         "passport ", "account no. ", "phone is ", "卡号是", "身份证号", "手机 ", "0", "0 ", "(0", "(415) ", "555-",
         "DE89", "https://", "a://b:c@", "/hooks/", "?token=", "&", "Authorization: ", "AccountKey=", "npm_", "SSN for the "]


def _patterns(module) -> list[tuple[str, re.Pattern[str]]]:
    """Every compiled pattern a module holds at top level, alone or inside lists, tuples and dicts."""
    found = []
    for name, value in vars(module).items():
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, re.Pattern):
                found.append((f"{module.__name__}.{name}", item))
            elif isinstance(item, (list, tuple)):
                stack.extend(item)
            elif isinstance(item, dict):
                stack.extend(item.values())
    return found


def _unbounded(tree) -> list[str]:
    """Repeats with no maximum anywhere in a parsed pattern (inside groups, branches, look-arounds)."""
    out = []
    for op, av in tree:
        if op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            out += [str(av[2])[:60]] if av[1] == sre_constants.MAXREPEAT else []
            out += _unbounded(av[2])
        elif op == sre_constants.SUBPATTERN:
            out += _unbounded(av[-1])
        elif op == sre_constants.BRANCH:
            out += [u for branch in av[1] for u in _unbounded(branch)]
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            out += _unbounded(av[1])
    return out


def test_every_detector_pattern_has_only_bounded_repeats():
    modules = (sensitive, sensitive_labels, sensitive_shapes, identifiers, policy, router, revocation, scope, instructions, reply, restatement)
    patterns = [p for module in modules for p in _patterns(module)]
    assert len(patterns) >= 30  # the walk really found them
    offenders = {name: _unbounded(sre_parse.parse(p.pattern, p.flags)) for name, p in patterns}
    assert {name: found for name, found in offenders.items() if found} == {}


def _calls(detector, text: str) -> int:
    """Python-level work of one call: function calls and generator steps, counted by the profiler."""
    count = 0

    def profile(frame, event, arg):  # type: ignore[no-untyped-def]
        nonlocal count
        if event in ("call", "c_call"):
            count += 1
    sys.setprofile(profile)
    try:
        detector(text)
    finally:
        sys.setprofile(None)
    return count


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


@pytest.mark.parametrize("unit", UNITS)
def test_python_work_grows_linearly_with_the_input(unit):
    for detector in DETECTORS:
        small, large = (_calls(detector, _repeat(unit, size)) for size in (1 << 14, 1 << 15))
        assert large <= 2 * small + 64, (detector.__name__, small, large)


ONE_MB = 1 << 20


@pytest.mark.slow  # 1 MB inputs
@pytest.mark.parametrize("unit, expected_kinds", [
    (" ", set()), ("1 ", set()), ("password: ", {"secret"}), ("a@b.cn ", {"email"}),
    ("1", set()), ("1-", set()), ("0", set()), ("phone is ", set()), ("passport 1 ", set()), ("卡号是", set()),
    ("SSN for the ", set()), ("https://", set()), ("https://a:", set()), ("Authorization: ", {"secret"}),
    ("/hooks/", set()), ("?token=&", {"secret"}),
    ("passport no. X7723190 ", {"id_number"}), ("redis://:pw123456@h ", {"secret"}), ("(646) 555-0143 ", {"phone"}),
])
def test_one_megabyte_adversarial_messages(unit, expected_kinds):
    text = _repeat(unit, ONE_MB)
    assert {f.kind for f in find_sensitive(text)} == expected_kinds
    assert route(text).kind in ("conversation", "semantic", "task", "exact")
    assert not_embedded_reason(text) in (None, "symbols_only", "filler")
    assert find_instruction(text) is None


def test_the_reading_of_a_message_is_bounded_by_its_prefix():
    """Governance reads a message once into clauses, and at most ``READ_LIMIT`` characters of it:
    the splitting patterns have bounded repeats (a run of spaces inside a correction once made one
    ``add`` take 43 s per 10 KB), and a 1 MB message costs what its prefix costs."""
    from v2_memory.text import segmenter
    from v2_memory.text.segmenter import READ_LIMIT, Meter, read_message

    for pattern in (segmenter._SENTENCE_END, segmenter._CLAUSE_END):
        assert _unbounded(sre_parse.parse(pattern.pattern, pattern.flags)) == [], pattern.pattern
    for text in ("不对，" + " " * 1_000_000 + "是周五", "actually," + " " * 1_000_000 + "Friday", "forget that " * 90_000,
                 "a" + "\u200b" * 1_000_000, "but " * 250_000):
        meter = Meter()
        clauses = read_message(text, meter)
        assert all(c.end <= READ_LIMIT for c in clauses)
        assert meter.chars <= 40 * READ_LIMIT, meter.chars  # every pattern together saw a few times the prefix

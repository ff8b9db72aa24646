"""The Porter stemmer (M. F. Porter, "An algorithm for suffix stripping", 1980), for English words.

``analyze`` folds the forms of a word onto one stem so that a question and a memory meet even when
they inflect or derive the word differently: "inspiration", "inspired" and "inspiring" all become
``inspir``; "connection" and "connected" ``connect``. The light plural/``-ing``/``-ed`` stripper it
replaces left "helpful" apart from "help" and "happiness" apart from "happy".

The algorithm sees a word as ``[C](VC)^m[V]`` — alternating runs of consonants and vowels — and
strips a suffix only while the stem left has a large enough *measure* ``m`` (its number of
vowel-consonant runs), in five steps:

    1  plurals and -ed/-ing       caresses → caress, ponies → poni, hopping → hop, agreed → agre
    2  double suffixes (m > 0)    relational → relate, sensibility → sensible, hopefulness → hopeful
    3  -ic-, -full, -ness (m > 0) triplicate → triplic, hopeful → hope, goodness → good
    4  -ant, -ence, -ment, ...    (m > 1) adjustment → adjust, revival → reviv
    5  a final -e, a double -ll   probate → probat, controll → control

    >>> [porter_stem(w) for w in ["connection", "connected", "inspiration", "inspiring", "happiness", "happy"]]
    ['connect', 'connect', 'inspir', 'inspir', 'happi', 'happi']

Each step is a table of (suffix, replacement, minimum measure) tried longest first; the first
suffix that matches ends the step, whether or not its condition held (Porter's rule). Every step
is a fixed number of passes over the word, so the whole is linear in its length; words of one or
two letters are returned as they are.
"""
from __future__ import annotations

__all__ = ["porter_stem"]

_VOWELS = frozenset("aeiou")

# Step 2 and 3: (suffix, replacement), applied when the stem before the suffix has measure > 0.
_STEP2 = (
    ("ational", "ate"), ("tional", "tion"), ("enci", "ence"), ("anci", "ance"), ("izer", "ize"), ("bli", "ble"),
    ("alli", "al"), ("entli", "ent"), ("eli", "e"), ("ousli", "ous"), ("ization", "ize"), ("ation", "ate"),
    ("ator", "ate"), ("alism", "al"), ("iveness", "ive"), ("fulness", "ful"), ("ousness", "ous"), ("aliti", "al"),
    ("iviti", "ive"), ("biliti", "ble"), ("logi", "log"),
)
_STEP3 = (("icate", "ic"), ("ative", ""), ("alize", "al"), ("iciti", "ic"), ("ical", "ic"), ("ful", ""), ("ness", ""))
# Step 4: suffixes removed when the stem before them has measure > 1 ("ion" only after s or t).
_STEP4 = ("al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent", "ion", "ou", "ism",
          "ate", "iti", "ous", "ive", "ize")
# Longest suffix first: of "ement", "ment" and "ent", the longest that matches is the one that counts.
_STEP2, _STEP3 = (tuple(sorted(table, key=lambda pair: -len(pair[0]))) for table in (_STEP2, _STEP3))
_STEP4 = tuple(sorted(_STEP4, key=len, reverse=True))


def _consonants(word: str) -> list[bool]:
    """Per letter: is it a consonant? Not a, e, i, o, u; and "y" only after a vowel ("toy", not "happy").

    One pass, left to right (a "y" depends on the letter before it): linear however long the word.
    """
    flags: list[bool] = []
    for i, letter in enumerate(word):
        flags.append(letter not in _VOWELS and (letter != "y" or i == 0 or not flags[i - 1]))
    return flags


def _measure(stem: str) -> int:
    """``m`` in ``[C](VC)^m[V]``: how many times a vowel run is followed by a consonant run."""
    m, previous_vowel = 0, False
    for consonant in _consonants(stem):
        if consonant and previous_vowel:
            m += 1
        previous_vowel = not consonant
    return m


def _has_vowel(stem: str) -> bool:
    return not all(_consonants(stem))


def _ends_double_consonant(word: str) -> bool:
    return len(word) >= 2 and word[-1] == word[-2] and _consonants(word)[-1]


def _ends_cvc(word: str) -> bool:
    """Consonant-vowel-consonant at the end, the last not w, x or y ("hop", not "snow"): restore an e."""
    if len(word) < 3 or word[-1] in "wxy":
        return False
    flags = _consonants(word)
    return flags[-3] and not flags[-2] and flags[-1]


def _replace(word: str, table: tuple[tuple[str, str], ...], min_measure: int) -> str:
    """The first suffix of ``table`` that ends the word decides: replaced if its stem is long enough."""
    for suffix, replacement in table:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            return stem + replacement if _measure(stem) > min_measure else word
    return word


def _step1(word: str) -> str:
    """Plurals, then -eed / -ed / -ing, then a final y after a vowel-bearing stem becomes i."""
    if word.endswith("sses") or word.endswith("ies"):
        word = word[:-2]
    elif word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if word.endswith("eed"):
        if _measure(word[:-3]) > 0:
            word = word[:-1]
    else:
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                word = _after_ed_ing(word[: -len(suffix)])
                break
    if word.endswith("y") and _has_vowel(word[:-1]):
        word = word[:-1] + "i"
    return word


def _after_ed_ing(stem: str) -> str:
    """Tidy a stem left by -ed/-ing: conflat(ed) → conflate, hopp(ing) → hop, fil(ing) → file."""
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"
    if _ends_double_consonant(stem) and stem[-1] not in "lsz":
        return stem[:-1]
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"
    return stem


def _step4(word: str) -> str:
    for suffix in _STEP4:
        if word.endswith(suffix):
            stem = word[: -len(suffix)]
            if suffix == "ion" and not stem.endswith(("s", "t")):
                return word
            return stem if _measure(stem) > 1 else word
    return word


def _step5(word: str) -> str:
    """Drop a final e (measure > 1, or 1 and not after c-v-c); controll → control."""
    if word.endswith("e"):
        stem = word[:-1]
        m = _measure(stem)
        if m > 1 or (m == 1 and not _ends_cvc(stem)):
            word = stem
    if word.endswith("ll") and _measure(word) > 1:
        word = word[:-1]
    return word


def porter_stem(word: str) -> str:
    """The Porter stem of one lowercase English word (see the module docstring for the steps)."""
    if len(word) <= 2:
        return word
    word = _step1(word)
    word = _replace(word, _STEP2, 0)
    word = _replace(word, _STEP3, 0)
    return _step5(_step4(word))

"""The Porter stemmer against the examples of Porter's 1980 paper, and its cost."""
from __future__ import annotations

import pytest

from v2_memory.text import stemmer
from v2_memory.text.stemmer import porter_stem

# (word, stem) from the paper's description of each step.
PAPER = {
    "caresses": "caress", "ponies": "poni", "ties": "ti", "caress": "caress", "cats": "cat",  # 1a
    "feed": "feed", "agreed": "agre", "plastered": "plaster", "bled": "bled", "motoring": "motor", "sing": "sing",
    "conflated": "conflat", "troubled": "troubl", "sized": "size", "hopping": "hop", "tanned": "tan",  # 1b
    "falling": "fall", "hissing": "hiss", "fizzed": "fizz", "failing": "fail", "filing": "file",
    "happy": "happi", "sky": "sky",  # 1c
    "relational": "relat", "conditional": "condit", "rational": "ration", "digitizer": "digit",  # 2 (then 4, 5)
    "vietnamization": "vietnam", "predication": "predic", "operator": "oper", "feudalism": "feudal",
    "decisiveness": "decis", "hopefulness": "hope", "callousness": "callous", "sensibiliti": "sensibl",
    "triplicate": "triplic", "formative": "form", "formalize": "formal", "electrical": "electr",  # 3
    "hopeful": "hope", "goodness": "good",
    "revival": "reviv", "allowance": "allow", "inference": "infer", "airliner": "airlin",  # 4
    "adjustable": "adjust", "defensible": "defens", "irritant": "irrit", "replacement": "replac",
    "adjustment": "adjust", "dependent": "depend", "adoption": "adopt", "communism": "commun",
    "activate": "activ", "homologous": "homolog", "effective": "effect", "bowdlerize": "bowdler",
    "probate": "probat", "rate": "rate", "cease": "ceas", "controll": "control", "roll": "roll",  # 5
    "generalizations": "gener", "oscillators": "oscil",
}


@pytest.mark.parametrize("word, expected", sorted(PAPER.items()))
def test_the_papers_examples(word, expected):
    assert porter_stem(word) == expected


def test_y_is_a_vowel_after_a_consonant_and_a_consonant_after_a_vowel():
    assert porter_stem("toy") == "toi" and porter_stem("syzygy") == "syzygi"
    assert porter_stem("playing") == "plai" and porter_stem("plays") == "plai"


def test_work_is_a_fixed_number_of_passes_whatever_the_word(monkeypatch):
    """Each step looks at the word a bounded number of times (no recursion along a run of "y"s)."""
    calls = []
    real = stemmer._consonants
    monkeypatch.setattr(stemmer, "_consonants", lambda word: calls.append(len(word)) or real(word))
    for word in ["y" * 5000, "ab" * 3000 + "ational", "hopefulness" * 400, "e" * 4000 + "ing"]:
        calls.clear()
        porter_stem(word)
        assert len(calls) <= 20 and sum(calls) <= 20 * len(word)

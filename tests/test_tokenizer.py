"""tokenize and cosine_similarity, worked by hand."""
import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from v2_memory import cosine_similarity, tokenize
from v2_memory.text.tokenizer import token_count


def test_design_example():
    assert tokenize("记忆污染 阈值 Agent") == ["记忆污染", "阈值", "agent", "记忆", "忆污", "污染", "阈值"]


def test_separators_become_spaces_other_punctuation_stays():
    # "，" "。" "：" "/" split words; "?" and "！" stay attached to their word.
    assert tokenize("a，b。c：d/e f? g！") == ["a", "b", "c", "d", "e", "f?", "g！"]


def test_bigrams_come_from_each_cjk_run_of_the_original_text():
    # Two runs: 你好 (one bigram) and 世界和平 (three); the single 我 gives none.
    assert tokenize("你好 world 世界和平 我") == ["你好", "world", "世界和平", "我", "你好", "世界", "界和", "和平"]


def test_tokenize_rejects_non_strings():
    with pytest.raises(TypeError):
        tokenize(None)


def test_cosine_worked_example():
    """q = 记忆污染 阈值 Agent: counts 阈值 2, five others 1 -> |q| = 3.
    d = 请记录第二篇要讨论记忆污染。: word + 12 bigrams, all distinct -> |d| = sqrt(13).
    shared: 记忆, 忆污, 污染 -> dot 3.  cos = 3 / (3 sqrt 13) = 0.2774."""
    score = cosine_similarity("记忆污染 阈值 Agent", "请记录第二篇要讨论记忆污染。")
    assert score == pytest.approx(1 / math.sqrt(13))
    assert round(score, 3) == 0.277


def test_cosine_empty_side_is_zero_and_inputs_can_be_tokens():
    assert cosine_similarity("", "abc") == 0.0
    assert cosine_similarity(["a", "a", "b"], {"a": 2, "b": 1}) == pytest.approx(1.0)


# The separators are replaced one by one (faster than str.translate on long text): same tokens,
# and token_count agrees with len(tokenize) on any text.
_TOKEN_TEXT = st.text(alphabet=st.sampled_from(list("，。：/ \n\tAbc记忆污染治理 agent？,.:") + ["\u4e00", "\u9fff", "Ａ", "İ"]), max_size=60)


@given(_TOKEN_TEXT)
def test_tokenize_splits_on_exactly_the_articles_four_separators(text):
    reference = text.lower().translate(str.maketrans({"，": " ", "。": " ", "：": " ", "/": " "})).split()
    reference += [run[i:i + 2] for run in re.findall(r"[\u4e00-\u9fff]+", text) for i in range(len(run) - 1)]
    assert tokenize(text) == reference
    assert token_count(text) == len(reference)

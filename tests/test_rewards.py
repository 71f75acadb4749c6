"""Built-in reward components by hand: plain and conversational completions, TRL's kwargs, None handling, option checks, gaming."""
import math
import random
from types import SimpleNamespace

import pytest
from hypothesis import given, settings, strategies as st

from agentforge.families import NAMES, get_family
from agentforge.rewards import (BUILTINS, REQUIRED, choice_match, combine, completion_text, contains_answer, exact_match,
                                first_number, format_regex, length_penalty, make_reward, numeric_match, risky_regex)
from agentforge.schema import RewardEntry
from agentforge.tasks import dev_split


def conv(text): return [{'role': 'assistant', 'content': text}]


def call(fn, completions, answers, **opts):
    return fn(prompts=['q'] * len(completions), completions=completions, answer=answers, **opts)


# ---------------------------------------------------------------- completions
def test_completion_text():
    assert completion_text('x') == 'x'
    assert completion_text([{'role': 'user', 'content': 'u'}, {'role': 'assistant', 'content': 'a1'},
                            {'role': 'assistant', 'content': 'a2'}]) == 'a2'
    assert completion_text(conv([{'type': 'text', 'text': 'He'}, {'type': 'image'}, {'type': 'text', 'text': 'llo'}])) == 'Hello'
    assert completion_text([{'role': 'user', 'content': 'u'}]) == ''
    assert completion_text(None) == '' and completion_text(conv(None)) == '' and completion_text([1, 'x']) == ''


# ---------------------------------------------------------------- values by hand
def test_exact_match():
    cs = ['Mia', ' mia. ', 'MIA', 'Mia Lee', '<think>Leo?</think>\nMia', conv('Mia'), conv('Leo'), '']
    assert call(exact_match, cs, ['Mia'] * 8) == [1, 1, 1, 0, 1, 1, 0, 0]
    assert call(exact_match, ['BADO', 'bado', ' BADO. ', conv('BADO')], ['BADO'] * 4, case_sensitive=True) == [1, 0, 1, 1]


def test_numeric_match():
    cs = ['42', 'It is 42.', '42.0', '1,000', '-7', '+7', '.5', '1.5e3', '41', 'forty-two', '', conv('42'), '3 + 4 = 7']
    ans = ['42', '42', '42', '1000', '-7', '7', '0.5', '1500', '42', '42', '42', '42', '7']
    assert call(numeric_match, cs, ans, strict=False) == [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0]  # the last: first number is 3
    assert call(numeric_match, cs, ans) == [1, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0, 1, 0]  # strict (default): the number alone
    assert call(numeric_match, ['42.', ' 42 ', '42 and so on', '42, 43'], ['42'] * 4) == [1, 1, 0, 0]
    assert call(numeric_match, ['41', '40', '44.5'], ['42'] * 3, tolerance=2) == [1, 1, 0]
    assert call(numeric_match, ['12'], ['twelve']) == [None]
    assert call(numeric_match, ['123456789012345678901'], ['123456789012345678900']) == [0.0]  # exact, no float rounding
    assert call(numeric_match, ['9' * 5000], ['9']) == [0.0]  # past the int-digit limit: unparsable, no crash
    assert first_number('<think>1</think> 2') == 2


def test_numeric_match_counts_unparsable():
    logged = []
    out = call(numeric_match, ['1', 'x', 'y', '2'], ['1', '1', '1', 'n/a'], log_metric=lambda k, v: logged.append((k, v)))
    assert out == [1.0, 0.0, 0.0, None] and logged == [('numeric_match/unparsable', 0.5)]


def test_choice_match():
    ch = ['Mia', 'Leo', 'New York', 'York']
    cs = ['Mia', 'I pick leo', 'Mia or Leo', 'New York', 'York', 'none', conv('Leo'), 'Mia, Mia']
    ans = ['Mia', 'Leo', 'Mia', 'New York', 'New York', 'Mia', 'Leo', 'Mia']
    assert call(choice_match, cs, ans, choices=ch) == [1, 1, 0, 1, 0, 0, 1, 1]
    assert call(choice_match, ['Mia'], ['Zoe'], choices=ch) == [None]
    assert call(choice_match, ['Miami'], ['Mia'], choices=ch) == [0.0]  # whole words only


def test_format_regex():
    cs = ['Mia', 'Mia Lee', 'Mia!', ' Leo\n', '<think>\n\n</think>\n\nAva', '', conv('Zoe')]
    assert call(format_regex, cs, [''] * 7, pattern='[A-Za-z ]+') == [1, 1, 0, 1, 1, 0, 1]
    assert call(format_regex, ['2024-01-31', '2024-1-31'], [''] * 2, pattern=r'\d{4}-\d{2}-\d{2}') == [1, 0]


def test_length_penalty():
    cs = ['x' * 10, 'x' * 8, 'x' * 12, 'x' * 20, 'x' * 25, '', '<think>abc</think>' + 'x' * 10]
    assert call(length_penalty, cs, [''] * 7, target=10) == pytest.approx([1, 0.8, 0.8, 0, 0, 0, 1])


def test_contains_answer():
    cs = ['The answer is Mia.', 'mia', 'Leo', 'It is 112', conv('so: MIA'), 'x']
    assert call(contains_answer, cs, ['Mia', 'Mia', 'Mia', '12', 'mia', '']) == [1, 1, 0, 1, 1, None]


# ---------------------------------------------------------------- TRL's call
TRL_KWARGS = dict(completion_ids=[[1, 2]] * 3, trainer_state=SimpleNamespace(global_step=3), log_extra=lambda c, v: None,
                  log_metric=lambda k, v: None, difficulty=[1, 2, 3], pattern=['.*'] * 3, tolerance=[99] * 3, strict=[False] * 3, choices=[[]] * 3)
OPTS = dict(exact_match={}, numeric_match={'tolerance': 0, 'strict': True}, choice_match={'choices': ['5', '6']},
            format_regex={'pattern': '5'}, length_penalty={'target': 1}, contains_answer={})


@pytest.mark.parametrize('use', sorted(BUILTINS))
def test_make_reward_with_trl_kwargs(use):
    fn = make_reward(RewardEntry(use, 1.0, OPTS[use]))
    assert fn.__name__ == use and fn.__qualname__ == use
    out = fn(prompts=['What is 2+3?'] * 3, completions=['5', conv('5'), '6'], answer=['5'] * 3, **TRL_KWARGS)
    want = [1.0, 1.0, 1.0] if use == 'length_penalty' else [1.0, 1.0, 0.0]  # '6' has the target length too
    assert out == want  # the dataset columns named like options (pattern, tolerance, choices) change nothing


def test_make_reward_refuses_custom_and_bad_options():
    with pytest.raises(ValueError, match='sandbox'): make_reward(RewardEntry('reward.py:mine', 1.0, {}))
    with pytest.raises(ValueError, match='pattern: required'): make_reward(RewardEntry('format_regex', 1.0, {}))
    with pytest.raises(ValueError, match='tolerance'): make_reward(RewardEntry('numeric_match', 1.0, {'tolerance': -1}))


def test_registry_shape():
    assert set(BUILTINS) >= {'exact_match', 'numeric_match', 'choice_match', 'format_regex', 'length_penalty', 'contains_answer'}
    for name, comp in BUILTINS.items():
        assert comp.fn.__name__ == name and comp.doc
        filled = {k: OPTS[name].get(k, v) for k, v in comp.options.items()}
        assert REQUIRED not in filled.values() and comp.check(filled) == []


@pytest.mark.parametrize('use,opts,bad', [
    ('exact_match', {'case_sensitive': 'yes'}, 'case_sensitive'), ('exact_match', {'case_sensitive': 1}, 'case_sensitive'),
    ('numeric_match', {'tolerance': -0.1}, 'tolerance'), ('numeric_match', {'tolerance': float('inf')}, 'tolerance'),
    ('numeric_match', {'tolerance': True}, 'tolerance'), ('numeric_match', {'strict': 'yes'}, 'strict'), ('numeric_match', {'tolerance': 10**400}, 'tolerance'), ('choice_match', {'choices': 'a,b'}, 'choices'),
    ('choice_match', {'choices': ['a']}, 'choices'), ('choice_match', {'choices': ['a', 'A ']}, 'choices'),
    ('choice_match', {'choices': ['a', '']}, 'choices'), ('choice_match', {'choices': [1, 2]}, 'choices'),
    ('format_regex', {'pattern': ''}, 'pattern'), ('format_regex', {'pattern': '[a-'}, 'pattern'),
    ('format_regex', {'pattern': 5}, 'pattern'), ('format_regex', {'pattern': r'(\w+\s?)+$'}, 'pattern'),
    ('format_regex', {'pattern': '(a|aa)*b'}, 'pattern'), ('length_penalty', {'target': 0}, 'target'),
    ('length_penalty', {'target': 2.5}, 'target'), ('length_penalty', {'target': 10**6}, 'target'),
])
def test_option_checkers(use, opts, bad):
    probs = BUILTINS[use].check({**BUILTINS[use].options, **opts})
    assert [k for k, _ in probs] == [bad] and all('expected' in m or 'backtrack' in m or 'compile' in m for _, m in probs)


@pytest.mark.parametrize('pattern,risky', [(r'[A-Za-z ]+', False), (r'\d+(\.\d+)?', False), (r'(ab)+', False),
                                           (r'(a+)+', True), (r'(a*)*b', True), (r'(?:x{2,})+', True), (r'(\w|\d)+', False), (r'(\w|\d\d)+', True),
                                           (r'(?=(a+)+)', True), (r'((a+))+', True)])
def test_risky_regex(pattern, risky):
    assert (risky_regex(pattern) is not None) == risky


# ---------------------------------------------------------------- combining like TRL
def trl_combine(values_per_fn, weights):
    "TRL 1.16 GRPOTrainer: None -> NaN, weighted nansum across functions, all-NaN rows stay NaN."
    import torch
    rpf = torch.tensor([[math.nan if v is None else v for v in col] for col in values_per_fn], dtype=torch.float32).T
    rewards = (rpf * torch.tensor(weights, dtype=torch.float32).unsqueeze(0)).nansum(dim=1)
    rewards[torch.isnan(rpf).all(dim=1)] = math.nan
    return [None if math.isnan(r) else r for r in rewards.tolist()]


def test_combine_by_hand():
    assert combine([[1.0, None, 0.0, None], [0.5, 1.0, 0.25, None]], [1.0, 0.2]) == [1.1, 0.2, 0.05, None]
    assert combine([[float('nan')], [1.0]], [1.0, 2.0]) == [2.0]  # TRL cannot tell NaN from None
    assert combine([], []) == []
    with pytest.raises(ValueError): combine([[1.0]], [1.0, 2.0])
    with pytest.raises(ValueError): combine([[1.0], [1.0, 2.0]], [1.0, 2.0])


def test_combine_mirrors_trl():
    rng = random.Random(0)
    for _ in range(50):
        k, n = rng.randint(1, 4), rng.randint(1, 16)
        vals = [[rng.choice([None, 0.0, 1.0, rng.random()]) for _ in range(n)] for _ in range(k)]
        ws = [rng.choice([0.1, 0.5, 1.0, 2.0]) for _ in range(k)]
        ours, trl = combine(vals, ws), trl_combine(vals, ws)
        assert [o is None for o in ours] == [t is None for t in trl]
        assert [o for o in ours if o is not None] == pytest.approx([t for t in trl if t is not None], abs=1e-6)


# ---------------------------------------------------------------- gaming, with numbers
def gold_vs(fn, items, gamer, **opts):
    ans = [i.answer for i in items]
    mean = lambda xs: sum(x for x in xs if x is not None) / len([x for x in xs if x is not None])
    return mean(call(fn, ans, ans, **opts)), mean(call(fn, [gamer(i) for i in items], ans, **opts))


def test_contains_answer_is_fooled_by_listing_candidates():
    hop = dev_split(get_family('multihop_lookup'))
    listing = lambda i: ' '.join(NAMES)
    assert gold_vs(contains_answer, hop, listing) == (1.0, 1.0)         # no discrimination at all
    assert gold_vs(exact_match, hop, listing) == (1.0, 0.0)             # exact match is not fooled
    ch = sorted(NAMES)
    assert gold_vs(choice_match, hop, listing, choices=ch) == (1.0, 0.0)  # naming many choices scores 0


def test_shape_only_components_pay_wrong_answers():
    hop, ari = dev_split(get_family('multihop_lookup')), dev_split(get_family('arithmetic'))
    assert gold_vs(format_regex, hop, lambda i: 'Ava', pattern='[A-Za-z ]+') == (1.0, 1.0)
    gold, gamed = gold_vs(length_penalty, hop, lambda i: 'xxx', target=3)
    assert gamed == 1.0 and gold < 1.0                                     # a constant beats gold
    assert gold_vs(numeric_match, ari, lambda i: str(int(i.answer) + 7), tolerance=10) == (1.0, 1.0)
    assert gold_vs(numeric_match, ari, lambda i: str(int(i.answer) + 7)) == (1.0, 0.0)


# ---------------------------------------------------------------- fuzz
COMPLETION = st.one_of(st.text(max_size=60), st.lists(st.dictionaries(st.sampled_from(['role', 'content']),
                                                                        st.one_of(st.text(max_size=20), st.none(), st.just('assistant'))),
                                                        max_size=3), st.none(), st.integers())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(COMPLETION, st.text(max_size=20)), min_size=1, max_size=5))
def test_components_never_crash_and_stay_in_range(pairs):
    cs, ans = [c for c, _ in pairs], [a for _, a in pairs]
    for use, opts in OPTS.items():
        out = make_reward(RewardEntry(use, 1.0, opts))(prompts=['q'] * len(cs), completions=cs, answer=ans)
        assert len(out) == len(cs) and all(v is None or (isinstance(v, float) and 0.0 <= v <= 1.0) for v in out)

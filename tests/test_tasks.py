"Determinism and disjointness of every family's generator and splits; canaries only in the hidden split."
import json
import pytest
from agentforge.tasks import (CANARY_PREFIX, Item, dev_split, generate, hidden_keys, hidden_path, hidden_split,
                              platform_secret, prompt_key)
from agentforge.families import FAMILIES, get_family

NAMES = sorted(FAMILIES)

def test_six_families_from_task_spec():
    assert NAMES == sorted(['multihop_lookup', 'arithmetic', 'unit_conversion', 'date_math', 'customer_support', 'string_ops'])

@pytest.mark.parametrize('name', NAMES)
def test_same_seed_same_items(name):
    fam = get_family(name)
    assert generate(fam, 50, seed=3) == generate(fam, 50, seed=3)
    assert [i.prompt for i in generate(fam, 50, seed=3)] != [i.prompt for i in generate(fam, 50, seed=4)]
    assert dev_split(fam) == dev_split(fam)

@pytest.mark.parametrize('name', NAMES)
def test_dev_hidden_disjoint_and_canaries(name, tmp_path):
    fam = get_family(name)
    dev, hid = dev_split(fam), hidden_split(fam, root=tmp_path)
    assert {prompt_key(i.prompt) for i in dev}.isdisjoint(prompt_key(i.prompt) for i in hid)
    assert all(i.canary is None for i in dev)
    assert all(i.canary and i.canary.startswith(CANARY_PREFIX) for i in hid)
    assert len({i.canary for i in hid}) == len(hid)                      # one canary per item
    dev_text = json.dumps([i.to_row() for i in dev])
    assert CANARY_PREFIX not in dev_text
    train = generate(fam, 200, seed=11, exclude=hidden_keys(fam, root=tmp_path))
    assert CANARY_PREFIX not in json.dumps([i.to_row() for i in train])
    assert {prompt_key(i.prompt) for i in train}.isdisjoint(prompt_key(i.prompt) for i in hid)

@pytest.mark.parametrize('name', NAMES)
def test_hidden_is_stable_and_private(name, tmp_path):
    fam = get_family(name)
    first = hidden_split(fam, root=tmp_path)
    raw = hidden_path(fam, tmp_path).read_bytes()
    assert hidden_split(fam, root=tmp_path) == first                     # read back, not regenerated differently
    assert hidden_path(fam, tmp_path).read_bytes() == raw
    assert hidden_path(fam, tmp_path).stat().st_mode & 0o077 == 0
    assert (tmp_path / 'secret.key').stat().st_mode & 0o077 == 0

def test_different_secret_different_exam(tmp_path):
    fam = get_family('arithmetic')
    a, b = hidden_split(fam, root=tmp_path / 'a'), hidden_split(fam, root=tmp_path / 'b')
    assert platform_secret(tmp_path / 'a') != platform_secret(tmp_path / 'b')
    assert [i.prompt for i in a] != [i.prompt for i in b]

@pytest.mark.parametrize('name', NAMES)
def test_reference_scorer_and_habit(name):
    import random
    fam = get_family(name)
    for it in dev_split(fam)[:32]:
        assert fam.score(it.answer, it.answer, **it.meta) == 1.0
        wrong = fam.distractor(random.Random(0), it.prompt, it.answer, it.meta)
        assert fam.score(wrong, it.answer, **it.meta) == 0.0
        assert Item.from_row(json.loads(json.dumps(it.to_row()))) == it

@pytest.mark.parametrize('name,params,msg', [
    ('arithmetic', dict(digits=[0]), 'accepted: [1, 2, 3, 4]'),
    ('arithmetic', dict(ops=['/']), 'accepted'),
    ('multihop_lookup', dict(hops=[4]), 'accepted: [1, 2, 3]'),
    ('date_math', dict(max_days='10'), 'integer from 1 to 400'),
    ('string_ops', dict(colour='red'), "unknown param(s) ['colour']"),
    ('customer_support', dict(products=['toaster']), 'accepted'),
])
def test_bad_params_name_value_and_accepted(name, params, msg):
    with pytest.raises(ValueError, match=None) as e: get_family(name).check_params(params)
    assert msg in str(e.value)

def test_unknown_family_and_impossible_request():
    with pytest.raises(ValueError, match='accepted'): get_family('poetry')
    with pytest.raises(ValueError, match='distinct items'):
        generate(get_family('string_ops'), 5000, seed=0, params=dict(ops=['last'], syllables=1))
    with pytest.raises(ValueError, match='positive integer'): generate(get_family('arithmetic'), 0, seed=0)

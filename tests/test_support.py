"Tests of the multi-turn customer-support family (`agentforge.support`)."
import random, time
import pytest
from agentforge.tasks import CANARY_PREFIX, DEV_SIZE, HIDDEN_SIZE, dev_split, generate, hidden_split, prompt_key, normalize
from agentforge.support import (CustomerSupport, GENERIC_FIX, KB, kb_node, kb_rows, kb_table, lazy_turns,
                                make_dialogue, next_turn, walk)

FAM = CustomerSupport()


def test_family_attributes():
    assert FAM.name == 'customer_support' and FAM.multi_turn and FAM.brief
    assert FAM.check_params(FAM.eval_params) == FAM.check_params()


def test_same_seed_same_items():
    assert generate(FAM, 50, seed=3) == generate(FAM, 50, seed=3)
    assert [i.prompt for i in generate(FAM, 50, seed=3)] != [i.prompt for i in generate(FAM, 50, seed=4)]
    assert dev_split(FAM) == dev_split(FAM)


def test_dev_hidden_disjoint_and_canaries(tmp_path):
    dev, hid = dev_split(FAM), hidden_split(FAM, root=tmp_path)
    assert len(dev) == DEV_SIZE == 64 and len(hid) == HIDDEN_SIZE == 1024
    assert not {prompt_key(i.prompt) for i in dev} & {prompt_key(i.prompt) for i in hid}
    assert all(i.canary and i.canary.startswith(CANARY_PREFIX) for i in hid)
    assert all(i.canary is None for i in dev)
    assert hidden_split(FAM, root=tmp_path) == hid  # read back from disk, meta survives JSON


def _roles_ok(prompt):
    roles = [m['role'] for m in prompt]
    return (roles[0] == roles[-1] == 'user' and len(roles) % 2 == 1
            and all(r == ('user' if k % 2 == 0 else 'assistant') for k, r in enumerate(roles))
            and all(isinstance(m['content'], str) and m['content'] for m in prompt))


@pytest.mark.parametrize('params', [None, dict(phrasing='plain'), dict(max_depth=1, kinds=['fix']),
                                    dict(products=['laptop'], kinds=['question'])])
def test_items_well_formed_and_in_kb(params):
    for i in generate(FAM, 200, seed=11, params=params):
        m = i.meta
        assert _roles_ok(i.prompt), i.prompt
        assert len(i.prompt) == 2 * m['depth'] + 1
        node = kb_node(m['product'], m['symptom'], m['path'])
        assert i.answer == next_turn(node) and len(i.answer) <= 45
        assert m['kind'] == ('question' if isinstance(node, dict) else 'fix')
        assert m['node'] == '/'.join([m['product'], m['symptom'], *m['path']])
        # the assistant turns in the prompt are the canonical questions along the path
        asked = [kb_node(m['product'], m['symptom'], m['path'][:k])['ask'] for k in range(m['depth'])]
        assert [t['content'] for t in i.prompt[1::2]] == asked
        if params:
            assert m['depth'] <= params.get('max_depth', 3)
            assert m['kind'] in params.get('kinds', ['question', 'fix'])
            assert m['product'] in params.get('products', list(KB))


def test_distractor_never_the_answer():
    rng = random.Random(0)
    items = generate(FAM, 300, seed=5)
    seen = set()
    for i in items:
        for _ in range(5):
            d = FAM.distractor(rng, i.prompt, i.answer, i.meta)
            assert normalize(d) != normalize(i.answer) and FAM.score(d, i.answer) == 0.0
            seen.add(d == GENERIC_FIX)
    assert seen == {True, False}  # both habits occur
    for r in kb_rows():
        assert r['turn'] not in lazy_turns(r['product'], r['symptom'], r['path'], r['turn'])


def test_conversation_matters():
    first = 'Hi, my ThermoSmart T3 is on but no heat. Thanks, Ana.'
    off = make_dialogue(random.Random(0), 'thermostat', 'no_heat', ['no'], first=first)
    on = make_dialogue(random.Random(0), 'thermostat', 'no_heat', ['yes'], first=first)
    deeper = make_dialogue(random.Random(0), 'thermostat', 'no_heat', ['yes', 'yes'], first=first)
    assert off[0][0] == on[0][0] == deeper[0][0]
    assert len({off[1], on[1], deeper[1]}) == 3
    # every question node's branches lead to different next turns
    for p in KB:
        for s, sym in KB[p]['symptoms'].items():
            for _, node in walk(sym['tree']):
                if isinstance(node, dict):
                    turns = [next_turn(b['next']) for b in node['branches'].values()]
                    assert len(set(turns)) == len(turns) >= 2


def test_knowledge_base_shape():
    rows = kb_rows()
    assert len(KB) == 5 and all(2 <= len(KB[p]['symptoms']) <= 4 for p in KB)
    assert len({r['turn'] for r in rows}) == len(rows)  # one wording per node
    assert GENERIC_FIX not in {r['turn'] for r in rows}
    for p in KB:
        for s in KB[p]['symptoms']:
            sub = [r for r in rows if r['product'] == p and r['symptom'] == s]
            assert 1 <= max(r['depth'] for r in sub) <= 3
            assert any(r['depth'] == 1 and r['kind'] == 'fix' for r in sub)  # any params combination is drawable
    assert kb_table().count('\n') == len(rows) + 1


def test_bad_params_name_accepted_values():
    with pytest.raises(ValueError, match=r"accepted: \['router', 'printer'"):
        generate(FAM, 4, seed=0, params=dict(products=['toaster']))
    with pytest.raises(ValueError, match='integer from 1 to 3'):
        generate(FAM, 4, seed=0, params=dict(max_depth=0))
    with pytest.raises(ValueError, match=r"accepted: \['plain', 'varied'\]"):
        generate(FAM, 4, seed=0, params=dict(phrasing='posh'))
    with pytest.raises(ValueError, match=r"accepted: \['question', 'fix'\]"):
        generate(FAM, 4, seed=0, params=dict(kinds=[]))
    with pytest.raises(ValueError, match=r"accepted: \['kinds', 'max_depth', 'phrasing', 'products'\]"):
        generate(FAM, 4, seed=0, params=dict(tone='rude'))


def test_many_training_items_fast_and_short():
    t = time.perf_counter()
    items = generate(FAM, 2000, seed=123)
    assert time.perf_counter() - t < 3
    assert len({prompt_key(i.prompt) for i in items}) == 2000
    assert len({i.meta['node'] for i in items}) == len(kb_rows())  # every node is reachable
    chars = [sum(len(m['content']) for m in i.prompt) for i in items]
    assert sum(chars) / len(chars) <= 300
    plain = generate(FAM, 2000, seed=123, params=dict(phrasing='plain', max_depth=1, products=['earbuds']))
    assert len(plain) == 2000

"""agentforge.cloning: a miniature behaviour-cloned base built for real (scripted episodes through the real probe,
a learned BPE tokenizer, a few imitation steps), committed with a manifest, found again without rebuilding,
rebuilt when corrupt; the (prompt, completion) pairs are exactly what the agent conditions on and samples."""
import dataclasses, json, math, shutil
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st
from agentforge.agents import TinyAgent, parse_tool_calls
from agentforge.cloning import (CloneRecipe, agent_base_dir, agent_tokenizer, build_agent_base, clone_pairs,
                                refused_as_other_brief, scripted_episodes)
from agentforge.durable import verify_checkpoint

pytestmark = pytest.mark.usefixtures('one_thread')  # tests/conftest.py

MINI = CloneRecipe(episodes_per_family=2, families=('string_ops', 'arithmetic'), steps=4, batch=4, vocab_size=400)

@pytest.fixture(scope='module')
def built(tmp_path_factory):
    "(root, folder) of the miniature base, built once for this module."
    root = tmp_path_factory.mktemp('agent-bases')
    return root, build_agent_base(MINI, progress=False, root=root)

@pytest.fixture(scope='module')
def episodes(tmp_path_factory):
    "The recipe's scripted episodes, played again (they are deterministic)."
    return scripted_episodes(MINI, tmp_path_factory.mktemp('episodes'))

@pytest.fixture(scope='module')
def agent(built): return TinyAgent(built[1])

def _mtimes(folder) -> dict: return {p.relative_to(folder).as_posix(): p.stat().st_mtime_ns for p in folder.rglob('*')}

def test_base_is_committed_verified_and_described(built):
    root, folder = built
    assert folder == agent_base_dir(MINI, root) / 'step-0' == root / MINI.key() / 'step-0'
    m = verify_checkpoint(folder)
    assert m['meta'] == dict(key=MINI.key()) and m['step'] == 0
    assert {'model.safetensors', 'config.json', 'tokenizer.json', 'clone.json'} <= set(m['files'])
    stats = json.loads((folder / 'clone.json').read_text())
    assert len(stats['losses']) == 4 and stats['episodes'] == 4 and stats['pairs'] >= 4
    assert stats['recipe'] == json.loads(json.dumps(dataclasses.asdict(MINI)))
    assert (stats['first_loss'], stats['last_loss']) == (stats['losses'][0], stats['losses'][-1])
    assert all(math.isfinite(x) for x in stats['losses'])
    vocab = json.loads((folder / 'config.json').read_text())['vocab_size']
    assert abs(stats['losses'][0] - math.log(vocab)) < 1.0   # a fresh model starts near uniform over the vocabulary
    assert [p.name for p in (root / MINI.key()).iterdir()] == ['step-0']   # no temp folder left behind

def test_second_build_finds_the_same_folder(built):
    root, folder = built
    before = _mtimes(folder)
    assert build_agent_base(MINI, progress=False, root=root) == folder
    assert _mtimes(folder) == before and [p.name for p in (root / MINI.key()).iterdir()] == ['step-0']
    assert agent_base_dir(CloneRecipe(**{**dataclasses.asdict(MINI), 'steps': 5}), root) != agent_base_dir(MINI, root)  # the recipe names it

def test_corrupt_base_is_rebuilt(built, tmp_path):
    root, folder = built
    shutil.copytree(root, tmp_path / 'copy')
    weights = tmp_path / 'copy' / MINI.key() / 'step-0' / 'model.safetensors'
    data = bytearray(weights.read_bytes()); data[-8:] = bytes(b ^ 0xFF for b in data[-8:])
    weights.write_bytes(bytes(data))   # same size, different bytes: only the hash can tell
    again = build_agent_base(MINI, progress=False, root=tmp_path / 'copy')
    assert again == weights.parent
    verify_checkpoint(again)
    assert weights.read_bytes() != bytes(data)
    assert json.loads((again / 'clone.json').read_text())['losses'] == json.loads((folder / 'clone.json').read_text())['losses']

def test_the_shipped_base_is_the_default_recipes_and_verifies():
    "A change to the recipe, the scripted agents or the system prompt without a new shipped base is caught here."
    from agentforge.cloning import BUNDLED
    shipped = [p.name for p in BUNDLED.iterdir() if p.is_dir()]
    assert shipped == [CloneRecipe().key()], (
        f'shipped {shipped}, default recipe {CloneRecipe().key()}: build it (python -c "from agentforge.cloning import '
        f'build_agent_base; print(build_agent_base())"), copy that step-0 folder to {BUNDLED}/<key>/, remove the old one')
    m = verify_checkpoint(BUNDLED / shipped[0])
    assert m['meta'] == dict(key=shipped[0]) and 'model.safetensors' in m['files']
    assert json.loads((BUNDLED / shipped[0] / 'clone.json').read_text())['recipe']['steps'] == CloneRecipe().steps

def test_a_fresh_cache_copies_a_shipped_base_and_refuses_a_damaged_one(built, tmp_path, monkeypatch):
    "The shipped base is copied with no cloning run; one whose hashes fail is ignored and the recipe cloned."
    import agentforge.cloning as cl
    root, folder = built
    shipped = tmp_path / 'bundled'
    shutil.copytree(folder, shipped / MINI.key())                              # what a maintainer ships
    monkeypatch.setattr(cl, 'BUNDLED', shipped)
    runs, build = [], cl._build_agent_base                                     # counts cloning runs, calls through
    monkeypatch.setattr(cl, '_build_agent_base', lambda *a, **kw: runs.append(1) or build(*a, **kw))
    got = build_agent_base(MINI, progress=False, root=tmp_path / 'newcomer')
    assert runs == [] and got == tmp_path / 'newcomer' / MINI.key() / 'step-0'
    assert verify_checkpoint(got) == verify_checkpoint(folder)                 # the same manifest, byte for byte
    weights = shipped / MINI.key() / 'model.safetensors'
    weights.write_bytes(weights.read_bytes()[:-10])                            # a damaged copy of the package
    again = build_agent_base(MINI, progress=False, root=tmp_path / 'other')
    assert runs == [1] and verify_checkpoint(again)

def test_clone_pairs_are_what_the_agent_renders_and_samples(episodes, agent):
    eos, n = agent.tok.eos_token_id, 0
    assert {r.brief for r in episodes} == set(MINI.families)
    for rec in episodes:
        turns = [i for i, m in enumerate(rec.messages) if m['role'] == 'assistant']
        pairs = clone_pairs([rec], agent.tok, max_len=10**9)
        assert len(pairs) == len(turns) == len(rec.turns) >= 1
        for k, (i, (prompt, comp)) in enumerate(zip(turns, pairs)):
            assert prompt == agent.render(rec.messages[:i])   # exactly what LMAgent conditions on at that turn
            assert comp[-1] == eos and comp.count(eos) == 1   # one <|im_end|>, last: where sampling stops
            calls, err = parse_tool_calls(agent.tok.decode(comp[:-1], skip_special_tokens=False))
            assert err is None and [dict(name=c.name, arguments=c.arguments) for c in calls] == rec.turns[k]['tool_calls']
            n += 1
    assert n >= len(episodes)

def test_recovery_pairs_show_a_broken_call_and_train_only_the_call_after_it(episodes, agent):
    "recoveries=1: one more pair per episode, whose prompt holds a broken first call and the platform's answer."
    from agentforge.episode import unusable_message
    tok, eos, n = agent.tok, agent.tok.eos_token_id, 0
    for k, rec in enumerate(episodes):
        plain = clone_pairs([rec], tok, max_len=10**9)
        more = clone_pairs([rec], tok, max_len=10**9, recoveries=1.0, seed=k)
        assert more[:len(plain)] == plain and len(more) - len(plain) <= 1
        if len(more) == len(plain): continue           # the cut happened to leave a parsable call: no pair
        targets = [i for i, m in enumerate(rec.messages) if m['role'] == 'assistant' and not refused_as_other_brief(rec.messages, i)]
        first = next(i for i in targets if rec.messages[i].get('tool_calls'))
        turn = targets.index(first)
        (p, c), (p0, c0) = more[-1], plain[turn]
        assert c == c0 and c[-1] == eos                  # the target is the call as the scripted agent wrote it
        assert p[:len(p0) - 3] == p0[:len(p0) - 3]       # the same conversation up to the slipped turn
        text = tok.decode(p, skip_special_tokens=False)
        err = text.split('Your tool call could not be used: ')[1].split('. Call a tool as')[0]
        assert err.startswith('tool call 1 is not valid JSON')
        assert p == agent.render(rec.messages[:first] + [dict(role='assistant', content=''), unusable_message(err)])
        n += 1
    assert n >= len(episodes) // 2

def test_a_slip_is_context_and_the_fix_after_the_probe_refusal_is_the_target(agent, tmp_path):
    "slips=1: every first spec answers another brief; the probe refuses it; only the spec written after is trained."
    recs = scripted_episodes(dataclasses.replace(MINI, slips=1.0, episodes_per_family=1), tmp_path)
    for rec in recs:
        assistant = [i for i, m in enumerate(rec.messages) if m['role'] == 'assistant']
        if not rec.messages[assistant[0]].get('tool_calls'): continue   # looked around or gave up first: no slip
        assert [p['reason'] for p in rec.probe_reports] == ['BRIEF_MISMATCH', None] and rec.validated_on == 2
        assert refused_as_other_brief(rec.messages, assistant[0]) and not refused_as_other_brief(rec.messages, assistant[1])
        pairs = clone_pairs([rec], agent.tok, max_len=10**9)
        assert len(pairs) == len(assistant) - 1                        # the slip is never a target
        prompt, fix = (agent.tok.decode(x, skip_special_tokens=False) for x in pairs[-1])
        assert 'BRIEF_MISMATCH' in prompt and f'brief: {rec.brief}' in fix.replace('\\n', '\n')
        slip = rec.messages[assistant[0]]['tool_calls'][0]['function']['arguments']['content']
        assert f'brief: {rec.brief}\n' not in slip

def test_pairs_end_with_eos_under_the_learned_tokenizer(episodes):
    tok = agent_tokenizer(episodes, MINI.vocab_size)
    pairs = clone_pairs(episodes, tok, MINI.max_len)
    assert pairs and all(c[-1] == tok.eos_token_id for _, c in pairs)
    assert all(len(p) + len(c) <= MINI.max_len for p, c in pairs)
    assert len(clone_pairs(episodes, tok, max_len=min(len(p) + len(c) for p, c in pairs) - 1)) == 0   # too long: left out

SAMPLES = ['', 'spec_version: 1\nname: x\n', 'π ünïcødé 🙂 \t\r\n  two  spaces ', 'a<tool_call>b</tool_call>c<|im_end|>',
           '<think>\n\n</think>\n\n<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call><|im_end|>\n', '\x00\x7f\u200b']

@pytest.mark.parametrize('text', SAMPLES)
def test_agent_tokenizer_round_trips(agent, text):
    ids = agent.tok(text, add_special_tokens=False)['input_ids']
    assert agent.tok.decode(ids, skip_special_tokens=False) == text

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=120))
def test_agent_tokenizer_round_trips_any_text(agent, text):
    ids = agent.tok(text, add_special_tokens=False)['input_ids']
    assert agent.tok.decode(ids, skip_special_tokens=False) == text

def test_control_tokens_are_single_tokens(agent, episodes):
    tok, fresh = agent.tok, agent_tokenizer(episodes, MINI.vocab_size)
    assert len(tok) == len(fresh) and tok.get_vocab() == fresh.get_vocab()   # saved and loaded unchanged
    for t in ('<tool_call>', '</tool_call>', '<|im_end|>', '<|im_start|>', '<think>'):
        tid = tok.convert_tokens_to_ids(t)
        assert tok(t, add_special_tokens=False)['input_ids'] == [tid]
        assert tid in tok(f'x{t}y', add_special_tokens=False)['input_ids']
    assert tok.eos_token == '<|im_end|>'
    assert len(tok) > 256 + 9   # merges were learned beyond the bytes and the control tokens


def test_give_ups_can_be_left_out_of_the_targets(episodes, agent):
    "CloneRecipe.give_ups=False: a turn that calls no tool (the scripted agent giving up) is never a target; every other "
    "turn still is. At the value it had before a field existed, a recipe keeps the key it had then (no rebuild)."
    from agentforge.agents import Turn, assistant_message
    rec = dataclasses.replace(episodes[0], messages=episodes[0].messages[:2] + [
        assistant_message(Turn('I cannot write this task.', [], 0), 0)])   # one made-up give-up after the brief
    tok = agent.tok
    kept = clone_pairs([rec] + episodes, tok, max_len=10**9)
    left = clone_pairs([rec] + episodes, tok, max_len=10**9, give_ups=False)
    gave_up = [pc for pc in kept if 'I cannot write this task.' in tok.decode(pc[1])]
    assert gave_up and [pc for pc in kept if pc not in gave_up] == left
    old = dataclasses.replace(MINI, joint=False)  # joint is the default now; False is what every recipe was before it
    assert dataclasses.replace(old, give_ups=False).key() != old.key() != MINI.key()
    import hashlib
    from agentforge import __version__
    from agentforge.agents import CHOICES, SCRIPTED_VERSION, write_spec
    from agentforge.episode import SYSTEM
    from agentforge.student import TRAINING_CODE
    before = {k: v for k, v in dataclasses.asdict(old).items() if k not in ('give_ups', 'joint')}  # before them
    sample = write_spec('arithmetic', {k: v[0] for k, v in CHOICES.items()})
    blob = json.dumps([before, SYSTEM, CHOICES, sample, SCRIPTED_VERSION, __version__, TRAINING_CODE])
    assert old.key() == hashlib.sha256(blob.encode()).hexdigest()[:16]

"""agentforge.agents: tool-call parsing, transcript messages, the scripted spec writer against the real probe, and the
LM agent's recorded ids and log-probs against a fresh forward pass (a real tiny Qwen3 with a real peft LoRA)."""
import json
from pathlib import Path
import pytest, torch, yaml
from agentforge import agents
from agentforge.agents import (CHOICES, HEURISTIC, KNOBS, LMAgent, ScriptedAgent, ToolCall, Turn, assistant_message,
                               parse_tool_calls, write_spec)
from agentforge.episode import brief_messages
from agentforge.families import FAMILIES
from agentforge.probe import validate
from agentforge.rows import example_doc

pytestmark = pytest.mark.usefixtures('one_thread')  # tests/conftest.py

SUBMIT = '<tool_call>\n{"name": "submit", "arguments": {}}\n</tool_call>'
WRITE = '<tool_call>{"name": "write_file", "arguments": {"path": "task.yaml", "content": "a: 1\\nb: \\"π\\""}}</tool_call>'

# ---------------------------------------------------------------- parse_tool_calls

def test_parse_single_and_double_calls():
    assert parse_tool_calls('<think>\n\n</think>\n\n' + SUBMIT) == ([ToolCall('submit', {})], None)
    calls, err = parse_tool_calls(f'I will write it.\n{WRITE}\n{SUBMIT}')
    assert err is None
    assert calls == [ToolCall('write_file', {'path': 'task.yaml', 'content': 'a: 1\nb: "π"'}), ToolCall('submit', {})]
    assert parse_tool_calls('<tool_call>{"name": "list_files"}</tool_call>') == ([ToolCall('list_files', {})], None)  # no arguments
    assert parse_tool_calls('no calls here') == ([], None)

def test_parse_invalid_json_names_the_call():
    calls, err = parse_tool_calls(SUBMIT + '<tool_call>{"name": "write_file", "arguments": {"path": </tool_call>')
    assert calls == [ToolCall('submit', {})]   # the good call is kept
    assert err.startswith('tool call 2 is not valid JSON (') and 'tool call 1' not in err
    calls, err = parse_tool_calls('<tool_call>{"name": "submit", "arguments": {}</tool_call>' + SUBMIT)
    assert calls == [ToolCall('submit', {})] and err.startswith('tool call 1 is not valid JSON')

def test_parse_unclosed_tag():
    calls, err = parse_tool_calls('<tool_call>{"name": "submit", "arguments": {}}')
    assert calls == [] and err == 'a <tool_call> is not closed by </tool_call>'
    calls, err = parse_tool_calls(SUBMIT + '\n<tool_call>{"name"')   # a good call, then one cut off
    assert calls == [ToolCall('submit', {})] and 'not closed' in err

@pytest.mark.parametrize('body', ['{"name": "submit", "arguments": [1, 2]}', '{"name": "submit", "arguments": "{}"}',
                                  '{"name": 7, "arguments": {}}', '["submit", {}]', '"submit"'])
def test_parse_rejects_non_object_arguments(body):
    calls, err = parse_tool_calls(f'<tool_call>{body}</tool_call>')
    assert calls == [] and err == 'tool call 1 must be {"name": str, "arguments": object}'

# ---------------------------------------------------------------- assistant_message

def test_assistant_message_strips_markup_and_numbers_ids():
    text = f'<think>\nplan: write then submit\n</think>\n\nWriting the spec.\n{WRITE}\n{SUBMIT}\n<tool_call>'
    calls, _ = parse_tool_calls(text)
    msg = assistant_message(Turn(text, calls, tokens=40), 3)
    assert msg['role'] == 'assistant' and msg['content'] == 'Writing the spec.'
    assert [c['id'] for c in msg['tool_calls']] == ['call_3_0', 'call_3_1']
    assert [(c['type'], c['function']['name']) for c in msg['tool_calls']] == [('function', 'write_file'), ('function', 'submit')]
    assert msg['tool_calls'][0]['function']['arguments'] == {'path': 'task.yaml', 'content': 'a: 1\nb: "π"'}
    assert assistant_message(Turn('<think>x</think> Just prose.', [], 5), 0) == dict(role='assistant', content='Just prose.')

# ---------------------------------------------------------------- write_spec against the real probe

# Four specs that together use every option of every knob once (the heuristic's own options included).
COVER = [{}, dict(reward='lenient', level=1, rows=64, max_steps=16, learning_rate='1.0e-5', num_generations=4, temperature=0.7,
                  completion_length='answer'),
         dict(level=3, max_steps=96, learning_rate='3.0e-3', num_generations=16, temperature=1.3, completion_length='double'),
         dict(reward='lenient', learning_rate='1.0e-4')]

def _probe(tmp:Path, family:str, choices:dict):
    tmp.mkdir(parents=True); (tmp / 'task.yaml').write_text(write_spec(family, choices))
    return validate(tmp, brief=family, saturation=False)

def test_cover_uses_every_option():
    assert {k: {c.get(k, HEURISTIC[k]) for c in COVER} for k in KNOBS} == {k: set(v) for k, v in KNOBS.items()}
    assert set(CHOICES) <= set(KNOBS) and all(set(CHOICES[k]) <= set(KNOBS[k]) for k in CHOICES)

@pytest.mark.parametrize('family', sorted(FAMILIES))
def test_every_option_of_every_knob_validates(tmp_path, family):
    """No option exists only to fail the probe (issue 11): every gate but saturation passes on every family.
    Saturation depends on the student itself: on arithmetic, level-3 data is at its edge (the untrained student
    passes 3% of 64 samples where the gate asks for 2%), and a fresh machine's student once fell below it."""
    for i, c in enumerate(COVER):
        r = _probe(tmp_path / str(i), family, c)
        assert r.validated and r.not_checked == ['saturation'], (c, r.reason, r.failure())

def test_write_spec_is_the_family_template():
    doc = yaml.safe_load(write_spec('date_math', HEURISTIC))
    ref = example_doc('date_math')
    assert (doc['brief'], doc['student'], doc['data']['generate']) == ('date_math', 'tiny-student', dict(n=256, seed=7, level=2))
    assert 'max_completion_length' not in doc['grpo']  # the family's, not a choice the agent samples (lesson 04b)
    assert doc['rewards'] == ref['rewards'] and doc['grpo']['temperature'] == 1.0
    lenient = yaml.safe_load(write_spec('date_math', dict(HEURISTIC, reward='lenient')))['rewards']
    assert lenient == [dict(r, weight=r['weight'] / 2) for r in ref['rewards']] + [dict(use='contains_answer', weight=0.5)]

def test_write_spec_levels_resolve_to_the_family_level_params(tmp_path):
    from agentforge.schema import load_spec
    for lv in (1, 2, 3):
        d = tmp_path / str(lv); d.mkdir(); (d / 'task.yaml').write_text(write_spec('arithmetic', dict(HEURISTIC, level=lv)))
        from agentforge.families import get_family
        assert load_spec(d).data['generate']['params'] == get_family('arithmetic').level_params(lv)
    assert get_family('arithmetic').level_params(2) == get_family('arithmetic').check_params(get_family('arithmetic').eval_params)

@pytest.mark.parametrize('family', sorted(FAMILIES))
def test_scripted_spec_gets_the_family_completion_room(tmp_path, family):
    """The template leaves max_completion_length out; the loaded spec has the family's room, the honest example's
    value, and room for every answer of every level (the retro of 2026-12-04: the agent drifted on this number)."""
    from agentforge.schema import load_spec
    from agentforge.families import get_family
    from agentforge.tasks import LEVELS, generate
    (tmp_path / 'task.yaml').write_text(write_spec(family, HEURISTIC))
    room, fam = load_spec(tmp_path).grpo['max_completion_length'], get_family(family)
    assert room == example_doc(family)['grpo']['max_completion_length']
    longest = max(len(i.answer.encode()) for lv in LEVELS for i in generate(fam, fam.fit(512), 3, fam.level_params(lv)))
    assert longest + 1 <= room  # bytes bound the student's byte-level tokens; + its end token

@pytest.mark.parametrize('family', sorted(FAMILIES))
def test_completion_length_options(tmp_path, family):
    """The knob's options are the same names on every family: 'answer' is exactly the room the longest answer of any
    level needs (the probe's least: a spec of any level's rows validates with it, above), 'double' twice the room."""
    from agentforge.families import get_family
    from agentforge.tasks import LEVELS, completion_room, generate
    fam = get_family(family)
    got = {o: yaml.safe_load(write_spec(family, dict(completion_length=o)))['grpo'].get('max_completion_length')
           for o in KNOBS['completion_length']}
    longest = max(len(i.answer.encode()) for lv in LEVELS for i in generate(fam, fam.fit(512), 3, fam.level_params(lv)))
    assert got == dict(answer=longest + 1, room=None, double=2 * completion_room(fam))
    assert yaml.safe_load(write_spec(family, dict(completion_length=40)))['grpo']['max_completion_length'] == 40
    with pytest.raises(ValueError, match="completion_length 'tight'"): write_spec(family, dict(completion_length='tight'))

# ---------------------------------------------------------------- ScriptedAgent

def _written(turn:Turn, family:str) -> dict:
    "The choices behind the task.yaml a scripted turn writes (and submits) for `family`."
    assert [c.name for c in turn.tool_calls] == ['write_file', 'submit'] and turn.tool_calls[0].arguments['path'] == 'task.yaml'
    return agents.choices_of(turn.tool_calls[0].arguments['content'], family)

def test_scripted_agent_is_deterministic_for_messages_and_seed():
    a = ScriptedAgent('random')
    for fam in ('arithmetic', 'string_ops'):
        msgs = brief_messages(fam)
        first = [a.act(msgs, [], s) for s in range(40)]
        assert first == [ScriptedAgent('random').act(msgs, [], s) for s in range(40)]   # same (messages, seed): same turn
        assert len({json.dumps([c.__dict__ for c in t.tool_calls], sort_keys=True) + t.text for t in first}) > 5   # seeds differ
        kinds = {tuple(c.name for c in t.tool_calls) for t in first}
        assert ('write_file', 'submit') in kinds

def test_heuristic_is_one_rule_on_every_family():
    h = ScriptedAgent('heuristic')
    for fam in FAMILIES:
        for s in range(10): assert _written(h.act(brief_messages(fam), [], s), fam) == {k: HEURISTIC[k] for k in CHOICES}

def test_random_agent_samples_every_knob_uniformly():
    a, msgs, seen = ScriptedAgent('random'), brief_messages('string_ops'), []
    for s in range(600):
        t = a.act(msgs, [], s)
        if [c.name for c in t.tool_calls] == ['write_file', 'submit']: seen.append(_written(t, 'string_ops'))
    for k, opts in CHOICES.items():
        for o in opts:  # each option's share within 0.07 of uniform (about 4 binomial SDs at ~500 draws)
            assert abs(sum(c[k] == o for c in seen) / len(seen) - 1 / len(opts)) < 0.07, (k, o)

def test_a_brief_offering_two_students_gets_both_from_the_random_agent_and_its_own_from_the_heuristic():
    "The random agent draws the student uniformly among those offered, after its other draws; the heuristic never moves."
    import re
    def student(t): return re.search(r'^student: (\S+)$', t.tool_calls[0].arguments['content'], re.M)[1]
    offer, plain = brief_messages('unit_conversion', students=('tiny-student-large',)), brief_messages('unit_conversion')
    assert agents.offered_students(offer[1]['content']) == ('tiny-student', 'tiny-student-large')
    assert agents.offered_students(plain[1]['content']) == ('tiny-student',)
    a = ScriptedAgent('random')
    writes = [(t, a.act(plain, [], s)) for s in range(300) if (t := a.act(offer, [], s)).tool_calls]
    drawn = [student(t) for t, _ in writes if t.tool_calls[0].name == 'write_file']
    assert abs(drawn.count('tiny-student-large') / len(drawn) - 0.5) < 0.1, len(drawn)
    for t, u in writes:   # the offer changes the student only: every other choice is the one the plain brief gets
        if t.tool_calls[0].name == 'write_file':
            assert t.tool_calls[0].arguments['content'].replace(student(t), 'tiny-student') == u.tool_calls[0].arguments['content']
    assert {student(ScriptedAgent('heuristic').act(offer, [], s)) for s in range(20)} == {'tiny-student'}
    assert {student(t) for s in range(100) if (t := a.act(plain, [], s)).tool_calls
            and t.tool_calls[0].name == 'write_file'} == {'tiny-student'}
    spec = yaml.safe_load(agents.write_spec('unit_conversion', dict(HEURISTIC, student='tiny-student-large')))
    assert spec['student'] == 'tiny-student-large'

def test_a_slip_writes_another_briefs_spec_and_the_mismatch_answer_gets_the_same_spec_for_the_right_brief(tmp_path):
    "slip_rate=1: the first spec answers another brief; after the probe's BRIEF_MISMATCH, the same choices, right brief."
    from agentforge.episode import play
    a = ScriptedAgent('random', slip_rate=1.0, explore_rate=0.0, give_up_rate=0.0)
    for s, fam in enumerate(FAMILIES):
        rec = play(a, fam, s, tmp_path / fam, saturation=False)
        slip, fix = (c['arguments']['content'] for c in rec.tool_calls if c['name'] == 'write_file')
        other = yaml.safe_load(slip)['brief']
        assert other != fam and yaml.safe_load(fix)['brief'] == fam
        assert [p['reason'] for p in rec.probe_reports] == ['BRIEF_MISMATCH', None] and rec.validated_on == 2
        assert agents._for_brief(slip, other, fam) == fix and agents._for_brief(fix, fam, other) == slip
    plain = ScriptedAgent('random', explore_rate=0.0, give_up_rate=0.0)   # slip_rate 0: the same draws, right brief
    for seed in range(20):
        slip = a.act(brief_messages('date_math'), [], seed).tool_calls[0].arguments['content']
        want = plain.act(brief_messages('date_math'), [], seed).tool_calls[0].arguments['content']
        assert agents._for_brief(slip, yaml.safe_load(slip)['brief'], 'date_math') == want

def test_unknown_policy_raises():
    with pytest.raises(ValueError, match="'bogus'"): ScriptedAgent('bogus')

# ---------------------------------------------------------------- LMAgent

@pytest.fixture(scope='module')
def lm():
    from agentforge.models import build_tokenizer, tiny_model
    tok = build_tokenizer()
    return LMAgent(tiny_model('agent', seed=0, tok=tok), tok, name='untrained', max_new_tokens=24)

MSGS = [dict(role='system', content='Write task.yaml, then submit.'), dict(role='user', content='brief: arithmetic')]

@pytest.mark.parametrize('temperature', [1.0, 0.7])
def test_recorded_logprobs_equal_a_fresh_forward_pass(lm, temperature):
    lm.temperature = temperature
    try:
        t = lm.act(MSGS, [], seed=3)
        assert t.prompt_ids == lm.render(MSGS) and len(t.completion_ids) == len(t.logprobs) == t.tokens > 0
        assert t.completion_ids[-1] == lm.tok.eos_token_id or t.tokens == lm.max_new_tokens
        assert lm.act(MSGS, [], seed=3).completion_ids == t.completion_ids   # seeded: the same turn again
        ids = torch.tensor([t.prompt_ids + t.completion_ids])
        with torch.no_grad(): logits = lm.model(input_ids=ids).logits[0, :-1].float()
        lp = torch.log_softmax(logits / temperature, -1)[len(t.prompt_ids) - 1:].gather(-1, ids[0, len(t.prompt_ids):, None])[:, 0]
        torch.testing.assert_close(lp, torch.tensor(t.logprobs), rtol=0, atol=1e-4)
        other = torch.log_softmax(logits / (1.7 - temperature), -1)[len(t.prompt_ids) - 1:].gather(-1, ids[0, len(t.prompt_ids):, None])[:, 0]
        assert (other - torch.tensor(t.logprobs)).abs().max() > 1e-3   # the temperature matters: this check can fail
    finally: lm.temperature = 1.0

def test_only_lora_parameters_train(lm):
    trainable = [n for n, p in lm.model.named_parameters() if p.requires_grad]
    assert trainable and all('lora_' in n for n in trainable)
    assert {n.split('.')[-4] for n in trainable} == {'q_proj', 'k_proj', 'v_proj', 'o_proj'}
    assert sum(p.numel() for n, p in lm.model.named_parameters() if 'lora_' not in n and p.requires_grad) == 0

def test_prompt_past_the_context_is_a_turn_with_an_error(lm):
    n = len(lm.render(MSGS))
    small = LMAgent(lm.model, lm.tok, max_context=n, max_new_tokens=8)   # already a PeftModel: wrapped once
    t = small.act(MSGS, [], seed=0)
    assert (t.tool_calls, t.tokens, t.completion_ids) == ([], 0, None)
    assert t.error == f'the conversation ({n} tokens) no longer fits the {n}-token context'
    ok = LMAgent(lm.model, lm.tok, max_context=n + 3, max_new_tokens=8).act(MSGS, [], seed=0)   # fits: at most 3 new tokens
    assert ok.error is None or 'no longer fits' not in ok.error
    assert 1 <= ok.tokens <= 3

# ---------------------------------------------------------------- batched turns

def test_act_batch_gives_the_turns_act_gives_one_by_one(lm):
    "Left-padded batched sampling with one KV cache: the same tokens and log-probs as batch-1 sampling, per seed."
    convs = [MSGS, MSGS + [dict(role='user', content='and be quick about it, please')], brief_messages('string_ops')]
    seeds = [3, 4, 5]
    together, alone = lm.act_batch(convs, [], seeds), [lm.act(c, [], s) for c, s in zip(convs, seeds)]
    assert len({len(t.prompt_ids) for t in together}) == 3   # three prompt lengths: the padding is exercised
    for a, b in zip(together, alone):
        assert (a.prompt_ids, a.completion_ids, a.text, a.error) == (b.prompt_ids, b.completion_ids, b.text, b.error)
        torch.testing.assert_close(torch.tensor(a.logprobs), torch.tensor(b.logprobs), rtol=0, atol=1e-4)

def test_temperature_zero_writes_the_policys_mode_whatever_the_seed(lm):
    "Greedy decoding: every token the most likely one (teacher forcing agrees), the seed ignored, batched or not."
    greedy = LMAgent(lm.model, lm.tok, temperature=0, max_new_tokens=12)
    a, b = greedy.act(MSGS, [], seed=0), greedy.act(MSGS, [], seed=99)
    assert a.completion_ids == b.completion_ids and len(a.completion_ids) >= 1
    ids = torch.tensor([a.prompt_ids + a.completion_ids])
    with torch.no_grad(): lp = torch.log_softmax(lm.model(input_ids=ids).logits[0, :-1].float(), -1)
    tail = lp[len(a.prompt_ids) - 1:]
    assert tail.argmax(-1).tolist() == a.completion_ids                      # the mode, token by token
    torch.testing.assert_close(tail.max(-1).values, torch.tensor(a.logprobs), rtol=0, atol=1e-4)   # log-probs at T = 1
    convs = [MSGS, brief_messages('string_ops')]
    assert [t.completion_ids for t in greedy.act_batch(convs, [], [1, 2])] == \
        [greedy.act(c, [], 7).completion_ids for c in convs]
    sampled = {tuple(lm.act(MSGS, [], s).completion_ids) for s in range(4)}   # the same model sampling: seeds matter
    assert len(sampled) > 1


def test_act_batch_gives_a_prompt_past_the_context_its_error_turn(lm):
    n = len(lm.render(MSGS))
    small = LMAgent(lm.model, lm.tok, max_context=n + 3, max_new_tokens=8)
    long = MSGS + [dict(role='user', content='x' * 50)]
    fits, too_long = small.act_batch([MSGS, long], [], [0, 0])
    assert 'no longer fits' in too_long.error and too_long.completion_ids is None
    assert 1 <= fits.tokens <= 3 and fits.completion_ids == small.act(MSGS, [], 0).completion_ids

def test_default_act_batch_returns_an_agents_error_instead_of_raising():
    class Flaky(agents.Agent):
        def act(self, messages, tools, seed):
            if seed == 1: raise RuntimeError('boom')
            return Turn('ok', [], 0)
    got = Flaky().act_batch([MSGS, MSGS], [], [0, 1])
    assert got[0].text == 'ok' and isinstance(got[1], RuntimeError)

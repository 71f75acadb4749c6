"""Every quiz bank under nbs/quizzes/ is well formed, and numeric answers agree with the library that teaches them."""
from pathlib import Path
import pytest, yaml
from agentforge.grading import uplift

BANKS = sorted((Path(__file__).resolve().parents[1] / 'nbs' / 'quizzes').glob('*.yaml'))

@pytest.mark.parametrize('bank', BANKS, ids=lambda p: p.stem)
def test_bank_is_well_formed(bank):
    qs = yaml.safe_load(bank.read_text())
    assert isinstance(qs, list) and qs and len({q['id'] for q in qs}) == len(qs)
    nbs = bank.parents[1]
    assert (nbs / f'{bank.stem}.ipynb').exists(), f'{bank.name} names no lesson'
    for q in qs:
        assert q['type'] in ('single', 'multi', 'numeric') and q['question'].strip(), q['id']
        if q['type'] == 'numeric':
            assert isinstance(q['answer'], (int, float)) and q['tolerance'] >= 0 and q['feedback'].strip(), q['id']
            continue
        right = sum(a['correct'] is True for a in q['answers'])
        assert right == 1 if q['type'] == 'single' else right >= 1, q['id']  # multi: select all that apply
        assert all(isinstance(a['correct'], bool) and a['text'].strip() and a['feedback'].strip() for a in q['answers']), q['id']

def test_numeric_answers_match_the_code():
    inner = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '07_inner.yaml').read_text())}
    assert abs(uplift(0.25, 0.40) - inner['inner-uplift-normalised']['answer']) < 1e-9
    pool = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '08_pool.yaml').read_text())}
    import inspect
    from agentforge.pool import Pool
    d = {k: v.default for k, v in inspect.signature(Pool.__init__).parameters.items()}
    assert min(d['backoff_s'] * 2 ** (3 - 1), d['max_backoff_s']) == pool['pool-backoff']['answer']

def test_transfer_numeric_answer_matches_the_code():
    transfer = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12_transfer.yaml').read_text())}
    from agentforge.transfer import paired_diff_ci
    q = transfer['transfer-paired-mean']
    assert abs(paired_diff_ci([0.50, 0.60, 0.40, 0.70], [0.30, 0.50, 0.40, 0.40])['mean'] - q['answer']) <= q['tolerance']

def test_outer_numeric_answer_matches_the_code():
    outer = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '11_outer.yaml').read_text())}
    import torch
    from agentforge.outer import group_advantages
    q = outer['outer-advantage-winner']
    assert abs(group_advantages(torch.tensor([1., 0., 0., 0.]))[0].item() - q['answer']) <= q['tolerance']

def test_agents_and_episode_numeric_answers_match_the_code():
    from agentforge.agents import CHOICES, _product
    from agentforge.grading import episode_reward
    agents = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '09_agents.yaml').read_text())}
    q = agents['agents-design-space-size']
    assert abs(sum(1 for _ in _product()) - q['answer']) <= q['tolerance'] and len(CHOICES) == 3
    ep = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '10_episode.yaml').read_text())}
    q = ep['episode-second-try-reward']
    assert abs(episode_reward(2, 0.20, 0.28, 60.0, 1200.0).total - q['answer']) <= q['tolerance']

def test_landscape_numeric_answer_matches_the_code():
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12b_landscape.yaml').read_text())}['landscape-gain-sd']
    from agentforge.landscape import _gain_sd
    assert abs(_gain_sd(0.02, 0.20) - q['answer']) <= q['tolerance']

def test_paired_se_numeric_answer_matches_the_code():
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12b_landscape.yaml').read_text())}['landscape-paired-se']
    from agentforge.inner import paired_se
    assert abs(paired_se([0.0] * 512, [1.0] * 200 + [0.0] * 312) - q['answer']) <= q['tolerance']

def test_credit_and_curve_numeric_answers_match_the_code():
    from types import SimpleNamespace
    from agentforge.outer import samples_from
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '11_outer.yaml').read_text())}['outer-credit-rejected-spec']
    def rec(total, subs):
        return SimpleNamespace(reward=dict(total=total),
                               turns=[dict(prompt_ids=[1], completion_ids=[10 + n], logprobs=[-1.0]) for n in range(len(subs))],
                               tool_calls=[dict(turn=n, name='submit', result=dict(validated=ok)) for n, ok in enumerate(subs)])
    group = [rec(0.6, [True]), rec(0.5, [False, True]), rec(0.0, [False, False]), rec(0.4, [True])]
    b_first = next(s for s in samples_from([group], scale='none') if s.episode == 1 and s.completion_ids == [10])
    assert abs(b_first.advantage - q['answer']) <= q['tolerance']
    from agentforge.curve import curve_change
    q = {q['id']: q for q in yaml.safe_load((BANKS[0].parent / '12c_curve.yaml').read_text())}['curve-paired-mean']
    row = lambda step, xs: dict(step=step, episodes=[dict(brief='arithmetic', seed=i, total=x) for i, x in enumerate(xs)])
    ch = curve_change([row(0, [0.4, 0.2, 0.5, 0.3]), row(10, [0.5, 0.2, 0.7, 0.3])], ['arithmetic'])
    assert abs(ch['mean'] - q['answer']) <= q['tolerance']
